import type { AsyncTool, Tool } from "../tool.js";
import type { ToolCompletion } from "./tool-completion.js";

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
