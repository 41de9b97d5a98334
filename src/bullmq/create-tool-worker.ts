import { type ConnectionOptions, type Job, UnrecoverableError, Worker } from "bullmq";
import { checkTimeout, failure } from "../execute-tool-call.js";
import { raceAbort } from "../internal/abort.js";
import {
  boundText,
  cutName,
  errorMessage,
  isPlainObject,
  isRecord,
  jsonText,
  MAX_ERROR_MESSAGE_CHARS,
  quoteName,
} from "../internal/describe.js";
import { log, type ResolvedLogger, resolveLogger } from "../internal/logger.js";
import { checkCount, optionError } from "../internal/options.js";
import type { Logger } from "../logger.js";
import { ToolRegistry } from "../tool-registry.js";
import { isToolResult, type ToolResult } from "../tool-result.js";
import { closeOnSigterm } from "./close-on-sigterm.js";
import { checkConnection, dropConnections } from "./connection.js";
import { checkTraceContext, type JobTraceContext, traceCarrier } from "./job-trace-context.js";
import {
  DEFAULT_QUEUE_NAME,
  decodeJobData,
  encodeReturn,
  failedAfter,
  type ToolJobData,
  type ToolJobReturn,
} from "./tool-job.js";

/** Options of {@link createToolWorker}. */
export interface ToolWorkerOptions {
  /** Where Redis is: BullMQ's connection options or a Redis client (the worker blocks on its own connection). */
  connection: ConnectionOptions;
  /** The queue whose jobs this worker runs (the `name` of {@link createToolQueue}). @default "toolloop" */
  name?: string | undefined;
  /** How many jobs this worker runs at once. @default 1 */
  concurrency?: number | undefined;
  /** Where job failures and Redis connection errors are logged. @default a silent pino logger */
  logger?: Logger | undefined;
  /**
   * How long a job's lock lasts without renewal (the worker renews it while the job runs). When
   * the worker dies, another worker takes its job over within about `lockDurationMs` +
   * `stalledIntervalMs`. @default 30000
   */
  lockDurationMs?: number | undefined;
  /** How often this worker looks for jobs whose worker died (stalled jobs). @default 30000 */
  stalledIntervalMs?: number | undefined;
  /**
   * How long a job may take, counted from its start: `registry.executeWithContext`'s `timeoutMs`,
   * and for a tool that answers async itself, also the wait for what it reports through its
   * callback (a report later than that is dropped). A timeout is the error result
   * `tool "x" timed out after N ms`, not retried. Without it, an async tool that never reports
   * holds its job, and one of the worker's `concurrency` slots, until the worker closes.
   * @default none
   */
  timeoutMs?: number | undefined;
  /**
   * How long `close()` (and so SIGTERM) lets the running jobs finish. Then it aborts their calls'
   * signals and stops waiting for them: each such job goes back to the queue for another worker
   * (it counts as an attempt, as a crash would; after the last one the completion is
   * `tool "x" failed after N attempts: its worker closed while running it`). Below Kubernetes'
   * default grace period of 30 s, so that a pod's jobs go back before it is killed. `Infinity`
   * waits for them for good (then an async tool that never reports holds the process).
   * @default 25000
   */
  closeGraceMs?: number | undefined;
  /**
   * On SIGTERM, close the worker: it takes no more jobs, lets those it runs finish for up to
   * `closeGraceMs` (then aborts them, see there), and the process then ends as it would have
   * (unless you have SIGTERM listeners of your own). `false` leaves SIGTERM to you: call `close()`
   * from your handler.
   * @default true
   */
  closeOnSigterm?: boolean | undefined;
  /**
   * Runs each job's call within the trace context its job carries (toolloop/otel's
   * `bullmqTraceContext()`, the same the queue was given): the worker's `execute_tool` span joins
   * the enqueuing run's trace. See docs/tracing.md.
   * @default none: jobs run without a trace context
   */
  traceContext?: JobTraceContext | undefined;
}

/** A running worker, from {@link createToolWorker}. */
export interface ToolWorker {
  /**
   * Takes no more jobs, waits for the running ones to finish (for up to `closeGraceMs`: then
   * their calls are aborted and they go back to the queue), and closes the worker's Redis
   * connections; with Redis unreachable (also when it never was) it drops the connections it made
   * 2 s after its last job, so that nothing of the worker keeps the process alive.
   */
  close(): Promise<void>;
}

function checkMilliseconds(where: string, option: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value === "number" && Number.isSafeInteger(value) && value > 0) return value;
  throw optionError(where, option, "an integer number of milliseconds > 0", value);
}

/** How long `close()` waits for Redis after the worker's last job finished. */
const REDIS_CLOSE_GRACE_MS = 2_000;

/** The default `closeGraceMs`. */
const DEFAULT_CLOSE_GRACE_MS = 25_000;

/** The reason a job's call is aborted with when `close()` stops waiting for it. */
class WorkerClosed extends Error {
  constructor() {
    super("its worker closed while running it");
  }
}

/** A worker's stalled jobs are limited by `attempts` in the processor, not by BullMQ's own count. */
const UNLIMITED_STALLS = Number.MAX_SAFE_INTEGER;

/**
 * Runs the jobs of a {@link createToolQueue} queue: each through `registry.executeWithContext`
 * (the same validation, timeout and logging as any call; the job's channel, chat id, metadata and
 * tool call id as its context). A tool's result — an error result too — completes the job. A
 * throw that escapes the registry is retried up to the queue's `attempts`, with `backoffMs` between;
 * a start whose worker died (the job stalled) counts as an attempt too. When the tool itself is
 * async, the job completes with what it reports through its callback.
 * @throws TypeError for a registry that is not a ToolRegistry or options of the wrong type
 * @example
 * ```ts
 * const registry = new ToolRegistry();
 * registry.register(transcribeTool);
 * const worker = createToolWorker(registry, { connection: { host: "127.0.0.1", port: 6379 }, concurrency: 4 });
 * ```
 */
export function createToolWorker(registry: ToolRegistry, options: ToolWorkerOptions): ToolWorker {
  const settings = checkWorkerOptions(registry, options);
  const { name, logger } = settings;
  const running = new RunningJobs();
  const worker = new Worker<unknown, ToolJobReturn>(
    name,
    (job, _token, signal) => running.run(signal, (callSignal) => processJob(registry, job, callSignal, settings)),
    {
      connection: settings.connection,
      concurrency: settings.concurrency,
      lockDuration: settings.lockDurationMs,
      stalledInterval: settings.stalledIntervalMs,
      maxStalledCount: UNLIMITED_STALLS,
    },
  );
  let closing = false;
  worker.on("error", (error) => {
    if (closing) return;
    log(logger, "warn", () => ({ queue: name, error: errorMessage(error) }), "tool worker: Redis connection error");
  });
  let stopListening = () => {};
  let closed: Promise<void> | undefined;
  const handle: ToolWorker = {
    close() {
      closed ??= (async () => {
        closing = true;
        stopListening();
        await closeWorker(worker, running, settings);
      })();
      return closed;
    },
  };
  if (settings.closeOnSigterm) stopListening = closeOnSigterm(handle);
  return handle;
}

/** A worker's checked options, all defaults applied. */
interface WorkerSettings {
  connection: ConnectionOptions;
  name: string;
  concurrency: number;
  lockDurationMs: number;
  stalledIntervalMs: number;
  timeoutMs: number | undefined;
  closeGraceMs: number;
  closeOnSigterm: boolean;
  logger: ResolvedLogger;
  traceContext: JobTraceContext | undefined;
}

/** Checks `createToolWorker`'s arguments and applies the defaults. */
function checkWorkerOptions(registry: ToolRegistry, options: ToolWorkerOptions): WorkerSettings {
  const where = "createToolWorker";
  if (!(registry instanceof ToolRegistry)) throw optionError(where, "registry", "a ToolRegistry", registry);
  if (!isRecord(options)) throw optionError(where, "options", "an object", options);
  const connection = checkConnection(where, options.connection);
  const name = options.name ?? DEFAULT_QUEUE_NAME;
  if (typeof name !== "string" || name === "" || name.includes(":")) {
    throw optionError(where, "name", "a non-empty string without ':'", name);
  }
  const concurrency = checkCount(where, "concurrency", options.concurrency, 1);
  const lockDurationMs = checkMilliseconds(where, "lockDurationMs", options.lockDurationMs, 30_000);
  const stalledIntervalMs = checkMilliseconds(where, "stalledIntervalMs", options.stalledIntervalMs, 30_000);
  const timeoutMs = checkTimeout(where, "timeoutMs", options.timeoutMs);
  const closeGraceMs = checkTimeout(where, "closeGraceMs", options.closeGraceMs) ?? DEFAULT_CLOSE_GRACE_MS;
  const { closeOnSigterm: onSigterm = true } = options;
  if (typeof onSigterm !== "boolean") throw optionError(where, "closeOnSigterm", "a boolean", onSigterm);
  const logger = resolveLogger(options.logger, where);
  return {
    connection,
    name,
    concurrency,
    lockDurationMs,
    stalledIntervalMs,
    timeoutMs,
    closeGraceMs,
    closeOnSigterm: onSigterm,
    logger,
    traceContext: checkTraceContext(where, options.traceContext),
  };
}

/** The jobs a worker is running: the abort of each one's calls, and who waits for them to be none. */
class RunningJobs {
  readonly #aborts = new Set<AbortController>();
  #idle = () => {};

  /** How many jobs are running. */
  get size(): number {
    return this.#aborts.size;
  }

  /** Runs a job with an abort of its own for its calls, which BullMQ's own signal (a cancelled job) aborts too. */
  run<T>(signal: AbortSignal | undefined, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const abort = new AbortController();
    this.#aborts.add(abort);
    const unlink = signal === undefined ? () => {} : follow(signal, abort);
    return work(abort.signal).finally(() => {
      unlink();
      this.#aborts.delete(abort);
      if (this.#aborts.size === 0) this.#idle();
    });
  }

  /** Resolves once no job runs any more (ask only while some do). */
  idle(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#idle = resolve;
    });
  }

  /** Aborts the calls of every running job with `reason`. */
  abortAll(reason: unknown): void {
    for (const abort of this.#aborts) abort.abort(reason);
  }
}

/**
 * Closes the worker: it takes no more jobs, its running jobs get `closeGraceMs` (then their calls
 * are aborted), then Redis gets `REDIS_CLOSE_GRACE_MS`, after which the worker's own connections
 * are dropped.
 */
async function closeWorker(
  worker: Worker,
  running: RunningJobs,
  settings: Pick<WorkerSettings, "closeGraceMs" | "connection">,
): Promise<void> {
  const workerClosed = worker.close().catch(() => {});
  // The running jobs get closeGraceMs; then their calls are aborted and the worker stops
  // waiting for them (processJob hands each back to the queue): a tool that ignores its
  // signal, or an async one that never reports, cannot hold the worker (and the process).
  if (running.size > 0) {
    const finished = running.idle();
    const { closeGraceMs } = settings;
    const graceOver = closeGraceMs === Number.POSITIVE_INFINITY ? undefined : AbortSignal.timeout(closeGraceMs);
    await raceAbort(finished, graceOver).catch(() => {});
    running.abortAll(new WorkerClosed());
  }
  // BullMQ's close waits for the running jobs, then for Redis: with Redis gone, for good.
  // After the jobs, Redis gets REDIS_CLOSE_GRACE_MS; then the worker's own connections are
  // dropped (the job whose completion did not reach Redis runs again elsewhere, as after a
  // crash), which also ends BullMQ's close, and with it its lock and stalled-job timers.
  for (;;) {
    if (running.size > 0) await running.idle();
    const gone = await raceAbort(workerClosed, AbortSignal.timeout(REDIS_CLOSE_GRACE_MS)).then(
      () => true,
      () => false,
    );
    if (gone) return;
    if (running.size === 0) break;
  }
  if (isPlainObject(settings.connection)) dropConnections(worker);
}

/** Aborts `abort` when `signal` aborts; returns the function that stops following it. */
function follow(signal: AbortSignal, abort: AbortController): () => void {
  if (signal.aborted) {
    abort.abort(signal.reason);
    return () => {};
  }
  const listener = () => abort.abort(signal.reason);
  signal.addEventListener("abort", listener, { once: true });
  return () => signal.removeEventListener("abort", listener);
}

async function processJob(
  registry: ToolRegistry,
  job: Job<unknown, ToolJobReturn>,
  signal: AbortSignal,
  { timeoutMs, logger, traceContext }: Pick<WorkerSettings, "timeoutMs" | "logger" | "traceContext">,
): Promise<ToolJobReturn> {
  const attempts = Math.max(1, job.opts.attempts ?? 1);
  const data = decodeJobData(job.data);
  if (typeof data === "string") throw new UnrecoverableError(failedAfter(1, data));
  if (job.attemptsStarted > attempts) {
    throw new UnrecoverableError(failedAfter(attempts, "its worker stopped while running it"));
  }
  const final = job.attemptsStarted >= attempts || job.attemptsMade + 1 >= attempts;
  try {
    const work = () => runTool(registry, data, signal, timeoutMs);
    const call = { toolName: data.toolName, toolCallId: data.toolCallId, arguments: data.args };
    const result = await (traceContext === undefined ? work() : traceContext.run(traceCarrier(data.trace), call, work));
    // Aborted by close(): whatever the call answered then (`aborted`), the job is not done; it
    // goes back to the queue like the job of a worker that crashed.
    if (signal.reason instanceof WorkerClosed) throw signal.reason;
    const encoded = encodeReturn(data.toolCallId, data.toolName, result);
    if (encoded.result.data !== undefined && jsonText(encoded.result.data) === undefined) {
      // BullMQ stores the return value as JSON: data that has none (a BigInt, a cycle) would fail
      // the completion itself, so it is left out.
      delete encoded.result.data;
      log(
        logger,
        "warn",
        () => ({ tool: cutName(data.toolName), toolCallId: cutName(data.toolCallId) }),
        "tool worker: the result's data is not JSON; it was left out",
      );
    }
    return encoded;
  } catch (error) {
    const reason = boundText(errorMessage(error), MAX_ERROR_MESSAGE_CHARS);
    log(
      logger,
      "warn",
      () => ({
        tool: cutName(data.toolName),
        toolCallId: cutName(data.toolCallId),
        attempt: job.attemptsStarted,
        final,
        error: reason,
      }),
      "tool worker: the job threw",
    );
    if (final) throw new UnrecoverableError(failedAfter(Math.min(job.attemptsStarted, attempts), reason));
    throw new Error(reason);
  }
}

/**
 * Runs the call; for a tool that answers async itself, waits for what it reports — until
 * `timeoutMs` from the start (then the timeout's error result) or until `signal` aborts (then it
 * rejects with the signal's reason).
 */
async function runTool(
  registry: ToolRegistry,
  data: ToolJobData,
  signal: AbortSignal,
  timeoutMs: number | undefined,
): Promise<ToolResult> {
  const started = performance.now();
  let report: (result: ToolResult) => void = () => {};
  const reported = new Promise<ToolResult>((resolve) => {
    report = resolve;
  });
  const result = await registry.executeWithContext(
    data.toolName,
    data.args,
    data.channel,
    data.chatId,
    (value) => {
      if (isToolResult(value)) report(value);
    },
    { toolCallId: data.toolCallId, metadata: data.metadata, timeoutMs, signal },
  );
  if (!result.async) return result;
  if (timeoutMs === undefined || timeoutMs === Number.POSITIVE_INFINITY) return raceAbort(reported, signal);
  // What is left of the job's timeout (the synchronous part took some of it).
  const left = Math.max(0, timeoutMs - (performance.now() - started));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<ToolResult>((resolve) => {
    timer = setTimeout(() => {
      resolve(failure(data.toolName, "timeout", `tool ${quoteName(data.toolName)} timed out after ${timeoutMs} ms`));
    }, left);
  });
  try {
    return await raceAbort(Promise.race([reported, timedOut]), signal);
  } finally {
    clearTimeout(timer);
  }
}
