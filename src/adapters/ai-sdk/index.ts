/**
 * `toolloop/ai-sdk`: an `LLMProvider` for any Vercel AI SDK language model (specification v2 or
 * v3). Neither `ai` nor `@ai-sdk/*` is imported here.
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
