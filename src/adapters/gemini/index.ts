/**
 * `toolloop/gemini`: an `LLMProvider` for Gemini's `generateContent`, through your own
 * `@google/genai` client (an optional peer dependency, typed structurally: this module imports
 * nothing from it).
 * @module
 */
export type { GeminiFunctionDeclaration, GeminiSchema, GeminiSchemaType } from "../../formats/gemini.js";
export { toGeminiSchema, toGeminiTools } from "../../formats/gemini.js";
export type { GeminiCandidate, GeminiGenerateContentResponse } from "./convert-gemini-response.js";
export type { GeminiStreamRequest } from "./convert-gemini-stream.js";
export { fromGeminiStream } from "./convert-gemini-stream.js";
export type {
  GeminiBlob,
  GeminiCallMetadata,
  GeminiContent,
  GeminiFileData,
  GeminiFunctionCall,
  GeminiFunctionResponse,
  GeminiPart,
  GeminiToolMedia,
} from "./convert-to-gemini-messages.js";
export type {
  GeminiClientLike,
  GeminiGenerateContentConfig,
  GeminiGenerateContentParameters,
  GeminiProviderOptions,
} from "./create-gemini-provider.js";
export { createGeminiProvider } from "./create-gemini-provider.js";
