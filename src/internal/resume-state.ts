import type { NormalizedToolCall } from "./normalize-tool-call.js";

/**
 * Where a resumed run starts (see `resumeToolLoop`): the checkpoint's iterations, the calls of its
 * last assistant message still without an answer, and its pending async calls.
 */
export interface ResumeState {
  /** Provider calls already made. */
  iterations: number;
  /** The calls to run first, in call order; `undefined` when none is unanswered. */
  calls: NormalizedToolCall[] | undefined;
  /** `true` when the transcript ends with an answer without calls: the run resolves at once. */
  finished: boolean;
  /** The checkpoint's `pendingAsync`, carried into every later checkpoint. */
  pendingAsync: { toolCallId: string; toolName: string }[];
  /**
   * `resumeToolLoop`'s decisions, checked: call id → `ApprovalDecision`, each for a call of
   * {@link calls}; applied before anything else asks. `undefined`: none given.
   */
  decisions?: ReadonlyMap<string, unknown>;
  /** The checkpoint's `stopped`: the run stopped after its last turn, so the resume does too. */
  stopped?: { reason: "response_handled" | "repeated_failure"; content: string };
}
