import type { FinishReason } from "../../provider.js";

/**
 * Maps an API's stop reason to OpenAI's words through `table`: any call makes it `"tool_calls"`,
 * an unknown reason passes through, a missing one gives `undefined`.
 */
export function mapFinishReason(
  reason: unknown,
  hasCalls: boolean,
  table: ReadonlyMap<string, FinishReason>,
): FinishReason | undefined {
  if (hasCalls) return "tool_calls";
  if (typeof reason !== "string") return undefined;
  return table.get(reason) ?? reason;
}
