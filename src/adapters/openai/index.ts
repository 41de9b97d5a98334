/**
 * `toolloop/openai`: LLM providers over your own `openai` client — Chat Completions (also any
 * OpenAI-compatible server through the client's `baseURL`) and the Responses API — plus the
 * conversions they use. `openai` is an optional peer dependency and is never imported here.
 * @module
 */
export type {
  OpenAIChatFunctionTool,
  OpenAIResponsesFunctionTool,
  OpenAIToolFormatOptions,
} from "../../formats/openai.js";
export {
  stripNullsForOptional,
  toOpenAIChatTools,
  toOpenAIResponsesTools,
  toOpenAIStrictSchema,
} from "../../formats/openai.js";
export type { OpenAIChatMessage, OpenAIChatProviderOptions } from "./chat-provider.js";
export { createOpenAIChatProvider, fromOpenAIChatCompletion, toOpenAIChatMessages } from "./chat-provider.js";
export type {
  OpenAIChatClient,
  OpenAIChatCompletionLike,
  OpenAIRequestOptions,
  OpenAIResponseLike,
  OpenAIResponsesClient,
} from "./client-types.js";
export type { OpenAIResponsesInputItem, OpenAIResponsesProviderOptions } from "./responses-provider.js";
export { createOpenAIResponsesProvider, fromOpenAIResponse, toOpenAIResponsesInput } from "./responses-provider.js";
export type { OpenAIProviderOptionsBase } from "./shared.js";
export { DEFAULT_OPENAI_MODEL } from "./shared.js";
