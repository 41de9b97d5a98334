export type { ContentPart } from "./content-part.js";
export { contentText } from "./content-part.js";
export type {
  DefinedTool,
  DefineToolOptions,
  InferToolArgs,
  Zod3ObjectSchema,
  ZodObjectSchema,
} from "./define-tool.js";
export { defineTool } from "./define-tool.js";
export type { DefinitionFormat, DefinitionFormats } from "./definition-format.js";
export type { ToolErrorCode, ToolLoopErrorCode, ToolloopBaseErrorCode } from "./errors.js";
export {
  InvalidProviderResponseError,
  isInvalidProviderResponseError,
  isToolExecutionError,
  isToolLoopError,
  isToolloopBaseError,
  isUnsupportedContentError,
  ToolExecutionError,
  ToolLoopError,
  ToolloopBaseError,
  UnsupportedContentError,
} from "./errors.js";
export type { BatchOptions, BatchResult, ToolRequest } from "./execute-batch.js";
export type { Logger } from "./logger.js";
export {
  askQuestionTool,
  converseTool,
  forgeTools,
  loopBreakingTools,
  taskCompletionTool,
} from "./loop-breaking-tools.js";
export type { InferOutput, NamedOutputSchema, OutputSchema } from "./output-schema.js";
export type { ProgressListener, ProgressStatus, ProgressUpdate } from "./progress.js";
export type {
  FinishReason,
  LLMProvider,
  LLMResponse,
  LLMStreamDelta,
  LLMStreamPart,
  Message,
  MessageRole,
  OutputRequest,
  ProviderToolCall,
  ToolCall,
  ToolDefinition,
  UsageInfo,
} from "./provider.js";
export { resumeToolLoop } from "./resume-tool-loop.js";
export { runToolLoop } from "./run-tool-loop.js";
export { type RegisterHiddenOptions, SchemaBudget } from "./schema-budget.js";
export type { ToolLoopStream } from "./stream-tool-loop.js";
export { streamToolLoop } from "./stream-tool-loop.js";
export type { ParsedTextToolCalls, TextToolProtocolOptions } from "./text-tool-protocol.js";
export {
  MAX_TEXT_TOOL_CALLS,
  parseTextToolCalls,
  UNREADABLE_TOOL_BLOCK,
  withTextToolProtocol,
} from "./text-tool-protocol.js";
export type {
  AsyncCallback,
  AsyncTool,
  ContextualTool,
  MetadataAwareTool,
  ParseArgumentsResult,
  Tool,
  ToolContext,
  ToolReturn,
} from "./tool.js";
export { isAsyncTool, isContextualTool, isMetadataAwareTool, toolToSchema } from "./tool.js";
export type { ApprovalDecision, ApprovalRequest, ToolApprover } from "./tool-approval.js";
export type { ToolExecution } from "./tool-execution.js";
export type { ToolInterruption } from "./tool-interruption.js";
export type { ToolLoopCheckpoint } from "./tool-loop-checkpoint.js";
export type { ToolLoopConfig } from "./tool-loop-config.js";
export type { ToolLoopContext } from "./tool-loop-context.js";
export type { ToolLoopEvent, ToolLoopEventListener } from "./tool-loop-event.js";
export type { ModelCallRequest, RunRequest, ToolCallRequest, ToolLoopMiddleware } from "./tool-loop-middleware.js";
export type { StopReason, ToolLoopResult } from "./tool-loop-result.js";
export type { ToolSearchResult } from "./tool-registry.js";
export { ToolRegistry } from "./tool-registry.js";
export type { ExecuteOptions, RegisterOptions, ToolRegistryOptions } from "./tool-registry-options.js";
export type {
  ToolExecutionMetadata,
  ToolExecutionMetadataJSON,
  ToolResultInit,
  ToolResultJSON,
} from "./tool-result.js";
export {
  asyncResult,
  errorResult,
  isToolResult,
  mediaResult,
  newToolResult,
  silentResult,
  ToolResult,
  userResult,
} from "./tool-result.js";
export { TOOL_SEARCH_TOOL_NAMES } from "./tool-search-names.js";
export type { ToolSearchToolsOptions } from "./tool-search-tools.js";
export { createToolSearchTools } from "./tool-search-tools.js";
export type { InferZod, Zod3Schema, ZodSchema } from "./zod-schema.js";
