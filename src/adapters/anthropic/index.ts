/**
 * `toolloop/anthropic`: an `LLMProvider` for Anthropic's Messages API through your own
 * `@anthropic-ai/sdk` client (an optional peer dependency, never imported here).
 * @module
 */

export type { AnthropicInputSchema, AnthropicToolDefinition } from "../../formats/anthropic.js";
export { toAnthropicTools } from "../../formats/anthropic.js";
export type {
  AnthropicContentBlockLike,
  AnthropicMessageLike,
  AnthropicResponseOptions,
  AnthropicUsageLike,
} from "./convert-anthropic-response.js";
export { fromAnthropicMessage } from "./convert-anthropic-response.js";
export type { AnthropicStreamRequest } from "./convert-anthropic-stream.js";
export { fromAnthropicStream } from "./convert-anthropic-stream.js";
export type {
  AnthropicContentBlockParam,
  AnthropicDocumentBlockParam,
  AnthropicImageBlockParam,
  AnthropicMediaBlockParam,
  AnthropicMessageParam,
  AnthropicTextBlockParam,
  AnthropicThinkingBlockParam,
  AnthropicToolCallMetadata,
  AnthropicToolResultBlockParam,
  AnthropicToolUseBlockParam,
} from "./convert-to-anthropic-messages.js";
export { toAnthropicMessages } from "./convert-to-anthropic-messages.js";
export type {
  AnthropicClientLike,
  AnthropicMessagesRequest,
  AnthropicProviderOptions,
  AnthropicRequestOptions,
} from "./create-anthropic-provider.js";
export {
  createAnthropicProvider,
  DEFAULT_ANTHROPIC_MAX_TOKENS,
  DEFAULT_ANTHROPIC_MODEL,
} from "./create-anthropic-provider.js";
