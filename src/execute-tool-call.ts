import { setMaxListeners } from "node:events";
import { type ToolErrorCode, ToolExecutionError } from "./errors.js";
import { CallAbort, isAborted } from "./internal/abort.js";
import {
  boundText,
  cutId,
  cutName,
  describeType,
  errorMessage,
  isPlainObject,
  isRecord,
  MAX_ERROR_MESSAGE_CHARS,
  MAX_VALIDATION_MESSAGE_CHARS,
  quoteName,
} from "./internal/describe.js";
import { childLogger, log, logEnabled, type ResolvedLogger, roundMs, writeLine } from "./internal/logger.js";
import { checkFunction, checkMetadata, checkSignal, checkString, optionError } from "./internal/options.js";
import type { RegisteredTool } from "./internal/registered-tool.js";
import type { Logger } from "./logger.js";
import { NO_PROGRESS, type ProgressListener, ProgressReporter } from "./progress.js";
import {
  type AsyncCallback,
  DIRECT_EXECUTE,
  type DirectExecute,
  isAsyncTool,
  isContextualTool,
  isMetadataAwareTool,
  type ParseArgumentsResult,
  type Tool,
  type ToolContext,
} from "./tool.js";
import type { ToolCallRequest } from "./tool-loop-middleware.js";
import {
  errorResult,
  isToolResult,
  newToolResult,
  type ToolExecutionMetadata,
  type ToolResult,
  withMetadata,
} from "./tool-result.js";

const EMPTY_METADATA: Readonly<Record<string, string>> = Object.freeze({});

/** Given to `setCallback` when the caller has no callback, so no earlier caller's callback can fire. */
const NO_CALLBACK: AsyncCallback = () => {};

/** How one call is run; built by the registry. @internal */
export interface CallOptions {
  channel: string;
  chatId: string;
  metadata: Readonly<Record<string, string>> | undefined;
  signal: AbortSignal | undefined;
  toolCallId: string | undefined;
  asyncCallback: AsyncCallback | undefined;
  timeoutMs: number | undefined;
  logger: ResolvedLogger;
  logPayloads: boolean;
  /** The call's `context.reportProgress`: its reporter's, or a no-op when nobody listens. */
  reportProgress: (progress?: number, message?: string) => void;
  /** The loop's tool-call middleware, around the tool once its arguments are validated. */
  wrap: CallWrapper | undefined;
}

/**
 * The loop's tool-call middleware as the call runner sees it: `wrap` runs `run` (the tool) through
 * them, inside the call's timeout and abort. @internal
 */
export interface CallWrapper {
  /** The loop step the calls being run belong to (a turn's calls all end before the next turn). */
  iteration: number;
  /** Runs the middleware around `run`; never rejects. */
  wrap(request: ToolCallRequest, run: (request: ToolCallRequest) => Promise<ToolResult>): Promise<ToolResult>;
}

/** @internal The largest delay `setTimeout` honours; larger ones fire at once. */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/** @internal what a timeout option must be, for TypeErrors. */
export const TIMEOUT_EXPECTATION = `a number of milliseconds > 0 and ≤ ${MAX_TIMEOUT_MS}, or Infinity for none`;

/** @internal `true` for a usable timeout (`Infinity` means none). */
export function isValidTimeout(value: unknown): value is number {
  return value === Number.POSITIVE_INFINITY || (typeof value === "number" && value > 0 && value <= MAX_TIMEOUT_MS);
}

/** @internal Checks an optional timeout option (see {@link isValidTimeout}). */
export function checkTimeout(where: string, option: string, value: unknown): number | undefined {
  if (value === undefined || isValidTimeout(value)) return value;
  throw optionError(where, option, TIMEOUT_EXPECTATION, value);
}

/** Makes the error result for a failed call: short text for the model, `err` for your code. */
export function failure(toolName: string, code: ToolErrorCode, message: string, cause?: unknown): ToolResult {
  const error = new ToolExecutionError(message, { toolName, code, cause });
  return errorResult(message).withError(error);
}

// Calls with neither a caller's signal nor a timeout can never be aborted: they share one signal
// that never aborts, renewed every few hundred calls, so that listeners tools add to it and forget
// stay bounded (an AbortController costs microseconds; an accessor per context, a third of a call).
const CALLS_PER_NEVER_ABORTED_SIGNAL = 256;
let neverAborted: AbortSignal | undefined;
let neverAbortedUses = 0;
function neverAbortedSignal(): AbortSignal {
  if (neverAborted === undefined || ++neverAbortedUses > CALLS_PER_NEVER_ABORTED_SIGNAL) {
    neverAborted = new AbortController().signal;
    setMaxListeners(0, neverAborted);
    neverAbortedUses = 1;
  }
  return neverAborted;
}

/**
 * A call's {@link ToolContext}: plain data properties, so that a spread (`{ ...context }`) keeps
 * everything. When the call can be aborted, `signal` is an own enumerable getter, so the call's
 * AbortController is only made for tools that read it; the getter is one shared function installed
 * with `defineProperty`, which keeps those contexts on one hidden class (a getter in an object
 * literal would be a new closure per call).
 */
class CallContext implements ToolContext {
  static readonly #signal: PropertyDescriptor = {
    get(this: CallContext) {
      return (this.#abort as CallAbort).signal;
    },
    enumerable: true,
    configurable: true,
  };

  readonly #abort: CallAbort | undefined;
  // Declared, then assigned in the constructor: class fields would each be defined twice.
  declare readonly signal: AbortSignal;
  declare channel: string;
  declare chatId: string;
  declare metadata: Readonly<Record<string, string>>;
  declare logger: Logger;
  declare toolCallId?: string;
  declare asyncCallback?: AsyncCallback;
  declare reportProgress: (progress?: number, message?: string) => void;

  constructor(entry: RegisteredTool, options: CallOptions, abort: CallAbort | undefined) {
    this.#abort = abort;
    if (abort === undefined) (this as { signal: AbortSignal }).signal = neverAbortedSignal();
    this.channel = options.channel;
    this.chatId = options.chatId;
    this.metadata = options.metadata ?? EMPTY_METADATA;
    entry.logger ??= childLogger(options.logger, { tool: entry.tool.name });
    this.logger = entry.logger;
    this.reportProgress = options.reportProgress;
    // Only own properties when set (exactOptionalPropertyTypes).
    if (options.toolCallId !== undefined) this.toolCallId = options.toolCallId;
    if (options.asyncCallback !== undefined) this.asyncCallback = options.asyncCallback;
    if (abort !== undefined) Object.defineProperty(this, "signal", CallContext.#signal);
  }
}

/** What a validator returned, checked: a tool's own `parseArguments` may return anything. @internal */
export function checkParsed(value: unknown): ParseArgumentsResult {
  if (!isRecord(value)) return { success: false, error: `the tool's validator returned ${describeType(value)}` };
  if (value.success === true) {
    if (isPlainObject(value.data)) return value as ParseArgumentsResult;
    return { success: false, error: `the tool's validator returned data that is ${describeType(value.data)}` };
  }
  return { success: false, error: typeof value.error === "string" ? value.error : describeType(value.error) };
}

/** The answer for a result whose own getters throw when read. */
function unreadableResult(name: string, error: unknown): ToolResult {
  const message = `tool ${quoteName(name)} returned a result that cannot be read: ${errorMessage(error)}`;
  return failure(cutName(name), "no_result", message, error);
}

function normalizeResult(name: string, value: unknown): ToolResult {
  if (isToolResult(value)) {
    // Read here: a result whose `isError` getter throws fails its call instead of the run, where
    // the log line and the transcript read it again.
    try {
      void value.isError;
    } catch (error) {
      return unreadableResult(name, error);
    }
    if (typeof value.forLLM === "string") return value;
    return failure(
      name,
      "no_result",
      `tool ${quoteName(name)} returned an invalid result: forLLM must be a string, got ${describeType(value.forLLM)}`,
    );
  }
  if (typeof value === "string") return newToolResult(value);
  if (value === undefined || value === null) {
    return failure(name, "no_result", `tool ${quoteName(name)} returned no result`);
  }
  return failure(
    name,
    "no_result",
    `tool ${quoteName(name)} returned an invalid result: expected a ToolResult or a string, got ${describeType(value)}`,
  );
}

function injectMixins(tool: Tool, options: CallOptions): void {
  if (options.channel !== "" && options.chatId !== "" && isContextualTool(tool)) {
    tool.setContext(options.channel, options.chatId);
  }
  if (isAsyncTool(tool)) tool.setCallback(options.asyncCallback ?? NO_CALLBACK);
  if (isMetadataAwareTool(tool)) tool.setMetadata({ ...(options.metadata ?? EMPTY_METADATA) });
}

/**
 * Runs one call of a registered tool: validate, inject the mixins, execute under the signal and
 * timeout, and turn every failure into an error result. Never rejects.
 * @internal
 */
export async function executeRegisteredTool(
  entry: RegisteredTool,
  args: Record<string, unknown>,
  options: CallOptions,
): Promise<ToolResult> {
  const { tool } = entry;
  const name = tool.name;
  // Levels are ordered: when "warn" is off, so are "info" and "debug", and nothing reads the
  // duration; skip the clock and the level checks (the default logger is silent). One "debug"
  // check serves the call's start and end lines.
  const logging = logEnabled(options.logger, "warn");
  const debug = logging && logEnabled(options.logger, "debug");
  const timeoutMs = options.timeoutMs === Number.POSITIVE_INFINITY ? undefined : options.timeoutMs;
  // One clock read for the duration and the deadline.
  const started = logging || timeoutMs !== undefined ? performance.now() : 0;

  if (isAborted(options.signal)) {
    const result = failure(
      name,
      "aborted",
      `tool ${quoteName(name)} was not run: the call was aborted`,
      (options.signal as AbortSignal).reason,
    );
    return logging ? logCallEnd(name, result, started, options, debug) : result;
  }

  const parsed = validateArguments(entry, args);
  if (!parsed.success) {
    const result = invalidArguments(name, parsed.error);
    return logging ? logCallEnd(name, result, started, options, debug) : result;
  }

  if (debug) {
    const { toolCallId, logPayloads } = options;
    const data = parsed.data;
    const fields = () => {
      // The model's id is cut, as in every line: a 1 MB id must not make a 1 MB log line.
      const id = cutId(toolCallId);
      return logPayloads ? { tool: name, toolCallId: id, args: data } : { tool: name, toolCallId: id };
    };
    writeLine(options.logger, "debug", fields, "tool call started");
  }

  const abort =
    options.signal === undefined && timeoutMs === undefined
      ? undefined
      : new CallAbort(options.signal, timeoutMs, started);
  let result: ToolResult;
  try {
    injectMixins(tool, options);
    const context = new CallContext(entry, options, abort);
    const value =
      options.wrap === undefined
        ? runExecute(tool, parsed.data, context)
        : runWrapped(entry, parsed.data, context, options, abort);
    let settled = value;
    if (isThenable(value)) {
      const pending = Promise.resolve(value);
      settled = await (abort === undefined ? pending : abort.race(pending));
    }
    result = normalizeResult(name, settled);
  } catch (error) {
    result = describeFailure(name, error, abort, options.timeoutMs);
  } finally {
    abort?.dispose();
  }
  return logging ? logCallEnd(name, result, started, options, debug) : result;
}

/** The arguments checked by the tool's validator (a tool's own `parseArguments` may return anything). */
function validateArguments(entry: RegisteredTool, args: unknown): ParseArgumentsResult {
  try {
    return isPlainObject(args)
      ? checkParsed(entry.validate(args))
      : { success: false, error: `(root): expected a JSON object, got ${describeType(args)}` };
  } catch (error) {
    return { success: false, error: errorMessage(error) };
  }
}

function invalidArguments(name: string, error: string): ToolResult {
  // A tool's own parseArguments may say anything: bounded like the validators' messages.
  const problem = boundText(error, MAX_VALIDATION_MESSAGE_CHARS);
  return failure(name, "invalid_arguments", `invalid arguments for tool ${quoteName(name)}: ${problem}`);
}

/**
 * Runs the tool through the loop's middleware: each gets the call's request, and its `next` runs
 * the tool with the arguments and context it is given — arguments other than the validated object
 * validated again. `next` never rejects: what fails becomes an error result, as without middleware.
 */
function runWrapped(
  entry: RegisteredTool,
  validated: Record<string, unknown>,
  context: ToolContext,
  options: CallOptions,
  abort: CallAbort | undefined,
): Promise<ToolResult> {
  const { tool } = entry;
  const name = tool.name;
  const wrapper = options.wrap as CallWrapper;
  const request: ToolCallRequest = {
    toolCallId: options.toolCallId ?? "",
    toolName: name,
    arguments: validated,
    iteration: wrapper.iteration,
    context,
  };
  return wrapper.wrap(request, async (sent) => {
    const given = isRecord(sent) ? sent : request;
    let args = validated;
    if (given.arguments !== validated) {
      const parsed = validateArguments(entry, given.arguments);
      if (!parsed.success) return invalidArguments(name, parsed.error);
      args = parsed.data;
    }
    try {
      const value = runExecute(tool, args, isRecord(given.context) ? given.context : context);
      return normalizeResult(name, isThenable(value) ? await value : value);
    } catch (error) {
      return describeFailure(name, error, abort, options.timeoutMs);
    }
  });
}

/** `tool.execute(args, context)`, or for a `defineTool` tool the function behind it (see {@link DIRECT_EXECUTE}). */
function runExecute(tool: Tool, args: Record<string, unknown>, context: ToolContext): unknown {
  const direct = (tool as { [DIRECT_EXECUTE]?: DirectExecute })[DIRECT_EXECUTE];
  if (direct === undefined || direct.method !== tool.execute) return tool.execute(args, context);
  // A plain call, as defineTool's method makes it: the function sees no `this`.
  const run = direct.execute;
  return run(args, context);
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value instanceof Promise ||
    (typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function")
  );
}

function describeFailure(
  name: string,
  error: unknown,
  abort: CallAbort | undefined,
  timeoutMs: number | undefined,
): ToolResult {
  if (abort?.timedOut) {
    return failure(name, "timeout", `tool ${quoteName(name)} timed out after ${timeoutMs} ms`, error);
  }
  if (abort?.aborted && error === abort.reason) {
    return failure(name, "aborted", `tool ${quoteName(name)} was aborted before it finished`, error);
  }
  return failure(name, "tool_failed", `tool ${quoteName(name)} failed: ${errorMessage(error)}`, error);
}

/** An error's `code` and `status`, the own properties worth keeping in a log line. */
function loggableDetails(error: Error): { code?: unknown; status?: unknown } {
  const details: { code?: unknown; status?: unknown } = {};
  for (const key of ["code", "status"] as const) {
    const value: unknown = (error as unknown as Record<string, unknown>)[key];
    if (typeof value === "string" || typeof value === "number") details[key] = value;
  }
  return details;
}

/**
 * The `err` to log: the call's error reduced to its name, message, stack, `code` and `status`,
 * and its cause likewise when that is an Error. Nothing else a tool attached (a request with its
 * headers, a thrown object) is passed on, since log writers such as `console` print every own
 * property and cause they are given.
 */
function loggableError(error: Error | undefined): Error | undefined {
  if (error === undefined) return undefined;
  const cause = error.cause instanceof Error ? loggableError(error.cause) : undefined;
  const copy =
    error instanceof ToolExecutionError
      ? new ToolExecutionError(error.message, { toolName: cutName(error.toolName), code: error.code, cause })
      : Object.assign(new Error(boundText(String(error.message), MAX_ERROR_MESSAGE_CHARS), { cause }), {
          name: String(error.name),
          ...loggableDetails(error),
        });
  if (cause === undefined) delete copy.cause;
  // The original's stack (where it was thrown), not the copy's.
  if (typeof error.stack === "string") copy.stack = boundText(error.stack, MAX_ERROR_MESSAGE_CHARS);
  else delete copy.stack;
  return copy;
}

/**
 * Logs the end of a call and returns its result: `tool call failed` (warn) for every failure —
 * also calls refused before they ran (unknown tool, invalid JSON or arguments) — with `tool`,
 * `toolCallId`, `durationMs`, `err` and `error` (the text the model reads); else `tool call
 * completed` (debug). `started` is `performance.now()` at the call's start (`undefined`: a call
 * refused before it ran, `durationMs: 0`); `debug`, when the caller checked that level already. @internal
 */
export function logCallEnd(
  name: string,
  result: ToolResult,
  started: number | undefined,
  options: { logger: ResolvedLogger; toolCallId: string | undefined; logPayloads: boolean },
  debug?: boolean,
): ToolResult {
  const { logger, toolCallId } = options;
  if (result.isError) {
    // Model-sent names and ids are cut, as in messages: a 1 MB name must not make a 1 MB log line.
    const fields = () => ({
      tool: cutName(name),
      toolCallId: cutId(toolCallId),
      durationMs: durationSince(started),
      err: loggableError(result.err),
      error: result.contentForLLM(),
    });
    log(logger, "warn", fields, "tool call failed");
    return result;
  }
  if (!(debug ?? logEnabled(logger, "debug"))) return result;
  // Built here, not in a closure for `log`, and one literal (no spread of a shared base): this
  // line is written for every call at debug.
  try {
    const line: Record<string, unknown> = {
      tool: cutName(name),
      toolCallId: cutId(toolCallId),
      durationMs: durationSince(started),
    };
    if (result.async) line.async = true;
    if (options.logPayloads) line.result = result.forLLM;
    logger.debug(line, result.async ? "tool call started async work" : "tool call completed");
  } catch {
    // a broken logger must not cost the call its answer
  }
  return result;
}

/** The clock is read only for a line that is written. */
function durationSince(started: number | undefined): number {
  return started === undefined ? 0 : roundMs(performance.now() - started);
}

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

/** A call whose every field was checked already (the loop checks its own once per run). @internal */
export interface CheckedCall {
  name: string;
  args: Record<string, unknown>;
  channel: string;
  chatId: string;
  asyncCallback: AsyncCallback | undefined;
  signal: AbortSignal | undefined;
  metadata: Readonly<Record<string, string>> | undefined;
  toolCallId: string | undefined;
  timeoutMs: number | undefined;
  onProgress: ProgressListener | undefined;
  /** The loop's tool-call middleware; absent outside a loop that has any. */
  wrap?: CallWrapper | undefined;
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
