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
 * the first choice's text (or refusal), assembles its calls from their pieces (by `index`; the
 * arguments' JSON text joined), and ends with one `response` part: the completion the chunks add
 * up to, read by {@link fromOpenAIChatCompletion} — the same answer `chat` gives. Usage comes from
 * the last chunk (request it with `stream_options: { include_usage: true }`). Chunks of other
 * choices and unknown fields are ignored.
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
    if (content.add(delta.content) && delta.content !== "") yield { type: "text-delta", delta: delta.content };
    if (refusal.add(delta.refusal) && delta.refusal !== "") yield { type: "text-delta", delta: delta.refusal };
    if (!Array.isArray(delta.tool_calls)) continue;
    for (const piece of delta.tool_calls) {
      if (!isRecord(piece)) continue;
      const call = calls.of(piece);
      // As openai-node's own stream helper: a non-empty id or name sets it (pieces normally bring them once).
      if (typeof piece.id === "string" && piece.id !== "") call.id = piece.id;
      const fn = piece.function;
      if (!isRecord(fn)) continue;
      if (typeof fn.name === "string" && fn.name !== "") call.name = fn.name;
      call.arguments.add(fn.arguments);
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
      call = { id: undefined, name: undefined, arguments: new TextParts() };
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
