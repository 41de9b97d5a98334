import { type DispatchTarget, dispatchToolCall } from "./dispatch-tool-call.js";
import type { ToolRequest } from "./execute-batch.js";
import { subscribeAbort } from "./internal/abort.js";
import { isRecord } from "./internal/describe.js";
import { checkFunction, checkSignal, checkString, optionError } from "./internal/options.js";
import { ProgressBuffer } from "./internal/progress-buffer.js";
import type { ProgressUpdate } from "./progress.js";
import type { ExecuteOptions } from "./tool-registry-options.js";
import type { ToolResult } from "./tool-result.js";

/** A call started by {@link ToolRegistry.executeAsync} (with its progress and cancel). */
export interface ToolExecution {
  /** The request's `id`, else the options' `toolCallId`, else a new UUID: the call's `toolCallId`. */
  readonly id: string;
  /** The call's result, with `metadata`; never rejects (every failure is an error result). */
  readonly result: Promise<ToolResult>;
  /**
   * Every `reportProgress` update of the call, then its final one (`"completed"`, `"failed"` or
   * `"cancelled"`), after which the iteration ends. One consumer; the tool never waits for it: at
   * most 1,000 unread updates are kept, the oldest `"running"` ones dropped first.
   */
  readonly progress: AsyncIterable<ProgressUpdate>;
  /**
   * Aborts the call's signal; a call still running settles `result` with an error result whose
   * `err.code` is `"aborted"` (final progress status `"cancelled"`). No effect once it ended.
   */
  cancel(reason?: unknown): void;
}

const WHERE = "executeAsync";

/**
 * Starts one call at once and returns its handle; see {@link ToolRegistry.executeAsync}.
 * @internal
 */
export function startToolExecution(target: DispatchTarget, request: unknown, options: unknown): ToolExecution {
  if (!isRecord(request)) throw optionError(WHERE, "request", "a request object", request);
  const { name, parameters, dependsOn } = request as Partial<ToolRequest>;
  if (typeof name !== "string") throw optionError(WHERE, "request.name", "a string", name);
  if (dependsOn !== undefined && !(Array.isArray(dependsOn) && dependsOn.length === 0)) {
    throw optionError(WHERE, "request.dependsOn", "absent (dependencies are for executeBatch)", dependsOn);
  }
  if (!isRecord(options)) throw optionError(WHERE, "options", "an object", options);
  // Checked here, not only by dispatch: the listener given to dispatch is this execution's own.
  const onProgress = checkFunction(WHERE, "onProgress", (options as ExecuteOptions).onProgress);
  const id =
    checkString(WHERE, "request.id", request.id) ??
    checkString(WHERE, "toolCallId", options.toolCallId) ??
    crypto.randomUUID();
  const callerSignal = checkSignal(WHERE, "signal", options.signal);

  const controller = new AbortController();
  let unsubscribe = () => {};
  if (callerSignal?.aborted) controller.abort(callerSignal.reason);
  else if (callerSignal !== undefined) unsubscribe = subscribeAbort(callerSignal, (reason) => controller.abort(reason));

  const progress = new ProgressBuffer();
  const listener = (update: ProgressUpdate): void => {
    progress.push(update);
    onProgress?.(update);
  };
  let result: Promise<ToolResult>;
  try {
    result = dispatchToolCall(target, {
      name,
      args: parameters as Record<string, unknown>,
      channel: "",
      chatId: "",
      asyncCallback: undefined,
      options: {
        signal: controller.signal,
        toolCallId: id,
        timeoutMs: options.timeoutMs,
        metadata: options.metadata,
        onProgress: listener,
      } as ExecuteOptions,
      where: WHERE,
    });
  } catch (error) {
    unsubscribe();
    throw error;
  }
  let ended = false;
  result = result.finally(() => {
    ended = true;
    unsubscribe();
  });
  return {
    id,
    result,
    progress,
    cancel(reason?: unknown) {
      if (!ended) controller.abort(reason ?? new DOMException("the execution was cancelled", "AbortError"));
    },
  };
}
