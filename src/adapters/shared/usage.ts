import { isRecord } from "../../internal/describe.js";
import type { UsageInfo } from "../../provider.js";

/** A token count the API reported: a finite number, else `undefined`. */
export function tokenCount(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** The counts an API gave; any may be missing. */
export interface TokenCounts {
  promptTokens?: number | undefined;
  completionTokens?: number | undefined;
  totalTokens?: number | undefined;
  /** Input tokens read from the prompt cache. */
  cachedInputTokens?: number | undefined;
  /** Input tokens written to the prompt cache. */
  cacheWriteTokens?: number | undefined;
  /** Output tokens spent reasoning. */
  reasoningTokens?: number | undefined;
}

/**
 * {@link UsageInfo} from the counts an API gave: a missing count is 0, a missing total is the sum;
 * a detail count (cached, cache-write, reasoning) is set only when given (a given 0 is kept).
 */
export function usageInfo(counts: TokenCounts): UsageInfo {
  const { promptTokens, completionTokens, totalTokens, cachedInputTokens, cacheWriteTokens, reasoningTokens } = counts;
  const prompt = promptTokens ?? 0;
  const completion = completionTokens ?? 0;
  const usage: UsageInfo = {
    promptTokens: prompt,
    completionTokens: completion,
    totalTokens: totalTokens ?? prompt + completion,
  };
  if (cachedInputTokens !== undefined) usage.cachedInputTokens = cachedInputTokens;
  if (cacheWriteTokens !== undefined) usage.cacheWriteTokens = cacheWriteTokens;
  if (reasoningTokens !== undefined) usage.reasoningTokens = reasoningTokens;
  return usage;
}

/** The names of an API's token-count fields. */
export interface UsageFields {
  prompt: string;
  completion: string;
  /** @default none: the total is the sum */
  total?: string;
}

/**
 * {@link UsageInfo} read from the count fields of `record` (e.g. OpenAI's `prompt_tokens`,
 * `completion_tokens`, `total_tokens`); `undefined` when `record` is no object or reports none.
 */
export function usageOf(record: unknown, fields: UsageFields): UsageInfo | undefined {
  if (!isRecord(record)) return undefined;
  const counts: TokenCounts = {
    promptTokens: tokenCount(record[fields.prompt]),
    completionTokens: tokenCount(record[fields.completion]),
    totalTokens: fields.total === undefined ? undefined : tokenCount(record[fields.total]),
  };
  const { promptTokens, completionTokens, totalTokens } = counts;
  if (promptTokens === undefined && completionTokens === undefined && totalTokens === undefined) return undefined;
  return usageInfo(counts);
}
