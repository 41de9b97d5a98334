import type { Job, Queue } from "bullmq";
import { isPlainObject, isRecord } from "../internal/describe.js";
import { optionError } from "../internal/options.js";
import type { ToolCompletion } from "./tool-completion.js";
import { alternateJobId, completionOf, identityOf, jobIdFor, sameCall } from "./tool-job.js";

/** A call `completions()` looks up: a call id, or a call id with its identity (`undefined`: none can match). @internal */
export type CallLookup = string | { toolCallId: string; identity: string | undefined };

/** Jobs `completions()` reads from Redis at once. */
const COMPLETIONS_PAGE = 1_000;

/**
 * Checks `completions()`' argument and makes each item a lookup. A hole of a sparse array is
 * refused at once, not iterated to its length.
 * @internal
 */
export function checkCalls(calls: unknown): CallLookup[] {
  const expected = "an array of tool call ids or QueuedCall objects";
  if (!Array.isArray(calls)) throw optionError("completions", "calls", expected, calls);
  const lookups: CallLookup[] = [];
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

/**
 * The completions of the looked-up calls that are finished, in their order: their jobs are read
 * `COMPLETIONS_PAGE` at a time (not all at once: memory), until `read.abandoned` is set.
 * @internal
 */
export async function readCompletions(
  queue: Queue,
  lookups: CallLookup[],
  read: { abandoned: boolean },
): Promise<ToolCompletion[]> {
  const found: ToolCompletion[] = [];
  for (let start = 0; start < lookups.length && !read.abandoned; start += COMPLETIONS_PAGE) {
    const page = lookups.slice(start, start + COMPLETIONS_PAGE);
    const jobs = await Promise.all(page.map((lookup) => findJob(queue, lookup)));
    for (const job of jobs) {
      const completion = job === undefined ? undefined : completionOf(job);
      if (completion !== undefined) found.push(completion);
    }
  }
  return found;
}

/** The job of a looked-up call: by call id, or the one of its two job ids that holds this very call. */
async function findJob(queue: Queue, lookup: CallLookup): Promise<Job | undefined> {
  if (typeof lookup === "string") return (await queue.getJob(jobIdFor(lookup))) as Job | undefined;
  const { toolCallId, identity } = lookup;
  if (identity === undefined) return undefined;
  const jobs = (await Promise.all([
    queue.getJob(jobIdFor(toolCallId)),
    queue.getJob(alternateJobId(toolCallId, identity)),
  ])) as Array<Job | undefined>;
  return jobs.find((job) => job !== undefined && sameCall(job, toolCallId, identity));
}
