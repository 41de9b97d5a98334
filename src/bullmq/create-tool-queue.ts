import { randomUUID } from "node:crypto";
import { type ConnectionOptions, type Job, Queue, QueueEvents, RedisQueueBackend } from "bullmq";
import { checkParsed, failure } from "../execute-tool-call.js";
import { raceAbort } from "../internal/abort.js";
import {
  boundText,
  cutName,
  errorMessage,
  isPlainObject,
  isRecord,
  jsonText,
  MAX_VALIDATION_MESSAGE_CHARS,
  quoteName,
} from "../internal/describe.js";
import { log, type ResolvedLogger, resolveLogger } from "../internal/logger.js";
import { checkCount, optionError } from "../internal/options.js";
import { prepareTool, type RegisteredTool } from "../internal/registered-tool.js";
import type { Logger } from "../logger.js";
import type { AsyncCallback, AsyncTool, ParseArgumentsResult, Tool, ToolContext } from "../tool.js";
import { asyncResult, type ToolResult } from "../tool-result.js";
import { checkConnection, dropConnections } from "./connection.js";
import type { ToolCompletion } from "./tool-completion.js";
import {
  alternateJobId,
  callIdentity,
  DEFAULT_QUEUE_NAME,
  decodeJobData,
  decodeReturn,
  failedAfter,
  jobIdFor,
  type ToolJobData,
} from "./tool-job.js";

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
}

/**
 * A queued call named by everything that identifies it, for {@link ToolQueue.completions}: from a
 * checkpoint, `toolCallId` and `toolName` of a `pendingAsync` entry, `arguments` of the
 * transcript's tool call of that id, and the conversation's channel and chat id.
 */
export interface QueuedCall {
  /** The tool call id the call was queued under. */
  toolCallId: string;
  /** The tool's name. */
  toolName: string;
  /** The call's arguments, as the tool got them. */
  arguments: Record<string, unknown>;
  /** The conversation's channel. @default "" */
  channel?: string | undefined;
  /** The conversation's chat id. @default "" */
  chatId?: string | undefined;
}

/** A BullMQ queue of tool calls, from {@link createToolQueue}. */
export interface ToolQueue {
  /**
   * An async tool with the same name, description and schema (and `needsApproval`) as `tool`,
   * whose `execute` validates the arguments (invalid → error result, no job), adds a job whose id
   * is the tool call id, and returns an `asyncResult` at once; the result reaches the call's
   * callback when a worker has run it. The same call queued again — the same call id, tool,
   * arguments, channel and chat id — joins the existing job; a call that reuses a call id with
   * other arguments (or in another chat) is another call: it gets a job of its own, whose id is
   * the call id, `#` and a hash of the call.
   * @throws TypeError for a tool the registry could not hold
   */
  queued(tool: Tool): AsyncTool;
  /**
   * Calls `handler` with every completion of a job of this queue name — whichever process queued
   * it — once per tool call id. Returns the function that removes the handler. What it throws or
   * rejects with is logged.
   */
  onCompletion(handler: (completion: ToolCompletion) => void | Promise<void>): () => void;
  /**
   * The completions of these calls that are already finished, read from Redis, in the order of
   * `calls` (calls still running, unknown or expired are left out). A call is its tool call id —
   * the job of that id — or, where call ids repeat (the text tool protocol, MCP clients), a
   * {@link QueuedCall}: then only the job of that very call (same arguments, channel and chat id)
   * answers. Rejects when Redis cannot be read within `enqueueTimeoutMs`.
   */
  completions(calls: ReadonlyArray<string | QueuedCall>): Promise<ToolCompletion[]>;
  /**
   * Stops listening for completions and closes the queue's Redis connections; callbacks still
   * waiting get nothing. With Redis unreachable it drops the connections it made after
   * `enqueueTimeoutMs` instead of waiting for Redis.
   */
  close(): Promise<void>;
}

/** A call `completions()` looks up: a call id, or a call id with its identity (`undefined`: none can match). */
type Lookup = string | { toolCallId: string; identity: string | undefined };

/**
 * Checks `completions()`' argument and makes each item a lookup. A hole of a sparse array is
 * refused at once, not iterated to its length.
 */
function checkCalls(calls: unknown): Lookup[] {
  const expected = "an array of tool call ids or QueuedCall objects";
  if (!Array.isArray(calls)) throw optionError("completions", "calls", expected, calls);
  const lookups: Lookup[] = [];
  const bad = calls.findIndex((item: unknown) => {
    if (typeof item === "string") {
      lookups.push(item);
      return false;
    }
    if (!isRecord(item)) return true;
    const { toolCallId, toolName, arguments: args, channel = "", chatId = "" } = item;
    if (typeof toolCallId !== "string" || typeof toolName !== "string" || !isPlainObject(args)) return true;
    if (typeof channel !== "string" || typeof chatId !== "string") return true;
    lookups.push({ toolCallId, identity: identityOf({ toolName, channel, chatId, args }) });
    return false;
  });
  if (bad !== -1) {
    throw optionError("completions", `calls[${bad}]`, "a tool call id or a QueuedCall object", calls[bad]);
  }
  return lookups;
}

const DEFAULTS = {
  name: DEFAULT_QUEUE_NAME,
  attempts: 3,
  backoffMs: 1000,
  keepFinishedMs: 86_400_000,
  enqueueTimeoutMs: 10_000,
};

/** How many delivered call ids a queue remembers (so a duplicate event is not delivered twice). */
const REMEMBERED_DELIVERIES = 100_000;

/** A sweep after a reconnection also looks at jobs that finished this long before the connection dropped. */
const SWEEP_MARGIN_MS = 60_000;
/** Finished jobs read per request of a sweep, and at most per sweep and state. */
const SWEEP_PAGE = 200;
const MAX_SWEPT_JOBS = 10_000;
/** Jobs `completions()` reads from Redis at once. */
const COMPLETIONS_PAGE = 1_000;

class Timeout extends Error {}

function checkMs(where: string, option: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value === "number" && Number.isFinite(value) && value >= 0) return value;
  throw optionError(where, option, "a number of milliseconds ≥ 0", value);
}

/** The connection the queue itself uses: an options object fails fast while Redis is away. */
function failFast(connection: ConnectionOptions): ConnectionOptions {
  if (isPlainObject(connection)) return { ...connection, enableOfflineQueue: false };
  return connection;
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
  });
}

interface Settings {
  connection: ConnectionOptions;
  name: string;
  attempts: number;
  backoffMs: number;
  keepFinishedMs: number;
  enqueueTimeoutMs: number;
  logger: ResolvedLogger;
}

type Handler = (completion: ToolCompletion) => void | Promise<void>;

/** One call being queued: its job data, identity and the two job ids it can take. */
interface Call {
  data: ToolJobData;
  /** See {@link callIdentity}. */
  identity: string;
  /** The call id's own job id ({@link jobIdFor}). */
  jobId: string;
  /** The job id when the own one belongs to another call ({@link alternateJobId}). */
  alternateId: string;
}

/** What `#add` returns when no job id is free for the call. */
const CONFLICT = "";

/** A finished job's completion; `undefined` while it has not finished (or it is not a tool job). */
function completionOf(job: Job): ToolCompletion | undefined {
  if (!job.finishedOn) return undefined;
  const completed = decodeReturn(job.returnvalue);
  if (completed !== undefined) return completed;
  if (typeof job.failedReason !== "string") return undefined;
  const data = decodeJobData(job.data);
  const toolName = typeof data === "string" ? job.name : data.toolName;
  const toolCallId = typeof data === "string" ? String(job.id) : data.toolCallId;
  const reason = job.failedReason.startsWith("failed after ")
    ? job.failedReason
    : failedAfter(Math.max(1, job.attemptsStarted), job.failedReason);
  return { toolCallId, toolName, result: failure(toolName, "tool_failed", `tool ${quoteName(toolName)} ${reason}`) };
}

/**
 * Whether a stored job is this call's: the same call id, tool, channel, chat id and arguments
 * (`identity`, see {@link callIdentity}). Another conversation's job is never joined, nor one
 * whose call id came again with other arguments.
 */
function sameCall(job: Job, toolCallId: string, identity: string): boolean {
  const stored = decodeJobData(job.data);
  if (typeof stored === "string" || stored.toolCallId !== toolCallId) return false;
  try {
    return callIdentity(stored) === identity;
  } catch {
    return false; // arguments too deep to compare: not this call's
  }
}

/** A call's identity, or `undefined` when its arguments are nested too deeply to walk. */
function identityOf(data: Pick<ToolJobData, "toolName" | "channel" | "chatId" | "args">): string | undefined {
  try {
    return callIdentity(data);
  } catch {
    return undefined;
  }
}

class BullToolQueue implements ToolQueue {
  readonly #settings: Settings;
  readonly #queue: Queue;
  #events: QueueEvents | undefined;
  /** Resolves once completions are being read (from the event stream's end as it was then). */
  readonly #listening: Promise<void>;
  /** The callback of each call queued from this process and not answered yet, by job id. */
  readonly #callbacks = new Map<string, AsyncCallback>();
  /** When each waiting callback was set, oldest first: those older than `keepFinishedMs` are dropped. */
  readonly #waitingSince = new Map<string, number>();
  readonly #handlers = new Set<Handler>();
  /** The enqueue under way of each job id in this process (see `#oneAtATime`). */
  readonly #adding = new Map<string, Promise<unknown>>();
  /** Job ids whose completion went to the handlers (oldest first, bounded). */
  readonly #delivered = new Set<string>();
  #closing: Promise<void> | undefined;
  /** When the event stream's connection dropped, until a sweep after it succeeded. */
  #downSince: number | undefined;

  constructor(settings: Settings) {
    this.#settings = settings;
    this.#queue = new Queue(settings.name, { connection: failFast(settings.connection) });
    this.#queue.on("error", (error) => this.#logConnection(error));
    this.#listening = this.#listen();
    this.#listening.catch((error: unknown) => this.#logConnection(error));
  }

  #logConnection(error: unknown): void {
    if (this.#closing !== undefined) return;
    log(
      this.#settings.logger,
      "warn",
      () => ({ queue: this.#settings.name, error: errorMessage(error) }),
      "tool queue: Redis connection error",
    );
  }

  /**
   * Starts reading the queue's event stream from its current end (read from Redis, so no clock is
   * compared), which makes a completion that follows any enqueue of this process visible here.
   */
  async #listen(): Promise<void> {
    const queue = this.#queue;
    await queue.waitUntilReady();
    const backend = queue.getBackend();
    // The stream's last id; "$" (new events only) with a client that cannot tell it.
    let lastEventId = "$";
    if (backend instanceof RedisQueueBackend) {
      const client = (await backend.client) as unknown as { xrevrange?: (...args: unknown[]) => Promise<unknown> };
      if (typeof client.xrevrange === "function") {
        const last = await client.xrevrange(queue.keys.events, "+", "-", "COUNT", 1);
        const id: unknown = Array.isArray(last) && Array.isArray(last[0]) ? last[0][0] : "0-0";
        if (typeof id === "string") lastEventId = id;
      }
    }
    if (this.#closing !== undefined) return;
    const events = new QueueEvents(this.#settings.name, { connection: this.#settings.connection, lastEventId });
    this.#events = events;
    events.on("error", (error) => this.#logConnection(error));
    events.on("completed", ({ jobId, returnvalue }) => {
      const completion = decodeReturn(returnvalue);
      if (completion !== undefined) this.#settle(jobId, completion);
    });
    events.on("failed", ({ jobId }) => void this.#settleFromRedis(jobId));
    // On every (re)connection of either connection, look up the calls still waiting: a completion
    // whose event was trimmed from the stream while Redis was unreachable is found there. (The
    // two reconnect independently; a sweep that finds the queue's own connection down is redone
    // when that one is ready.)
    const down = () => {
      this.#downSince ??= Date.now();
    };
    events.getBackend().on("close", down);
    events.on("error", down);
    events.getBackend().on("ready", () => void this.#sweep());
    queue.getBackend().on("ready", () => void this.#sweep());
  }

  async #sweep(): Promise<void> {
    await Promise.all([...this.#callbacks.keys()].map((jobId) => this.#settleFromRedis(jobId)));
    const downSince = this.#downSince;
    if (downSince === undefined) return;
    try {
      // For the handlers: the jobs that finished since the connection dropped (a margin for clocks
      // that differ between machines); those delivered already are skipped by `#settle`.
      const since = downSince - SWEEP_MARGIN_MS;
      await Promise.all([this.#sweepFinished("completed", since), this.#sweepFinished("failed", since)]);
      if (this.#downSince === downSince) this.#downSince = undefined;
    } catch (error) {
      this.#logConnection(error);
    }
  }

  /** Settles the jobs of a finished set, newest first, down to those finished before `since`. */
  async #sweepFinished(state: "completed" | "failed", since: number): Promise<void> {
    for (let start = 0; start < MAX_SWEPT_JOBS; start += SWEEP_PAGE) {
      const end = start + SWEEP_PAGE - 1;
      const page = (await (state === "completed"
        ? this.#queue.getCompleted(start, end)
        : this.#queue.getFailed(start, end))) as Job[];
      for (const job of page) {
        const completion = completionOf(job);
        if (completion !== undefined && job.id !== undefined) this.#settle(job.id, completion);
      }
      const oldest = page.at(-1);
      if (page.length < SWEEP_PAGE || oldest === undefined || (oldest.finishedOn ?? 0) < since) return;
    }
  }

  async #settleFromRedis(jobId: string): Promise<void> {
    try {
      const job = await this.#queue.getJob(jobId);
      const completion = job === undefined ? undefined : completionOf(job as Job);
      if (completion !== undefined) this.#settle(jobId, completion);
    } catch (error) {
      this.#logConnection(error);
    }
  }

  /** Delivers a completion: to the handlers once per job id, and to the call's callback if it waits. */
  #settle(jobId: string, completion: ToolCompletion): void {
    const callback = this.#callbacks.get(jobId);
    if (!this.#delivered.has(jobId)) {
      this.#delivered.add(jobId);
      if (this.#delivered.size > REMEMBERED_DELIVERIES) {
        this.#delivered.delete(this.#delivered.values().next().value as string);
      }
      for (const handler of this.#handlers) {
        this.#run("onCompletion handler", completion, () => handler({ ...completion }));
      }
    }
    if (callback !== undefined) {
      this.#callbacks.delete(jobId);
      this.#waitingSince.delete(jobId);
      this.#run("async callback", completion, () => callback(completion.result));
    }
  }

  #run(what: string, completion: ToolCompletion, call: () => void | Promise<void>): void {
    const report = (error: unknown) =>
      log(
        this.#settings.logger,
        "warn",
        () => ({
          tool: cutName(completion.toolName),
          toolCallId: cutName(completion.toolCallId),
          error: errorMessage(error),
        }),
        `tool queue: ${what} failed`,
      );
    try {
      Promise.resolve(call()).catch(report);
    } catch (error) {
      report(error);
    }
  }

  queued(tool: Tool): AsyncTool {
    const entry = prepareTool(tool);
    let sharedCallback: AsyncCallback | undefined;
    const queued: AsyncTool = {
      name: entry.name,
      description: entry.definition.function.description,
      parameters: entry.definition.function.parameters,
      setCallback: (callback) => {
        sharedCallback = callback;
      },
      execute: (args, context) => this.#enqueue(entry, args, context, context?.asyncCallback ?? sharedCallback),
    };
    if (tool.needsApproval !== undefined) Object.assign(queued, { needsApproval: tool.needsApproval });
    return queued;
  }

  async #enqueue(
    entry: RegisteredTool,
    args: Record<string, unknown>,
    context: Partial<ToolContext> | undefined,
    callback: AsyncCallback | undefined,
  ): Promise<ToolResult> {
    const toolName = entry.name;
    const quoted = quoteName(toolName);
    let parsed: ParseArgumentsResult;
    try {
      parsed = isPlainObject(args)
        ? checkParsed(entry.validate(args))
        : { success: false, error: "(root): expected a JSON object" };
    } catch (error) {
      parsed = { success: false, error: errorMessage(error) };
    }
    if (!parsed.success) {
      const problem = boundText(parsed.error, MAX_VALIDATION_MESSAGE_CHARS);
      return failure(toolName, "invalid_arguments", `invalid arguments for tool ${quoted}: ${problem}`);
    }
    if (jsonText(args) === undefined) {
      return failure(toolName, "invalid_arguments", `invalid arguments for tool ${quoted}: they are not JSON`);
    }
    if (this.#closing !== undefined) {
      return failure(toolName, "tool_failed", `tool ${quoted} was not queued: its queue is closed`);
    }
    const toolCallId = typeof context?.toolCallId === "string" ? context.toolCallId : randomUUID();
    const metadata: Record<string, string> = {};
    for (const [key, value] of Object.entries(context?.metadata ?? {})) {
      if (typeof value === "string") Object.defineProperty(metadata, key, { value, enumerable: true, writable: true });
    }
    const data: ToolJobData = {
      v: 1,
      toolName,
      toolCallId,
      args,
      channel: typeof context?.channel === "string" ? context.channel : "",
      chatId: typeof context?.chatId === "string" ? context.chatId : "",
      metadata,
    };
    const identity = identityOf(data);
    if (identity === undefined) {
      return failure(toolName, "invalid_arguments", `invalid arguments for tool ${quoted}: they are nested too deeply`);
    }
    const call: Call = {
      data,
      identity,
      jobId: jobIdFor(toolCallId),
      alternateId: alternateJobId(toolCallId, identity),
    };
    const timeoutMs = this.#settings.enqueueTimeoutMs;
    let queuedAs: string;
    const attempt = { abandoned: false };
    try {
      // One call id's enqueues one after the other, whichever of its two job ids each takes.
      const adding = this.#oneAtATime(call.jobId, () => this.#add(call, callback, attempt));
      queuedAs = await this.#withDeadline(adding, context?.signal, timeoutMs);
    } catch (error) {
      attempt.abandoned = true;
      for (const id of [call.jobId, call.alternateId]) {
        if (callback !== undefined && this.#callbacks.get(id) === callback) this.#wait(id, undefined);
      }
      const reason =
        error instanceof Timeout
          ? `Redis did not answer within ${timeoutMs} ms`
          : context?.signal?.aborted
            ? "the call was aborted (or timed out) while waiting for Redis"
            : `Redis refused or could not be reached: ${errorMessage(error)}`;
      return failure(toolName, "tool_failed", `tool ${quoted} could not be queued: ${reason}`, error);
    }
    if (queuedAs === CONFLICT) {
      const conflict = `the tool call id ${quoteName(toolCallId)} belongs to another call's job`;
      return failure(toolName, "tool_failed", `tool ${quoted} was not queued: ${conflict}`);
    }
    return asyncResult(`tool ${quoted} is queued (job ${queuedAs}); its result will follow when a worker has run it`);
  }

  /** `work`, or a rejection: `Timeout` after `timeoutMs`, the signal's reason once it aborts. */
  #withDeadline<T>(work: Promise<T>, signal: AbortSignal | undefined, timeoutMs: number): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Timeout()), timeoutMs);
    });
    // Promise.race observes `work`: its later rejection is never unhandled.
    return raceAbort(Promise.race([work, timeout]), signal).finally(() => clearTimeout(timer));
  }

  /**
   * Adds the job, or joins the one already there for this call (a resumed loop queues its calls
   * again): then the latest callback gets the completion, at once when it is finished. The call
   * takes its call id's own job id while that is free, else (another call's job has it: the call
   * id came again with other arguments, or from another chat) its alternate id. Returns the job id
   * it was queued under, or `CONFLICT` when a job that is not this call's holds that too (only a
   * job not made by this queue can). Once the call was answered without it (`attempt.abandoned`:
   * timed out or aborted while Redis was slow or away), it adds nothing and sets no callback when
   * Redis comes back.
   */
  async #add(call: Call, callback: AsyncCallback | undefined, attempt: { abandoned: boolean }): Promise<string> {
    await this.#listening;
    if (attempt.abandoned) return CONFLICT;
    const queue = this.#queue;
    // Both at once: a resumed call whose own id's job expired may still have its alternate one.
    const [own, alternate] = (await Promise.all([queue.getJob(call.jobId), queue.getJob(call.alternateId)])) as Array<
      Job | undefined
    >;
    if (attempt.abandoned) return CONFLICT;
    const { toolCallId } = call.data;
    for (const [jobId, job] of [
      [call.jobId, own],
      [call.alternateId, alternate],
    ] as const) {
      if (job !== undefined && sameCall(job, toolCallId, call.identity)) {
        await this.#join(jobId, job, callback);
        return jobId;
      }
    }
    if (own === undefined && (await this.#addJob(call.jobId, call, callback, attempt))) return call.jobId;
    // The call id's own job is another call's (also one added by another process since it was read).
    if (alternate !== undefined) return CONFLICT;
    return (await this.#addJob(call.alternateId, call, callback, attempt)) ? call.alternateId : CONFLICT;
  }

  /** Joins a job of this call: `callback` gets its completion (at once when it is finished). */
  async #join(jobId: string, existing: Job | undefined, callback: AsyncCallback | undefined): Promise<void> {
    this.#wait(jobId, callback);
    // Read again after the callback is in place: a completion between the two reads is seen here.
    const job =
      existing === undefined || completionOf(existing) === undefined
        ? ((await this.#queue.getJob(jobId)) as Job | undefined)
        : existing;
    const completion = job === undefined ? undefined : completionOf(job);
    if (completion !== undefined) setImmediate(() => this.#settle(jobId, completion));
  }

  /**
   * Adds the call's job under `jobId`; `false` when a job of another call is there instead
   * (another process added it since it was read: BullMQ then keeps that one).
   */
  async #addJob(
    jobId: string,
    call: Call,
    callback: AsyncCallback | undefined,
    attempt: { abandoned: boolean },
  ): Promise<boolean> {
    const { attempts, backoffMs, keepFinishedMs } = this.#settings;
    const keep = { age: Math.max(1, Math.ceil(keepFinishedMs / 1000)) };
    await this.#queue.add(call.data.toolName, call.data, {
      jobId,
      attempts,
      backoff: { type: "fixed", delay: backoffMs },
      removeOnComplete: keep,
      removeOnFail: keep,
    });
    // Read again: the job BullMQ kept may be another process's (then it is not joined that way
    // either). The callback is set only now: the completion of another call's job under this id
    // (that process's job finishing meanwhile) must never reach it; one of this call's own job
    // that came meanwhile is seen by #join's second read.
    const added = (await this.#queue.getJob(jobId)) as Job | undefined;
    if (added !== undefined && !sameCall(added, call.data.toolCallId, call.identity)) return false;
    if (!attempt.abandoned) await this.#join(jobId, added, callback);
    return true;
  }

  /** Runs the enqueues of one job id in this process one after the other: a later one sees the job of an earlier one. */
  #oneAtATime<T>(jobId: string, work: () => Promise<T>): Promise<T> {
    const before = this.#adding.get(jobId);
    const current = before === undefined ? work() : before.then(work, work);
    this.#adding.set(jobId, current);
    const forget = () => {
      if (this.#adding.get(jobId) === current) this.#adding.delete(jobId);
    };
    current.then(forget, forget);
    return current;
  }

  /**
   * Makes `callback` the one that gets the job's completion (none: nobody). Callbacks waiting
   * longer than finished jobs are kept are dropped here: their job can no longer report (Redis lost
   * it), and a long-lived process must not keep them forever.
   */
  #wait(jobId: string, callback: AsyncCallback | undefined): void {
    this.#callbacks.delete(jobId);
    this.#waitingSince.delete(jobId);
    if (callback !== undefined) {
      this.#callbacks.set(jobId, callback);
      this.#waitingSince.set(jobId, Date.now());
    }
    const expired = Date.now() - this.#settings.keepFinishedMs;
    for (const [id, since] of this.#waitingSince) {
      if (since >= expired) break;
      this.#waitingSince.delete(id);
      this.#callbacks.delete(id);
    }
  }

  onCompletion(handler: Handler): () => void {
    if (typeof handler !== "function") throw optionError("onCompletion", "handler", "a function", handler);
    const own = (completion: ToolCompletion) => handler(completion);
    this.#handlers.add(own);
    return () => {
      this.#handlers.delete(own);
    };
  }

  async completions(calls: ReadonlyArray<string | QueuedCall>): Promise<ToolCompletion[]> {
    const lookups = checkCalls(calls);
    const timeoutMs = this.#settings.enqueueTimeoutMs;
    const read = { abandoned: false };
    const reading = this.#readCompletions(lookups, read);
    return this.#withDeadline(reading, undefined, timeoutMs).catch((error: unknown) => {
      read.abandoned = true;
      const reason = error instanceof Timeout ? `Redis did not answer within ${timeoutMs} ms` : errorMessage(error);
      throw new Error(`completions: ${reason}`, { cause: error });
    });
  }

  /** Reads the jobs of these calls `COMPLETIONS_PAGE` at a time (not all at once: memory), keeping the finished. */
  async #readCompletions(lookups: Lookup[], read: { abandoned: boolean }): Promise<ToolCompletion[]> {
    const found: ToolCompletion[] = [];
    for (let start = 0; start < lookups.length && !read.abandoned; start += COMPLETIONS_PAGE) {
      const page = lookups.slice(start, start + COMPLETIONS_PAGE);
      const jobs = await Promise.all(page.map((lookup) => this.#findJob(lookup)));
      for (const job of jobs) {
        const completion = job === undefined ? undefined : completionOf(job);
        if (completion !== undefined) found.push(completion);
      }
    }
    return found;
  }

  /** The job of a looked-up call: by call id, or the one of its two job ids that holds this very call. */
  async #findJob(lookup: Lookup): Promise<Job | undefined> {
    if (typeof lookup === "string") return (await this.#queue.getJob(jobIdFor(lookup))) as Job | undefined;
    const { toolCallId, identity } = lookup;
    if (identity === undefined) return undefined;
    const jobs = (await Promise.all([
      this.#queue.getJob(jobIdFor(toolCallId)),
      this.#queue.getJob(alternateJobId(toolCallId, identity)),
    ])) as Array<Job | undefined>;
    return jobs.find((job) => job !== undefined && sameCall(job, toolCallId, identity));
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#callbacks.clear();
      this.#waitingSince.clear();
      this.#handlers.clear();
      // `#listen` makes no QueueEvents once closing is set: what exists now is all there is to close.
      const parts: Array<Queue | QueueEvents> =
        this.#events === undefined ? [this.#queue] : [this.#events, this.#queue];
      // With Redis gone, BullMQ's close fails and leaves the connection reconnecting (without its
      // error listener: ioredis then prints), or waits for a connection that does not come back:
      // then the connections this queue made are dropped.
      const drop = (part: Queue | QueueEvents) => {
        if (isPlainObject(this.#settings.connection)) dropConnections(part);
      };
      const closed = Promise.all(parts.map((part) => part.close().catch(() => drop(part))));
      await this.#withDeadline(closed, undefined, this.#settings.enqueueTimeoutMs).catch(() => {
        for (const part of parts) drop(part);
      });
    })();
    return this.#closing;
  }
}
