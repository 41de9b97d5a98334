/**
 * `toolloop/ai-sdk`: an `LLMProvider` for any Vercel AI SDK language model (specification v2 or
 * v3). Neither `ai` nor `@ai-sdk/*` is imported here.
 * @module
 */
export { toCallOptions, toToolChoice } from "./call-options.js";
export type {
  AISDKFunctionTool,
  AISDKPartProviderOptions,
  AISDKPromptMessage,
  AISDKReasoningPart,
  AISDKTextPart,
  AISDKToolCallMetadata,
  AISDKToolCallPart,
  AISDKToolResultPart,
} from "./convert-prompt.js";
export { toAISDKPrompt, toAISDKTools } from "./convert-prompt.js";
export type {
  AISDKContentLike,
  AISDKFinishReasonLike,
  AISDKGenerateResultLike,
  AISDKTokenCountLike,
  AISDKUsageLike,
} from "./convert-result.js";
export { fromAISDKResult } from "./convert-result.js";
export type { AISDKCallOptions, AISDKLanguageModelLike, AISDKProviderOptions } from "./create-ai-sdk-provider.js";
export { createAISDKProvider } from "./create-ai-sdk-provider.js";
