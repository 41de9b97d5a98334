import type { ContentPart } from "../content-part.js";
import { ToolResult } from "../tool-result.js";

/**
 * A {@link ToolResult} as the journal keeps it (JSON): every field the loop reads, and the
 * message of `err` (an error's stack, cause and class are not journaled).
 */
export interface JournaledToolResult {
  /** {@link ToolResult.forLLM}. */
  forLLM: string;
  /** {@link ToolResult.forUser}. */
  forUser: string;
  /** {@link ToolResult.silent}. */
  silent: boolean;
  /** {@link ToolResult.isError}. */
  isError: boolean;
  /** {@link ToolResult.async}. */
  async: boolean;
  /** {@link ToolResult.responseHandled}. */
  responseHandled: boolean;
  /** {@link ToolResult.data}, as JSON keeps it. */
  data?: Record<string, unknown>;
  /** {@link ToolResult.parts}. */
  parts?: readonly ContentPart[];
  /** The message of {@link ToolResult.err}. */
  error?: string;
}

/** What the journal keeps of `result`. */
export function toJournal(result: ToolResult): JournaledToolResult {
  const journaled: JournaledToolResult = {
    forLLM: result.forLLM,
    forUser: result.forUser,
    silent: result.silent,
    isError: result.isError,
    async: result.async,
    responseHandled: result.responseHandled,
  };
  if (result.data !== undefined) journaled.data = result.data;
  if (result.parts !== undefined) journaled.parts = result.parts;
  if (result.err !== undefined) journaled.error = String(result.err.message);
  return journaled;
}

/** A real {@link ToolResult} again: its `err`, when it had one, an `Error` with the original message only. */
export function fromJournal(journaled: JournaledToolResult): ToolResult {
  const result = new ToolResult({
    forLLM: journaled.forLLM,
    forUser: journaled.forUser,
    silent: journaled.silent,
    isError: journaled.isError,
    async: journaled.async,
    responseHandled: journaled.responseHandled,
  });
  if (journaled.data !== undefined) result.data = journaled.data;
  if (journaled.parts !== undefined) result.parts = journaled.parts;
  if (journaled.error !== undefined) result.err = new Error(journaled.error);
  return result;
}
