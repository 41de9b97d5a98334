import { randomUUID } from "node:crypto";
import { type ConnectionOptions, Queue, type QueueEvents } from "bullmq";
import { checkParsed, failure } from "../execute-tool-call.js";
import {
  boundText,
  errorMessage,
  isPlainObject,
  jsonText,
  MAX_VALIDATION_MESSAGE_CHARS,
  quoteName,
} from "../internal/describe.js";
import { log, type ResolvedLogger } from "../internal/logger.js";
import { optionError } from "../internal/options.js";
import { prepareTool, type RegisteredTool } from "../internal/registered-tool.js";
import type { AsyncCallback, AsyncTool, ParseArgumentsResult, Tool, ToolContext } from "../tool.js";
import { asyncResult, type ToolResult } from "../tool-result.js";
import { CompletionDelivery, type CompletionHandler } from "./completion-delivery.js";
import { CompletionListener } from "./completion-listener.js";
import { dropConnections, failFast } from "./connection.js";
import { type Call, CONFLICT, JobAdder } from "./job-adder.js";
import { injectTrace, type JobTraceContext } from "./job-trace-context.js";
import { checkCalls, readCompletions } from "./read-completions.js";
import type { ToolCompletion } from "./tool-completion.js";
import { alternateJobId, identityOf, jobIdFor, type ToolJobData } from "./tool-job.js";
import type { QueuedCall, ToolQueue } from "./tool-queue.js";
import { Timeout, withDeadline } from "./with-deadline.js";

/** A queue's checked options (see `ToolQueueOptions`, all defaults applied). @internal */
export interface ToolQueueSettings {
  /** Where Redis is. */
  connection: ConnectionOptions;
  /** The BullMQ queue name. */
  name: string;
  /** How many times a job runs at most. */
  attempts: number;
  /** Milliseconds between a failed attempt and the next. */
  backoffMs: number;
  /** How long finished jobs stay in Redis (and callbacks wait). */
  keepFinishedMs: number;
  /** The longest an enqueue, `completions()` and `close()` wait for Redis. */
  enqueueTimeoutMs: number;
  /** Where Redis connection errors are logged. */
  logger: ResolvedLogger;
  /** How a job carries the trace context, if it does. */
  traceContext: JobTraceContext | undefined;
}

/**
 * The {@link ToolQueue} on BullMQ: its calls are added (or joined) by a {@link JobAdder}, their
 * completions read by a {@link CompletionListener} and handed out by a {@link CompletionDelivery}.
 * @internal
 */
export class BullToolQueue implements ToolQueue {
  readonly #settings: ToolQueueSettings;
  readonly #queue: Queue;
  readonly #delivery: CompletionDelivery;
  readonly #listener: CompletionListener;
  readonly #adder: JobAdder;
  #closing: Promise<void> | undefined;

  constructor(settings: ToolQueueSettings) {
    this.#settings = settings;
    this.#queue = new Queue(settings.name, { connection: failFast(settings.connection) });
    this.#queue.on("error", (error) => this.#logConnection(error));
    this.#delivery = new CompletionDelivery(settings.keepFinishedMs, settings.logger);
    this.#listener = new CompletionListener(this.#queue, settings.connection, this.#delivery, (error) =>
      this.#logConnection(error),
    );
    this.#adder = new JobAdder(this.#queue, settings, this.#delivery, this.#listener.listening);
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
    const invalid = checkArguments(entry, args);
    if (invalid !== undefined) return invalid;
    if (this.#closing !== undefined) {
      return failure(toolName, "tool_failed", `tool ${quoted} was not queued: its queue is closed`);
    }
    // Read now, in the calling tool's context: the trace context is that of the call being queued.
    const trace = injectTrace(this.#settings.traceContext, this.#settings.logger, this.#settings.name);
    const call = callOf(toolName, args, context, trace);
    if (call === undefined) {
      return failure(toolName, "invalid_arguments", `invalid arguments for tool ${quoted}: they are nested too deeply`);
    }
    const timeoutMs = this.#settings.enqueueTimeoutMs;
    let queuedAs: string;
    const attempt = { abandoned: false };
    try {
      queuedAs = await withDeadline(this.#adder.add(call, callback, attempt), context?.signal, timeoutMs);
    } catch (error) {
      attempt.abandoned = true;
      this.#delivery.withdraw([call.jobId, call.alternateId], callback);
      const reason =
        error instanceof Timeout
          ? `Redis did not answer within ${timeoutMs} ms`
          : context?.signal?.aborted
            ? "the call was aborted (or timed out) while waiting for Redis"
            : `Redis refused or could not be reached: ${errorMessage(error)}`;
      return failure(toolName, "tool_failed", `tool ${quoted} could not be queued: ${reason}`, error);
    }
    if (queuedAs === CONFLICT) {
      const conflict = `the tool call id ${quoteName(call.data.toolCallId)} belongs to another call's job`;
      return failure(toolName, "tool_failed", `tool ${quoted} was not queued: ${conflict}`);
    }
    return asyncResult(`tool ${quoted} is queued (job ${queuedAs}); its result will follow when a worker has run it`);
  }

  onCompletion(handler: CompletionHandler): () => void {
    if (typeof handler !== "function") throw optionError("onCompletion", "handler", "a function", handler);
    return this.#delivery.addHandler(handler);
  }

  async completions(calls: ReadonlyArray<string | QueuedCall>): Promise<ToolCompletion[]> {
    const lookups = checkCalls(calls);
    const timeoutMs = this.#settings.enqueueTimeoutMs;
    const read = { abandoned: false };
    const reading = readCompletions(this.#queue, lookups, read);
    return withDeadline(reading, undefined, timeoutMs).catch((error: unknown) => {
      read.abandoned = true;
      const reason = error instanceof Timeout ? `Redis did not answer within ${timeoutMs} ms` : errorMessage(error);
      throw new Error(`completions: ${reason}`, { cause: error });
    });
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#delivery.clear();
      // The listener makes no QueueEvents once stopped: what exists now is all there is to close.
      const events = this.#listener.stop();
      const parts: Array<Queue | QueueEvents> = events === undefined ? [this.#queue] : [events, this.#queue];
      // With Redis gone, BullMQ's close fails and leaves the connection reconnecting (without its
      // error listener: ioredis then prints), or waits for a connection that does not come back:
      // then the connections this queue made are dropped.
      const drop = (part: Queue | QueueEvents) => {
        if (isPlainObject(this.#settings.connection)) dropConnections(part);
      };
      const closed = Promise.all(parts.map((part) => part.close().catch(() => drop(part))));
      await withDeadline(closed, undefined, this.#settings.enqueueTimeoutMs).catch(() => {
        for (const part of parts) drop(part);
      });
    })();
    return this.#closing;
  }
}

/** The error result for arguments that fail the tool's schema or are not JSON; `undefined` when they pass. */
function checkArguments(entry: RegisteredTool, args: Record<string, unknown>): ToolResult | undefined {
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
  return undefined;
}

/**
 * The call to queue: its job data (the call id, or a fresh one for a call made directly; the
 * context's string metadata), identity and job ids; `undefined` when its arguments are nested
 * too deeply to walk.
 */
function callOf(
  toolName: string,
  args: Record<string, unknown>,
  context: Partial<ToolContext> | undefined,
  trace: Record<string, string> | undefined,
): Call | undefined {
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
  if (trace !== undefined) data.trace = trace;
  const identity = identityOf(data);
  if (identity === undefined) return undefined;
  return { data, identity, jobId: jobIdFor(toolCallId), alternateId: alternateJobId(toolCallId, identity) };
}
