/**
 * `toolloop/ai-sdk`: an `LLMProvider` for any Vercel AI SDK language model (specification v2 or
 * v3), and a run's events as the AI SDK's UI message stream (`toUIMessageStream`,
 * `toUIMessageStreamResponse`) for `useChat`. Neither `ai` nor `@ai-sdk/*` is loaded here (only
 * `ai`'s types are referenced).
 * @module
 */
export type {
  AISDKContentLike,
  AISDKFinishReasonLike,
  AISDKGenerateResultLike,
  AISDKTokenCountLike,
  AISDKUsageLike,
} from "./convert-ai-sdk-response.js";
export { fromAISDKResult } from "./convert-ai-sdk-response.js";
export type { AISDKStreamRequest, AISDKStreamResultLike } from "./convert-ai-sdk-stream.js";
export { fromAISDKStream } from "./convert-ai-sdk-stream.js";
export type {
  AISDKFilePart,
  AISDKPartProviderOptions,
  AISDKPromptMessage,
  AISDKReasoningPart,
  AISDKTextPart,
  AISDKToolCallMetadata,
  AISDKToolCallPart,
  AISDKToolResultContentPart,
  AISDKToolResultPart,
} from "./convert-to-ai-sdk-messages.js";
export { toAISDKPrompt } from "./convert-to-ai-sdk-messages.js";
export type {
  AISDKCallOptions,
  AISDKFunctionTool,
  AISDKLanguageModelLike,
  AISDKProviderOptions,
} from "./create-ai-sdk-provider.js";
export { createAISDKProvider, toAISDKTools, toCallOptions, toToolChoice } from "./create-ai-sdk-provider.js";
export { aiSdkProviderName } from "./provider-name.js";
export { toUIMessageStream } from "./ui-message-stream.js";
export { toUIMessageStreamResponse, UI_MESSAGE_STREAM_HEADERS } from "./ui-message-stream-response.js";
