/**
 * `toolloop/ollama`: an `LLMProvider` for Ollama's native `/api/chat`, through your own `ollama`
 * client (an optional peer dependency, typed structurally: this module imports nothing from it).
 * @module
 */
export type { OllamaTool } from "../../formats/ollama.js";
export { toOllamaTools } from "../../formats/ollama.js";
export type { OllamaChatChunk } from "./convert-ollama-response.js";
export type { OllamaMessage, OllamaToolCall } from "./convert-to-ollama-messages.js";
export type {
  OllamaChatRequest,
  OllamaChatStream,
  OllamaClientLike,
  OllamaProviderOptions,
} from "./create-ollama-provider.js";
export { createOllamaProvider } from "./create-ollama-provider.js";
