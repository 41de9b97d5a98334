import { describeType } from "../../internal/describe.js";
import { invalidResponse, quoted } from "./invalid-response.js";

/** What {@link streamEvents} reads. */
export interface StreamRequest {
  /** The API's name, e.g. `"Anthropic"`: the prefix of the error for a value that is no stream. */
  provider: string;
  /** What the client's `create(…, { stream: true })` resolved with: its stream of events. */
  stream: unknown;
  /** The loop's signal: once aborted, no more events are read. */
  signal: AbortSignal | undefined;
}

/**
 * The events of a client's stream, until it ends or `signal` aborts. The official clients end
 * their streams quietly when the request is aborted; here an abort ends the iteration by throwing
 * the signal's reason, so a cut-off stream is never taken for a whole answer. When the consumer
 * stops early, the client's iterator is returned, which cancels its request.
 * @throws InvalidProviderResponseError when `stream` is not async iterable (a client that ignored
 *   `stream: true`), and for an event the client could not parse (its `SyntaxError` the `cause`);
 *   any other error of the client (an `APIError` for an error event, a broken connection)
 *   propagates as it is
 */
export async function* streamEvents({ provider, stream, signal }: StreamRequest): AsyncGenerator<unknown, void> {
  if (!isAsyncIterable(stream)) {
    throw invalidResponse({
      provider,
      problem: `the client did not return a stream (got ${describeType(stream)})`,
      body: stream,
    });
  }
  try {
    for await (const event of stream) {
      signal?.throwIfAborted();
      yield event;
    }
  } catch (error) {
    // The official clients parse each event's data with JSON.parse and let its SyntaxError out.
    if (!(error instanceof SyntaxError) || error === signal?.reason) throw error;
    const problem = `the stream sent an event that is not JSON (${quoted(error.message) ?? "no details"})`;
    throw invalidResponse({ provider, problem, body: undefined, cause: error });
  }
  signal?.throwIfAborted();
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === "function"
  );
}

/**
 * Pieces of text gathered as they arrive and joined once at the end, so that a stream of many
 * small deltas costs linear time and memory.
 */
export class TextParts {
  readonly #parts: string[] = [];

  /** Adds a piece (a non-string is ignored); returns whether it was one. */
  add(part: unknown): part is string {
    if (typeof part !== "string") return false;
    this.#parts.push(part);
    return true;
  }

  /** Whether no piece has been added. */
  get empty(): boolean {
    return this.#parts.length === 0;
  }

  /** The pieces joined. */
  text(): string {
    return this.#parts.join("");
  }
}

/** A block index a stream sent (Anthropic's `index`, OpenAI's `index` / `output_index`): a non-negative integer. */
export function streamIndex(value: unknown): number | undefined {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/** The entries of `map` in the order of their keys (block indexes). */
export function byIndex<T>(map: ReadonlyMap<number, T>): T[] {
  return [...map.entries()].sort(([a], [b]) => a - b).map(([, value]) => value);
}
