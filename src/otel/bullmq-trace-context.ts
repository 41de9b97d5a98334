import { type Context, context, propagation, trace } from "@opentelemetry/api";
import type { ToolResult } from "../tool-result.js";
import { endToolSpan, startToolSpan } from "./tool-span.js";
import { checkTracingOptions, type TracingOptions } from "./tracing-options.js";

/** The call a queued job runs, as `toolloop/bullmq`'s worker describes it to {@link JobTraceHooks.run}. */
export interface QueuedToolCall {
  /** The tool's name. */
  toolName: string;
  /** The tool call id the call was queued under. */
  toolCallId: string;
  /** The call's arguments (recorded only with `captureContent`). */
  arguments: Record<string, unknown>;
}

/**
 * What `toolloop/bullmq`'s `traceContext` option takes (`createToolQueue` and `createToolWorker`):
 * the trace context written into each job, and the worker's span around the job's call.
 */
export interface JobTraceHooks {
  /**
   * In the enqueuing process, as a call is queued: the active context's propagation fields (W3C
   * `traceparent`, `tracestate` with the default propagator), stored in the job; `undefined` when
   * there is nothing to carry (no active span).
   */
  inject(): Record<string, string> | undefined;
  /**
   * In the worker: runs `work` (the job's call) inside an `execute_tool {name}` span whose parent
   * is the context the job carries (`carrier`; the worker's active context without one), and ends
   * the span with the call's answer.
   */
  run(
    carrier: Record<string, string> | undefined,
    call: QueuedToolCall,
    work: () => Promise<ToolResult>,
  ): Promise<ToolResult>;
}

/**
 * Trace context for `toolloop/bullmq` (its `traceContext` option): the enqueuing side writes the
 * active trace context into each job through the globally registered propagator (W3C trace
 * context with the OpenTelemetry Node SDK), and the worker runs the job's call in an
 * `execute_tool {name}` span that continues that trace — a child of the enqueuing call's own
 * `execute_tool` span when the queue's tool runs under {@link tracing}. Give the same hooks (or
 * hooks with the same options) to the queue and to the worker.
 * @throws TypeError for options of the wrong type
 * @example
 * ```ts
 * const traceContext = bullmqTraceContext();
 * const queue = createToolQueue({ connection, traceContext });
 * const worker = createToolWorker(registry, { connection, traceContext });
 * ```
 */
export function bullmqTraceContext(options?: Omit<TracingOptions, "agentName">): JobTraceHooks {
  const { tracer, captureContent } = checkTracingOptions("bullmqTraceContext", options);
  return {
    inject() {
      const carrier: Record<string, string> = {};
      propagation.inject(context.active(), carrier);
      return Object.keys(carrier).length === 0 ? undefined : carrier;
    },
    run(carrier, call, work) {
      const active = context.active();
      const parent: Context = carrier === undefined ? active : propagation.extract(active, carrier);
      const span = startToolSpan(tracer, call, parent, captureContent);
      let running: Promise<ToolResult>;
      try {
        running = context.with(trace.setSpan(parent, span), work);
      } catch (error) {
        running = Promise.reject(error);
      }
      return running.then(
        (result) => {
          endToolSpan(span, result, captureContent);
          return result;
        },
        (error: unknown) => {
          endToolSpan(span, error, captureContent);
          throw error;
        },
      );
    },
  };
}
