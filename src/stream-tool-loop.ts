import { subscribeAbort } from "./internal/abort.js";
import { isPlainObject } from "./internal/describe.js";
import { checkFunction, isAbortSignal, optionError } from "./internal/options.js";
import type { Message } from "./provider.js";
import { runToolLoop, type ToolLoopConfig } from "./run-tool-loop.js";
import type { ToolLoopContext } from "./tool-loop-context.js";
import type { ToolLoopEvent } from "./tool-loop-event.js";
import type { ToolLoopResult } from "./tool-loop-result.js";

/** What {@link streamToolLoop} returns: the run's events to iterate once, and its outcome. */
export interface ToolLoopStream extends AsyncIterable<ToolLoopEvent> {
  /**
   * The run's outcome, as `runToolLoop` would give it. Settles either way: after `loop-end`, or
   * rejected (a `ToolLoopError` with code `"aborted"` when the iteration was left early). Left
   * unobserved, its rejection is never reported as unhandled. The run waits for its events to be
   * read: a stream nobody iterates stays parked until it is iterated or the caller's signal aborts.
   */
  readonly result: Promise<ToolLoopResult>;
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
export function streamToolLoop(
  config: ToolLoopConfig,
  messages: Message[],
  context: ToolLoopContext = {},
): ToolLoopStream {
  if (!isPlainObject(config)) throw optionError(WHERE, "config", "an object", config);
  const own = checkFunction(WHERE, "onEvent", config.onEvent);
  const controller = new AbortController();
  const callerSignal: unknown = context?.signal;
  const signal = controller.signal;
  // The run's signal follows the caller's through the one shared subscription (never AbortSignal.any,
  // which Node 20 keeps alive on a long-lived caller signal: memory grows with every run).
  let unsubscribe = () => {};
  if (isAbortSignal(callerSignal)) {
    if (callerSignal.aborted) controller.abort(callerSignal.reason);
    else
      unsubscribe = subscribeAbort(callerSignal, (reason) => {
        controller.abort(reason);
        // A consumer that stopped reading without return() must not hold an aborted run.
        offered?.release();
        taken?.();
        offered = undefined;
        taken = undefined;
      });
  }

  let offered: { event: ToolLoopEvent; release: () => void } | undefined;
  let taken: (() => void) | undefined;
  let reader: { resolve: (step: IteratorResult<ToolLoopEvent>) => void; reject: (error: unknown) => void } | undefined;
  let outcome: { error: unknown } | "done" | undefined;
  let closed = false;

  const onEvent = async (event: ToolLoopEvent): Promise<void> => {
    if (own !== undefined) await own(event);
    // After an abort nothing waits for the consumer: the run ends (rejecting) whether or not it reads.
    if (closed || signal.aborted) return;
    await new Promise<void>((release) => {
      if (reader === undefined) {
        offered = { event, release };
        return;
      }
      const waiting = reader;
      reader = undefined;
      taken = release;
      waiting.resolve({ value: event, done: false });
    });
  };

  const result = runToolLoop({ ...config, onEvent }, messages, {
    ...context,
    signal: isAbortSignal(callerSignal) || callerSignal === undefined ? signal : (callerSignal as AbortSignal),
  });
  // The iteration reports the failure; `result` is only a view of it for whoever awaits it.
  result.catch(() => {});
  const settle = (state: { error: unknown } | "done") => {
    unsubscribe();
    outcome = state;
    const waiting = reader;
    reader = undefined;
    if (waiting === undefined) return;
    if (state === "done" || closed) waiting.resolve({ value: undefined, done: true });
    else waiting.reject(state.error);
  };
  result.then(
    () => settle("done"),
    (error: unknown) => settle({ error }),
  );

  let reported = false;
  const iterator: AsyncIterator<ToolLoopEvent> = {
    next() {
      taken?.();
      taken = undefined;
      if (offered !== undefined) {
        const { event, release } = offered;
        offered = undefined;
        taken = release;
        return Promise.resolve({ value: event, done: false });
      }
      if (outcome !== undefined) {
        if (outcome !== "done" && !reported && !closed) {
          reported = true;
          return Promise.reject(outcome.error);
        }
        return Promise.resolve({ value: undefined, done: true });
      }
      return new Promise((resolve, reject) => {
        reader = { resolve, reject };
      });
    },
    async return() {
      if (!closed) {
        closed = true;
        taken?.();
        offered?.release();
        taken = undefined;
        offered = undefined;
        if (outcome === undefined) controller.abort(new Error("the consumer of streamToolLoop stopped reading"));
      }
      await result.catch(() => {});
      return { value: undefined, done: true };
    },
  };
  return {
    result,
    [Symbol.asyncIterator]: () => iterator,
  };
}
