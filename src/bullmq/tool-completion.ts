import type { ToolResult } from "../tool-result.js";

/**
 * The outcome of one queued tool call, as every {@link ToolQueue.onCompletion} handler and
 * {@link ToolQueue.completions} receive it.
 */
export interface ToolCompletion {
  /** The tool call id the job was queued under (the model's call id). */
  toolCallId: string;
  /** The tool's name. */
  toolName: string;
  /**
   * What the tool returned on the worker (`err` and `metadata` are not carried over), or an error
   * result when the job failed (`failed after N attempts: <reason>`).
   */
  result: ToolResult;
}
