import type { LLMResponse, LLMStreamPart } from "../../src/index.js";

/** What a `chatStream` yielded, split up. */
export interface CollectedStream {
  /** Every part, in order. */
  parts: LLMStreamPart[];
  /** The `text-delta` parts' text, in order. */
  deltas: string[];
  /** The `response` part's response (the stream must end with exactly one). */
  response: LLMResponse;
}

/**
 * Reads a `chatStream` to its end and checks its shape: `text-delta`s, then exactly one
 * `response` part, last. Rejects with what the stream threw.
 */
export async function collectStream(stream: AsyncIterable<LLMStreamPart>): Promise<CollectedStream> {
  const parts: LLMStreamPart[] = [];
  for await (const part of stream) parts.push(part);
  const last = parts[parts.length - 1];
  if (last?.type !== "response")
    throw new Error(`the stream did not end with a response part: ${JSON.stringify(parts)}`);
  const deltas: string[] = [];
  for (const part of parts.slice(0, -1)) {
    if (part.type !== "text-delta") throw new Error(`a response part before the end: ${JSON.stringify(parts)}`);
    deltas.push(part.delta);
  }
  return { parts, deltas, response: last.response };
}

/** An in-process stream of `events`, as an official client's `create({ stream: true })` resolves with. */
export async function* eventsOf<T>(events: Iterable<T>): AsyncGenerator<T, void> {
  for (const event of events) yield event;
}
