import type { InvalidProviderResponseError } from "../../errors.js";
import { describeType, isPlainObject, isRecord, showValue } from "../../internal/describe.js";
import type { FinishReason, LLMResponse, ProviderToolCall, UsageInfo } from "../../provider.js";
import { toCallArguments } from "../shared/call-arguments.js";
import { mapFinishReason } from "../shared/finish-reason.js";
import { errorBodyProblem, invalidResponse, quoted } from "../shared/invalid-response.js";
import { toLLMResponse } from "../shared/llm-response.js";
import { tokenCount, usageInfo } from "../shared/usage.js";
import { type GeminiCallMetadata, type GeminiContent, METADATA_KEY, PROVIDER } from "./convert-to-gemini-messages.js";

/** A candidate of a `generateContent` answer (only the fields this adapter reads). */
export interface GeminiCandidate {
  /** The candidate's parts. */
  content?: GeminiContent;
  /** Why the model stopped: `"STOP"`, `"MAX_TOKENS"`, `"SAFETY"` …. */
  finishReason?: string;
  /** Why the model stopped, in words (e.g. the text of a malformed function call). */
  finishMessage?: string;
}

/** A `generateContent` answer (only the fields this adapter reads). */
export interface GeminiGenerateContentResponse {
  /** The candidates; the adapter reads the first. */
  candidates?: GeminiCandidate[];
  /** Token counts. */
  usageMetadata?: {
    /** Input tokens. */
    promptTokenCount?: number;
    /** Output tokens of the answer. */
    candidatesTokenCount?: number;
    /** Thinking tokens (billed as output; not in `candidatesTokenCount`). */
    thoughtsTokenCount?: number;
    /** Input tokens read from the context cache (part of `promptTokenCount`). */
    cachedContentTokenCount?: number;
    /** All tokens of the request. */
    totalTokenCount?: number;
  };
  /** Set when the prompt was blocked (then there is no candidate). */
  promptFeedback?: {
    /** Why the prompt was blocked (`"SAFETY"` …). */
    blockReason?: string;
  };
  /** The response's id; seeds the ids made for calls without one. */
  responseId?: string;
}

/**
 * Finish reasons after which the candidate is no answer: the model tried to call a function and
 * the API could not give the call (`MALFORMED_FUNCTION_CALL`, `UNEXPECTED_TOOL_CALL`,
 * `TOO_MANY_TOOL_CALLS`). Any text that came with them is cut short, so it is not taken either.
 */
const UNUSABLE_FINISH_REASONS: ReadonlySet<string> = new Set([
  "MALFORMED_FUNCTION_CALL",
  "UNEXPECTED_TOOL_CALL",
  "TOO_MANY_TOOL_CALLS",
]);

const FINISH_REASONS: ReadonlyMap<string, FinishReason> = new Map([
  ["STOP", "stop"],
  ["MAX_TOKENS", "length"],
  ...[
    "SAFETY",
    "RECITATION",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "IMAGE_SAFETY",
    "IMAGE_PROHIBITED_CONTENT",
  ].map((reason): [string, FinishReason] => [reason, "content_filter"]),
]);

function unreadable(problem: string, response: unknown): InvalidProviderResponseError {
  return invalidResponse({ provider: PROVIDER, problem, body: response });
}

/**
 * The response's first candidate; `undefined` only for a blocked prompt (`promptFeedback.blockReason`
 * and no candidate), which is an answer.
 * @throws InvalidProviderResponseError for anything else without a candidate (`{}`, an error body …)
 *   and for a first candidate that is not an object or has neither content nor a finishReason
 */
function firstCandidate(response: Record<string, unknown>): GeminiCandidate | undefined {
  const { candidates } = response;
  if (Array.isArray(candidates) && candidates.length > 0) {
    const [first] = candidates;
    if (!isRecord(first)) {
      throw unreadable(`the first candidate is not an object (got ${describeType(first)})`, response);
    }
    // A finished candidate always has a finishReason; one without it and without content is nothing.
    if ((first.content === undefined || first.content === null) && typeof first.finishReason !== "string") {
      throw unreadable("the first candidate has no content and no finishReason", response);
    }
    return first as GeminiCandidate;
  }
  const feedback = response.promptFeedback;
  if (isRecord(feedback) && typeof feedback.blockReason === "string") return undefined;
  const shown = Array.isArray(candidates) ? "[]" : describeType(candidates);
  throw unreadable(errorBodyProblem(response) ?? `the response has no candidate (candidates: ${shown})`, response);
}

function toUsage(metadata: unknown): UsageInfo | undefined {
  if (!isPlainObject(metadata)) return undefined;
  const reasoningTokens = tokenCount(metadata.thoughtsTokenCount);
  // `candidatesTokenCount` leaves the thinking tokens out; they are output the model was billed
  // for, counted in `completionTokens` as in OpenAI's completion_tokens.
  const completionTokens = (tokenCount(metadata.candidatesTokenCount) ?? 0) + (reasoningTokens ?? 0);
  return usageInfo({
    promptTokens: tokenCount(metadata.promptTokenCount),
    completionTokens,
    totalTokens: tokenCount(metadata.totalTokenCount),
    cachedInputTokens: tokenCount(metadata.cachedContentTokenCount),
    reasoningTokens,
  });
}

/**
 * The prefix of the ids made for calls without one: `gemini_<responseId>`, or
 * `gemini_<sequence>` for a response without `responseId`; the calls are `<prefix>_<index>`.
 */
export function callIdPrefix(responseId: unknown, sequence: number): string {
  return `gemini_${typeof responseId === "string" && responseId !== "" ? responseId : sequence}`;
}

/** What {@link toolCallsOf} reads. */
interface CandidateCalls {
  /** The first candidate's parts. */
  parts: readonly unknown[];
  /** The ids made for calls without one are `<idPrefix>_<index>`. */
  idPrefix: string;
  /** The whole response, for the errors. */
  response: unknown;
}

/**
 * The calls of a candidate's parts, with the API's ids or `<idPrefix>_<index>`.
 * @throws InvalidProviderResponseError for a `functionCall` that is not an object or has no name
 */
function toolCallsOf({ parts, idPrefix, response }: CandidateCalls): ProviderToolCall[] {
  const toolCalls: ProviderToolCall[] = [];
  for (const part of parts) {
    if (!isPlainObject(part)) continue;
    const call = part.functionCall;
    if (call === undefined || call === null) continue;
    if (!isPlainObject(call)) {
      throw unreadable(`a functionCall part is not an object (got ${describeType(call)})`, response);
    }
    if (typeof call.name !== "string" || call.name === "") {
      throw unreadable(`a functionCall part has no name (got ${showValue(call.name)})`, response);
    }
    const given = typeof call.id === "string" && call.id !== "" ? call.id : undefined;
    const metadata: GeminiCallMetadata = {};
    if (given !== undefined) metadata.id = given;
    if (typeof part.thoughtSignature === "string") metadata.thoughtSignature = part.thoughtSignature;
    const converted: ProviderToolCall = {
      id: given ?? `${idPrefix}_${toolCalls.length}`,
      type: "function",
      name: call.name,
      // An object normally (absent → `{}`); anything else reaches the loop, which tells the model.
      arguments: toCallArguments(call.args),
    };
    if (Object.keys(metadata).length > 0) converted.providerMetadata = { [METADATA_KEY]: metadata };
    toolCalls.push(converted);
  }
  return toolCalls;
}

/** What {@link fromGeminiResponse} reads. */
export interface GeminiResponseRequest {
  /** What `generateContent` resolved with. */
  response: unknown;
  /** Names the calls of a response without `responseId`: `gemini_<sequence>_<index>`. */
  sequence: number;
}

/**
 * Converts a `generateContent` answer: the first candidate's text parts (not thought summaries)
 * joined into `content`; its `functionCall` parts as calls, with the API's ids or stable ones made
 * from the response (`gemini_<responseId>_<index>`, `gemini_<sequence>_<index>` without one) and
 * the part's `thoughtSignature` kept in `providerMetadata.gemini`; `finishReason` and `usage`.
 * @throws InvalidProviderResponseError for an answer that is not an object or has no candidate
 *   (unless the prompt was blocked), a first candidate that is not an object or has neither content
 *   nor `finishReason`, a finish reason that leaves no usable answer (`MALFORMED_FUNCTION_CALL` …),
 *   and a `functionCall` part that is not an object or has no name
 */
export function fromGeminiResponse({ response, sequence }: GeminiResponseRequest): LLMResponse {
  // The SDK's response is a class instance (GenerateContentResponse): isRecord, not isPlainObject.
  if (!isRecord(response)) throw unreadable(`the response is not an object (got ${describeType(response)})`, response);
  const candidate = firstCandidate(response);
  const reason = typeof candidate?.finishReason === "string" ? candidate.finishReason : undefined;
  if (reason !== undefined && UNUSABLE_FINISH_REASONS.has(reason)) {
    const message = quoted(candidate?.finishMessage);
    const details = message === undefined ? reason : `${reason}: ${message}`;
    throw unreadable(`the model gave no usable answer (finishReason ${details})`, response);
  }
  const candidateContent = isRecord(candidate?.content) ? candidate.content : undefined;
  const parts: unknown[] = Array.isArray(candidateContent?.parts) ? candidateContent.parts : [];
  const toolCalls = toolCallsOf({ parts, idPrefix: callIdPrefix(response.responseId, sequence), response });
  const content = parts
    .map((part) => (isPlainObject(part) && typeof part.text === "string" && part.thought !== true ? part.text : ""))
    .join("");
  const hasCalls = toolCalls.length > 0;
  // A blocked prompt gets no candidate, hence no finishReason: it was filtered.
  const blocked = isRecord(response.promptFeedback) && typeof response.promptFeedback.blockReason === "string";
  return toLLMResponse({
    content,
    toolCalls,
    finishReason:
      blocked && !hasCalls && !reason
        ? "content_filter"
        : mapFinishReason({ reason: reason || undefined, hasCalls, table: FINISH_REASONS }),
    usage: toUsage(response.usageMetadata),
  });
}
