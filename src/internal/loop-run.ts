import { InvalidProviderResponseError, ToolLoopError } from "../errors.js";
import { checkTimeout } from "../execute-tool-call.js";
import type { ProgressListener, ProgressUpdate } from "../progress.js";
import type { LLMProvider, LLMResponse, LLMStreamPart, Message, ToolDefinition } from "../provider.js";
import type { ToolLoopCheckpoint } from "../resume-tool-loop.js";
import {
  contentOf,
  type ResumeState,
  type StopReason,
  type ToolLoopConfig,
  type ToolLoopResult,
} from "../run-tool-loop.js";
import type { ToolApprover } from "../tool-approval.js";
import type { ToolLoopEvent, ToolLoopEventListener } from "../tool-loop-event.js";
import { errorResult, type ToolResult } from "../tool-result.js";
import { raceAbort } from "./abort.js";
import { type CallRunner, type GateConfig, type GateContext, refuseCall, runApproved } from "./approval-gate.js";
import { type AsyncCompletion, AsyncCompletions } from "./async-completions.js";
import { cutName, errorMessage, isPlainObject, isRecord, quoteName } from "./describe.js";
import { log, type ResolvedLogger } from "./logger.js";
import {
  cutResult,
  FINAL_ANSWER_NOTE,
  FINAL_TURN_REFUSAL,
  MIN_RESULT_CHARS,
  RepeatedFailures,
} from "./loop-policies.js";
import type { NormalizedToolCall } from "./normalize-tool-call.js";
import { checkCount, checkFunction, optionError } from "./options.js";

/** The loop-control options of one run, checked (issue 12). */
interface LoopFeatures {
  onEvent: ToolLoopEventListener | undefined;
  onUserMessage: ToolLoopConfig["onUserMessage"];
  approve: ToolApprover | undefined;
  onAsyncResult: ToolLoopConfig["onAsyncResult"];
  awaitAsyncMs: number | undefined;
  finalAnswer: boolean;
  maxRepeatedFailures: number | undefined;
  maxResultChars: number | undefined;
  onCheckpoint: ToolLoopConfig["onCheckpoint"];
}

/** An optional count: `undefined` when absent (the policy is off). */
function optionalCount(where: string, option: string, value: unknown): number | undefined {
  return value === undefined ? undefined : checkCount(where, option, value, 0);
}

/** Checks the loop-control options; `undefined` when none is set (the loop then runs as before). */
function resolveFeatures(config: ToolLoopConfig, where: string): LoopFeatures | undefined {
  const { onEvent, onUserMessage, approve, onAsyncResult, awaitAsync, finalAnswerOnMaxIterations } = config;
  if (
    onEvent === undefined &&
    onUserMessage === undefined &&
    approve === undefined &&
    onAsyncResult === undefined &&
    awaitAsync === undefined &&
    (finalAnswerOnMaxIterations === undefined || finalAnswerOnMaxIterations === false) &&
    config.maxRepeatedFailures === undefined &&
    config.maxResultChars === undefined &&
    config.onCheckpoint === undefined
  ) {
    return undefined;
  }
  let awaitAsyncMs: number | undefined;
  if (awaitAsync !== undefined) {
    if (!isPlainObject(awaitAsync)) throw optionError(where, "awaitAsync", "an object { timeoutMs }", awaitAsync);
    awaitAsyncMs = checkTimeout(where, "awaitAsync.timeoutMs", awaitAsync.timeoutMs);
    if (awaitAsyncMs === undefined) {
      throw optionError(where, "awaitAsync.timeoutMs", "a number of milliseconds", awaitAsyncMs);
    }
  }
  if (finalAnswerOnMaxIterations !== undefined && typeof finalAnswerOnMaxIterations !== "boolean") {
    throw optionError(where, "finalAnswerOnMaxIterations", "a boolean", finalAnswerOnMaxIterations);
  }
  const maxResultChars = optionalCount(where, "maxResultChars", config.maxResultChars);
  if (maxResultChars !== undefined && maxResultChars < MIN_RESULT_CHARS) {
    const expected = `an integer ≥ ${MIN_RESULT_CHARS} (room for the cut marker and the repeated-failure note)`;
    throw optionError(where, "maxResultChars", expected, maxResultChars);
  }
  return {
    onEvent: checkFunction(where, "onEvent", onEvent),
    onUserMessage: checkFunction(where, "onUserMessage", onUserMessage),
    approve: checkFunction(where, "approve", approve),
    onAsyncResult: checkFunction(where, "onAsyncResult", onAsyncResult),
    awaitAsyncMs,
    finalAnswer: finalAnswerOnMaxIterations === true,
    maxRepeatedFailures: optionalCount(where, "maxRepeatedFailures", config.maxRepeatedFailures),
    maxResultChars,
    onCheckpoint: checkFunction(where, "onCheckpoint", config.onCheckpoint),
  };
}

const RESOLVED: Promise<void> = Promise.resolve();

/** `llmOptions` without the options that only make sense with tools (for the final-answer call). */
function withoutToolOptions(options: Record<string, unknown>): Record<string, unknown> {
  const { tool_choice: _choice, toolChoice: _camel, parallel_tool_calls: _parallel, ...rest } = options;
  return rest;
}

/**
 * Most `tool-progress` events of one call queued for `onEvent` and not delivered yet: past it, the
 * oldest `"running"` one is dropped (the call's final update never is). A tool's `reportProgress` is
 * synchronous and never waits for the listener, so without a bound a tool reporting in a loop would
 * queue events (and memory) without end behind a slow listener. `onProgress` still receives every
 * update.
 */
export const MAX_QUEUED_PROGRESS_EVENTS = 16;

/** An async call whose completion the loop has not received. */
type PendingAsyncCall = ToolLoopCheckpoint["pendingAsync"][number];

/** What {@link LoopRun.answered} tells the loop after a final answer. */
export type AnswerOutcome = "continue" | StopReason;

/**
 * The loop-control features of one run (issue 12), created only when one of their options is set:
 * the loop calls these hooks at fixed points and otherwise runs exactly as without them.
 */
export class LoopRun {
  /** `true` when provider calls go through `chatStream` (it exists and someone listens). */
  readonly stream: boolean;
  /** How many provider calls the loop may make: one more with `finalAnswerOnMaxIterations`. */
  readonly limit: number;
  /** Set when a turn ends the loop (`repeated_failure`, the final turn). */
  stop: { reason: StopReason; content: string } | undefined;

  readonly #features: LoopFeatures;
  readonly #maxIterations: number;
  readonly #logger: ResolvedLogger;
  readonly #async: AsyncCompletions | undefined;
  readonly #failures: RepeatedFailures | undefined;
  #tail: Promise<void> = RESOLVED;
  /** Per call id, its `tool-progress` updates queued and not delivered yet (at most {@link MAX_QUEUED_PROGRESS_EVENTS}). */
  readonly #progress = new Map<string, ProgressUpdate[]>();
  #failure: { error: unknown; source: string } | undefined;
  #iteration = 0;
  /** The run's signal: a listener still pending when it aborts no longer holds the loop. */
  #signal: AbortSignal | undefined;
  /** `true` once the loop settled: later deliveries are logged, not awaited by anyone. */
  #ended = false;
  /** With `onCheckpoint`: the pending async calls of the checkpoint this run resumed. */
  #resumedAsync: readonly PendingAsyncCall[] = [];
  /**
   * With `onCheckpoint` and no async tracking (neither `onAsyncResult` nor `awaitAsync`): every
   * async call of the run, since no completion can reach the loop.
   */
  readonly #asyncCalls: PendingAsyncCall[] | undefined;

  private constructor(features: LoopFeatures, provider: LLMProvider, maxIterations: number, logger: ResolvedLogger) {
    this.#features = features;
    this.#maxIterations = maxIterations;
    this.#logger = logger;
    this.stream = features.onEvent !== undefined && typeof provider.chatStream === "function";
    this.limit = features.finalAnswer && maxIterations > 0 ? maxIterations + 1 : maxIterations;
    const asyncOn = features.onAsyncResult !== undefined || features.awaitAsyncMs !== undefined;
    this.#async = asyncOn
      ? new AsyncCompletions(features.awaitAsyncMs !== undefined, (done) => this.#deliverLate(done), logger)
      : undefined;
    this.#failures =
      features.maxRepeatedFailures === undefined ? undefined : new RepeatedFailures(features.maxRepeatedFailures);
    this.#asyncCalls = features.onCheckpoint !== undefined && !asyncOn ? [] : undefined;
  }

  /** The run's hooks, or `undefined` when no loop-control option is set. Throws `TypeError` for a bad option. */
  static create(
    config: ToolLoopConfig,
    provider: LLMProvider,
    maxIterations: number,
    logger: ResolvedLogger,
    where: string,
  ): LoopRun | undefined {
    const features = resolveFeatures(config, where);
    return features === undefined ? undefined : new LoopRun(features, provider, maxIterations, logger);
  }

  /** The progress listener of the run: the caller's `onProgress`, and `tool-progress` events. */
  progressListener(onProgress: ProgressListener | undefined): ProgressListener | undefined {
    if (this.#features.onEvent === undefined) return onProgress;
    return (update) => {
      if (onProgress !== undefined) {
        try {
          onProgress(update);
        } catch (error) {
          log(this.#logger, "warn", () => ({ error: errorMessage(error) }), "progress listener threw");
        }
      }
      // Ordered with the other events; not awaited: a tool's reportProgress is synchronous.
      this.#emitProgress(update);
    };
  }

  /**
   * Queues a `tool-progress` event, coalesced per call: each queued delivery sends the oldest
   * update of its call still waiting, and past {@link MAX_QUEUED_PROGRESS_EVENTS} waiting updates
   * the oldest is dropped instead of queuing one more delivery. Only a call's last update can be
   * final, so the dropped one is always `"running"`, and every update still reaches the listener
   * before the `tool-call-end` queued after it.
   */
  #emitProgress(update: ProgressUpdate): void {
    const listener = this.#features.onEvent;
    if (listener === undefined) return;
    const key = update.toolCallId;
    const waiting = this.#progress.get(key);
    if (waiting !== undefined) {
      waiting.push(update);
      if (waiting.length > MAX_QUEUED_PROGRESS_EVENTS) {
        waiting.shift();
        return; // as many deliveries queued as updates waiting
      }
    } else this.#progress.set(key, [update]);
    void this.#enqueue("onEvent", () => {
      const queue = this.#progress.get(key) as ProgressUpdate[];
      const next = queue.shift() as ProgressUpdate;
      if (queue.length === 0) this.#progress.delete(key);
      return listener({ type: "tool-progress", update: next });
    });
  }

  /**
   * Wraps the loop's call runner: events, approval, the async callback, the final turn's refusal.
   * A listener failure stops every call not started yet, also one that waited for approval or for
   * its `maxConcurrency` slot: once it holds the slot, it first lets the deliveries queued before it
   * settle — among them the `tool-call-end` of the call whose slot it takes, queued (by `end`)
   * before that slot frees.
   */
  wrap<C extends GateConfig, X extends GateContext>(run: CallRunner<C, X>): CallRunner<C, X> {
    return async (normalized, config, context) => {
      const { call } = normalized;
      const iteration = this.#iteration;
      const started = performance.now();
      await this.#emit({
        type: "tool-call-start",
        iteration,
        toolCallId: call.id,
        toolName: call.name,
        arguments: call.arguments,
      });
      let ended: Promise<void> | undefined;
      const end = (result: ToolResult) =>
        (ended ??= this.#emit({
          type: "tool-call-end",
          iteration,
          toolCallId: call.id,
          toolName: call.name,
          result,
          durationMs: performance.now() - started,
        }));
      const stopping = () =>
        refuseCall(call, errorResult(`tool ${quoteName(call.name)} was not run: the loop is stopping`), config);
      let result: ToolResult;
      if (this.#failure !== undefined) result = stopping();
      else if (iteration > this.#maxIterations) result = refuseCall(call, errorResult(FINAL_TURN_REFUSAL), config);
      else {
        const callback = this.#async?.callback(call.name, call.id);
        const unlessFailing: CallRunner<C, X> = async (...args) => {
          if (context.slot !== undefined) await this.#tail;
          const done = this.#failure !== undefined ? stopping() : await run(...args);
          void end(done);
          return done;
        };
        result = await runApproved(unlessFailing, normalized, config, context, this.#features.approve, callback);
        this.#async?.started(call.id, result, call.name);
        if (this.#asyncCalls !== undefined && result.async === true) {
          this.#asyncCalls.push({ toolCallId: call.id, toolName: call.name });
        }
      }
      await end(result);
      return result;
    };
  }

  /** The run begins with `signal` as its own: listeners are not waited for past its abort. */
  begin(signal: AbortSignal | undefined): void {
    this.#signal = signal;
  }

  /** The run resumes a checkpoint: its calls belong to the checkpoint's last iteration. */
  resume(state: ResumeState): void {
    this.#iteration = state.iterations;
    this.#resumedAsync = state.pendingAsync;
  }

  /** A provider call begins. */
  async stepStart(iteration: number, transcript: Message[]): Promise<void> {
    this.#iteration = iteration;
    await this.#emit({ type: "step-start", iteration });
    this.check(transcript, iteration - 1);
  }

  /** The provider call: streamed when possible; the final turn gets the note and no tools. */
  chat(
    provider: LLMProvider,
    transcript: Message[],
    definitions: ToolDefinition[] | undefined,
    model: string,
    options: Record<string, unknown>,
    signal: AbortSignal | undefined,
    iteration: number,
  ): Promise<LLMResponse> {
    const final = iteration > this.#maxIterations;
    const messages: Message[] = final ? [...transcript, { role: "system", content: FINAL_ANSWER_NOTE }] : transcript;
    const tools = final ? undefined : definitions;
    // Providers reject tool options on a call without tools.
    const sent = final ? withoutToolOptions(options) : options;
    if (!this.stream || provider.chatStream === undefined) return provider.chat(messages, tools, model, sent, signal);
    return this.#streamed(provider.chatStream(messages, tools, model, sent, signal), iteration, signal);
  }

  /**
   * The provider call of `iteration` failed (the run not aborted): `true` when it was the extra
   * final-answer call, logged; the loop then stops with `max_iterations` as without the option.
   */
  finalCallFailed(iteration: number, error: unknown): boolean {
    if (iteration <= this.#maxIterations) return false;
    log(this.#logger, "warn", () => ({ iteration, error: errorMessage(error) }), "final answer call failed");
    return true;
  }

  async #streamed(
    stream: AsyncIterable<LLMStreamPart>,
    iteration: number,
    signal: AbortSignal | undefined,
  ): Promise<LLMResponse> {
    let response: unknown;
    let seen = false;
    // Parts are read as untrusted: a custom provider may send anything.
    for await (const part of stream as AsyncIterable<unknown>) {
      // The loop has moved on (aborted, or the listener failed): stop reading and emitting.
      if (signal?.aborted || this.#failure !== undefined) break;
      if (!isRecord(part)) continue;
      if (part.type === "text-delta" && typeof part.delta === "string") {
        await this.#emit({ type: "text-delta", iteration, delta: part.delta });
      } else if (part.type === "response") {
        response = part.response;
        seen = true;
      }
    }
    if (this.#failure !== undefined) throw this.#failure.error;
    if (!seen) {
      throw new InvalidProviderResponseError(
        "the provider returned an invalid response: the stream ended without a response part",
        { provider: "LLMProvider", body: undefined },
      );
    }
    return response as LLMResponse;
  }

  /** Throws the run's `ToolLoopError` when a listener failed; the transcript is consistent at every call site. */
  check(transcript: Message[], iterations: number): void {
    const failure = this.#failure;
    if (failure === undefined) return;
    throw new ToolLoopError(`${failure.source} threw: ${errorMessage(failure.error)}`, {
      messages: transcript,
      iterations,
      code: "internal",
      cause: failure.error,
    });
  }

  /** The assistant message with calls was appended (a failing checkpoint leaves the calls unrun). */
  async callsMade(transcript: Message[], iteration: number): Promise<void> {
    await this.#emit({ type: "message", message: transcript[transcript.length - 1] as Message });
    await this.#checkpoint(transcript, iteration);
  }

  /**
   * The turn's tool messages were appended (the last `calls.length` of the transcript): cuts them,
   * notes repeated failures, emits the messages and delivers `forUser`, then `step-end`; sets
   * {@link stop} when the turn ends the loop.
   */
  async turnAnswered(
    transcript: Message[],
    calls: readonly NormalizedToolCall[],
    results: readonly ToolResult[],
    response: LLMResponse | undefined,
    iteration: number,
    handled: boolean,
  ): Promise<void> {
    const from = transcript.length - calls.length;
    const { maxResultChars } = this.#features;
    const failures = this.#failures;
    for (let index = 0; index < calls.length; index++) {
      const message = transcript[from + index] as Message;
      const result = results[index] as ToolResult;
      const { call } = calls[index] as NormalizedToolCall;
      const whole = message.content;
      const note = failures?.record(call.name, result, whole);
      // The note comes after the cut, so the cut leaves room for it.
      if (maxResultChars !== undefined) message.content = cutResult(whole, maxResultChars - (note?.length ?? 0));
      if (failures !== undefined && note !== undefined) {
        message.content += note;
        this.stop ??= {
          reason: "repeated_failure",
          content: RepeatedFailures.content(call.name, whole, failures.limit),
        };
      }
      await this.#emit({ type: "message", message });
      await this.#forUser(result, call.name, call.id);
    }
    // response_handled is the loop's own check (it comes before this stop); the checkpoint says so.
    await this.#checkpoint(
      transcript,
      iteration,
      handled
        ? { reason: "response_handled", content: "" }
        : this.stop?.reason === "repeated_failure"
          ? { reason: "repeated_failure", content: this.stop.content }
          : undefined,
    );
    if (iteration > this.#maxIterations) this.stop = { reason: "max_iterations", content: "" };
    // A resumed turn has no provider call of this run: no step-end (nor step-start).
    if (response !== undefined) await this.#stepEnd(response, iteration);
    this.check(transcript, iteration);
  }

  /**
   * The model answered without calls (its message appended). With `awaitAsync`, waits for pending
   * async work and feeds each completion back as a user message: `"continue"` for another turn.
   */
  async answered(
    transcript: Message[],
    response: LLMResponse,
    iteration: number,
    signal: AbortSignal | undefined,
  ): Promise<AnswerOutcome> {
    await this.#emit({ type: "message", message: transcript[transcript.length - 1] as Message });
    await this.#checkpoint(transcript, iteration);
    await this.#stepEnd(response, iteration);
    this.check(transcript, iteration);
    if (iteration > this.#maxIterations) return "max_iterations";
    const waitMs = this.#features.awaitAsyncMs;
    const pending = this.#async;
    if (waitMs === undefined || pending === undefined || !pending.hasWork || iteration >= this.#maxIterations) {
      return "completed";
    }
    const completions = await pending.collect(waitMs, signal);
    if (signal?.aborted) return "continue"; // the loop's own abort check rejects
    if (completions.length === 0) return "completed";
    for (const { result, toolName, toolCallId } of completions) {
      const text = `[async result from ${cutName(toolName)} (${cutName(toolCallId)})] ${contentOf(result)}`;
      const { maxResultChars } = this.#features;
      const message: Message = {
        role: "user",
        content: maxResultChars === undefined ? text : cutResult(text, maxResultChars),
      };
      transcript.push(message);
      await this.#emit({ type: "message", message });
      await this.#forUser(result, toolName, toolCallId);
    }
    await this.#checkpoint(transcript, iteration);
    this.check(transcript, iteration);
    return "continue";
  }

  /** Settles the run: `loop-end` on success; later async completions go to `onAsyncResult`. */
  async finish(pending: Promise<ToolLoopResult>): Promise<ToolLoopResult> {
    try {
      const result = await pending.finally(() => {
        this.#ended = true;
      });
      await this.#emit({ type: "loop-end", result });
      this.check(result.messages, result.iterations);
      return result;
    } finally {
      this.#async?.end();
    }
  }

  /**
   * Hands `onCheckpoint` the run's state as it is now (taken at once, delivered in order with the
   * other listeners); what it throws fails the run like a listener. None once the run's signal
   * aborted: the run rejects, and its calls' "aborted" answers must not replace the checkpoint
   * taken before they ran (resuming that one runs them).
   */
  #checkpoint(transcript: Message[], iteration: number, stopped?: ToolLoopCheckpoint["stopped"]): Promise<void> {
    const listener = this.#features.onCheckpoint;
    if (listener === undefined || this.#signal?.aborted) return RESOLVED;
    const pending = [...this.#resumedAsync, ...(this.#asyncCalls ?? this.#async?.undelivered() ?? [])];
    const checkpoint: ToolLoopCheckpoint = {
      version: 1,
      messages: [...transcript],
      iterations: iteration,
      pendingAsync: pending.map(({ toolCallId, toolName }) => ({ toolCallId, toolName })),
    };
    if (stopped !== undefined) checkpoint.stopped = { ...stopped };
    return this.#enqueue("onCheckpoint", () => listener(checkpoint));
  }

  async #stepEnd(response: LLMResponse, iteration: number): Promise<void> {
    if (this.#features.onEvent === undefined) return;
    const finishReason = typeof response.finishReason === "string" ? response.finishReason : "";
    const event: ToolLoopEvent = { type: "step-end", iteration, finishReason };
    if (isPlainObject(response.usage)) event.usage = response.usage as NonNullable<LLMResponse["usage"]>;
    await this.#emit(event);
  }

  /** The `onUserMessage` call a result asks for (`forUser` not empty, not `silent`), or `undefined`. */
  #userMessage(result: ToolResult, toolName: string, toolCallId: string): (() => unknown) | undefined {
    const listener = this.#features.onUserMessage;
    if (
      listener === undefined ||
      result.silent === true ||
      typeof result.forUser !== "string" ||
      result.forUser === ""
    ) {
      return undefined;
    }
    const message = { content: result.forUser, toolName, toolCallId };
    return () => listener(message);
  }

  /** Queues a result's `forUser` delivery in order with the run's other deliveries. */
  #forUser(result: ToolResult, toolName: string, toolCallId: string): Promise<void> {
    const deliver = this.#userMessage(result, toolName, toolCallId);
    return deliver === undefined ? RESOLVED : this.#enqueue("onUserMessage", deliver);
  }

  /**
   * A completion after the loop ended (or without `awaitAsync`): `onAsyncResult`, then `forUser` —
   * while the loop runs, in order with its other deliveries (a throw rejects the run); after, logged.
   */
  #deliverLate({ result, toolName, toolCallId }: AsyncCompletion): void {
    const run = async () => {
      await this.#features.onAsyncResult?.(result, { toolName, toolCallId });
      if (!this.#ended) return this.#forUser(result, toolName, toolCallId);
      await this.#userMessage(result, toolName, toolCallId)?.();
    };
    run().catch((error: unknown) => {
      log(
        this.#logger,
        "warn",
        () => ({ tool: cutName(toolName), error: errorMessage(error) }),
        "async result listener threw",
      );
    });
  }

  #emit(event: ToolLoopEvent): Promise<void> {
    const listener = this.#features.onEvent;
    if (listener === undefined) return RESOLVED;
    return this.#enqueue("onEvent", () => listener(event));
  }

  /**
   * Runs listeners one at a time, in order; a failure is kept (never rejected here) and stops later
   * deliveries. A listener still pending when the run's signal aborts is no longer waited for: the
   * loop's own abort checks then reject the run.
   */
  #enqueue(source: string, deliver: () => unknown): Promise<void> {
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
