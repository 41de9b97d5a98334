import { ToolLoopError } from "../errors.js";
import type { Message } from "../provider.js";
import { raceAbort } from "./abort.js";
import { errorMessage, isRecord } from "./describe.js";

const RESOLVED: Promise<void> = Promise.resolve();

/**
 * The listeners of one run (`onEvent`, `onUserMessage`, `onCheckpoint` …), called one at a time in
 * the order their deliveries were queued. A failure is kept, never rejected here: it stops every
 * later delivery, and {@link check} turns it into the run's `ToolLoopError`. A listener still
 * pending when the run's signal aborts is no longer waited for: the loop's own abort checks then
 * reject the run.
 */
export class Deliveries {
  #tail: Promise<void> = RESOLVED;
  #failure: { error: unknown; source: string } | undefined;
  #signal: AbortSignal | undefined;

  /** The run's signal: a listener still pending when it aborts no longer holds the loop. */
  watch(signal: AbortSignal | undefined): void {
    this.#signal = signal;
  }

  /** `true` once a listener threw or rejected. */
  get failed(): boolean {
    return this.#failure !== undefined;
  }

  /** The failed listener's error (`undefined` while none failed). */
  get error(): unknown {
    return this.#failure?.error;
  }

  /** Settles when every delivery queued so far has. */
  get tail(): Promise<void> {
    return this.#tail;
  }

  /** Throws the run's `ToolLoopError` when a listener failed; the transcript is consistent at every call site. */
  check(messages: Message[], iterations: number): void {
    const failure = this.#failure;
    if (failure === undefined) return;
    throw new ToolLoopError(`${failure.source} threw: ${errorMessage(failure.error)}`, {
      messages,
      iterations,
      code: "internal",
      cause: failure.error,
    });
  }

  /** Queues `deliver` (a call of the listener named `source`) after every delivery queued before it. */
  enqueue(source: string, deliver: () => unknown): Promise<void> {
    const next = this.#tail.then(() => {
      if (this.#failure !== undefined) return;
      try {
        const value = deliver();
        if (isRecord(value) && typeof value.then === "function") {
          return raceAbort(Promise.resolve(value), this.#signal).then(
            () => {},
            (error: unknown) => {
              if (!this.#signal?.aborted) this.#failure ??= { error, source };
            },
          );
        }
      } catch (error) {
        this.#failure ??= { error, source };
      }
      return undefined;
    });
    this.#tail = next;
    return next;
  }
}

/** A delivery that waits for nothing: what a point with no listener returns. */
export const DELIVERED: Promise<void> = RESOLVED;
