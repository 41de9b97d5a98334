import { type ConnectionOptions, type Job, type Queue, QueueEvents, RedisQueueBackend } from "bullmq";
import type { CompletionDelivery } from "./completion-delivery.js";
import { completionOf, decodeReturn } from "./tool-job.js";

/** A sweep after a reconnection also looks at jobs that finished this long before the connection dropped. */
const SWEEP_MARGIN_MS = 60_000;
/** Finished jobs read per request of a sweep, and at most per sweep and state. */
const SWEEP_PAGE = 200;
const MAX_SWEPT_JOBS = 10_000;

/**
 * Reads the completions of a queue's jobs as they come, from its event stream, and after every
 * (re)connection sweeps Redis for those whose events it missed; each goes to `delivery`.
 * @internal
 */
export class CompletionListener {
  /** Resolves once completions are being read (from the event stream's end as it was then). */
  readonly listening: Promise<void>;
  readonly #queue: Queue;
  readonly #connection: ConnectionOptions;
  readonly #delivery: CompletionDelivery;
  readonly #logError: (error: unknown) => void;
  #events: QueueEvents | undefined;
  #stopped = false;
  /** When the event stream's connection dropped, until a sweep after it succeeded. */
  #downSince: number | undefined;

  /**
   * Starts listening to `queue`'s events (on a connection of its own, made from `connection`);
   * failures to read Redis go to `logError`.
   */
  constructor(
    queue: Queue,
    connection: ConnectionOptions,
    delivery: CompletionDelivery,
    logError: (error: unknown) => void,
  ) {
    this.#queue = queue;
    this.#connection = connection;
    this.#delivery = delivery;
    this.#logError = logError;
    this.listening = this.#listen();
    this.listening.catch(logError);
  }

  /** Makes no event reader from now on; returns the one made, if any, for the caller to close. */
  stop(): QueueEvents | undefined {
    this.#stopped = true;
    return this.#events;
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
    if (this.#stopped) return;
    const events = new QueueEvents(queue.name, { connection: this.#connection, lastEventId });
    this.#events = events;
    events.on("error", (error) => this.#logError(error));
    events.on("completed", ({ jobId, returnvalue }) => {
      const completion = decodeReturn(returnvalue);
      if (completion !== undefined) this.#delivery.settle(jobId, completion);
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
    await Promise.all(this.#delivery.waiting().map((jobId) => this.#settleFromRedis(jobId)));
    const downSince = this.#downSince;
    if (downSince === undefined) return;
    try {
      // For the handlers: the jobs that finished since the connection dropped (a margin for clocks
      // that differ between machines); those delivered already are skipped by the delivery.
      const since = downSince - SWEEP_MARGIN_MS;
      await Promise.all([this.#sweepFinished("completed", since), this.#sweepFinished("failed", since)]);
      if (this.#downSince === downSince) this.#downSince = undefined;
    } catch (error) {
      this.#logError(error);
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
        if (completion !== undefined && job.id !== undefined) this.#delivery.settle(job.id, completion);
      }
      const oldest = page.at(-1);
      if (page.length < SWEEP_PAGE || oldest === undefined || (oldest.finishedOn ?? 0) < since) return;
    }
  }

  async #settleFromRedis(jobId: string): Promise<void> {
    try {
      const job = await this.#queue.getJob(jobId);
      const completion = job === undefined ? undefined : completionOf(job as Job);
      if (completion !== undefined) this.#delivery.settle(jobId, completion);
    } catch (error) {
      this.#logError(error);
    }
  }
}
