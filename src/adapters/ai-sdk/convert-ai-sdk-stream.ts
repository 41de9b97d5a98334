import { describeType, errorMessage, isPlainObject, isRecord } from "../../internal/describe.js";
import type { LLMStreamPart } from "../../provider.js";
import { errorBodyProblem, invalidResponse, quoted } from "../shared/invalid-response.js";
import { TextParts } from "../shared/stream.js";
import {
  type AISDKContentLike,
  type AISDKGenerateResultLike,
  fromAISDKResult,
  PROVIDER,
} from "./convert-ai-sdk-response.js";

/** The part of a `doStream` result (spec v2 or v3) this adapter reads. */
export interface AISDKStreamResultLike {
  /** The stream parts: `text-delta`, `reasoning-delta`, `tool-input-*`, `tool-call`, `finish`, `error` …. */
  stream: ReadableStream<unknown>;
}

/** What {@link fromAISDKStream} reads. */
export interface AISDKStreamRequest {
  /** What `doStream` resolved with. */
  result: AISDKStreamResultLike;
  /** The loop's signal: once aborted, the stream is cancelled and the iteration ends with its reason. */
  signal?: AbortSignal | undefined;
}

/** A text or reasoning block being assembled, in the order the blocks began. */
interface Block {
  type: "text" | "reasoning";
  text: TextParts;
  providerMetadata?: unknown;
}

function unreadable(problem: string, body: unknown, cause?: unknown) {
  return invalidResponse({ provider: PROVIDER, problem, body, ...(cause === undefined ? {} : { cause }) });
}

/** What an `error` part tells: the error's message, or an API error object's type and message; bounded. */
function errorPartProblem(error: unknown): string {
  if (isRecord(error) && !(error instanceof Error)) {
    return (errorBodyProblem({ error }) ?? "the response is an error").replace("the response is", "the stream sent");
  }
  const message = quoted(errorMessage(error));
  return message === undefined ? "the stream sent an error" : `the stream sent an error (${message})`;
}

/** A string field of a part, or an `InvalidProviderResponseError` naming it. */
function field(part: Record<string, unknown>, name: string): string {
  const value = part[name];
  if (typeof value === "string") return value;
  throw unreadable(`a ${String(part.type)} part has no ${name} string (got ${describeType(value)})`, part);
}

/** What {@link PartReader.read} gives once the stream has ended. */
const END: unique symbol = Symbol("end");

/**
 * The parts of a `doStream` result's stream, until it ends or `signal` aborts: an abort cancels the
 * stream (also one that stalls and ignores the signal) and ends the reading with the signal's
 * reason; {@link PartReader.close} before the end cancels it (which cancels the model's request).
 * A plain reader rather than an async generator: one promise per part, not a generator's hops.
 */
class PartReader {
  readonly #reader: ReadableStreamDefaultReader<unknown>;
  readonly #signal: AbortSignal | undefined;
  readonly #cancel = () => {
    this.#reader.cancel(this.#signal?.reason).catch(() => {});
  };
  #done = false;

  /** @throws InvalidProviderResponseError when `result` has no stream */
  constructor(result: unknown, signal: AbortSignal | undefined) {
    const stream = isRecord(result) ? result.stream : undefined;
    if (!isRecord(stream) || typeof stream.getReader !== "function") {
      throw unreadable(`the doStream result has no stream (got ${describeType(stream)})`, result);
    }
    signal?.throwIfAborted();
    this.#reader = (stream as unknown as ReadableStream<unknown>).getReader();
    this.#signal = signal;
    signal?.addEventListener("abort", this.#cancel, { once: true });
  }

  /** The next part, or {@link END}. */
  async read(): Promise<unknown> {
    let next: Awaited<ReturnType<ReadableStreamDefaultReader<unknown>["read"]>>;
    try {
      next = await this.#reader.read();
    } catch (error) {
      // A model that aborts its request on the signal errors its stream with its own AbortError.
      this.#signal?.throwIfAborted();
      throw error;
    }
    this.#signal?.throwIfAborted();
    if (!next.done) return next.value;
    this.#done = true;
    return END;
  }

  /** Stops listening to the signal; cancels the stream when it has not ended. */
  close(): void {
    this.#signal?.removeEventListener("abort", this.#cancel);
    if (!this.#done) this.#cancel();
  }
}

/** The answer of a stream as it arrives: its blocks and calls in order, and its `finish` part. */
class StreamedAnswer {
  readonly #blocks = new Map<string, Block>();
  readonly #content: Array<{ block: Block } | { part: AISDKContentLike }> = [];
  /** The ids of the calls whose input is streamed as JSON (a repeated start is ignored). */
  readonly #streamed = new Set<string>();
  /** The ids of every call started, those streamed as plain text and executed by the provider included. */
  readonly #started = new Set<string>();
  finish: Record<string, unknown> | undefined;

  /** The block of a `text-*` or `reasoning-*` part, begun when it is new; its providerMetadata kept. */
  block(type: Block["type"], part: Record<string, unknown>): Block {
    const key = `${type}:${String(part.id)}`;
    let block = this.#blocks.get(key);
    if (block === undefined) {
      block = { type, text: new TextParts() };
      this.#blocks.set(key, block);
      this.#content.push({ block });
    }
    // The last metadata given wins, as in the AI SDK's own streamText (a thinking signature may come with the end).
    if (isPlainObject(part.providerMetadata)) block.providerMetadata = part.providerMetadata;
    return block;
  }

  /** The `tool-input-start` part to yield for `part`, or `undefined` when its input is not streamed. */
  start(part: Record<string, unknown>): LLMStreamPart | undefined {
    const toolCallId = field(part, "id");
    const toolName = field(part, "toolName");
    if (this.#started.has(toolCallId)) return undefined;
    this.#started.add(toolCallId);
    if (part.providerExecuted === true || part.inputEncoding === "text") return undefined;
    this.#streamed.add(toolCallId);
    return { type: "tool-input-start", toolCallId, toolName };
  }

  /** The `tool-input-delta` part to yield for `part`, or `undefined` for a call not streamed. */
  inputDelta(part: Record<string, unknown>): LLMStreamPart | undefined {
    const toolCallId = field(part, "id");
    const delta = field(part, "delta");
    return this.#streamed.has(toolCallId) && delta !== "" ? { type: "tool-input-delta", toolCallId, delta } : undefined;
  }

  call(part: Record<string, unknown>): void {
    this.#content.push({ part: part as unknown as AISDKContentLike });
  }

  /** The content parts `doGenerate` would have returned: blocks with their text, calls as they came. */
  content(): AISDKContentLike[] {
    return this.#content.map((entry) => ("part" in entry ? entry.part : blockPart(entry.block)));
  }
}

/** A block as the content part `doGenerate` would have returned. */
function blockPart(block: Block): AISDKContentLike {
  const part: Record<string, unknown> = { type: block.type, text: block.text.text() };
  if (block.providerMetadata !== undefined) part.providerMetadata = block.providerMetadata;
  return part as unknown as AISDKContentLike;
}

/** Reads one part into `answer`; returns the delta to yield, if any. */
function readPart(answer: StreamedAnswer, part: unknown): LLMStreamPart | undefined {
  if (!isRecord(part) || typeof part.type !== "string") {
    throw unreadable(`a stream part is not an object with a type (got ${describeType(part)})`, part);
  }
  switch (part.type) {
    case "text-start":
    case "reasoning-start":
    case "reasoning-end":
      answer.block(part.type.startsWith("text") ? "text" : "reasoning", part);
      return undefined;
    case "text-delta":
    case "reasoning-delta": {
      const delta = field(part, "delta");
      answer.block(part.type === "text-delta" ? "text" : "reasoning", part).text.add(delta);
      return delta === "" ? undefined : { type: part.type, delta };
    }
    case "tool-input-start":
      return answer.start(part);
    case "tool-input-delta":
      return answer.inputDelta(part);
    case "tool-call":
      answer.call(part);
      return undefined;
    case "finish":
      answer.finish = part;
      return undefined;
    case "error":
      throw unreadable(errorPartProblem(part.error), part, part.error);
    default:
      return undefined;
  }
}

/**
 * Reads a `doStream` result (spec v2 or v3): yields `text-delta`, `reasoning-delta`,
 * `tool-input-start` (a part's `id` as the `toolCallId`) and `tool-input-delta` parts as they
 * arrive — not for calls the provider executes itself (`providerExecuted`) nor for a call whose
 * input is streamed as plain text (`inputEncoding: "text"`) — and ends with one `response` part:
 * the text and reasoning blocks, the `tool-call` parts and the `finish` part's finish reason and
 * usage, read as `doGenerate`'s content by {@link fromAISDKResult}, so the answer is the one `chat`
 * gives. Other parts (`stream-start`, `response-metadata`, `source`, `file`, `raw` …) are ignored.
 * @throws InvalidProviderResponseError for a result without a stream, a part that is not an object
 *   or lacks its fields, an `error` part (its error as the `cause`), a stream that ends without a
 *   `finish` part, and for what {@link fromAISDKResult} refuses; an error of the stream itself
 *   propagates as it is, and an abort as the signal's reason
 */
export async function* fromAISDKStream({ result, signal }: AISDKStreamRequest): AsyncGenerator<LLMStreamPart, void> {
  const answer = new StreamedAnswer();
  const reader = new PartReader(result, signal);
  try {
    for (let part = await reader.read(); part !== END; part = await reader.read()) {
      const delta = readPart(answer, part);
      if (delta !== undefined) yield delta;
    }
  } finally {
    reader.close();
  }
  const content = answer.content();
  const { finish } = answer;
  if (finish === undefined) throw unreadable("the stream ended without a finish part", { content });
  const whole = { content, finishReason: finish.finishReason, usage: finish.usage } as AISDKGenerateResultLike;
  yield { type: "response", response: fromAISDKResult(whole) };
}
