import type { Job, Queue } from "bullmq";
import type { AsyncCallback } from "../tool.js";
import type { CompletionDelivery } from "./completion-delivery.js";
import { completionOf, sameCall, type ToolJobData } from "./tool-job.js";

/** One call being queued: its job data, identity and the two job ids it can take. @internal */
export interface Call {
  /** What its job carries. */
  data: ToolJobData;
  /** See `callIdentity`. */
  identity: string;
  /** The call id's own job id (`jobIdFor`). */
  jobId: string;
  /** The job id when the own one belongs to another call (`alternateJobId`). */
  alternateId: string;
}

/** What {@link JobAdder.add} returns when no job id is free for the call. @internal */
export const CONFLICT = "";

/** The job options of a queue's settings. @internal */
export interface JobSettings {
  /** How many times a job runs at most. */
  attempts: number;
  /** Milliseconds between a failed attempt and the next. */
  backoffMs: number;
  /** How long finished jobs stay in Redis. */
  keepFinishedMs: number;
}

/**
 * Adds the jobs of a queue's calls, or joins the job already there for a call; the completion of
 * each goes to its callback through `delivery`.
 * @internal
 */
export class JobAdder {
  readonly #queue: Queue;
  readonly #settings: JobSettings;
  readonly #delivery: CompletionDelivery;
  /** Resolves once the queue's completions are being read: no job is added before. */
  readonly #listening: Promise<void>;
  /** The enqueue under way of each job id in this process (see `#oneAtATime`). */
  readonly #adding = new Map<string, Promise<unknown>>();

  constructor(queue: Queue, settings: JobSettings, delivery: CompletionDelivery, listening: Promise<void>) {
    this.#queue = queue;
    this.#settings = settings;
    this.#delivery = delivery;
    this.#listening = listening;
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
  add(call: Call, callback: AsyncCallback | undefined, attempt: { abandoned: boolean }): Promise<string> {
    // One call id's enqueues one after the other, whichever of its two job ids each takes.
    return this.#oneAtATime(call.jobId, () => this.#add(call, callback, attempt));
  }

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
    this.#delivery.wait(jobId, callback);
    // Read again after the callback is in place: a completion between the two reads is seen here.
    const job =
      existing === undefined || completionOf(existing) === undefined
        ? ((await this.#queue.getJob(jobId)) as Job | undefined)
        : existing;
    const completion = job === undefined ? undefined : completionOf(job);
    if (completion !== undefined) setImmediate(() => this.#delivery.settle(jobId, completion));
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
}
