import { compose, type Next } from "./internal/compose.js";
import { Deliveries } from "./internal/deliveries.js";
import type { ResolvedLogger } from "./internal/logger.js";
import type { NormalizedToolCall } from "./internal/normalize-tool-call.js";
import type { ResumeState } from "./internal/resume-state.js";
import { ApprovalGate } from "./loop-approval.js";
import { AsyncResults } from "./loop-async-results.js";
import type { LoopCall } from "./loop-call.js";
import { Checkpoints } from "./loop-checkpoints.js";
import { LoopEvents } from "./loop-events.js";
import type { Answer, FeatureRun, LoopFeature, SavedStop, Stop } from "./loop-feature.js";
import { FinalAnswer } from "./loop-final-answer.js";
import { Interruptions, stoppingResult } from "./loop-interruptions.js";
import { StructuredOutput } from "./loop-output.js";
import { StopPolicies } from "./loop-stop-policies.js";
import { UserMessages } from "./loop-user-messages.js";
import type { ResolvedOutput } from "./output-schema.js";
import type { ProgressListener } from "./progress.js";
import type { LLMProvider, LLMResponse, Message, ToolDefinition } from "./provider.js";
import { type RefusalTarget, refuseCall } from "./refuse-call.js";
import type { ToolApprover } from "./tool-approval.js";
import type { ToolLoopConfig } from "./tool-loop-config.js";
import type { ToolLoopEventListener } from "./tool-loop-event.js";
import type { ModelCallRequest } from "./tool-loop-middleware.js";
import type { StopReason, ToolLoopResult } from "./tool-loop-result.js";
import type { ToolResult } from "./tool-result.js";

/** The loop-control options of a run, checked (see loop-options.ts). */
export interface FeatureOptions {
  onEvent: ToolLoopEventListener | undefined;
  onUserMessage: ToolLoopConfig["onUserMessage"];
  approve: ToolApprover | "interrupt" | undefined;
  onAsyncResult: ToolLoopConfig["onAsyncResult"];
  awaitAsyncMs: number | undefined;
  finalAnswer: boolean;
  maxRepeatedFailures: number | undefined;
  maxResultChars: number | undefined;
  onCheckpoint: ToolLoopConfig["onCheckpoint"];
  output: ResolvedOutput | undefined;
}

/** What the features of a run are made with besides their options. */
export interface FeatureContext {
  provider: LLMProvider;
  maxIterations: number;
  logger: ResolvedLogger;
  /** The run's tools (a registry, or `null`). */
  tools: unknown;
  /** The caller's `onProgress`. */
  onProgress: ProgressListener | undefined;
  /** `maxResultBytes`: the most decoded bytes of one result's parts fed back. */
  maxResultBytes: number;
}

const invokeToolLayer = (feature: LoopFeature, call: LoopCall, next: Next<LoopCall, ToolResult>) =>
  (feature.wrapToolCall as NonNullable<LoopFeature["wrapToolCall"]>).call(feature, call, next);

const invokeModelLayer = (feature: LoopFeature, request: ModelCallRequest, next: Next<ModelCallRequest, LLMResponse>) =>
  (feature.wrapModelCall as NonNullable<LoopFeature["wrapModelCall"]>).call(feature, request, next);

/**
 * Calls `point` on each feature in order, waiting for each that returns a promise before the next:
 * a promise only when one did (awaiting `undefined` would cost a tick per feature per point).
 */
function eachFeature(
  features: readonly LoopFeature[],
  point: (feature: LoopFeature) => unknown,
  from = 0,
): Promise<void> | undefined {
  for (let index = from; index < features.length; index++) {
    const done = point(features[index] as LoopFeature);
    if (done instanceof Promise) return done.then(() => eachFeature(features, point, index + 1));
  }
  return undefined;
}

/** `next` once `pending` (if any) settled: a promise only when there is one to wait for. */
function then(pending: Promise<void> | undefined, next: () => Promise<void> | undefined): Promise<void> | undefined {
  return pending === undefined ? next() : pending.then(next);
}

/**
 * The loop's optional features of one run, in their order: each hook and point of the algorithm
 * is passed to every feature that has it, the first outermost. Made only when an option asks for
 * one: without, the loop calls none of this.
 */
export class LoopFeatures implements FeatureRun {
  /** How many provider calls the loop may make (one more with `finalAnswerOnMaxIterations`). */
  readonly limit: number;
  /** The run's progress listener: the caller's `onProgress`, and with `onEvent` its `tool-progress` events. */
  readonly onProgress: ProgressListener | undefined;
  /** With `approve: "interrupt"`: the calls a turn leaves waiting for a decision. */
  readonly interruptions: Interruptions | undefined;
  readonly #deliveries = new Deliveries();
  readonly #features: readonly LoopFeature[];
  readonly #events: LoopEvents | undefined;
  readonly #toolChain: (call: LoopCall, step: Next<LoopCall, ToolResult>) => Promise<ToolResult>;
  readonly #modelChain: (request: ModelCallRequest, step: Next<ModelCallRequest, LLMResponse>) => Promise<LLMResponse>;

  constructor(options: FeatureOptions, context: FeatureContext) {
    const deliveries = this.#deliveries;
    const { provider, maxIterations, logger, tools } = context;
    const events = options.onEvent && new LoopEvents(options.onEvent, deliveries, logger, provider);
    this.#events = events;
    this.onProgress = events === undefined ? context.onProgress : events.progressListener(context.onProgress);
    const target: RefusalTarget = { tools, logger, onProgress: this.onProgress };
    const userMessages = options.onUserMessage && new UserMessages(options.onUserMessage, deliveries);
    const finalAnswer = options.finalAnswer ? new FinalAnswer(maxIterations, target) : undefined;
    const tracksAsync = options.onAsyncResult !== undefined || options.awaitAsyncMs !== undefined;
    const async = tracksAsync
      ? new AsyncResults({ ...options, userMessages, maxIterations, logger, maxResultBytes: context.maxResultBytes })
      : undefined;
    const interrupts = options.approve === "interrupt";
    let interruptions: Interruptions | undefined;
    const checkpoints =
      options.onCheckpoint !== undefined || interrupts
        ? new Checkpoints(options.onCheckpoint, deliveries, async, () => interruptions?.interrupting === true)
        : undefined;
    if (interrupts) {
      const failed = () => deliveries.failed;
      interruptions = new Interruptions(target, { events, checkpoints: checkpoints as Checkpoints, failed });
    }
    this.interruptions = interruptions;
    const policies =
      options.maxRepeatedFailures === undefined && options.maxResultChars === undefined
        ? undefined
        : new StopPolicies(options.maxRepeatedFailures, options.maxResultChars);
    this.limit = finalAnswer?.limit ?? maxIterations;
    const all: (LoopFeature | undefined)[] = [
      policies, // first: the messages the other features deliver are cut
      // Before events (loop-end carries `output`) and the final answer (whose answer it checks too).
      options.output && new StructuredOutput(options.output, maxIterations, this.limit),
      // Outside the events: a call left waiting emits no tool-call-start.
      interruptions,
      events,
      // A call not started once a listener failed is not run (before its approval is asked).
      { wrapToolCall: (call, next) => (deliveries.failed ? this.#notRun(call, target) : next(call)) },
      userMessages,
      finalAnswer,
      async,
      checkpoints,
      new ApprovalGate(typeof options.approve === "function" ? options.approve : undefined, target),
      // Only the run of an approved call takes a slot of the turn's maxConcurrency bound.
      { wrapToolCall: (call, next) => (call.slot === undefined ? next(call) : call.slot(() => next(call))) },
      {
        // Holding its slot, a call first lets the deliveries queued before it settle (among them
        // the tool-call-end of the call whose slot it takes), so a failure there stops it.
        wrapToolCall: async (call, next) => {
          if (call.slot !== undefined) await deliveries.tail;
          const result = deliveries.failed ? await this.#notRun(call, target) : await next(call);
          call.settled?.(result);
          return result;
        },
      },
    ];
    const features = all.filter((feature): feature is LoopFeature => feature !== undefined);
    this.#features = features;
    this.#toolChain = compose(
      features.filter((feature) => feature.wrapToolCall !== undefined),
      invokeToolLayer,
    );
    this.#modelChain = compose(
      features.filter((feature) => feature.wrapModelCall !== undefined),
      invokeModelLayer,
    );
  }

  #notRun(call: LoopCall, target: RefusalTarget): Promise<ToolResult> {
    return Promise.resolve(refuseCall(call.normalized.call, stoppingResult(call.normalized.call.name), target));
  }

  /** The run begins: listeners are not waited for past `signal`'s abort. */
  begin(signal: AbortSignal | undefined, resume: ResumeState | undefined): void {
    this.#deliveries.watch(signal);
    for (const feature of this.#features) feature.begin?.(signal, resume);
  }

  /** Answers one call through the features; `step` runs it. */
  runCall(call: LoopCall, step: Next<LoopCall, ToolResult>): Promise<ToolResult> {
    return this.#toolChain(call, step);
  }

  /** One provider call through the features; `step` goes on to the user's middleware and the provider. */
  callModel(request: ModelCallRequest, step: Next<ModelCallRequest, LLMResponse>): Promise<LLMResponse> {
    return this.#modelChain(request, step);
  }

  /** Sends a provider call: streamed when someone listens and the provider can. */
  send(provider: LLMProvider, request: ModelCallRequest): Promise<LLMResponse> {
    if (this.#events?.stream === true) return this.#events.streamed(provider, request);
    const { messages, model, options, signal } = request;
    return provider.chat(messages as Message[], request.tools as ToolDefinition[] | undefined, model, options, signal);
  }

  /** A provider call begins (then {@link check}); a promise only when a feature's point returned one. */
  stepStart(iteration: number): Promise<void> | undefined {
    return eachFeature(this.#features, (feature) => feature.stepStart?.(iteration));
  }

  /** The provider call failed (the run not aborted): throws a listener's failure; `true` to resolve `max_iterations`. */
  modelCallFailed(iteration: number, error: unknown, transcript: Message[]): boolean {
    this.check(transcript, iteration);
    return this.#features.some((feature) => feature.modelCallFailed?.(iteration, error) === true);
  }

  message(message: Message, answer: Answer | undefined): Promise<void> | undefined {
    return eachFeature(this.#features, (feature) => feature.message?.(message, answer));
  }

  checkpoint(transcript: Message[], iteration: number, stopped?: SavedStop): Promise<void> | undefined {
    return eachFeature(this.#features, (feature) => feature.checkpoint?.(transcript, iteration, stopped));
  }

  check(transcript: Message[], iteration: number): void {
    this.#deliveries.check(transcript, iteration);
  }

  /** The assistant message with calls was appended (a failing checkpoint leaves the calls unrun). */
  callsMade(transcript: Message[], iteration: number): Promise<void> | undefined {
    return then(this.message(transcript[transcript.length - 1] as Message, undefined), () =>
      this.checkpoint(transcript, iteration),
    );
  }

  /**
   * The turn's tool messages were appended (the last `calls.length` of the transcript): each goes
   * through the features, then the checkpoint, `step-end` (not for a resumed turn: no provider call
   * of this run made it). Returns the stop a feature calls for, the last one winning.
   */
  async turnAnswered(
    transcript: Message[],
    calls: readonly NormalizedToolCall[],
    results: readonly ToolResult[],
    response: LLMResponse | undefined,
    iteration: number,
    handled: boolean,
  ): Promise<Stop | undefined> {
    const from = transcript.length - calls.length;
    for (let index = 0; index < calls.length; index++) {
      const { call } = calls[index] as NormalizedToolCall;
      const answer = { result: results[index] as ToolResult, toolName: call.name, toolCallId: call.id };
      const delivered = this.message(transcript[from + index] as Message, answer);
      if (delivered !== undefined) await delivered;
    }
    let stop: Stop | undefined;
    let saved: SavedStop = handled ? { reason: "response_handled", content: "" } : undefined;
    for (const feature of this.#features) {
      const called = feature.turnStop?.(iteration);
      if (called === undefined) continue;
      // A turn that left calls waiting stops first: those calls need their answers.
      if (stop?.reason === "interrupted") continue;
      stop = called;
      if (called.reason === "repeated_failure") saved ??= { reason: called.reason, content: called.content };
    }
    // The resume of an interrupted checkpoint answers its waiting calls: the run did not stop there.
    if (stop?.reason === "interrupted") saved = undefined;
    // response_handled is the loop's own check (it comes before these stops); the checkpoint says so.
    const ended = then(this.checkpoint(transcript, iteration, saved), () =>
      response === undefined ? undefined : this.#stepEnd(response, iteration),
    );
    if (ended !== undefined) await ended;
    this.check(transcript, iteration);
    return stop;
  }

  /**
   * The model answered without calls (its message appended): delivered and saved; then the
   * features decide — another turn (`"continue"`, async completions fed back) or how it stops.
   */
  async answered(
    transcript: Message[],
    response: LLMResponse,
    iteration: number,
    signal: AbortSignal | undefined,
  ): Promise<"continue" | StopReason> {
    const ended = then(this.callsMade(transcript, iteration), () => this.#stepEnd(response, iteration));
    if (ended !== undefined) await ended;
    this.check(transcript, iteration);
    for (const feature of this.#features) {
      const answered = feature.answered?.(this, transcript, iteration, signal);
      const outcome = answered instanceof Promise ? await answered : answered;
      if (outcome !== undefined) return outcome;
    }
    return "completed";
  }

  /** Every feature's {@link LoopFeature.stepEnd}. */
  #stepEnd(response: LLMResponse, iteration: number): Promise<void> | undefined {
    return eachFeature(this.#features, (feature) => feature.stepEnd?.(response, iteration));
  }

  /** The run's result was made: every feature's {@link LoopFeature.result}. */
  complete(result: ToolLoopResult): void {
    for (const feature of this.#features) feature.result?.(result);
  }

  /** Settles the run: the features' `finish` (`loop-end`) on success, then their `end`. */
  async finish(pending: Promise<ToolLoopResult>): Promise<ToolLoopResult> {
    try {
      const result = await pending.finally(() => {
        for (const feature of this.#features) feature.settled?.();
      });
      const finished = eachFeature(this.#features, (feature) => feature.finish?.(result));
      if (finished !== undefined) await finished;
      this.check(result.messages, result.iterations);
      return result;
    } finally {
      for (const feature of this.#features) feature.end?.();
    }
  }
}

/** The features of a run, or `undefined` when no option asks for one (the loop then pays nothing for them). */
export function createLoopFeatures(
  options: FeatureOptions | undefined,
  context: FeatureContext,
): LoopFeatures | undefined {
  return options === undefined ? undefined : new LoopFeatures(options, context);
}
