import type { FinishReason, LLMResponse, ProviderToolCall, UsageInfo } from "../../provider.js";

/** The parts of an {@link LLMResponse} an adapter has read. */
export interface LLMResponseParts {
  content: string;
  toolCalls: ProviderToolCall[];
  finishReason?: FinishReason | undefined;
  usage?: UsageInfo | undefined;
}

/**
 * An {@link LLMResponse}: `toolCalls` always set (empty for a final answer), `finishReason`
 * defaulting to `"tool_calls"` / `"stop"` from the calls, `usage` only when the API reported it.
 */
export function toLLMResponse({ content, toolCalls, finishReason, usage }: LLMResponseParts): LLMResponse {
  const response: LLMResponse = {
    content,
    toolCalls,
    finishReason: finishReason ?? (toolCalls.length > 0 ? "tool_calls" : "stop"),
  };
  if (usage !== undefined) response.usage = usage;
  return response;
}
