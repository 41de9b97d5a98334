import { isRecord } from "../../internal/describe.js";
import type { LLMStreamPart } from "../../provider.js";
import { invalidResponse } from "../shared/invalid-response.js";
import { byIndex, streamEvents, streamIndex, TextParts } from "../shared/stream.js";
import { fromOpenAIChatCompletion, PROVIDER } from "./convert-openai-chat-response.js";

/** One call being assembled from `delta.tool_calls` pieces. */
interface CallParts {
  id: unknown;
  name: unknown;
  arguments: TextParts;
  /** Whether its `tool-input-start` was yielded (once both its id and name came). */
  started: boolean;
  /** Argument pieces that came before the id and name, yielded once the call starts. */
  early: string[];
}

/** What {@link fromOpenAIChatStream} and `fromOpenAIResponsesStream` read. */
export interface OpenAIStreamRequest {
  /** What the client's `create({ …, stream: true })` resolved with: its chunks or events. */
  stream: unknown;
  /** The loop's signal: an abort ends the iteration with its reason. */
  signal?: AbortSignal | undefined;
  /** In strict mode, the tool schemas by name, as for {@link fromOpenAIChatCompletion} and `fromOpenAIResponse`. */
  strictSchemas?: Map<string, Record<string, unknown>> | undefined;
}

/**
 * Reads a streamed Chat Completion (`ChatCompletionChunk`s): yields a `text-delta` per piece of
 * the first choice's text (or refusal), a `reasoning-delta` per piece of `delta.reasoning_content`
 * or `delta.reasoning` (sent by compatible servers such as DeepSeek, vLLM and OpenRouter; OpenAI
 * sends none), and per call a `tool-input-start` once its id and name have come, then a
 * `tool-input-delta` per piece of its arguments (the raw JSON text, also in strict mode). It
 * assembles the calls from their pieces (by `index`; the arguments' JSON text joined) and ends with
 * one `response` part: the completion the chunks add up to, read by {@link fromOpenAIChatCompletion}
 * — the same answer `chat` gives, with the same call ids. Usage comes from the last chunk (request
 * it with `stream_options: { include_usage: true }`). Chunks of other choices and unknown fields
 * are ignored.
 * @throws InvalidProviderResponseError when the stream ends before a `finish_reason` (a cut-off
 *   answer), and for what {@link fromOpenAIChatCompletion} refuses (a call without a name …); an
 *   error the client raises for an error chunk propagates as it is
 */
export async function* fromOpenAIChatStream({
  stream,
  signal,
  strictSchemas,
}: OpenAIStreamRequest): AsyncGenerator<LLMStreamPart, void> {
  const content = new TextParts();
  const refusal = new TextParts();
  const calls = new StreamedCalls();
  let finishReason: unknown;
  let usage: unknown;
  for await (const chunk of streamEvents({ provider: PROVIDER, stream, signal })) {
    if (!isRecord(chunk)) continue;
    if (isRecord(chunk.usage)) usage = chunk.usage;
    const choice = Array.isArray(chunk.choices) ? chunk.choices.find(isFirstChoice) : undefined;
    if (!isRecord(choice)) continue;
    if (typeof choice.finish_reason === "string") finishReason = choice.finish_reason;
    const delta = choice.delta;
    if (!isRecord(delta)) continue;
    // OpenAI sends no reasoning text; compatible servers do, under one of these names.
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (typeof reasoning === "string" && reasoning !== "") yield { type: "reasoning-delta", delta: reasoning };
    if (content.add(delta.content) && delta.content !== "") yield { type: "text-delta", delta: delta.content };
    if (refusal.add(delta.refusal) && delta.refusal !== "") yield { type: "text-delta", delta: delta.refusal };
    if (!Array.isArray(delta.tool_calls)) continue;
    for (const piece of delta.tool_calls) {
      if (!isRecord(piece)) continue;
      const call = calls.of(piece);
      // As openai-node's own stream helper: a non-empty id or name sets it (pieces normally bring them once).
      if (typeof piece.id === "string" && piece.id !== "") call.id = piece.id;
      const fn = isRecord(piece.function) ? piece.function : undefined;
      if (typeof fn?.name === "string" && fn.name !== "") call.name = fn.name;
      const input = fn?.arguments;
      if (call.arguments.add(input) && !call.started && input !== "") call.early.push(input);
      yield* inputParts(call, input);
    }
  }
  const completion = {
    choices: [
      {
        message: {
          role: "assistant",
          content: content.empty ? null : content.text(),
          ...(refusal.empty ? {} : { refusal: refusal.text() }),
          ...(calls.byIndex.size === 0 ? {} : { tool_calls: byIndex(calls.byIndex).map(toWireCall) }),
        },
        finish_reason: finishReason ?? null,
      },
    ],
    ...(usage === undefined ? {} : { usage }),
  };
  if (finishReason === undefined) {
    throw invalidResponse({
      provider: PROVIDER,
      problem: "the stream ended without a finish_reason",
      body: completion,
    });
  }
  yield { type: "response", response: fromOpenAIChatCompletion(completion, strictSchemas) };
}

/**
 * The call's input parts for one piece: its `tool-input-start` once both the id and the name have
 * come (the id is the one the final response carries), with the argument pieces that came before;
 * after that, the piece's arguments as they are (raw JSON text, also in strict mode).
 */
function* inputParts(call: CallParts, input: unknown): Generator<LLMStreamPart> {
  const { id, name } = call;
  if (!call.started) {
    if (typeof id !== "string" || typeof name !== "string") return;
    call.started = true;
    yield { type: "tool-input-start", toolCallId: id, toolName: name };
    for (const delta of call.early) yield { type: "tool-input-delta", toolCallId: id, delta };
    call.early = [];
    return;
  }
  if (typeof input === "string" && input !== "" && typeof id === "string") {
    yield { type: "tool-input-delta", toolCallId: id, delta: input };
  }
}

function isFirstChoice(choice: unknown): boolean {
  // Compatible servers may leave the index out; with n > 1 only choice 0 is read, as in `chat`.
  return isRecord(choice) && (choice.index === undefined || choice.index === 0);
}

/** The calls of a streamed message, assembled from their pieces. */
class StreamedCalls {
  readonly byIndex = new Map<number, CallParts>();
  #last: CallParts | undefined;
  #next = 0;

  /**
   * The call a piece belongs to: by its `index`; without one (some compatible servers), a new call
   * when it brings an id other than the current call's, else the current call.
   */
  of(piece: Record<string, unknown>): CallParts {
    let index = streamIndex(piece.index);
    if (index === undefined) {
      const last = this.#last;
      const newId = typeof piece.id === "string" && piece.id !== "" && piece.id !== last?.id;
      if (last !== undefined && !newId) return last;
      index = this.#next;
    }
    let call = this.byIndex.get(index);
    if (call === undefined) {
      call = { id: undefined, name: undefined, arguments: new TextParts(), started: false, early: [] };
      this.byIndex.set(index, call);
      this.#next = Math.max(this.#next, index + 1);
    }
    this.#last = call;
    return call;
  }
}

function toWireCall(call: CallParts): Record<string, unknown> {
  return {
    ...(call.id === undefined ? {} : { id: call.id }),
    type: "function",
    function: { name: call.name, arguments: call.arguments.text() },
  };
}
