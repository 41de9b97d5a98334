import type { FinishReason } from "../../provider.js";

/** What {@link mapFinishReason} reads. */
export interface FinishReasonRequest {
  /** The API's own stop reason, as it sent it (anything: only a string is read). */
  reason: unknown;
  /** Whether the response carries tool calls. */
  hasCalls: boolean;
  /** The API's reasons that have another name in OpenAI's words; others pass through. */
  table?: ReadonlyMap<string, FinishReason>;
}

/**
 * Maps an API's stop reason to OpenAI's words through `table`: any call makes it `"tool_calls"`,
 * an unknown reason passes through, a missing one gives `undefined` (then {@link toLLMResponse}
 * says `"stop"`).
 */
export function mapFinishReason({ reason, hasCalls, table }: FinishReasonRequest): FinishReason | undefined {
  if (hasCalls) return "tool_calls";
  if (typeof reason !== "string") return undefined;
  return table?.get(reason) ?? reason;
}
