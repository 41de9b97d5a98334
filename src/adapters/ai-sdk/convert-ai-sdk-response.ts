import type { InvalidProviderResponseError } from "../../errors.js";
import { describeType, isPlainObject, isRecord, showValue } from "../../internal/describe.js";
import type { FinishReason, LLMResponse, ProviderToolCall, UsageInfo } from "../../provider.js";
import { toCallArguments } from "../shared/call-arguments.js";
import { mapFinishReason } from "../shared/finish-reason.js";
import { invalidResponse, quoted } from "../shared/invalid-response.js";
import { toLLMResponse } from "../shared/llm-response.js";
import { keepOnFirstCall } from "../shared/transcript.js";
import { tokenCount, usageInfo } from "../shared/usage.js";
import {
  type AISDKPartProviderOptions,
  type AISDKReasoningPart,
  type AISDKToolCallMetadata,
  METADATA_KEY,
} from "./convert-to-ai-sdk-messages.js";

/** A content part of a `doGenerate` result, as far as this adapter reads it. */
export interface AISDKContentLike {
  /** The part's type: `"text"`, `"reasoning"`, `"tool-call"` … (others are ignored). */
  type: string;
}

/**
 * A token count: a number (spec v2) or `{ total, … }` (spec v3, whose input count also has
 * `noCache`, `cacheRead`, `cacheWrite` and whose output count has `text`, `reasoning`).
 */
export type AISDKTokenCountLike =
  | number
  | {
      /** The count (spec v3). */
      total?: number | undefined;
      /** Input tokens read from the prompt cache (spec v3 `inputTokens`). */
      cacheRead?: number | undefined;
      /** Input tokens written to the prompt cache (spec v3 `inputTokens`). */
      cacheWrite?: number | undefined;
      /** Output tokens spent reasoning (spec v3 `outputTokens`). */
      reasoning?: number | undefined;
    }
  | undefined;

/** Usage of a `doGenerate` result or a stream's `finish` part: flat in spec v2, nested in spec v3. */
export interface AISDKUsageLike {
  /** Input tokens, cached ones included. */
  inputTokens?: AISDKTokenCountLike;
  /** Output tokens. */
  outputTokens?: AISDKTokenCountLike;
  /** The total (spec v2 only). */
  totalTokens?: number | undefined;
  /** Input tokens read from the prompt cache (spec v2 only). */
  cachedInputTokens?: number | undefined;
  /** Output tokens spent reasoning (spec v2 only). */
  reasoningTokens?: number | undefined;
}

/** The finish reason: a string in spec v2, `{ unified, raw }` in spec v3. */
export type AISDKFinishReasonLike =
  | string
  | {
      /** The AI SDK's word: `"stop"`, `"tool-calls"`, `"length"`, `"content-filter"`, `"error"` …. */
      unified?: string;
      /** The provider's own reason (quoted in the error for `"error"`). */
      raw?: string | undefined;
    };

/** The part of a `doGenerate` result (spec v2 or v3) this adapter reads. */
export interface AISDKGenerateResultLike {
  /** The result's content parts. */
  content: readonly AISDKContentLike[];
  /** Why the model stopped. */
  finishReason?: AISDKFinishReasonLike;
  /** Token counts. */
  usage?: AISDKUsageLike;
}

const FINISH_REASONS: ReadonlyMap<string, FinishReason> = new Map([
  ["tool-calls", "tool_calls"],
  ["stop", "stop"],
  ["length", "length"],
  ["content-filter", "content_filter"],
]);

function tokens(count: unknown): number | undefined {
  return tokenCount(isPlainObject(count) ? count.total : count);
}

/** A detail of a spec v3 count (`inputTokens.cacheRead` …); `undefined` for a spec v2 number. */
function detail(count: unknown, field: string): number | undefined {
  return isPlainObject(count) ? tokenCount(count[field]) : undefined;
}

/**
 * Maps usage: input → prompt, output → completion, total = the reported total (v2) or their sum;
 * cached input (v2 `cachedInputTokens`, v3 `inputTokens.cacheRead`), cache writes (v3
 * `inputTokens.cacheWrite`) and reasoning (v2 `reasoningTokens`, v3 `outputTokens.reasoning`)
 * only where reported.
 */
function toUsage(usage: unknown): UsageInfo | undefined {
  if (!isPlainObject(usage)) return undefined;
  const { inputTokens, outputTokens } = usage;
  const input = tokens(inputTokens);
  const output = tokens(outputTokens);
  if (input === undefined && output === undefined) return undefined;
  return usageInfo({
    promptTokens: input,
    completionTokens: output,
    totalTokens: tokens(usage.totalTokens),
    cachedInputTokens: tokenCount(usage.cachedInputTokens) ?? detail(inputTokens, "cacheRead"),
    cacheWriteTokens: detail(inputTokens, "cacheWrite"),
    reasoningTokens: tokenCount(usage.reasoningTokens) ?? detail(outputTokens, "reasoning"),
  });
}

/** @internal The adapter's name in error messages. */
export const PROVIDER = "AI SDK";

function unreadable(problem: string, result: unknown): InvalidProviderResponseError {
  return invalidResponse({ provider: PROVIDER, problem, body: result });
}

/** `finishReason: error, raw: …` for a message. */
function describeFinishReason(reason: unknown): string {
  const raw = isPlainObject(reason) ? quoted(reason.raw) : undefined;
  return raw === undefined ? "finishReason: error" : `finishReason: error, raw: ${raw}`;
}

/** A reasoning part of the result as it is replayed, with its `providerMetadata` as `providerOptions`. */
function reasoningPart(part: Record<string, unknown>): AISDKReasoningPart {
  const replay: AISDKReasoningPart = { type: "reasoning", text: String(part.text) };
  if (isPlainObject(part.providerMetadata)) replay.providerOptions = part.providerMetadata as AISDKPartProviderOptions;
  return replay;
}

/**
 * A `tool-call` part as a call: `arguments` is its `input` JSON text, its `providerMetadata` kept.
 * @throws InvalidProviderResponseError when it has no `toolName`
 */
function toolCallOf(part: Record<string, unknown>, result: unknown): ProviderToolCall {
  if (typeof part.toolName !== "string" || part.toolName === "") {
    throw unreadable(`a tool-call part has no toolName (got ${showValue(part.toolName)})`, result);
  }
  const call: ProviderToolCall = { type: "function", name: part.toolName, arguments: toCallArguments(part.input) };
  if (typeof part.toolCallId === "string") call.id = part.toolCallId;
  if (isPlainObject(part.providerMetadata)) {
    const metadata: AISDKToolCallMetadata = { providerOptions: part.providerMetadata as AISDKPartProviderOptions };
    call.providerMetadata = { [METADATA_KEY]: metadata };
  }
  return call;
}

/**
 * Converts a `doGenerate` result: text parts are joined into `content`; `tool-call` parts the
 * caller must run become calls whose `arguments` is the `input` JSON text (parsed by the loop,
 * which tells the model when it is not valid JSON). Calls the provider executed itself, and other
 * parts, are ignored; reasoning parts are kept on the first call to be replayed.
 * @throws InvalidProviderResponseError when the result is not an object, has no `content` array,
 *   has a part that is not an object or a `tool-call` part without a `toolName`, or finished with
 *   `"error"` and gave neither text nor a call
 */
export function fromAISDKResult(result: AISDKGenerateResultLike): LLMResponse {
  const value: unknown = result;
  if (!isRecord(value)) {
    throw unreadable(`the doGenerate result is not an object (got ${describeType(value)})`, value);
  }
  if (!Array.isArray(value.content)) {
    const problem = `the doGenerate result has no content array (got ${describeType(value.content)})`;
    throw unreadable(problem, value);
  }
  const texts: string[] = [];
  const reasoning: AISDKReasoningPart[] = [];
  const toolCalls: ProviderToolCall[] = [];
  for (const part of value.content) {
    if (!isRecord(part)) throw unreadable(`a content part is not an object (got ${describeType(part)})`, value);
    if (part.type === "text" && typeof part.text === "string") texts.push(part.text);
    else if (part.type === "reasoning" && typeof part.text === "string") reasoning.push(reasoningPart(part));
    else if (part.type === "tool-call" && part.providerExecuted !== true) toolCalls.push(toolCallOf(part, value));
  }
  keepOnFirstCall(toolCalls, { key: METADATA_KEY, field: "reasoning", parts: reasoning });
  const reason = result.finishReason;
  const finishReason = mapFinishReason({
    reason: isPlainObject(reason) ? reason.unified : reason,
    hasCalls: toolCalls.length > 0,
    table: FINISH_REASONS,
  });
  const content = texts.join("");
  if (finishReason === "error" && content === "") {
    // E.g. @ai-sdk/google's MALFORMED_FUNCTION_CALL: not an empty answer but none at all.
    const problem = `the model finished with an error and gave no answer (${describeFinishReason(result.finishReason)})`;
    throw unreadable(problem, value);
  }
  return toLLMResponse({ content, toolCalls, finishReason, usage: toUsage(result.usage) });
}
