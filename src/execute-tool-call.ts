import { type ToolErrorCode, ToolExecutionError } from "./errors.js";
import { CallAbort, isAborted, unboundedController } from "./internal/abort.js";
import { partsProblem } from "./internal/content-of.js";
import {
  boundText,
  cutId,
  cutName,
  describeType,
  errorMessage,
  isPlainObject,
  isRecord,
  MAX_VALIDATION_MESSAGE_CHARS,
  quoteName,
} from "./internal/describe.js";
import { childLogger, logEnabled, type ResolvedLogger, writeLine } from "./internal/logger.js";
import { optionError } from "./internal/options.js";
import type { RegisteredTool } from "./internal/registered-tool.js";
import { logCallEnd } from "./log-tool-call.js";
import type { Logger } from "./logger.js";
import type { ProgressListener } from "./progress.js";
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
import { errorResult, isToolResult, newToolResult, type ToolResult } from "./tool-result.js";

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
    neverAborted = unboundedController().signal;
    neverAbortedUses = 1;
  }
  return neverAborted;
}

/** `Object.prototype.__defineGetter__` (ECMAScript Annex B), which TypeScript's lib leaves out. */
interface LegacyAccessors {
  __defineGetter__(name: string, getter: () => unknown): void;
}

/**
 * A call's {@link ToolContext}: plain data properties, so that a spread (`{ ...context }`) keeps
 * everything. When the call can be aborted, `signal` is an own enumerable getter, so the call's
 * AbortController is only made for tools that read it. The getter is one shared function, which
 * keeps those contexts on one hidden class (a getter in an object literal would be a new closure per
 * call), installed with `__defineGetter__` (enumerable and configurable, as `defineProperty` would
 * make it with this descriptor): ~0.17 µs a call where `defineProperty` takes ~0.25, the largest
 * single cost of a call with a signal or a timeout.
 */
class CallContext implements ToolContext {
  static readonly #signal = function (this: CallContext): AbortSignal {
    return (this.#abort as CallAbort).signal;
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
    if (abort !== undefined) (this as unknown as LegacyAccessors).__defineGetter__("signal", CallContext.#signal);
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

/** The answer for a result whose own getters throw when read. @internal */
export function unreadableResult(name: string, error: unknown): ToolResult {
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
    const problem =
      typeof value.forLLM === "string"
        ? partsProblem(value)
        : `forLLM must be a string, got ${describeType(value.forLLM)}`;
    if (problem === undefined) return value;
    return failure(name, "no_result", `tool ${quoteName(name)} returned an invalid result: ${problem}`);
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
export function executeRegisteredTool(
  entry: RegisteredTool,
  args: Record<string, unknown>,
  options: CallOptions,
): Promise<ToolResult> {
  const plain =
    options.wrap !== undefined &&
    options.signal === undefined &&
    callTimeout(options) === undefined &&
    !logEnabled(options.logger, "warn");
  return plain ? executeWrapped(entry, args, options) : executeGuarded(entry, args, options);
}

/**
 * A call through the loop's middleware with no signal, no timeout and no log line to wait for:
 * their answer is the call's, with no async frame around it (a promise hop less per call). What
 * they answer is a checked `ToolResult` already: the step's result, or the chain's check of theirs.
 */
function executeWrapped(
  entry: RegisteredTool,
  args: Record<string, unknown>,
  options: CallOptions,
): Promise<ToolResult> {
  const { tool } = entry;
  const parsed = validateArguments(entry, args);
  if (!parsed.success) return Promise.resolve(invalidArguments(tool.name, parsed.error));
  let value: ToolResult | Promise<ToolResult>;
  try {
    injectMixins(tool, options);
    value = runWrapped(entry, parsed.data, new CallContext(entry, options, undefined), options, undefined);
  } catch (error) {
    value = describeFailure(tool.name, error, undefined, options.timeoutMs);
  }
  return value instanceof Promise ? value : Promise.resolve(value);
}

/** The call's timeout in ms, or `undefined` when it has none (no option, or `Infinity`). */
function callTimeout(options: CallOptions): number | undefined {
  return options.timeoutMs === Number.POSITIVE_INFINITY ? undefined : options.timeoutMs;
}

/** {@link executeRegisteredTool} under the call's signal and timeout, its start and end logged. */
async function executeGuarded(
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
  const timeoutMs = callTimeout(options);
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
 * When the middleware answer with the promise of a step whose result was known at once (a
 * synchronous tool, passed through), that result itself: the call is then not awaited, as it is
 * not without middleware.
 */
function runWrapped(
  entry: RegisteredTool,
  validated: Record<string, unknown>,
  context: ToolContext,
  options: CallOptions,
  abort: CallAbort | undefined,
): ToolResult | Promise<ToolResult> {
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
  // The last step's result when it was known at once, and the promise `next` gave for it.
  let known: ToolResult | undefined;
  let knownAs: Promise<ToolResult> | undefined;
  const answer = wrapper.wrap(request, (sent) => {
    const result = runStep(entry, validated, isRecord(sent) ? sent : request, context, options, abort);
    if (isThenable(result)) return result;
    known = result;
    knownAs = Promise.resolve(result);
    return knownAs;
  });
  return answer === knownAs && known !== undefined ? known : answer;
}

/**
 * What a middleware's `next` runs: the tool, with the arguments it was given (validated again
 * unless they are the validated object) and its context (the call's own when it gave none).
 */
function runStep(
  entry: RegisteredTool,
  validated: Record<string, unknown>,
  given: Partial<ToolCallRequest>,
  context: ToolContext,
  options: CallOptions,
  abort: CallAbort | undefined,
): ToolResult | Promise<ToolResult> {
  const { tool } = entry;
  const name = tool.name;
  let args = validated;
  if (given.arguments !== validated) {
    const parsed = validateArguments(entry, given.arguments);
    if (!parsed.success) return invalidArguments(name, parsed.error);
    args = parsed.data;
  }
  try {
    const value = runExecute(tool, args, isRecord(given.context) ? (given.context as ToolContext) : context);
    if (!isThenable(value)) return normalizeResult(name, value);
    // Not an async function: two closures and a `then` cost fewer instructions per call.
    const failed = (error: unknown) => describeFailure(name, error, abort, options.timeoutMs);
    const settled = (outcome: unknown) => {
      try {
        return normalizeResult(name, outcome);
      } catch (error) {
        return failed(error);
      }
    };
    return Promise.resolve(value).then(settled, failed);
  } catch (error) {
    return describeFailure(name, error, abort, options.timeoutMs);
  }
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
