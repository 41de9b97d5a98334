import PQueue from "p-queue";
import { WITHOUT_METADATA } from "./dispatch-tool-call.js";
import { failure } from "./execute-tool-call.js";
import { errorMessage, isRecord, quoteName } from "./internal/describe.js";
import type { NormalizedToolCall } from "./internal/normalize-tool-call.js";
import { needsAnyApproval, runApproved } from "./loop-approval.js";
import { callContext, type LoopCall, type RunScope, type Slot } from "./loop-call.js";
import type { ResolvedConfig } from "./loop-options.js";
import type { LoopState } from "./loop-state.js";
import { refuseCall } from "./refuse-call.js";
import type { RegistryLike } from "./registry-like.js";
import { EXECUTE_CHECKED } from "./registry-symbols.js";
import type { AsyncCallback } from "./tool.js";
import { ToolRegistry } from "./tool-registry.js";
import type { ExecuteOptions } from "./tool-registry-options.js";
import { isToolResult, type ToolResult } from "./tool-result.js";

const EXECUTE_WITH_CONTEXT = ToolRegistry.prototype.executeWithContext;

/**
 * Runs one call in the registry (Go's `ExecuteWithContext`), or answers it when it cannot run:
 * arguments that are not a JSON object, no tools. The run's tool-call middleware go with it.
 */
function runCall(
  { call, argumentsError, errorCode = "invalid_json" }: NormalizedToolCall,
  config: ResolvedConfig,
  scope: RunScope,
  asyncCallback: AsyncCallback | undefined,
): Promise<ToolResult> {
  if (argumentsError !== undefined) {
    return Promise.resolve(refuseCall(call, failure(call.name, errorCode, argumentsError), config));
  }
  if (config.tools === null) {
    const message = `No tools available: tool ${quoteName(call.name)} cannot be called.`;
    return Promise.resolve(refuseCall(call, failure(call.name, "tool_not_found", message), config));
  }
  const { tools } = config;
  // Also a stand-in that borrows the method: it has no EXECUTE_CHECKED, and takes the public path.
  if (tools.executeWithContext === EXECUTE_WITH_CONTEXT && EXECUTE_CHECKED in tools) {
    // This copy's own registry: the options were checked when the run started, and its answer is
    // always a ToolResult (no guard, no promise of its own).
    return (tools as ToolRegistry)[EXECUTE_CHECKED](
      {
        name: call.name,
        args: call.arguments,
        channel: scope.channel,
        chatId: scope.chatId,
        asyncCallback,
        signal: scope.signal,
        metadata: scope.metadata,
        toolCallId: call.id,
        timeoutMs: config.toolTimeoutMs,
        onProgress: config.onProgress,
        wrap: scope.wrap,
      },
      scope.promotions,
    );
  }
  const { wrap } = scope;
  if (wrap === undefined) return runPublic(call.name, call.arguments, call.id, config, scope, asyncCallback);
  // Another copy's registry cannot run the middleware inside its call: they wrap the whole call,
  // with the arguments as sent (that registry validates what they pass on).
  const request = {
    toolCallId: call.id,
    toolName: call.name,
    arguments: call.arguments,
    iteration: wrap.iteration,
    context: callContext(call, config.logger, scope),
  };
  return wrap.wrap(request, (sent) => {
    const args = isRecord(sent) && isRecord(sent.arguments) ? sent.arguments : call.arguments;
    return runPublic(call.name, args, call.id, config, scope, asyncCallback);
  });
}

/** A call through the registry's public `executeWithContext`, its answer guarded. */
function runPublic(
  name: string,
  args: Record<string, unknown>,
  id: string,
  config: ResolvedConfig,
  scope: RunScope,
  asyncCallback: AsyncCallback | undefined,
): Promise<ToolResult> {
  const tools = config.tools as RegistryLike;
  let pending: Promise<ToolResult>;
  try {
    pending = tools.executeWithContext(name, args, scope.channel, scope.chatId, asyncCallback, {
      signal: scope.signal,
      metadata: scope.metadata,
      timeoutMs: config.toolTimeoutMs,
      toolCallId: id,
      onProgress: config.onProgress,
      // The transcript reads no metadata: no copy of the result, no clock reads.
      [WITHOUT_METADATA]: true,
    } as ExecuteOptions);
  } catch (error) {
    pending = Promise.reject(error);
  }
  // executeWithContext resolves every tool failure; this only guards the transcript against a
  // registry that breaks its contract (another copy, a subclass), so the call still gets its answer.
  return Promise.resolve(pending).then(
    (result) =>
      isToolResult(result) ? result : failure(name, "no_result", `tool ${quoteName(name)} returned no result`),
    (error: unknown) => failure(name, "tool_failed", `tool ${quoteName(name)} failed: ${errorMessage(error)}`, error),
  );
}

/** The turn's calls straight to the registry, at most `maxConcurrency` at once. */
function runPlain(calls: NormalizedToolCall[], config: ResolvedConfig, scope: RunScope): Promise<ToolResult[]> {
  // When the bound cannot be reached, a queue would only add its overhead to every call.
  if (config.maxConcurrency >= calls.length) {
    return Promise.all(calls.map((call) => runCall(call, config, scope, undefined)));
  }
  const queue = new PQueue({ concurrency: config.maxConcurrency });
  return Promise.all(calls.map((call) => queue.add(() => runCall(call, config, scope, undefined))));
}

/**
 * The turn's calls through the loop's features — or, without them, through the refusal of calls
 * that need an approval nobody can give. The `maxConcurrency` slot is taken inside: a call waiting
 * for approval holds none.
 */
function runGated(run: LoopState, calls: NormalizedToolCall[], iteration: number): Promise<ToolResult[]> {
  const { config, scope, features } = run;
  let slot: Slot | undefined;
  if (config.maxConcurrency < calls.length) {
    const queue = new PQueue({ concurrency: config.maxConcurrency });
    slot = (start) => queue.add(start);
  }
  if (features === undefined) {
    const start = (call: NormalizedToolCall) => () => runCall(call, config, scope, undefined);
    return Promise.all(
      calls.map((call) =>
        runApproved(call, config, scope, undefined, slot === undefined ? start(call) : () => slot(start(call))),
      ),
    );
  }
  const step = (loopCall: LoopCall) => runCall(loopCall.normalized, config, scope, loopCall.asyncCallback);
  return Promise.all(
    calls.map((normalized) =>
      features.runCall({ normalized, iteration, scope, slot, asyncCallback: undefined, settled: undefined }, step),
    ),
  );
}

/**
 * Answers every call of a turn, in call order (results written back by index), concurrently — at
 * most `maxConcurrency` at once; with `tickHiddenTools`, the hidden tools promoted before the
 * round are ticked after it. A turn of one call may resolve to its result alone: {@link inOrder}
 * makes the list.
 */
export function answerCalls(run: LoopState, calls: NormalizedToolCall[], iteration: number): Promise<Answers> {
  const ticker = run.config.hiddenTools;
  if (ticker === undefined) return answerTurn(run, calls, iteration);
  const mark = ticker.mark();
  return answerTurn(run, calls, iteration).then((results) => {
    ticker.tick(mark);
    return results;
  });
}

/** The turn's results: through the features (or the approval refusal), or straight to the registry. */
function answerTurn(run: LoopState, calls: NormalizedToolCall[], iteration: number): Promise<Answers> {
  const { config, scope } = run;
  if (run.features !== undefined || needsAnyApproval(config.tools, calls, scope.promotions)) {
    return runGated(run, calls, iteration);
  }
  // One call, the usual turn: its own promise, awaited by the loop (no promise of Promise.all's or
  // of an array's, no async frame around it).
  if (calls.length === 1) return runCall(calls[0] as NormalizedToolCall, config, scope, undefined);
  return runPlain(calls, config, scope);
}

/** A turn's results as {@link answerCalls} resolves them: a list, or the result of its one call. */
export type Answers = ToolResult[] | ToolResult;

/** A turn's results as a list, in call order. */
export function inOrder(answers: Answers): ToolResult[] {
  return Array.isArray(answers) ? answers : [answers];
}
