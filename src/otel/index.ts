/**
 * `toolloop/otel`: OpenTelemetry tracing of runs, model calls and tool calls, following the GenAI
 * semantic conventions (`tracing`), and the trace context of `toolloop/bullmq` jobs
 * (`bullmqTraceContext`). `@opentelemetry/api` is an optional peer dependency, loaded only by this
 * entry. See docs/tracing.md.
 * @packageDocumentation
 */
export { bullmqTraceContext, type JobTraceHooks, type QueuedToolCall } from "./bullmq-trace-context.js";
export { tracing } from "./tracing.js";
export type { TracingOptions } from "./tracing-options.js";
