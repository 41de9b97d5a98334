import type { ProgressUpdate } from "../tool.js";

/** Most updates kept for a consumer that has not read them yet; see {@link ProgressBuffer}. */
export const MAX_BUFFERED_PROGRESS = 1_000;

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

/**
 * The updates of one execution for one consumer, as an async iterator that ends after the final
 * update. A tool never waits for the consumer: updates are buffered, and past
 * {@link MAX_BUFFERED_PROGRESS} unread ones the oldest `"running"` update is dropped (the final
 * update is never dropped). Once the consumer stops (`return`, e.g. `break` in `for await`),
 * nothing more is kept.
 */
export class ProgressBuffer implements AsyncIterableIterator<ProgressUpdate> {
  readonly #updates: ProgressUpdate[] = [];
  // Consumers' next() calls not answered yet, in order (a consumer may call next() several times).
  readonly #waiting: ((result: IteratorResult<ProgressUpdate, undefined>) => void)[] = [];
  #closed = false;

  /** Adds an update; a final status (anything but `"running"`) closes the buffer after it. */
  push(update: ProgressUpdate): void {
    if (this.#closed) return;
    if (update.status !== "running") this.#closed = true;
    const waiting = this.#waiting.shift();
    if (waiting !== undefined) {
      waiting({ done: false, value: update });
      if (this.#closed) this.#endWaiting();
      return;
    }
    this.#updates.push(update);
    // Only the last update can be final, so the first of a full buffer is a "running" one.
    if (this.#updates.length > MAX_BUFFERED_PROGRESS) this.#updates.shift();
  }

  /** The next update, or the end once the final update was read. */
  next(): Promise<IteratorResult<ProgressUpdate, undefined>> {
    const update = this.#updates.shift();
    if (update !== undefined) return Promise.resolve({ done: false, value: update });
    if (this.#closed) return Promise.resolve(DONE);
    return new Promise((resolve) => {
      this.#waiting.push(resolve);
    });
  }

  /** Stops reading: buffered and later updates are discarded. */
  return(): Promise<IteratorResult<ProgressUpdate, undefined>> {
    this.#closed = true;
    this.#updates.length = 0;
    this.#endWaiting();
    return Promise.resolve(DONE);
  }

  #endWaiting(): void {
    for (const waiting of this.#waiting.splice(0)) waiting(DONE);
  }

  /** The buffer itself: one consumer reads each update once. */
  [Symbol.asyncIterator](): this {
    return this;
  }
}
