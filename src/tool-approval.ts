import type { ToolContext } from "./tool.js";

/** A call waiting for the user's approval (see {@link Tool.needsApproval}). */
export interface ApprovalRequest {
  /** The tool the model asked for. */
  toolName: string;
  /** The call's id in the transcript. */
  toolCallId: string;
  /** The arguments as the model sent them (not yet validated). */
  arguments: Record<string, unknown>;
}

/** An approver's answer: `true`/`false`, or an object with the reason the model will read on denial. */
export type ApprovalDecision =
  | boolean
  | {
      /** `true` runs the call. */
      approved: boolean;
      /** Why it was denied: the model reads `denied by the user: <reason>`. */
      reason?: string;
    };

/**
 * Decides whether a call that needs approval runs (`ToolLoopConfig.approve`). Anything other than
 * `true` or `{ approved: true }` denies; a throw denies with the error's message.
 */
export type ToolApprover = (
  request: ApprovalRequest,
  context: ToolContext,
) => ApprovalDecision | Promise<ApprovalDecision>;
