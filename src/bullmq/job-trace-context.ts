import { errorMessage, isPlainObject, isRecord } from "../internal/describe.js";
import { log, type ResolvedLogger } from "../internal/logger.js";
import { optionError } from "../internal/options.js";
import type { ToolResult } from "../tool-result.js";

/**
 * The `traceContext` option of {@link createToolQueue} and {@link createToolWorker}: how a job
 * carries the enqueuing call's trace context (W3C `traceparent`) to the worker, and how the worker
 * runs the call inside it. `toolloop/otel`'s `bullmqTraceContext()` makes one; this subpath never
 * loads OpenTelemetry itself.
 */
export interface JobTraceContext {
  /**
   * Called as a call is queued, in the enqueuing call's context: the fields to store with the job
   * (strings), or `undefined` for none. What it throws is logged; the call is queued without them.
   */
  inject(): Record<string, string> | undefined;
  /**
   * Called by the worker for each job: runs `work` (the job's call, which never rejects but when
   * the worker closes under it) within the context the job's fields (`carrier`, `undefined` when
   * the job has none) describe, and returns what `work` returns. What it throws fails the attempt.
   */
  run(
    carrier: Record<string, string> | undefined,
    call: { toolName: string; toolCallId: string; arguments: Record<string, unknown> },
    work: () => Promise<ToolResult>,
  ): Promise<ToolResult>;
}

/** Most fields a job's trace context keeps (W3C needs two: `traceparent`, `tracestate`). */
const MAX_FIELDS = 8;
/** Longest field a job's trace context keeps (W3C's `tracestate` is at most 512 characters). */
const MAX_FIELD_CHARS = 1_024;

/** Checks the `traceContext` option: `undefined`, or an object with `inject` and `run`. @internal */
export function checkTraceContext(where: string, value: unknown): JobTraceContext | undefined {
  if (value === undefined) return undefined;
  if (!isRecord(value) || typeof value.inject !== "function" || typeof value.run !== "function") {
    throw optionError(
      where,
      "traceContext",
      "an object with inject() and run() (toolloop/otel's bullmqTraceContext())",
      value,
    );
  }
  return value as unknown as JobTraceContext;
}

/**
 * What a job's stored trace context may hand to the worker's hook: at most {@link MAX_FIELDS}
 * string fields of at most {@link MAX_FIELD_CHARS} characters, in a null-prototype object (the job
 * may have been written by anyone who can reach Redis); `undefined` when nothing is left.
 * @internal
 */
export function traceCarrier(value: unknown): Record<string, string> | undefined {
  if (!isPlainObject(value)) return undefined;
  const carrier: Record<string, string> = Object.create(null);
  let count = 0;
  for (const [key, field] of Object.entries(value)) {
    if (count === MAX_FIELDS) break;
    if (typeof field !== "string" || field.length > MAX_FIELD_CHARS || key.length > MAX_FIELD_CHARS) continue;
    carrier[key] = field;
    count++;
  }
  return count === 0 ? undefined : carrier;
}

/** The trace context to store with a queued call's job, or `undefined`; a hook that throws is logged. @internal */
export function injectTrace(
  hooks: JobTraceContext | undefined,
  logger: ResolvedLogger,
  queue: string,
): Record<string, string> | undefined {
  if (hooks === undefined) return undefined;
  try {
    return traceCarrier(hooks.inject());
  } catch (error) {
    log(logger, "warn", () => ({ queue, error: errorMessage(error) }), "tool queue: traceContext.inject() threw");
    return undefined;
  }
}
