import { cutName, errorMessage } from "../internal/describe.js";
import { log, type ResolvedLogger } from "../internal/logger.js";
import type { AsyncCallback } from "../tool.js";
import type { ToolCompletion } from "./tool-completion.js";

/** A handler of `ToolQueue.onCompletion`. @internal */
export type CompletionHandler = (completion: ToolCompletion) => void | Promise<void>;

/** How many delivered call ids a queue remembers (so a duplicate event is not delivered twice). */
const REMEMBERED_DELIVERIES = 100_000;

/**
 * Who gets a queue's completions: every handler, once per job id, and the callback of the call
 * queued from this process that waits for that job, if one does. What a handler or a callback
 * throws or rejects with is logged.
 * @internal
 */
export class CompletionDelivery {
  readonly #keepFinishedMs: number;
  readonly #logger: ResolvedLogger;
  /** The callback of each call queued from this process and not answered yet, by job id. */
  readonly #callbacks = new Map<string, AsyncCallback>();
  /** When each waiting callback was set, oldest first: those older than `keepFinishedMs` are dropped. */
  readonly #waitingSince = new Map<string, number>();
  readonly #handlers = new Set<CompletionHandler>();
  /** Job ids whose completion went to the handlers (oldest first, bounded). */
  readonly #delivered = new Set<string>();

  constructor(keepFinishedMs: number, logger: ResolvedLogger) {
    this.#keepFinishedMs = keepFinishedMs;
    this.#logger = logger;
  }

  /** The job ids a callback waits for. */
  waiting(): string[] {
    return [...this.#callbacks.keys()];
  }

  /**
   * Makes `callback` the one that gets the job's completion (none: nobody). Callbacks waiting
   * longer than finished jobs are kept are dropped here: their job can no longer report (Redis lost
   * it), and a long-lived process must not keep them forever.
   */
  wait(jobId: string, callback: AsyncCallback | undefined): void {
    this.#callbacks.delete(jobId);
    this.#waitingSince.delete(jobId);
    if (callback !== undefined) {
      this.#callbacks.set(jobId, callback);
      this.#waitingSince.set(jobId, Date.now());
    }
    const expired = Date.now() - this.#keepFinishedMs;
    for (const [id, since] of this.#waitingSince) {
      if (since >= expired) break;
      this.#waitingSince.delete(id);
      this.#callbacks.delete(id);
    }
  }

  /** Stops `callback` waiting for any of these jobs (where it is the one waiting). */
  withdraw(jobIds: readonly string[], callback: AsyncCallback | undefined): void {
    for (const id of jobIds) {
      if (callback !== undefined && this.#callbacks.get(id) === callback) this.wait(id, undefined);
    }
  }

  /** Adds a handler (the same function added twice runs twice); returns the function that removes it. */
  addHandler(handler: CompletionHandler): () => void {
    const own = (completion: ToolCompletion) => handler(completion);
    this.#handlers.add(own);
    return () => {
      this.#handlers.delete(own);
    };
  }

  /** Delivers a completion: to the handlers once per job id, and to the call's callback if it waits. */
  settle(jobId: string, completion: ToolCompletion): void {
    const callback = this.#callbacks.get(jobId);
    if (!this.#delivered.has(jobId)) {
      this.#delivered.add(jobId);
      if (this.#delivered.size > REMEMBERED_DELIVERIES) {
        this.#delivered.delete(this.#delivered.values().next().value as string);
      }
      for (const handler of this.#handlers) {
        this.#run("onCompletion handler", completion, () => handler({ ...completion }));
      }
    }
    if (callback !== undefined) {
      this.#callbacks.delete(jobId);
      this.#waitingSince.delete(jobId);
      this.#run("async callback", completion, () => callback(completion.result));
    }
  }

  /** Forgets every callback and handler: nothing is delivered any more. */
  clear(): void {
    this.#callbacks.clear();
    this.#waitingSince.clear();
    this.#handlers.clear();
  }

  #run(what: string, completion: ToolCompletion, call: () => void | Promise<void>): void {
    const report = (error: unknown) =>
      log(
        this.#logger,
        "warn",
        () => ({
          tool: cutName(completion.toolName),
          toolCallId: cutName(completion.toolCallId),
          error: errorMessage(error),
        }),
        `tool queue: ${what} failed`,
      );
    try {
      Promise.resolve(call()).catch(report);
    } catch (error) {
      report(error);
    }
  }
}
