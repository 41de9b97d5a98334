import { subscribeAbort } from "./internal/abort.js";
import { isPlainObject } from "./internal/describe.js";
import { checkFunction, isAbortSignal, optionError } from "./internal/options.js";
import type { InferOutput, OutputSchema } from "./output-schema.js";
import type { Message } from "./provider.js";
import { runToolLoop } from "./run-tool-loop.js";
import type { ToolLoopConfig } from "./tool-loop-config.js";
import type { ToolLoopContext } from "./tool-loop-context.js";
import type { ToolLoopEvent } from "./tool-loop-event.js";
import type { ToolLoopResult } from "./tool-loop-result.js";

/** What {@link streamToolLoop} returns: the run's events to iterate once, and its outcome (`T`: the type of its `output`). */
export interface ToolLoopStream<T = unknown> extends AsyncIterable<ToolLoopEvent> {
  /**
   * The run's outcome, as `runToolLoop` would give it. Settles either way: after `loop-end`, or
   * rejected (a `ToolLoopError` with code `"aborted"` when the iteration was left early). Left
   * unobserved, its rejection is never reported as unhandled. The run waits for its events to be
   * read: a stream nobody iterates stays parked until it is iterated or the caller's signal aborts.
   */
  readonly result: Promise<ToolLoopResult<T>>;
}

const WHERE = "streamToolLoop";

/**
 * Runs the loop like {@link runToolLoop} and yields its {@link ToolLoopEvent}s (streamed text
 * included, when the provider has `chatStream`). The loop waits for the consumer (back-pressure):
 * each event is handed over only once the previous one was taken. Leaving the `for await` early
 * (`break`, `return`, a throw) aborts the loop; a failure of the loop is thrown by the iteration.
 * `config.onEvent`, when set, still receives every event first. A `config` that is not an object
 * or an `onEvent` that is not a function throw a `TypeError` at once; every other bad option
 * rejects the run as in `runToolLoop` (thrown by the iteration, and by `result`).
 *
 * @example
 * ```ts
 * const stream = streamToolLoop({ provider, tools: registry, maxIterations: 10 }, messages);
 * for await (const event of stream) {
 *   if (event.type === "text-delta") process.stdout.write(event.delta);
 * }
 * const { content } = await stream.result;
 * ```
 */
export function streamToolLoop<Output extends OutputSchema = OutputSchema>(
  config: ToolLoopConfig<Output>,
  messages: Message[],
  context: ToolLoopContext = {},
): ToolLoopStream<InferOutput<Output>> {
  if (!isPlainObject(config)) throw optionError(WHERE, "config", "an object", config);
  const own = checkFunction(WHERE, "onEvent", config.onEvent);
  const controller = new AbortController();
  const callerSignal: unknown = context?.signal;
  const relay = new EventRelay(controller);
  // The run's signal follows the caller's through the one shared subscription (never AbortSignal.any,
  // which Node 20 keeps alive on a long-lived caller signal: memory grows with every run).
  let unsubscribe = () => {};
  if (isAbortSignal(callerSignal)) {
    if (callerSignal.aborted) controller.abort(callerSignal.reason);
    else
      unsubscribe = subscribeAbort(callerSignal, (reason) => {
        controller.abort(reason);
        // A consumer that stopped reading without return() must not hold an aborted run.
        relay.drop();
      });
  }
  const onEvent = async (event: ToolLoopEvent): Promise<void> => {
    if (own !== undefined) await own(event);
    await relay.offer(event);
  };
  const signal = isAbortSignal(callerSignal) || callerSignal === undefined ? controller.signal : callerSignal;
  const result = runToolLoop({ ...config, onEvent }, messages, { ...context, signal: signal as AbortSignal });
  // The iteration reports the failure; `result` is only a view of it for whoever awaits it.
  result.catch(() => {});
  relay.watch(result, unsubscribe);
  return {
    result: result as Promise<ToolLoopResult<InferOutput<Output>>>,
    [Symbol.asyncIterator]: () => relay,
  };
}

/** What the consumer waits for while no event is offered. */
interface Reader {
  resolve: (step: IteratorResult<ToolLoopEvent>) => void;
  reject: (error: unknown) => void;
}

/**
 * Hands one run's events to its consumer one at a time: the loop's `onEvent` waits until the
 * consumer took its event (back-pressure). Leaving early aborts the run; the run's failure is thrown
 * once by the iteration.
 */
class EventRelay implements AsyncIterator<ToolLoopEvent> {
  readonly #controller: AbortController;
  #result: Promise<ToolLoopResult> | undefined;
  #offered: { event: ToolLoopEvent; release: () => void } | undefined;
  #taken: (() => void) | undefined;
  #reader: Reader | undefined;
  #outcome: { error: unknown } | "done" | undefined;
  #closed = false;
  #reported = false;

  constructor(controller: AbortController) {
    this.#controller = controller;
  }

  /** The run's outcome: the iteration ends with it (`unsubscribe` then leaves the caller's signal). */
  watch(result: Promise<ToolLoopResult>, unsubscribe: () => void): void {
    this.#result = result;
    const settle = (state: { error: unknown } | "done") => {
      unsubscribe();
      this.#outcome = state;
      const waiting = this.#reader;
      this.#reader = undefined;
      if (waiting === undefined) return;
      if (state === "done" || this.#closed) waiting.resolve({ value: undefined, done: true });
      else waiting.reject(state.error);
    };
    result.then(
      () => settle("done"),
      (error: unknown) => settle({ error }),
    );
  }

  /** The loop's event: waits until the consumer takes it. After an abort nothing waits for the consumer. */
  offer(event: ToolLoopEvent): Promise<void> {
    if (this.#closed || this.#controller.signal.aborted) return Promise.resolve();
    return new Promise<void>((release) => {
      const waiting = this.#reader;
      if (waiting === undefined) {
        this.#offered = { event, release };
        return;
      }
      this.#reader = undefined;
      this.#taken = release;
      waiting.resolve({ value: event, done: false });
    });
  }

  /** Lets go of the event offered or taken last: the run goes on without the consumer. */
  drop(): void {
    this.#offered?.release();
    this.#taken?.();
    this.#offered = undefined;
    this.#taken = undefined;
  }

  next(): Promise<IteratorResult<ToolLoopEvent>> {
    this.#taken?.();
    this.#taken = undefined;
    const offered = this.#offered;
    if (offered !== undefined) {
      this.#offered = undefined;
      this.#taken = offered.release;
      return Promise.resolve({ value: offered.event, done: false });
    }
    const outcome = this.#outcome;
    if (outcome !== undefined) {
      if (outcome !== "done" && !this.#reported && !this.#closed) {
        this.#reported = true;
        return Promise.reject(outcome.error);
      }
      return Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve, reject) => {
      this.#reader = { resolve, reject };
    });
  }

  async return(): Promise<IteratorResult<ToolLoopEvent>> {
    if (!this.#closed) {
      this.#closed = true;
      this.drop();
      if (this.#outcome === undefined) {
        this.#controller.abort(new Error("the consumer of streamToolLoop stopped reading"));
      }
    }
    await this.#result?.catch(() => {});
    return { value: undefined, done: true };
  }
}
