import { isRecord } from "../../internal/describe.js";
import type { LLMStreamPart } from "../../provider.js";
import { invalidResponse, quoted } from "../shared/invalid-response.js";
import { byIndex, streamEvents, streamIndex, TextParts } from "../shared/stream.js";
import type { OpenAIStreamRequest } from "./convert-openai-chat-stream.js";
import { fromOpenAIResponse, PROVIDER } from "./convert-openai-responses-response.js";

/** The events that end a streamed response; each carries the whole `Response`. */
const TERMINAL_EVENTS: ReadonlySet<unknown> = new Set(["response.completed", "response.incomplete", "response.failed"]);

/** One output item being assembled from its events. */
interface ItemParts {
  /** The item as `output_item.added` (then `output_item.done`) sent it. */
  item: Record<string, unknown> | undefined;
  /** Whether `item` is the finished one (`output_item.done`). */
  done: boolean;
  /** A function call's arguments: the deltas, or the whole text once `function_call_arguments.done` came. */
  arguments: TextParts;
  argumentsDone: string | undefined;
  texts: TextParts;
  refusals: TextParts;
  /** A function call's id (`call_id`) once its `tool-input-start` was yielded. */
  callId: string | undefined;
}

/**
 * Reads a streamed Responses API answer (`ResponseStreamEvent`s): yields a `text-delta` per
 * `response.output_text.delta` (and `response.refusal.delta`), a `reasoning-delta` per
 * `response.reasoning_summary_text.delta` (the reasoning summary, when the request asks for one
 * with `reasoning: { summary: "auto" }`) and `response.reasoning_text.delta`, a `tool-input-start`
 * per `function_call` item (`response.output_item.added`; its id the item's `call_id`) and a
 * `tool-input-delta` per `response.function_call_arguments.delta` (raw JSON text, by
 * `output_index`, else by `item_id`), and ends with one `response` part
 * read by {@link fromOpenAIResponse} from the `Response` of the final event
 * (`response.completed`, `response.incomplete` or `response.failed`) — the same answer `chat`
 * gives, usage included. Should that final `Response` have no output items (`output` missing or
 * empty), the items assembled from the stream stand in (function calls by `output_index`, their arguments' deltas joined).
 * Other events are ignored.
 * @throws InvalidProviderResponseError for an `error` event, a stream that ends without a final
 *   event, and for what {@link fromOpenAIResponse} refuses (a failed response …)
 */
export async function* fromOpenAIResponsesStream({
  stream,
  signal,
  strictSchemas,
}: OpenAIStreamRequest): AsyncGenerator<LLMStreamPart, void> {
  const items = new StreamedItems();
  let final: Record<string, unknown> | undefined;
  for await (const event of streamEvents({ provider: PROVIDER, stream, signal })) {
    if (!isRecord(event)) continue;
    const { type } = event;
    if (type === "error") {
      const details = [quoted(event.code), quoted(event.message)].filter((part) => part !== undefined).join(": ");
      const problem = details === "" ? "the stream sent an error" : `the stream sent an error (${details})`;
      throw invalidResponse({ provider: PROVIDER, problem, body: event });
    }
    if (TERMINAL_EVENTS.has(type)) {
      final = isRecord(event.response) ? event.response : {};
      break;
    }
    const parts = items.of(event);
    if (parts !== undefined) yield* itemEventParts(parts, event);
  }
  if (final === undefined) {
    throw invalidResponse({
      provider: PROVIDER,
      problem: "the stream ended without response.completed",
      body: { output: byIndex(items.byIndex).map(assembledItem) },
    });
  }
  // Only a missing or empty output is filled in; anything else is read (and refused) as chat would.
  const noOutput = final.output === undefined || (Array.isArray(final.output) && final.output.length === 0);
  const response = noOutput ? { ...final, output: byIndex(items.byIndex).map(assembledItem) } : final;
  yield { type: "response", response: fromOpenAIResponse(response, strictSchemas) };
}

/** The output items of a streamed response, assembled from their events. */
class StreamedItems {
  readonly byIndex = new Map<number, ItemParts>();
  /** Item ids to output indexes, for an event that names its item only. */
  readonly #indexOfItem = new Map<string, number>();

  /** The item an event belongs to: by its `output_index`, else its `item_id`; `undefined` for neither. */
  of(event: Record<string, unknown>): ItemParts | undefined {
    const index =
      streamIndex(event.output_index) ??
      (typeof event.item_id === "string" ? this.#indexOfItem.get(event.item_id) : undefined);
    if (index === undefined) return undefined;
    if (isRecord(event.item) && typeof event.item.id === "string") this.#indexOfItem.set(event.item.id, index);
    let parts = this.byIndex.get(index);
    if (parts === undefined) {
      parts = {
        item: undefined,
        done: false,
        arguments: new TextParts(),
        argumentsDone: undefined,
        texts: new TextParts(),
        refusals: new TextParts(),
        callId: undefined,
      };
      this.byIndex.set(index, parts);
    }
    return parts;
  }
}

/** What one event of an output item adds to it, and the delta parts it yields. */
function* itemEventParts(parts: ItemParts, event: Record<string, unknown>): Generator<LLMStreamPart> {
  const { type, delta } = event;
  switch (type) {
    case "response.output_text.delta":
      if (parts.texts.add(delta) && delta !== "") yield { type: "text-delta", delta };
      break;
    case "response.refusal.delta":
      if (parts.refusals.add(delta) && delta !== "") yield { type: "text-delta", delta };
      break;
    case "response.reasoning_summary_text.delta":
    case "response.reasoning_text.delta":
      if (typeof delta === "string" && delta !== "") yield { type: "reasoning-delta", delta };
      break;
    case "response.function_call_arguments.delta":
      if (parts.arguments.add(delta) && delta !== "" && parts.callId !== undefined) {
        yield { type: "tool-input-delta", toolCallId: parts.callId, delta };
      }
      break;
    case "response.function_call_arguments.done":
      if (typeof event.arguments === "string") parts.argumentsDone = event.arguments;
      break;
    case "response.output_item.added":
    case "response.output_item.done":
      if (isRecord(event.item) && !parts.done) {
        parts.item = event.item;
        parts.done = type === "response.output_item.done";
        yield* callStart(parts, event.item);
      }
      break;
  }
}

/**
 * A `function_call` item's `tool-input-start` (its id the `call_id` the final response carries),
 * once, with the arguments the item already holds as a first `tool-input-delta` (empty when
 * `output_item.added` starts it; the whole text when a server sent only `output_item.done`).
 */
function* callStart(parts: ItemParts, item: Record<string, unknown>): Generator<LLMStreamPart> {
  if (parts.callId !== undefined || item.type !== "function_call") return;
  const { call_id: id, name, arguments: input } = item;
  if (typeof id !== "string" || id === "" || typeof name !== "string" || name === "") return;
  parts.callId = id;
  yield { type: "tool-input-start", toolCallId: id, toolName: name };
  if (typeof input === "string" && input !== "") yield { type: "tool-input-delta", toolCallId: id, delta: input };
}

/** An output item as the stream built it: the finished item when it came, else the pieces put together. */
function assembledItem(parts: ItemParts): unknown {
  const { item } = parts;
  if (parts.done || item === undefined) return item ?? {};
  if (item.type === "function_call") {
    return { ...item, arguments: parts.argumentsDone ?? parts.arguments.text() };
  }
  if (item.type === "message") {
    const content: Array<Record<string, unknown>> = [];
    if (!parts.texts.empty) content.push({ type: "output_text", text: parts.texts.text() });
    if (!parts.refusals.empty) content.push({ type: "refusal", refusal: parts.refusals.text() });
    return { ...item, content };
  }
  return item;
}
