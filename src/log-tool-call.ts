import { ToolExecutionError } from "./errors.js";
import { boundText, cutId, cutName, MAX_ERROR_MESSAGE_CHARS } from "./internal/describe.js";
import { log, logEnabled, type ResolvedLogger, roundMs } from "./internal/logger.js";
import type { ToolResult } from "./tool-result.js";

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
