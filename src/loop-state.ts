import { ToolLoopError, type ToolLoopErrorCode } from "./errors.js";
import { isAborted, SerialAbortRace } from "./internal/abort.js";
import { holdDeadlines } from "./internal/deadline.js";
import { errorMessage } from "./internal/describe.js";
import { logEnabled, writeLine } from "./internal/logger.js";
import { CallIds, type NormalizedToolCall, normalizeToolCall } from "./internal/normalize-tool-call.js";
import type { ResumeState } from "./internal/resume-state.js";
import type { RunScope } from "./loop-call.js";
import type { LoopFeatures } from "./loop-features.js";
import { type RunPromotions, runPromotions } from "./loop-hidden-tools.js";
import { namesOf } from "./loop-logging.js";
import type { ResolvedConfig } from "./loop-options.js";
import { type ModelCallChain, ToolCallChain } from "./middleware-chain.js";
import type { Message, UsageInfo } from "./provider.js";
import type { StopReason, ToolLoopResult } from "./tool-loop-result.js";

/**
 * One run of the loop as it goes: its transcript, how many provider calls it made, the usage they
 * reported, and what it holds while it runs (the signal race of its provider calls, the timer of
 * its calls' timeouts, its promotions). {@link dispose} lets go of them.
 */
export class LoopState {
  /** The run's configuration. */
  readonly config: ResolvedConfig;
  /** The loop's optional features; `undefined` when none is on. */
  readonly features: LoopFeatures | undefined;
  /** The caller's messages, then every message of this run. */
  readonly transcript: Message[];
  /** The run's context as its calls see it. */
  readonly scope: RunScope;
  /** The run's own signal. */
  readonly signal: AbortSignal | undefined;
  /** The run's model-call middleware; `undefined` when none. */
  readonly modelChain: ModelCallChain | undefined;
  /** How many provider calls the run may make. */
  readonly limit: number;
  /** Provider calls made (a resumed run: counted from its checkpoint's). */
  iterations: number;
  /** Token usage summed over this run's provider calls that reported it. */
  usage: UsageInfo | undefined;
  /**
   * A provider call's promise handed to the loop as it is: what its answer still needs (`"response"`:
   * checked and its usage counted; `"usage"`: counted, the middleware chain checked it), and that its
   * failure is to be named as the call's. `undefined` between calls.
   */
  unchecked: "response" | "usage" | undefined;
  /**
   * Whether the loop's own `debug` lines are written: asked once, when the run starts (a level
   * changed during a run applies from the next run on), instead of twice per step.
   */
  readonly debug: boolean;
  // Call ids must be unique in the whole transcript (Anthropic rejects duplicates), also against
  // the caller's history: a provider may repeat ids across turns or send none.
  readonly #ids = new CallIds();
  readonly #promotions: RunPromotions | undefined;
  readonly #toolChain: ToolCallChain | undefined;
  // Its provider calls, one at a time, share one subscription to the signal.
  readonly #race: SerialAbortRace | undefined;
  readonly #releaseDeadlines: () => void;

  constructor(
    config: ResolvedConfig,
    messages: Message[],
    scope: RunScope,
    resume: ResumeState | undefined,
    modelChain: ModelCallChain | undefined,
  ) {
    this.config = config;
    this.debug = logEnabled(config.logger, "debug");
    this.features = config.features;
    this.limit = config.features?.limit ?? config.maxIterations;
    this.transcript = [...messages];
    this.iterations = resume === undefined ? 0 : resume.iterations;
    this.modelChain = modelChain;
    const tools = config.middleware?.tool;
    this.#toolChain = tools === undefined || tools.length === 0 ? undefined : new ToolCallChain(tools);
    this.#promotions = runPromotions(config.tools);
    this.scope = { ...scope, promotions: this.#promotions, wrap: this.#toolChain };
    const { signal } = scope;
    this.signal = signal;
    this.#race = signal === undefined || isAborted(signal) ? undefined : new SerialAbortRace(signal);
    // The run's calls share one timer for their timeouts, kept until the run ends.
    this.#releaseDeadlines = holdDeadlines(config.toolTimeoutMs);
  }

  /** The run begins: the ids of the caller's calls are taken, and the features are told. */
  begin(resume: ResumeState | undefined): void {
    for (const message of this.transcript) {
      for (const call of message.toolCalls ?? []) {
        if (typeof call?.id === "string") this.#ids.add(call.id);
      }
    }
    this.features?.begin(this.signal, resume);
  }

  /** The next step (`next`), or a resumed turn's (its checkpoint's last): the turn its calls and promotions belong to. */
  step(next: boolean): number {
    if (next) this.iterations++;
    const iteration = this.iterations;
    if (this.#promotions !== undefined) this.#promotions.turn = iteration;
    if (this.#toolChain !== undefined) this.#toolChain.iteration = iteration;
    return iteration;
  }

  /** Writes one of the loop's `debug` lines, when {@link debug} is on (`fields` built only then). */
  debugLine(fields: () => object, message: string): void {
    if (this.debug) writeLine(this.config.logger, "debug", fields, message);
  }

  /** A model's calls made fit for the transcript: every call an id of its own, and its arguments read. */
  normalize(raw: readonly unknown[], iteration: number): NormalizedToolCall[] {
    // By index, not `map`: a sparse array's holes are malformed calls that still get an answer.
    const calls: NormalizedToolCall[] = new Array(raw.length);
    for (let index = 0; index < raw.length; index++) {
      calls[index] = normalizeToolCall(raw[index], `call_${iteration}_${index}`, this.#ids);
    }
    this.debugLine(() => ({ iteration, ...namesOf(calls) }), "running tool calls");
    return calls;
  }

  /** Settles with `promise` (a provider call), or rejects as soon as the run's signal aborts. */
  race<T>(promise: Promise<T>): Promise<T> {
    return this.#race === undefined ? promise : this.#race.race(promise);
  }

  /** The run's `ToolLoopError`, with the transcript and iterations as they stand. */
  fail(code: ToolLoopErrorCode, message: string, cause: unknown): ToolLoopError {
    return new ToolLoopError(message, { messages: this.transcript, iterations: this.iterations, code, cause });
  }

  /** `true` once the run's signal aborted. */
  get aborted(): boolean {
    return isAborted(this.signal);
  }

  /** Throws the run's `"aborted"` error once its signal aborted. */
  throwIfAborted(): void {
    if (isAborted(this.signal)) throw this.abortError();
  }

  /** The run's `"aborted"` error. */
  abortError(): ToolLoopError {
    const reason: unknown = this.signal?.reason;
    return this.fail("aborted", `tool loop aborted: ${errorMessage(reason)}`, reason);
  }

  /** The run's result, with its usage when a provider call reported any. */
  result(content: string, stopReason: StopReason): ToolLoopResult {
    return this.withUsage({ content, iterations: this.iterations, messages: this.transcript, stopReason });
  }

  /** `result` with the run's usage, when a provider call reported any. */
  withUsage(result: ToolLoopResult): ToolLoopResult {
    if (this.usage !== undefined) result.usage = this.usage;
    this.features?.complete(result);
    return result;
  }

  /** Lets go of what the run held. */
  dispose(): void {
    this.#releaseDeadlines();
    this.#race?.dispose();
  }
}
