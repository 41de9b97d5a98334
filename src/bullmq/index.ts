/**
 * `toolloop/bullmq`: async tools run as BullMQ jobs on Redis, delivered once per tool call, in any
 * process. `bullmq` (and `ioredis`) are optional peer dependencies, loaded only by this entry.
 * See docs/scale-out.md.
 * @packageDocumentation
 */
export { createToolQueue, type ToolQueueOptions } from "./create-tool-queue.js";
export { createToolWorker, type ToolWorker, type ToolWorkerOptions } from "./create-tool-worker.js";
export type { JobTraceContext } from "./job-trace-context.js";
export type { ToolCompletion } from "./tool-completion.js";
export type { QueuedCall, ToolQueue } from "./tool-queue.js";
