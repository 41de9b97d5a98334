import { isRecord } from "../../internal/describe.js";
import type { UsageInfo } from "../../provider.js";
import { tokenCount, usageOf } from "../shared/usage.js";

/** The names of one OpenAI API's usage fields (Chat Completions and Responses name them differently). */
export interface OpenAIUsageFields {
  /** The input count, e.g. `"prompt_tokens"`. */
  prompt: string;
  /** The output count, e.g. `"completion_tokens"`. */
  completion: string;
  /** The total, `"total_tokens"` in both APIs. */
  total: string;
  /** The input breakdown holding `cached_tokens` and `cache_write_tokens`, e.g. `"prompt_tokens_details"`. */
  inputDetails: string;
  /** The output breakdown holding `reasoning_tokens`, e.g. `"completion_tokens_details"`. */
  outputDetails: string;
}

/** Chat Completions' usage fields. */
export const CHAT_USAGE_FIELDS: OpenAIUsageFields = {
  prompt: "prompt_tokens",
  completion: "completion_tokens",
  total: "total_tokens",
  inputDetails: "prompt_tokens_details",
  outputDetails: "completion_tokens_details",
};

/** The Responses API's usage fields. */
export const RESPONSES_USAGE_FIELDS: OpenAIUsageFields = {
  prompt: "input_tokens",
  completion: "output_tokens",
  total: "total_tokens",
  inputDetails: "input_tokens_details",
  outputDetails: "output_tokens_details",
};

/**
 * {@link UsageInfo} from an OpenAI `usage` object: the three counts, and the details the API
 * breaks down — `cached_tokens` → `cachedInputTokens`, `cache_write_tokens` → `cacheWriteTokens`
 * (both part of the input count, which OpenAI reports with them included), `reasoning_tokens` →
 * `reasoningTokens` (part of the output count). A detail the API did not send stays absent; a
 * reported 0 is kept. `undefined` when `usage` is no object or reports none of the three counts.
 */
export function openAIUsage(usage: unknown, fields: OpenAIUsageFields): UsageInfo | undefined {
  const counts = usageOf(usage, fields);
  if (counts === undefined || !isRecord(usage)) return undefined;
  // The details are set on usageOf's fresh object: a spread of it into a new one cost about 3 µs
  // per call on Node 20 (bench workload 7), six times the rest of the adapter's step.
  const input = usage[fields.inputDetails];
  const output = usage[fields.outputDetails];
  const cached = isRecord(input) ? tokenCount(input.cached_tokens) : undefined;
  const written = isRecord(input) ? tokenCount(input.cache_write_tokens) : undefined;
  const reasoning = isRecord(output) ? tokenCount(output.reasoning_tokens) : undefined;
  if (cached !== undefined) counts.cachedInputTokens = cached;
  if (written !== undefined) counts.cacheWriteTokens = written;
  if (reasoning !== undefined) counts.reasoningTokens = reasoning;
  return counts;
}
