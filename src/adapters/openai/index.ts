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
export { fromOpenAIChatCompletion } from "./convert-openai-chat-response.js";
export type { OpenAIStreamRequest } from "./convert-openai-chat-stream.js";
export { fromOpenAIChatStream } from "./convert-openai-chat-stream.js";
export { fromOpenAIResponse } from "./convert-openai-responses-response.js";
export { fromOpenAIResponsesStream } from "./convert-openai-responses-stream.js";
export type { OpenAIChatContentPart, OpenAIChatMessage } from "./convert-to-openai-chat-messages.js";
export { toOpenAIChatMessages } from "./convert-to-openai-chat-messages.js";
export type {
  OpenAIResponsesContentPart,
  OpenAIResponsesInputItem,
} from "./convert-to-openai-responses-messages.js";
export { toOpenAIResponsesInput } from "./convert-to-openai-responses-messages.js";
export type {
  OpenAIChatClient,
  OpenAIChatCompletionLike,
  OpenAIChatProviderOptions,
  OpenAIProviderOptionsBase,
  OpenAIRequestOptions,
} from "./create-openai-chat-provider.js";
export { createOpenAIChatProvider, DEFAULT_OPENAI_MODEL } from "./create-openai-chat-provider.js";
export type {
  OpenAIResponseLike,
  OpenAIResponsesClient,
  OpenAIResponsesProviderOptions,
} from "./create-openai-responses-provider.js";
export { createOpenAIResponsesProvider } from "./create-openai-responses-provider.js";
