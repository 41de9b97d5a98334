/**
 * `toolloop/ollama`: an `LLMProvider` for Ollama's native `/api/chat`, through your own `ollama`
 * client (an optional peer dependency, typed structurally: this module imports nothing from it).
 * @module
 */
export type { OllamaTool } from "../../formats/ollama.js";
export { toOllamaTools } from "../../formats/ollama.js";
export type {
  OllamaChatChunk,
  OllamaChatRequest,
  OllamaChatStream,
  OllamaClientLike,
  OllamaMessage,
  OllamaProviderOptions,
  OllamaToolCall,
} from "./ollama-provider.js";
export { createOllamaProvider } from "./ollama-provider.js";
