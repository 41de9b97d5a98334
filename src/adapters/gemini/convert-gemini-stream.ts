import { isInvalidProviderResponseError } from "../../errors.js";
import { describeType, errorMessage, isPlainObject, isRecord, jsonText, showValue } from "../../internal/describe.js";
import type { LLMStreamPart } from "../../provider.js";
import { callArgumentsText } from "../shared/call-arguments.js";
import { errorBodyProblem, invalidResponse } from "../shared/invalid-response.js";
import { streamEvents, TextParts } from "../shared/stream.js";
import { callIdPrefix, fromGeminiResponse, type GeminiGenerateContentResponse } from "./convert-gemini-response.js";
import { PROVIDER } from "./convert-to-gemini-messages.js";

/** What {@link fromGeminiStream} reads. */
export interface GeminiStreamRequest {
  /** What `client.models.generateContentStream(…)` resolved with: its chunks. */
  stream: unknown;
  /** The loop's signal: an abort ends the iteration with its reason. */
  signal?: AbortSignal | undefined;
  /** Names the calls of a response without `responseId`, as for {@link fromGeminiResponse}. @default 1 */
  sequence?: number;
}

/** A call whose arguments Vertex AI streams in pieces (`partialArgs`, `willContinue`). */
interface OpenCall {
  /** The arguments built so far (the assembled call's `args`). */
  args: Record<string, unknown>;
  /** The call's id, as the final response will give it. */
  id: string;
  /** The string values still coming in pieces (`willContinue`), by JSON path. */
  pending: Map<string, PendingString>;
}

/** A string argument whose pieces are still coming. */
interface PendingString {
  /** Its path's keys. */
  keys: Array<string | number>;
  /** Its pieces so far. */
  parts: TextParts;
}

/** Deepest JSON path of a streamed argument (a model could send any). */
const MAX_PATH_KEYS = 64;

/** One step of an RFC 9535 path: `.name`, `[0]`, `['name']` or `["name"]`. */
const PATH_STEP = /\.([^.[\]]+)|\[(\d+)\]|\['([^']*)'\]|\["([^"]*)"\]/y;

/**
 * Reads a streamed `generateContent` answer (`generateContentStream`'s chunks): yields a
 * `text-delta` per piece of answer text, a `reasoning-delta` per piece of a thought summary
 * (`thought: true`, never part of the content), and for each `functionCall` a `tool-input-start`
 * and one `tool-input-delta` with its arguments as JSON text, under the id the final response
 * gives the call. Gemini sends a call whole in one chunk; a call whose arguments Vertex AI streams
 * (`streamFunctionCallArguments`: `willContinue` and `partialArgs` pieces, closed by an empty
 * `functionCall`) starts when its name arrives and gets its JSON text once it is closed. Ends with
 * one `response` part read by {@link fromGeminiResponse} from the chunks put together — the same
 * answer `chat` gives: the text joined, the calls with their `thoughtSignature`, the finish reason
 * and usage of the last chunk that has them.
 * @throws InvalidProviderResponseError for a chunk that is not an object, an error body, a chunk
 *   whose candidates are not an array or whose first candidate is not an object, a `partialArgs`
 *   path it cannot follow, a stream that breaks off (the client's own error is the `cause`) or that
 *   ends without a `finishReason` (nor a blocked prompt), and for what {@link fromGeminiResponse}
 *   refuses; an API error the client raises (it has a `status`) propagates as it is, and an abort
 *   ends the iteration with the signal's reason
 */
export async function* fromGeminiStream({
  stream,
  signal,
  sequence = 1,
}: GeminiStreamRequest): AsyncGenerator<LLMStreamPart, void> {
  const answer = new StreamedAnswer(sequence);
  try {
    for await (const chunk of streamEvents({ provider: PROVIDER, stream, signal })) yield* answer.add(chunk);
  } catch (error) {
    throw streamError(error, signal);
  }
  yield* answer.finish();
}

const unreadable: Unreadable = (problem, body) => invalidResponse({ provider: PROVIDER, problem, body });

/** The chunks of one streamed answer put together, as `generateContent` would have sent it. */
class StreamedAnswer {
  readonly #sequence: number;
  readonly #text = new TextParts();
  readonly #callParts: Record<string, unknown>[] = [];
  readonly #response: GeminiGenerateContentResponse & Record<string, unknown> = {};
  readonly #candidate: Record<string, unknown> = {};
  #idPrefix: string | undefined;
  #open: OpenCall | undefined;

  constructor(sequence: number) {
    this.#sequence = sequence;
  }

  /** Reads a chunk; yields its deltas. */
  *add(chunk: unknown): Generator<LLMStreamPart> {
    if (!isRecord(chunk))
      throw unreadable(`a chunk of the stream is not an object (got ${describeType(chunk)})`, chunk);
    const problem = errorBodyProblem(chunk);
    if (problem !== undefined) throw unreadable(problem, chunk);
    const response = this.#response;
    // Fixed once a call has been named by it, so that the response names the calls the same way.
    if (response.responseId === undefined && this.#idPrefix === undefined && typeof chunk.responseId === "string") {
      if (chunk.responseId !== "") response.responseId = chunk.responseId;
    }
    if (hasTokenCounts(chunk.usageMetadata)) response.usageMetadata = chunk.usageMetadata;
    if (isRecord(chunk.promptFeedback)) response.promptFeedback = chunk.promptFeedback;
    const first = firstCandidateOf(chunk);
    if (first === undefined) return;
    if (typeof first.finishReason === "string") this.#candidate.finishReason = first.finishReason;
    if (typeof first.finishMessage === "string") this.#candidate.finishMessage = first.finishMessage;
    const parts = isRecord(first.content) && Array.isArray(first.content.parts) ? first.content.parts : [];
    for (const part of parts) {
      if (!isPlainObject(part)) continue;
      if (part.functionCall !== undefined && part.functionCall !== null) yield* this.#call(part);
      if (typeof part.text === "string" && part.text !== "") {
        if (part.thought === true) yield { type: "reasoning-delta", delta: part.text };
        else if (this.#text.add(part.text)) yield { type: "text-delta", delta: part.text };
      }
    }
  }

  /** Checks that the answer is whole; yields the open call's input and the response. */
  *finish(): Generator<LLMStreamPart> {
    const response = this.#response;
    const text = this.#text;
    const finishReason = this.#candidate.finishReason;
    const blocked = isRecord(response.promptFeedback) && typeof response.promptFeedback.blockReason === "string";
    const content = { role: "model", parts: [...(text.empty ? [] : [{ text: text.text() }]), ...this.#callParts] };
    if (finishReason !== undefined || this.#callParts.length > 0 || !text.empty) {
      response.candidates = [{ ...this.#candidate, content }];
    }
    if (finishReason === undefined && !blocked) throw unreadable("the stream ended without a finishReason", response);
    yield* this.#close();
    yield { type: "response", response: fromGeminiResponse({ response, sequence: this.#sequence }) };
  }

  /** A part with a `functionCall`: a whole call, the start of a streamed one, or a piece of the open one. */
  *#call(part: Record<string, unknown>): Generator<LLMStreamPart> {
    const call = part.functionCall;
    if (this.#open !== undefined && isRecord(call) && call.name === undefined) {
      // A piece of the open call's arguments; one without `willContinue` closes it.
      addPartialArgs(this.#open, call.partialArgs);
      if (call.willContinue !== true) yield* this.#close();
      return;
    }
    yield* this.#close();
    if (!isPlainObject(call) || typeof call.name !== "string" || call.name === "") {
      // Kept for fromGeminiResponse, which names what is wrong with it.
      this.#callParts.push(part);
      return;
    }
    this.#idPrefix ??= callIdPrefix(this.#response.responseId, this.#sequence);
    // The API's id, or the one fromGeminiResponse makes from the call's position.
    const id = typeof call.id === "string" && call.id !== "" ? call.id : `${this.#idPrefix}_${this.#callParts.length}`;
    const { willContinue: _continues, partialArgs, ...whole } = call;
    const assembled: { functionCall: Record<string, unknown>; thoughtSignature?: string } = { functionCall: whole };
    if (typeof part.thoughtSignature === "string") assembled.thoughtSignature = part.thoughtSignature;
    this.#callParts.push(assembled);
    yield { type: "tool-input-start", toolCallId: id, toolName: call.name };
    if (call.willContinue !== true) {
      yield { type: "tool-input-delta", toolCallId: id, delta: callArgumentsText(call.args) };
      return;
    }
    const args: Record<string, unknown> = isPlainObject(call.args) ? { ...call.args } : {};
    whole.args = args;
    this.#open = { args, id, pending: new Map() };
    addPartialArgs(this.#open, partialArgs);
  }

  /** Ends the open call: its strings still in pieces set, its arguments yielded as JSON text. */
  *#close(): Generator<LLMStreamPart> {
    const open = this.#open;
    if (open === undefined) return;
    this.#open = undefined;
    const { id, args, pending } = open;
    for (const [path, { keys, parts }] of pending) setArgument({ args, path, keys, value: parts.text() });
    yield { type: "tool-input-delta", toolCallId: id, delta: jsonText(args) ?? "{}" };
  }
}

/** Whether a chunk's `usageMetadata` has counts (Vertex AI's early chunks carry only `trafficType`). */
function hasTokenCounts(metadata: unknown): metadata is Record<string, unknown> {
  return (
    isRecord(metadata) &&
    ["promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount", "totalTokenCount"].some(
      (key) => typeof metadata[key] === "number",
    )
  );
}

type Unreadable = (problem: string, body: unknown) => Error;

/** A chunk's first candidate, `undefined` when it has none (a usage-only or blocked-prompt chunk). */
function firstCandidateOf(chunk: Record<string, unknown>): Record<string, unknown> | undefined {
  const { candidates } = chunk;
  if (candidates === undefined || candidates === null) return undefined;
  if (!Array.isArray(candidates)) {
    throw unreadable(`a chunk's candidates is not an array (got ${describeType(candidates)})`, chunk);
  }
  const [first] = candidates;
  if (first === undefined) return undefined;
  if (!isRecord(first))
    throw unreadable(`a chunk's first candidate is not an object (got ${describeType(first)})`, chunk);
  return first;
}

/**
 * What the iteration threw, as the stream's caller gets it: the signal's reason after an abort, an
 * API error of the client (it has a `status`) and our own errors as they are, anything else (an
 * unparsable chunk, a connection cut mid-way) as an `InvalidProviderResponseError` with it as `cause`.
 */
function streamError(error: unknown, signal: AbortSignal | undefined): unknown {
  if (signal?.aborted) return signal.reason;
  if (isInvalidProviderResponseError(error)) return error;
  if (isRecord(error) && typeof error.status === "number") return error;
  return invalidResponse({
    provider: PROVIDER,
    problem: `the stream could not be read to its end (${errorMessage(error)})`,
    body: undefined,
    cause: error,
  });
}

/**
 * Adds Vertex AI's streamed argument pieces (`partialArgs`) to the open call. A string that
 * continues (`willContinue`) is gathered in pieces and set once its last piece arrives, so that
 * megabytes of arguments cost linear time.
 */
function addPartialArgs(open: OpenCall, pieces: unknown): void {
  if (!Array.isArray(pieces)) return;
  for (const piece of pieces) {
    if (!isRecord(piece) || typeof piece.jsonPath !== "string") continue;
    let value = pieceValue(piece);
    if (value === undefined) continue;
    const path = piece.jsonPath;
    const pending = open.pending.get(path);
    const keys = pending?.keys ?? pathKeys(path);
    if (keys === undefined) throw unreadable(`a partialArgs jsonPath cannot be read (got ${showValue(path)})`, piece);
    if (typeof value === "string" && (pending !== undefined || piece.willContinue === true)) {
      const parts = pending?.parts ?? new TextParts();
      parts.add(value);
      if (piece.willContinue === true) {
        if (pending === undefined) open.pending.set(path, { keys, parts });
        continue;
      }
      value = parts.text();
    } else if (pending !== undefined) {
      setArgument({ args: open.args, path, keys, value: pending.parts.text() });
    }
    open.pending.delete(path);
    setArgument({ args: open.args, path, keys, value });
  }
}

/** What {@link setArgument} sets. */
interface ArgumentValue {
  args: Record<string, unknown>;
  path: string;
  keys: Array<string | number>;
  value: unknown;
}

/** @throws InvalidProviderResponseError when the path does not fit the arguments built so far */
function setArgument({ args, path, keys, value }: ArgumentValue): void {
  if (!setAt(args, keys, value)) {
    throw unreadable(`a partialArgs jsonPath does not fit the arguments (got ${showValue(path)})`, { path, keys });
  }
}

/** A piece's value: `stringValue`, `numberValue`, `boolValue`, or `null` for `nullValue`. */
function pieceValue(piece: Record<string, unknown>): unknown {
  if (typeof piece.stringValue === "string") return piece.stringValue;
  if (typeof piece.numberValue === "number") return piece.numberValue;
  if (typeof piece.boolValue === "boolean") return piece.boolValue;
  if (piece.nullValue !== undefined) return null;
  return undefined;
}

/** The keys of a JSON path below the root (`$.a.b[0]` → `["a", "b", 0]`), `undefined` when it cannot be read. */
function pathKeys(path: string): Array<string | number> | undefined {
  if (!path.startsWith("$")) return undefined;
  const keys: Array<string | number> = [];
  let at = 1;
  while (at < path.length) {
    PATH_STEP.lastIndex = at;
    const step = PATH_STEP.exec(path);
    if (step === null || keys.length >= MAX_PATH_KEYS) return undefined;
    keys.push(step[2] === undefined ? (step[1] ?? step[3] ?? step[4] ?? "") : Number(step[2]));
    at = PATH_STEP.lastIndex;
  }
  return keys.length > 0 ? keys : undefined;
}

/**
 * Sets `value` at `keys` in `root`, making the objects and arrays on the way. Keys are defined as
 * own properties (a model's `__proto__` is a key like any other); an array grows by one index at
 * most. Returns `false` when the path does not fit what is there.
 */
function setAt(root: Record<string, unknown>, keys: Array<string | number>, value: unknown): boolean {
  let container: Record<string, unknown> | unknown[] = root;
  for (const [position, key] of keys.entries()) {
    const last = position === keys.length - 1;
    const current = ownValue(container, key);
    let next: unknown;
    if (last) next = value;
    else {
      const wantsArray = typeof keys[position + 1] === "number";
      next = wantsArray ? (Array.isArray(current) ? current : []) : isPlainObject(current) ? current : {};
    }
    if (!put(container, key, next)) return false;
    if (!last) container = next as Record<string, unknown> | unknown[];
  }
  return true;
}

function ownValue(container: Record<string, unknown> | unknown[], key: string | number): unknown {
  const name = String(key);
  return Object.hasOwn(container, name) ? (container as Record<string, unknown>)[name] : undefined;
}

function put(container: Record<string, unknown> | unknown[], key: string | number, value: unknown): boolean {
  if (Array.isArray(container)) {
    if (typeof key !== "number" || key > container.length) return false;
    container[key] = value;
    return true;
  }
  Object.defineProperty(container, String(key), { value, writable: true, enumerable: true, configurable: true });
  return true;
}
