import type { UsageInfo } from "../../provider.js";

/** A token count the API reported: a finite number, else `undefined`. */
export function tokenCount(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** {@link UsageInfo} from the counts an API gave: a missing count is 0, a missing total is the sum. */
export function usageInfo(
  promptTokens: number | undefined,
  completionTokens: number | undefined,
  totalTokens?: number,
): UsageInfo {
  const prompt = promptTokens ?? 0;
  const completion = completionTokens ?? 0;
  return { promptTokens: prompt, completionTokens: completion, totalTokens: totalTokens ?? prompt + completion };
}
