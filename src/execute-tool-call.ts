import { setMaxListeners } from "node:events";
import type { Logger } from "pino";
import { type ToolErrorCode, ToolExecutionError } from "./errors.js";
import { raceAbort } from "./internal/abort.js";
import { describeType, errorMessage, isPlainObject, quoteName } from "./internal/describe.js";
import type { ToolDefinition } from "./provider.js";
import {
  type AsyncCallback,
  isAsyncTool,
  isContextualTool,
  isMetadataAwareTool,
  type ParseArgumentsResult,
  type Tool,
  type ToolContext,
} from "./tool.js";
import { errorResult, isToolResult, newToolResult, type ToolResult } from "./tool-result.js";

const EMPTY_METADATA: Readonly<Record<string, string>> = Object.freeze({});

/** How one call is run; built by the registry. @internal */
export interface CallOptions {
  channel: string;
  chatId: string;
  metadata: Readonly<Record<string, string>> | undefined;
  signal: AbortSignal | undefined;
  toolCallId: string | undefined;
  asyncCallback: AsyncCallback | undefined;
  timeoutMs: number | undefined;
  logger: Logger;
  logPayloads: boolean;
}

/** A registered tool with what was prepared once at registration. @internal */
export interface RegisteredTool {
  tool: Tool;
  /** Built from the tool once, at registration. */
  definition: ToolDefinition;
  validate: (args: Record<string, unknown>) => ParseArgumentsResult;
  /** The registry's logger bound to `{ tool }`, made on the tool's first call. */
  logger?: Logger;
}

/** The largest delay `setTimeout` honours; larger ones fire at once. */
const MAX_TIMEOUT_MS = 2_147_483_647;

/** @internal what a timeout option must be, for TypeErrors. */
export const TIMEOUT_EXPECTATION = `a number of milliseconds > 0 and ≤ ${MAX_TIMEOUT_MS}, or Infinity for none`;

/** @internal `true` for a usable timeout (`Infinity` means none). */
export function isValidTimeout(value: unknown): value is number {
  return value === Number.POSITIVE_INFINITY || (typeof value === "number" && value > 0 && value <= MAX_TIMEOUT_MS);
}

/** Makes the error result for a failed call: short text for the model, `err` for your code. */
export function failure(toolName: string, code: ToolErrorCode, message: string, cause?: unknown): ToolResult {
  const error = new ToolExecutionError(message, { toolName, code, cause });
  return errorResult(message).withError(error);
}

// Calls without a signal share one that never aborts: an AbortController per call would cost more
// than the rest of the call. No listener limit, so tools adding listeners never make Node warn.
let neverAborted: AbortSignal | undefined;
function neverAbortedSignal(): AbortSignal {
  if (neverAborted === undefined) {
    neverAborted = new AbortController().signal;
    setMaxListeners(0, neverAborted);
  }
  return neverAborted;
}

// Plain data properties, so `{ ...context }` keeps everything; accessors (own or on a class
// prototype) would either be lost by a spread or cost a microsecond per call.
function createCallContext(entry: RegisteredTool, options: CallOptions, signal: AbortSignal | undefined): ToolContext {
  entry.logger ??= options.logger.child({ tool: entry.tool.name });
  const context: ToolContext = {
    signal: signal ?? neverAbortedSignal(),
    channel: options.channel,
    chatId: options.chatId,
    metadata: options.metadata ?? EMPTY_METADATA,
    logger: entry.logger,
  };
  // Only an own property when the call has an id (exactOptionalPropertyTypes).
  if (options.toolCallId !== undefined) context.toolCallId = options.toolCallId;
  return context;
}

function normalizeResult(name: string, value: unknown): ToolResult {
  if (isToolResult(value)) return value;
  if (typeof value === "string") return newToolResult(value);
  if (value === undefined || value === null) {
    return failure(name, "no_result", `tool ${quoteName(name)} returned no result`);
  }
  return failure(
    name,
    "no_result",
    `tool ${quoteName(name)} returned an invalid result: expected a ToolResult or a string, got ${typeof value}`,
  );
}

function injectMixins(tool: Tool, options: CallOptions): void {
  if (options.channel !== "" && options.chatId !== "" && isContextualTool(tool)) {
    tool.setContext(options.channel, options.chatId);
  }
  if (options.asyncCallback !== undefined && isAsyncTool(tool)) tool.setCallback(options.asyncCallback);
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
  const { logger } = options;
  // Levels are ordered: when "warn" is off, so are "info" and "debug", and nothing reads the
  // duration; skip the clock and the level checks (the default logger is silent).
  const logging = logger.isLevelEnabled("warn");
  const started = logging ? performance.now() : 0;

  if (options.signal?.aborted) {
    const result = failure(
      name,
      "aborted",
      `tool ${quoteName(name)} was not run: the call was aborted`,
      options.signal.reason,
    );
    return logging ? logEnd(logger, name, options, result, performance.now() - started) : result;
  }

  let parsed: ParseArgumentsResult;
  try {
    parsed = isPlainObject(args)
      ? entry.validate(args)
      : { success: false, error: `(root): expected an object, got ${describeType(args)}` };
  } catch (error) {
    parsed = { success: false, error: errorMessage(error) };
  }
  if (!parsed.success) {
    const result = failure(name, "invalid_arguments", `invalid arguments for tool ${quoteName(name)}: ${parsed.error}`);
    return logging ? logEnd(logger, name, options, result, performance.now() - started) : result;
  }

  if (logging && logger.isLevelEnabled("debug")) {
    logger.debug(
      options.logPayloads
        ? { tool: name, toolCallId: options.toolCallId, args: parsed.data }
        : { tool: name, toolCallId: options.toolCallId },
      "tool call started",
    );
  }

  let controller: AbortController | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let timedOut = false;
  const outer = options.signal;
  const onOuterAbort = () => controller?.abort(outer?.reason);
  if (options.timeoutMs !== undefined && options.timeoutMs !== Number.POSITIVE_INFINITY) {
    controller = new AbortController();
    const timeoutMs = options.timeoutMs;
    timer = setTimeout(() => {
      timedOut = true;
      controller?.abort(new DOMException(`tool timed out after ${timeoutMs} ms`, "TimeoutError"));
    }, timeoutMs);
    outer?.addEventListener("abort", onOuterAbort, { once: true });
  }
  const callSignal = controller?.signal ?? outer;

  let result: ToolResult;
  try {
    injectMixins(tool, options);
    const value = tool.execute(parsed.data, createCallContext(entry, options, callSignal));
    const settled =
      value instanceof Promise || (typeof value === "object" && value !== null && "then" in value)
        ? await raceAbort(Promise.resolve(value), callSignal)
        : value;
    result = normalizeResult(name, settled);
  } catch (error) {
    result = describeFailure(name, error, timedOut, options, outer);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    outer?.removeEventListener("abort", onOuterAbort);
  }

  return logging ? logEnd(logger, name, options, result, performance.now() - started) : result;
}

function describeFailure(
  name: string,
  error: unknown,
  timedOut: boolean,
  options: CallOptions,
  outer: AbortSignal | undefined,
): ToolResult {
  if (timedOut) {
    return failure(name, "timeout", `tool ${quoteName(name)} timed out after ${options.timeoutMs} ms`, error);
  }
  if (outer?.aborted && error === outer.reason) {
    return failure(name, "aborted", `tool ${quoteName(name)} was aborted before it finished`, error);
  }
  return failure(name, "tool_failed", `tool ${quoteName(name)} failed: ${errorMessage(error)}`, error);
}

/** Logs the end of a call (failures too, also those rejected before the tool ran) and returns its result. */
function logEnd(
  logger: Logger,
  name: string,
  options: CallOptions,
  result: ToolResult,
  durationMs: number,
): ToolResult {
  if (result.isError) {
    if (!logger.isLevelEnabled("warn")) return result;
    logger.warn(
      { tool: name, toolCallId: options.toolCallId, durationMs, err: result.err, error: result.contentForLLM() },
      "tool call failed",
    );
    return result;
  }
  if (!logger.isLevelEnabled("info")) return result;
  const fields: Record<string, unknown> = { tool: name, toolCallId: options.toolCallId, durationMs };
  if (result.async) fields.async = true;
  if (options.logPayloads) fields.result = result.forLLM;
  logger.info(fields, result.async ? "tool call started async work" : "tool call completed");
  return result;
}
