import type { AsyncCallback } from "../tool.js";
import { isToolResult, type ToolResult } from "../tool-result.js";
import { subscribeAbort } from "./abort.js";
import { cutName } from "./describe.js";
import { log, type ResolvedLogger } from "./logger.js";

/** One completion of an async tool, with the call it belongs to. */
export interface AsyncCompletion {
  result: ToolResult;
  toolName: string;
  toolCallId: string;
}

/**
 * The async work of one run: hands each call its own callback (answered once; later calls are
 * ignored, never thrown into the tool), keeps what completes while the loop may still feed it to
 * the model (`awaitAsync`), and sends everything else to `deliver`.
 */
export class AsyncCompletions {
  readonly #awaiting: boolean;
  readonly #deliver: (completion: AsyncCompletion) => void;
  readonly #logger: ResolvedLogger;
  /** Calls whose result was async and whose callback has not fired yet: id → tool name. */
  readonly #pending = new Map<string, string>();
  /** Calls whose callback fired (the tool may call it before its result is known). */
  readonly #done = new Set<string>();
  #queue: AsyncCompletion[] = [];
  #wake: (() => void) | undefined;
  #ended = false;

  constructor(awaiting: boolean, deliver: (completion: AsyncCompletion) => void, logger: ResolvedLogger) {
    this.#awaiting = awaiting;
    this.#deliver = deliver;
    this.#logger = logger;
  }

  /** The callback of one call. */
  callback(toolName: string, toolCallId: string): AsyncCallback {
    let called = false;
    return (result) => {
      try {
        if (called) {
          log(
            this.#logger,
            "warn",
            () => ({ tool: cutName(toolName), toolCallId: cutName(toolCallId) }),
            "async callback called again: ignored",
          );
          return;
        }
        called = true;
        if (!isToolResult(result)) {
          log(
            this.#logger,
            "warn",
            () => ({ tool: cutName(toolName) }),
            "async callback called without a ToolResult: ignored",
          );
          return;
        }
        this.#done.add(toolCallId);
        this.#pending.delete(toolCallId);
        const completion = { result, toolName, toolCallId };
        if (this.#awaiting && !this.#ended) {
          this.#queue.push(completion);
          this.#wake?.();
        } else {
          this.#deliver(completion);
        }
      } catch {
        // a broken logger or listener must never reach the tool
      }
    };
  }

  /** Records a call's result: an async one is pending until its callback fires. */
  started(toolCallId: string, result: ToolResult, toolName: string): void {
    if (result.async === true && !this.#done.has(toolCallId)) this.#pending.set(toolCallId, toolName);
  }

  /**
   * The async calls whose completion nobody has received yet: those pending, then those completed
   * and kept for the loop to feed back (`awaitAsync`), in the order they came.
   */
  undelivered(): { toolCallId: string; toolName: string }[] {
    const calls: { toolCallId: string; toolName: string }[] = [];
    for (const [toolCallId, toolName] of this.#pending) calls.push({ toolCallId, toolName });
    for (const { toolCallId, toolName } of this.#queue) calls.push({ toolCallId, toolName });
    return calls;
  }

  /** `true` while completions wait to be fed back or async calls are pending. */
  get hasWork(): boolean {
    return this.#queue.length > 0 || this.#pending.size > 0;
  }

  /**
   * Waits until no async call is pending, at most `timeoutMs` (or until `signal` aborts), and
   * returns the completions received, in the order they came. After an abort it returns none and
   * keeps them queued: {@link end} hands them to `deliver`.
   */
  async collect(timeoutMs: number, signal: AbortSignal | undefined): Promise<AsyncCompletion[]> {
    if (this.#pending.size > 0 && !signal?.aborted) {
      await new Promise<void>((resolve) => {
        let timer: ReturnType<typeof setTimeout> | undefined;
        let unsubscribe = () => {};
        const done = () => {
          if (timer !== undefined) clearTimeout(timer);
          unsubscribe();
          this.#wake = undefined;
          resolve();
        };
        this.#wake = () => {
          if (this.#pending.size === 0) done();
        };
        if (timeoutMs !== Number.POSITIVE_INFINITY) timer = setTimeout(done, timeoutMs);
        if (signal !== undefined) unsubscribe = subscribeAbort(signal, done);
      });
    }
    if (signal?.aborted) return [];
    const completions = this.#queue;
    this.#queue = [];
    return completions;
  }

  /** The loop ended: what is queued, and every later completion, goes to `deliver`. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    const queued = this.#queue;
    this.#queue = [];
    for (const completion of queued) this.#deliver(completion);
  }
}
