import {
  type CheckedCall,
  checkTimeout,
  executeRegisteredTool,
  failure,
  unreadableResult,
} from "./execute-tool-call.js";
import { cutName, describeType, isPlainObject, quoteName } from "./internal/describe.js";
import type { ResolvedLogger } from "./internal/logger.js";
import { checkFunction, checkMetadata, checkSignal, checkString, optionError } from "./internal/options.js";
import type { RegisteredTool } from "./internal/registered-tool.js";
import { logCallEnd } from "./log-tool-call.js";
import { NO_PROGRESS, type ProgressListener, ProgressReporter } from "./progress.js";
import type { AsyncCallback } from "./tool.js";
import { type ToolExecutionMetadata, type ToolResult, withMetadata } from "./tool-result.js";

/** Per-call options of a dispatch (the public `ExecuteOptions`, unchecked). @internal */
export interface DispatchOptions {
  signal?: AbortSignal | undefined;
  toolCallId?: string | undefined;
  timeoutMs?: number | undefined;
  metadata?: Readonly<Record<string, string>> | undefined;
  onProgress?: ProgressListener | undefined;
}

/** One call to dispatch by name, as `executeWithContext` takes it. @internal */
export interface DispatchRequest {
  name: string;
  args: Record<string, unknown>;
  channel: string;
  chatId: string;
  asyncCallback: AsyncCallback | undefined;
  options: DispatchOptions;
  /** The public API named in option TypeErrors. @default "executeWithContext" */
  where?: string;
}

/** The registry as dispatch reads it: its tools, sorted names, logger and payload switch. @internal */
export interface DispatchTarget {
  get(name: string): RegisteredTool | undefined;
  names(): readonly string[];
  logger: ResolvedLogger;
  logPayloads: boolean;
}

const MAX_LISTED_NAMES = 20;

/**
 * @internal An `ExecuteOptions` key the loop sets: its results go into the transcript, which reads
 * no metadata, so the copy and the clock reads are skipped.
 */
export const WITHOUT_METADATA: unique symbol = Symbol.for("toolloop.execute.withoutMetadata");

/**
 * Dispatches one call by name: checks the caller's options (a `TypeError`, thrown synchronously,
 * for a wrong type), answers an unknown name with the available names, and runs a known tool.
 * Every failure of the call itself resolves to an error result. The result is a copy with
 * `metadata` (see {@link withMetadata}) unless the options carry {@link WITHOUT_METADATA}. @internal
 */
export function dispatchToolCall(target: DispatchTarget, request: DispatchRequest): Promise<ToolResult> {
  if ((request.options as Partial<Record<symbol, unknown>> | null)?.[WITHOUT_METADATA] === true) {
    return dispatch(target, request);
  }
  const startTime = Date.now();
  const started = performance.now();
  const pending = dispatch(target, request);
  const { name, args, options } = request;
  const call = { name, args, toolCallId: options.toolCallId };
  return pending.then((result) => {
    const metadata = callMetadata(call, startTime, performance.now() - started);
    try {
      return withMetadata(result, metadata);
    } catch (error) {
      // A result whose own getters throw cannot be copied: the caller gets an error result instead.
      return withMetadata(unreadableResult(name, error), metadata);
    }
  });
}

/** The {@link ToolExecutionMetadata} of a call that started at `startTime` (epoch ms). @internal */
export function callMetadata(
  call: { name: unknown; args: unknown; toolCallId: unknown },
  startTime: number,
  durationMs: number,
): ToolExecutionMetadata {
  const metadata: ToolExecutionMetadata = {
    toolName: cutName(call.name),
    startTime,
    endTime: startTime + durationMs,
    durationMs,
    parameters: isPlainObject(call.args) ? call.args : {},
  };
  if (typeof call.toolCallId === "string") metadata.toolCallId = call.toolCallId;
  return metadata;
}

function dispatch(target: DispatchTarget, request: DispatchRequest): Promise<ToolResult> {
  const { name, args, options, asyncCallback, channel, chatId, where = "executeWithContext" } = request;
  if (typeof options !== "object" || options === null) throw optionError(where, "options", "an object", options);
  checkFunction(where, "asyncCallback", asyncCallback);
  const timeoutMs = checkTimeout(where, "timeoutMs", options.timeoutMs);
  const signal = checkSignal(where, "signal", options.signal);
  const metadata = checkMetadata(where, "metadata", options.metadata);
  const toolCallId = checkString(where, "toolCallId", options.toolCallId);
  if (typeof channel !== "string") throw optionError(where, "channel", "a string", channel);
  if (typeof chatId !== "string") throw optionError(where, "chatId", "a string", chatId);
  const onProgress = checkFunction(where, "onProgress", options.onProgress);
  return dispatchCheckedCall(target, {
    name,
    args,
    channel,
    chatId,
    asyncCallback,
    signal,
    metadata,
    toolCallId,
    timeoutMs,
    onProgress,
  });
}

/**
 * {@link dispatchToolCall} without the checks and without `metadata` on the result: answers an
 * unknown name with the available names and runs a known tool. Never rejects. @internal
 */
export function dispatchCheckedCall(target: DispatchTarget, call: CheckedCall): Promise<ToolResult> {
  const { name, toolCallId, onProgress } = call;
  const { logger, logPayloads } = target;
  const entry = typeof name === "string" ? target.get(name) : undefined;
  const progress =
    onProgress === undefined
      ? undefined
      : new ProgressReporter(onProgress, { toolName: name, toolCallId: toolCallId ?? "", logger });
  let pending: Promise<ToolResult>;
  if (entry === undefined) {
    const result = notFound(name, target.names());
    pending = Promise.resolve(
      logCallEnd(result.toolName, result.result, undefined, { logger, toolCallId, logPayloads }),
    );
  } else {
    pending = executeRegisteredTool(entry, call.args, {
      channel: call.channel,
      chatId: call.chatId,
      metadata: call.metadata,
      signal: call.signal,
      toolCallId,
      asyncCallback: call.asyncCallback,
      timeoutMs: call.timeoutMs,
      logger,
      logPayloads,
      // A literal, not a spread of `call`: a spread made every call ~3x slower (callgrind).
      reportProgress: progress === undefined ? NO_PROGRESS : progress.report,
      wrap: call.wrap,
    });
  }
  return progress === undefined ? pending : pending.then((result) => progress.finish(result));
}

/** The answer to a call of an unknown tool: its name and the first available names. */
function notFound(name: unknown, names: readonly string[]): { toolName: string; result: ToolResult } {
  let available = "No tools are available.";
  if (names.length > 0) {
    const listed = names.slice(0, MAX_LISTED_NAMES).join(", ");
    const more = names.length > MAX_LISTED_NAMES ? ` and ${names.length - MAX_LISTED_NAMES} more` : "";
    available = `Available tools: ${listed}${more}.`;
  }
  const toolName = typeof name === "string" ? name : describeType(name);
  return {
    toolName,
    result: failure(toolName, "tool_not_found", `tool ${quoteName(toolName)} not found. ${available}`),
  };
}
