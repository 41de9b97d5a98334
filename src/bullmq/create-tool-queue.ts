import type { ConnectionOptions } from "bullmq";
import { isRecord } from "../internal/describe.js";
import { resolveLogger } from "../internal/logger.js";
import { checkCount, optionError } from "../internal/options.js";
import type { Logger } from "../logger.js";
import { BullToolQueue } from "./bull-tool-queue.js";
import { checkConnection } from "./connection.js";
import { checkTraceContext, type JobTraceContext } from "./job-trace-context.js";
import { DEFAULT_QUEUE_NAME } from "./tool-job.js";
import type { ToolQueue } from "./tool-queue.js";

/** Options of {@link createToolQueue}. */
export interface ToolQueueOptions {
  /**
   * Where Redis is: BullMQ's connection options (`{ host, port, password … }`, an ioredis
   * instance …). With an options object, the queue's own connection fails commands at once while
   * Redis is unreachable (`enableOfflineQueue: false`), so an enqueue answers instead of waiting.
   */
  connection: ConnectionOptions;
  /** The BullMQ queue name; workers of the same name run its jobs. @default "toolloop" */
  name?: string | undefined;
  /**
   * How many times a job runs at most when it throws (or its worker dies): the last failure
   * becomes the completion `failed after N attempts: <reason>`. A tool's error result is not retried.
   * @default 3
   */
  attempts?: number | undefined;
  /** Milliseconds between a failed attempt and the next. @default 1000 */
  backoffMs?: number | undefined;
  /**
   * How long finished jobs (and so their results) stay in Redis: a call enqueued again within
   * this time is not run again, and `completions()` finds it. @default 86_400_000 (24 hours)
   */
  keepFinishedMs?: number | undefined;
  /**
   * The longest an enqueue waits for Redis when the call has no earlier timeout or abort of its
   * own (then the call's answer is an error result naming Redis), the longest `completions()`
   * waits (then it rejects), and the longest `close()` waits for Redis. @default 10_000
   */
  enqueueTimeoutMs?: number | undefined;
  /** Where failures of handlers, callbacks and the Redis connection are logged. @default a silent pino logger */
  logger?: Logger | undefined;
  /**
   * Carries each call's trace context in its job (toolloop/otel's `bullmqTraceContext()`; give the
   * worker the same), so that the worker's span joins the enqueuing run's trace. See docs/tracing.md.
   * @default none: jobs carry no trace context
   */
  traceContext?: JobTraceContext | undefined;
}

const DEFAULTS = {
  name: DEFAULT_QUEUE_NAME,
  attempts: 3,
  backoffMs: 1000,
  keepFinishedMs: 86_400_000,
  enqueueTimeoutMs: 10_000,
};

function checkMs(where: string, option: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value === "number" && Number.isFinite(value) && value >= 0) return value;
  throw optionError(where, option, "a number of milliseconds ≥ 0", value);
}

/**
 * Async tools whose calls run as BullMQ jobs on Redis, on workers made with
 * {@link createToolWorker} in any process. Each completion reaches the call's own callback (while
 * this process lives) and every `onCompletion` handler of every queue of that name, once per tool
 * call id. See docs/scale-out.md.
 * @throws TypeError for options of the wrong type
 * @example
 * ```ts
 * const queue = createToolQueue({ connection: { host: "127.0.0.1", port: 6379 } });
 * registry.register(queue.queued(transcribeTool));
 * // elsewhere: createToolWorker(registryWithTranscribeTool, { connection })
 * ```
 */
export function createToolQueue(options: ToolQueueOptions): ToolQueue {
  const where = "createToolQueue";
  if (!isRecord(options)) throw optionError(where, "options", "an object", options);
  const connection = checkConnection(where, options.connection);
  const name = options.name ?? DEFAULTS.name;
  if (typeof name !== "string" || name === "" || name.includes(":")) {
    throw optionError(where, "name", "a non-empty string without ':'", name);
  }
  return new BullToolQueue({
    connection,
    name,
    attempts: checkCount(where, "attempts", options.attempts, DEFAULTS.attempts),
    backoffMs: checkMs(where, "backoffMs", options.backoffMs, DEFAULTS.backoffMs),
    keepFinishedMs: checkMs(where, "keepFinishedMs", options.keepFinishedMs, DEFAULTS.keepFinishedMs),
    enqueueTimeoutMs: checkMs(where, "enqueueTimeoutMs", options.enqueueTimeoutMs, DEFAULTS.enqueueTimeoutMs),
    logger: resolveLogger(options.logger, where),
    traceContext: checkTraceContext(where, options.traceContext),
  });
}
