import type { FinishReason, LLMResponse, ProviderToolCall, UsageInfo } from "../../provider.js";

/** An {@link LLMResponse} that carries `toolCalls`, `finishReason` and `usage` only when there are some. */
export function toLLMResponse(
  content: string,
  toolCalls: ProviderToolCall[],
  finishReason: FinishReason | undefined,
  usage: UsageInfo | undefined,
): LLMResponse {
  const response: LLMResponse = { content };
  if (toolCalls.length > 0) response.toolCalls = toolCalls;
  if (finishReason !== undefined) response.finishReason = finishReason;
  if (usage !== undefined) response.usage = usage;
  return response;
}
