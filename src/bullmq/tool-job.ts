import { createHash } from "node:crypto";
import type { Job } from "bullmq";
import { failure } from "../execute-tool-call.js";
import { isPlainObject, isRecord, quoteName } from "../internal/describe.js";
import { canonicalJson } from "../internal/unique-items.js";
import { ToolResult } from "../tool-result.js";
import type { ToolCompletion } from "./tool-completion.js";

/** The queue name when none is given. */
export const DEFAULT_QUEUE_NAME = "toolloop";

/** What a job carries: the call, and the JSON-safe part of its context. @internal */
export interface ToolJobData {
  /** Format of this object, so that a worker of another version can refuse it. */
  v: 1;
  toolName: string;
  toolCallId: string;
  args: Record<string, unknown>;
  channel: string;
  chatId: string;
  metadata: Record<string, string>;
  /** The enqueuing call's trace context (`traceContext` option), when there was one to carry. */
  trace?: Record<string, string>;
}

/** What a job returns (its BullMQ return value): the completion, with the result in Go's JSON keys. @internal */
export interface ToolJobReturn {
  v: 1;
  toolCallId: string;
  toolName: string;
  result: {
    for_llm: string;
    for_user?: string;
    silent: boolean;
    is_error: boolean;
    response_handled?: boolean;
    data?: Record<string, unknown>;
  };
}

/** A tool call id used as the job id as it is: what BullMQ accepts and a Redis key reads well. */
const PLAIN_ID = /^[A-Za-z0-9_.-]{1,128}$/;
const INTEGER = /^-?\d+$/;
/** Ids a queue's own Redis keys could have (`bull:<name>:meta`, `:events`, `:wait` …): all `[a-z-]`. */
const KEY_NAME = /^[a-z-]*$/;

/**
 * The BullMQ job id of a tool call: the tool call id itself when it is 1-128 characters of
 * `[A-Za-z0-9_.-]`, not an integer (BullMQ refuses integer ids and `:`) and not only lowercase
 * letters and `-` (the job's key would be one of the queue's own: a call id "events" or "wait"
 * broke the queue for every call); any other id (a model may send anything) is `#` and its
 * SHA-256, so every id maps to one job and no two ids share one.
 * @internal
 */
export function jobIdFor(toolCallId: string): string {
  if (PLAIN_ID.test(toolCallId) && !INTEGER.test(toolCallId) && !KEY_NAME.test(toolCallId)) return toolCallId;
  return `#${createHash("sha256").update(toolCallId).digest("hex")}`;
}

/**
 * What identifies a call besides its id, as one text: its tool, channel, chat id and arguments
 * (canonical JSON: object keys sorted, so a transcript saved and parsed again gives the same text).
 * The arguments are taken as JSON gives them back — as the job stores them — so that a key whose
 * value is `undefined` (dropped by JSON) or a `Date` (a string there) compares equal to its stored
 * form. Call ids are not unique everywhere (the text tool protocol's `text_1_0` comes again in the
 * next conversation; an MCP client's request ids restart), so a job is joined only by the same call.
 * Throws for arguments that are not JSON or are nested too deeply to walk.
 * @internal
 */
export function callIdentity(data: Pick<ToolJobData, "toolName" | "channel" | "chatId" | "args">): string {
  const args: unknown = JSON.parse(JSON.stringify(data.args));
  return canonicalJson([data.toolName, data.channel, data.chatId, args]);
}

/**
 * The job id of a call whose call id's own job ({@link jobIdFor}) belongs to another call: that
 * id, `#` and the first 32 hex digits of the SHA-256 of the call's identity ({@link callIdentity}).
 * No id of `jobIdFor` has a `#` after its first character, so no call id can name this job.
 * @internal
 */
export function alternateJobId(toolCallId: string, identity: string): string {
  return `${jobIdFor(toolCallId)}#${createHash("sha256").update(identity).digest("hex").slice(0, 32)}`;
}

/** The return value a worker stores for a result (`err` and `metadata` are not kept). @internal */
export function encodeReturn(toolCallId: string, toolName: string, result: ToolResult): ToolJobReturn {
  const json = result.toJSON();
  const encoded: ToolJobReturn["result"] = {
    for_llm: json.for_llm,
    silent: json.silent,
    is_error: json.is_error,
  };
  if (json.for_user !== undefined) encoded.for_user = json.for_user;
  if (json.response_handled === true) encoded.response_handled = true;
  if (json.data !== undefined) encoded.data = json.data;
  return { v: 1, toolCallId, toolName, result: encoded };
}

/** The completion in a job's return value, or `undefined` when it is not one toolloop wrote. @internal */
export function decodeReturn(value: unknown): ToolCompletion | undefined {
  if (!isRecord(value) || value.v !== 1) return undefined;
  const { toolCallId, toolName, result } = value;
  if (typeof toolCallId !== "string" || typeof toolName !== "string" || !isRecord(result)) return undefined;
  if (typeof result.for_llm !== "string") return undefined;
  const decoded = new ToolResult({
    forLLM: result.for_llm,
    forUser: typeof result.for_user === "string" ? result.for_user : "",
    silent: result.silent === true,
    isError: result.is_error === true,
    responseHandled: result.response_handled === true,
  });
  if (isPlainObject(result.data)) decoded.data = result.data;
  return { toolCallId, toolName, result: decoded };
}

/** The job data a worker reads, checked, or a description of what is wrong with it. @internal */
export function decodeJobData(value: unknown): ToolJobData | string {
  if (!isRecord(value) || value.v !== 1) return "the job was not made by toolloop's queued()";
  const { toolName, toolCallId, args, channel, chatId, metadata } = value;
  if (typeof toolName !== "string" || typeof toolCallId !== "string") return "the job has no tool name or call id";
  if (!isPlainObject(args) || typeof channel !== "string" || typeof chatId !== "string") {
    return "the job's arguments or context are malformed";
  }
  if (!isPlainObject(metadata) || Object.values(metadata).some((item) => typeof item !== "string")) {
    return "the job's metadata is not an object of strings";
  }
  return value as unknown as ToolJobData;
}

/** The reason of a job that failed for good: `failed after N attempts: <reason>`. @internal */
export function failedAfter(attempts: number, reason: string): string {
  return `failed after ${attempts} attempt${attempts === 1 ? "" : "s"}: ${reason}`;
}

/** A finished job's completion; `undefined` while it has not finished (or it is not a tool job). @internal */
export function completionOf(job: Job): ToolCompletion | undefined {
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
 * @internal
 */
export function sameCall(job: Job, toolCallId: string, identity: string): boolean {
  const stored = decodeJobData(job.data);
  if (typeof stored === "string" || stored.toolCallId !== toolCallId) return false;
  try {
    return callIdentity(stored) === identity;
  } catch {
    return false; // arguments too deep to compare: not this call's
  }
}

/** A call's identity, or `undefined` when its arguments are nested too deeply to walk. @internal */
export function identityOf(data: Pick<ToolJobData, "toolName" | "channel" | "chatId" | "args">): string | undefined {
  try {
    return callIdentity(data);
  } catch {
    return undefined;
  }
}
