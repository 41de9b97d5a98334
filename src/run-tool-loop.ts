import { contentText } from "./content-part.js";
import type { ToolLoopError } from "./errors.js";
import { type LinkedSignal, linkSignal, subscribeAbort } from "./internal/abort.js";
import { contentOf, messageContent } from "./internal/content-of.js";
import { cutName, errorMessage, isRecord } from "./internal/describe.js";
import type { NormalizedToolCall } from "./internal/normalize-tool-call.js";
import { optionError } from "./internal/options.js";
import type { ResumeState } from "./internal/resume-state.js";
import { loopBreakingTest, stoppedBy, stoppedTurn } from "./loop-breaking-stop.js";
import type { RunScope } from "./loop-call.js";
import type { Stop } from "./loop-feature.js";
import { logRun } from "./loop-logging.js";
import { answerOf, callModel, loopFailure, modelCallChain } from "./loop-model-call.js";
import { checkMessages, type ResolvedConfig, resolveConfig, resolveContext } from "./loop-options.js";
import { LoopState } from "./loop-state.js";
import { answerCalls, inOrder } from "./loop-tool-calls.js";
import { runThroughMiddleware } from "./middleware-chain.js";
import type { InferOutput, OutputSchema } from "./output-schema.js";
import type { LLMResponse, Message } from "./provider.js";
import type { ToolLoopConfig } from "./tool-loop-config.js";
import type { ToolLoopContext } from "./tool-loop-context.js";
import type { RunRequest } from "./tool-loop-middleware.js";
import type { ToolLoopResult } from "./tool-loop-result.js";
import type { ToolResult } from "./tool-result.js";

const WHERE = "runToolLoop";

/**
 * Runs the model ↔ tool loop (Go's `RunToolLoop`): ask the provider; if the answer has no tool
 * calls, finish with its text; otherwise append the assistant message, run the turn's calls
 * (concurrently, at most `maxConcurrency` at once), append one tool message per call in call
 * order, and ask again — until the model answers or `maxIterations` is reached.
 *
 * Tool failures never reject: the model receives them as tool messages. The promise rejects with
 * a {@link ToolLoopError} only when the provider fails or `context.signal` aborts; its
 * `messages` then hold the transcript so far, every tool call answered.
 *
 * @example
 * With `config.output`, the final answer is validated and `result.output` typed from the schema.
 *
 * ```ts
 * const result = await runToolLoop(
 *   { provider, tools: registry, maxIterations: 10 },
 *   [{ role: "user", content: "What's the weather in Paris?" }],
 * );
 * console.log(result.content);
 * ```
 */
export function runToolLoop<Output extends OutputSchema = OutputSchema>(
  config: ToolLoopConfig<Output>,
  messages: Message[],
  context: ToolLoopContext = {},
): Promise<ToolLoopResult<InferOutput<Output>>> {
  return runFrom(WHERE, config, messages, context, undefined) as Promise<ToolLoopResult<InferOutput<Output>>>;
}

/** The algorithm: call the model, stop if it makes no calls, answer every call, repeat up to the cap. */
async function loop(
  config: ResolvedConfig,
  messages: Message[],
  scope: RunScope,
  resume: ResumeState | undefined,
): Promise<ToolLoopResult> {
  const run = new LoopState(config, messages, scope, resume, modelCallChain(config));
  const { transcript, features } = run;
  try {
    run.begin(resume);
    // A resumed run first answers its checkpoint's open calls (or, stopped there, resolves at once).
    const stopped = resume === undefined ? undefined : resumedStop(run, resume);
    if (stopped !== undefined) return stopped;
    let calls = resume?.calls;
    while (calls !== undefined || run.iterations < run.limit) {
      run.throwIfAborted();
      // A resumed turn belongs to the checkpoint's last step: no provider call of this run made it.
      const iteration = run.step(calls === undefined);
      let response: LLMResponse | undefined;
      if (calls === undefined) {
        response = answerOf(run, await callModel(run, iteration));
        // The extra final-answer call failed: the run ends as it would have without it.
        if (response === undefined) return run.result("", "max_iterations");
        const content = typeof response.content === "string" ? response.content : "";
        const requested: readonly unknown[] = response.toolCalls ?? [];
        if (requested.length === 0) {
          transcript.push({ role: "assistant", content });
          const outcome =
            features === undefined ? "completed" : await features.answered(transcript, response, iteration, run.signal);
          if (outcome === "continue") continue; // async results were fed back: ask again
          if (outcome === "completed") run.debugLine(() => ({ iteration }), "tool loop completed");
          return run.result(content, outcome);
        }
        calls = run.normalize(requested, iteration);
        transcript.push({ role: "assistant", content, toolCalls: calls.map(({ call }) => call) });
        // Awaited only when there is something to wait for: awaiting `undefined` costs a tick.
        const delivered = features?.callsMade(transcript, iteration);
        if (delivered !== undefined) await delivered;
      }
      let results = inOrder(await answerCalls(run, calls, iteration));
      // Calls left waiting for a person's decision get no answer in this run (approve: "interrupt").
      if (features?.interruptions !== undefined)
        ({ calls, results } = features.interruptions.leaveOpen(calls, results));
      const stoppedAt = appendAnswers(run, calls, results);
      const stop =
        features === undefined
          ? undefined
          : await features.turnAnswered(transcript, calls, results, response, iteration, allHandled(results));
      const ended = endTurn(run, calls, results, stoppedAt, stop, iteration, response);
      if (ended !== undefined) return ended;
      calls = undefined;
    }
    run.throwIfAborted();
    run.debugLine(() => ({ iterations: run.iterations }), "tool loop stopped at maxIterations");
    return run.result("", "max_iterations");
  } catch (error) {
    // The loop only ever rejects with a ToolLoopError, whatever broke (a registry that throws …).
    throw loopFailure(run, error);
  } finally {
    run.dispose();
  }
}

/**
 * Appends one tool message per call, in call order; returns the index of the first loop-breaking
 * call that succeeded, or `-1`.
 */
function appendAnswers(run: LoopState, calls: readonly NormalizedToolCall[], results: readonly ToolResult[]): number {
  const { transcript } = run;
  const isLoopBreaking = loopBreakingTest(run.config.tools);
  let stoppedAt = -1;
  for (let index = 0; index < calls.length; index++) {
    const { call } = calls[index] as NormalizedToolCall;
    const result = results[index] as ToolResult;
    const isError = result.isError === true;
    const content = messageContent(result, contentOf(result), run.config.maxResultBytes);
    transcript.push({ role: "tool", content, toolCallId: call.id, toolName: call.name, isError });
    if (stoppedAt < 0 && isLoopBreaking !== undefined && !isError && isLoopBreaking(call.name)) stoppedAt = index;
  }
  return stoppedAt;
}

/** `true` when the turn had calls and every result says the response was handled. */
function allHandled(results: readonly ToolResult[]): boolean {
  for (const result of results) if (result.responseHandled !== true) return false;
  return results.length > 0;
}

/**
 * Whether the run stops after the turn (its answers appended, the features told): calls left
 * waiting for a decision (`stop`: `"interrupted"`), then a loop-breaking tool that succeeded
 * (`stoppedAt`, the first in call order; in a resumed turn, also one answered before), then every
 * result having handled the response, then what a feature called for (`stop`: repeated failures,
 * the final turn). `response` is `undefined` for a resumed turn.
 */
function endTurn(
  run: LoopState,
  calls: readonly NormalizedToolCall[],
  results: readonly ToolResult[],
  stoppedAt: number,
  stop: Stop | undefined,
  iteration: number,
  response: LLMResponse | undefined,
): ToolLoopResult | undefined {
  const { transcript, config } = run;
  // Calls left waiting: the run stops before any other stop, so that a resume answers them.
  if (stop?.reason === "interrupted") return run.result(stop.content, stop.reason);
  // A resumed turn may have answers from before its interruption: the first loop-breaking call of them all.
  if (stoppedAt < 0 && response === undefined) {
    const stopped = stoppedTurn(transcript, config.tools, run.iterations);
    if (stopped !== undefined) return run.withUsage(stopped);
  }
  if (stoppedAt >= 0) {
    const { call } = calls[stoppedAt] as NormalizedToolCall;
    const result = results[stoppedAt] as ToolResult;
    const text = typeof result.forUser === "string" && result.forUser !== "" ? result.forUser : contentOf(result);
    run.debugLine(() => ({ iteration, tool: cutName(call.name) }), "tool loop stopped by a loop-breaking tool");
    return run.withUsage(stoppedBy(call, text, run.iterations, transcript));
  }
  // When every result of the turn says the response was handled, no further provider call.
  if (allHandled(results)) {
    run.debugLine(() => ({ iteration }), "tool loop stopped: every result handled the response");
    return run.result("", "response_handled");
  }
  return stop === undefined ? undefined : run.result(stop.content, stop.reason);
}

/**
 * How a checkpoint that ended its run resolves, at once: an answer without calls (`"max_iterations"`
 * when it came past the cap, from `finalAnswerOnMaxIterations`), a turn in which a loop-breaking
 * tool succeeded, or the stop it records. `undefined` when the run goes on.
 */
function resumedStop(run: LoopState, resume: ResumeState): ToolLoopResult | undefined {
  const { transcript, iterations } = run;
  if (resume.finished) {
    const { content } = transcript[transcript.length - 1] as Message;
    return run.result(contentText(content), iterations > run.config.maxIterations ? "max_iterations" : "completed");
  }
  const stopped = resume.calls === undefined ? stoppedTurn(transcript, run.config.tools, iterations) : undefined;
  if (stopped !== undefined) return stopped;
  return resume.stopped === undefined ? undefined : run.result(resume.stopped.content, resume.stopped.reason);
}

/** A resumed run's starting point, and how to read it again from messages a middleware changed. @internal */
export interface Resumption {
  /** Where the checkpoint's run stood. */
  state: ResumeState;
  /** The state for other messages, read as the checkpoint's are (a `TypeError` when they do not fit). */
  reread(messages: unknown): { messages: Message[]; state: ResumeState };
}

/**
 * Runs the loop on `messages`: from the start, or (`resume`) from a checkpoint's state, the
 * messages already checked. Around it, from the outside in: the run's `info` line, the features'
 * end (`loop-end`), the run middleware. `where` names the public function in `TypeError`s. @internal
 */
export function runFrom(
  where: string,
  config: ToolLoopConfig,
  messages: Message[],
  context: ToolLoopContext,
  resume: Resumption | undefined,
): Promise<ToolLoopResult> {
  let resolved: ResolvedConfig;
  let scope: RunScope;
  try {
    resolved = resolveConfig(config, where);
    if (resume === undefined) checkMessages(messages, where, "messages");
    scope = resolveContext(context, where);
  } catch (error) {
    // Not an async function (a returned promise would cost the run an extra resolution): what the
    // checks throw is still a rejection.
    return Promise.reject(error);
  }
  const { features, logger } = resolved;
  const layers = resolved.middleware?.run;
  const start = (own: RunScope): Promise<ToolLoopResult> => {
    if (layers === undefined || layers.length === 0) return loop(resolved, messages, own, resume?.state);
    const request: RunRequest = {
      messages,
      model: resolved.model,
      context: { ...context },
      resumed: resume !== undefined,
    };
    const requested = (sent: RunRequest) => runRequested(where, resolved, { sent, request, scope, own, resume });
    return runThroughMiddleware(layers, request, requested, own.signal, resume?.state.iterations ?? 0);
  };
  const settle = (own: RunScope) => (features === undefined ? start(own) : features.finish(start(own)));
  // Without a caller's signal there is nothing to unlink: return the loop's promise directly, so
  // that a waiting run keeps one suspended async frame instead of two.
  if (scope.signal === undefined) return logRun(logger, messages.length, () => settle(scope));
  // The run's own signal follows the caller's through one shared subscription: however many runs
  // and calls wait on the caller's signal, it carries one listener of ours.
  let link: LinkedSignal;
  try {
    link = linkSignal(scope.signal);
  } catch (error) {
    const message = `${where}: context.signal cannot be listened to: ${errorMessage(error)}`;
    return Promise.reject(new TypeError(message, { cause: error }));
  }
  const own = { ...scope, signal: link.signal };
  let running: Promise<ToolLoopResult>;
  try {
    running = logRun(logger, messages.length, () => settle(own));
  } catch (error) {
    link.dispose();
    return Promise.reject(error);
  }
  // Not `finally`: it would add two promises to every run.
  return running.then(
    (result) => {
      link.dispose();
      return result;
    },
    (error: unknown) => {
      link.dispose();
      throw error;
    },
  );
}

/** What a run middleware passed to `next`, next to what the run was given. */
interface RequestedRun {
  sent: RunRequest;
  request: RunRequest;
  /** The caller's context, checked. */
  scope: RunScope;
  /** The same with the run's own signal. */
  own: RunScope;
  resume: Resumption | undefined;
}

/**
 * Runs the loop as a run middleware asks: its messages, model and context, each checked again
 * when it is not the one given (a `TypeError` otherwise). A context with a signal of its own aborts
 * the run when either that signal or the caller's does.
 */
async function runRequested(
  where: string,
  resolved: ResolvedConfig,
  { sent, request, scope, own, resume }: RequestedRun,
): Promise<ToolLoopResult> {
  if (!isRecord(sent)) throw optionError(where, "request", "a RunRequest object", sent);
  let messages = request.messages as Message[];
  let state = resume?.state;
  if (sent.messages !== request.messages) {
    if (resume === undefined) {
      checkMessages(sent.messages, where, "request.messages");
      messages = sent.messages;
    } else ({ messages, state } = resume.reread(sent.messages));
  }
  let config = resolved;
  if (sent.model !== request.model) {
    if (typeof sent.model !== "string") throw optionError(where, "request.model", "a string", sent.model);
    config = { ...resolved, model: sent.model };
  }
  if (sent.context === request.context) return loop(config, messages, own, state);
  const changed = resolveContext(sent.context, where);
  if (changed.signal === undefined || changed.signal === scope.signal) {
    return loop(config, messages, { ...changed, signal: own.signal }, state);
  }
  const both = followBoth(own.signal, changed.signal);
  try {
    return await loop(config, messages, { ...changed, signal: both.signal }, state);
  } finally {
    both.dispose();
  }
}

/** A signal that aborts when `first` (if any) or `second` does; `dispose` unsubscribes from both. */
function followBoth(first: AbortSignal | undefined, second: AbortSignal): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const abort = (reason: unknown) => controller.abort(reason);
  const subscriptions: (() => void)[] = [];
  for (const signal of [first, second]) {
    if (signal === undefined || controller.signal.aborted) continue;
    if (signal.aborted) abort(signal.reason);
    else subscriptions.push(subscribeAbort(signal, abort));
  }
  return {
    signal: controller.signal,
    dispose: () => {
      for (const unsubscribe of subscriptions) unsubscribe();
    },
  };
}
