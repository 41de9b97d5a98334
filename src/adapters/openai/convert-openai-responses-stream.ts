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
}

/**
 * Reads a streamed Responses API answer (`ResponseStreamEvent`s): yields a `text-delta` per
 * `response.output_text.delta` (and `response.refusal.delta`), and ends with one `response` part
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
  const items = new Map<number, ItemParts>();
  const partsOf = (index: number): ItemParts => {
    let parts = items.get(index);
    if (parts === undefined) {
      parts = {
        item: undefined,
        done: false,
        arguments: new TextParts(),
        argumentsDone: undefined,
        texts: new TextParts(),
        refusals: new TextParts(),
      };
      items.set(index, parts);
    }
    return parts;
  };
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
    const index = streamIndex(event.output_index);
    if (index === undefined) continue;
    const parts = partsOf(index);
    switch (type) {
      case "response.output_text.delta":
        if (parts.texts.add(event.delta) && event.delta !== "") yield { type: "text-delta", delta: event.delta };
        break;
      case "response.refusal.delta":
        if (parts.refusals.add(event.delta) && event.delta !== "") yield { type: "text-delta", delta: event.delta };
        break;
      case "response.function_call_arguments.delta":
        parts.arguments.add(event.delta);
        break;
      case "response.function_call_arguments.done":
        if (typeof event.arguments === "string") parts.argumentsDone = event.arguments;
        break;
      case "response.output_item.added":
      case "response.output_item.done":
        if (isRecord(event.item) && !parts.done) {
          parts.item = event.item;
          parts.done = type === "response.output_item.done";
        }
        break;
    }
  }
  if (final === undefined) {
    throw invalidResponse({
      provider: PROVIDER,
      problem: "the stream ended without response.completed",
      body: { output: byIndex(items).map(assembledItem) },
    });
  }
  // Only a missing or empty output is filled in; anything else is read (and refused) as chat would.
  const noOutput = final.output === undefined || (Array.isArray(final.output) && final.output.length === 0);
  const response = noOutput ? { ...final, output: byIndex(items).map(assembledItem) } : final;
  yield { type: "response", response: fromOpenAIResponse(response, strictSchemas) };
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
