/**
 * `toolloop/gemini`: an `LLMProvider` for Gemini's `generateContent`, through your own
 * `@google/genai` client (an optional peer dependency, typed structurally: this module imports
 * nothing from it).
 * @module
 */
export type { GeminiFunctionDeclaration, GeminiSchema, GeminiSchemaType } from "../../formats/gemini.js";
export { toGeminiSchema, toGeminiTools } from "../../formats/gemini.js";
export type {
  GeminiCallMetadata,
  GeminiCandidate,
  GeminiClientLike,
  GeminiContent,
  GeminiFunctionCall,
  GeminiFunctionResponse,
  GeminiGenerateContentConfig,
  GeminiGenerateContentParameters,
  GeminiGenerateContentResponse,
  GeminiPart,
  GeminiProviderOptions,
} from "./gemini-provider.js";
export { createGeminiProvider } from "./gemini-provider.js";
