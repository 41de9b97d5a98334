import type { Message, UsageInfo } from "./provider.js";
import type { ToolInterruption } from "./tool-interruption.js";
import type { ToolLoopCheckpoint } from "./tool-loop-checkpoint.js";

/** Why the loop stopped. */
export type StopReason =
  | "completed"
  | "max_iterations"
  | "loop_breaking_tool"
  | "response_handled"
  | "repeated_failure"
  | "interrupted";

/**
 * The outcome of `runToolLoop` (Go's `ToolLoopResult`, plus the transcript); `T` is the type of
 * `output`, inferred from `config.output`.
 */
export interface ToolLoopResult<T = unknown> {
  /**
   * The final assistant text; `""` when the iteration cap was hit or the run was interrupted; with `"loop_breaking_tool"`, the
   * result of the call that ended the loop (its `forUser`, or `forLLM` when that is empty).
   */
  content: string;
  /** Provider calls made. */
  iterations: number;
  /** The full transcript: the caller's messages, then every assistant and tool message of this run. */
  messages: Message[];
  /**
   * `"completed"` when the model answered without tool calls, `"max_iterations"` at the cap,
   * `"loop_breaking_tool"` after a turn in which a `loopBreaking` tool succeeded, `"interrupted"`
   * when calls wait for a person's decision (`approve: "interrupt"`).
   */
  stopReason: StopReason;
  /** The call that ended the loop; set with `stopReason: "loop_breaking_tool"` only. */
  stoppedBy?: {
    /** The loop-breaking tool's name. */
    toolName: string;
    /** The id of its call in the transcript. */
    toolCallId: string;
  };
  /**
   * With `stopReason: "interrupted"`: the calls waiting for a decision, in call order (the turn's
   * other calls ran and are answered in `messages`).
   */
  interruptions?: ToolInterruption[];
  /**
   * With `stopReason: "interrupted"`: the run's state, plain JSON, its last assistant message with
   * exactly the `interruptions` unanswered — pass it to `resumeToolLoop` with the decisions (also
   * in another process). The same object `onCheckpoint` received last.
   */
  checkpoint?: ToolLoopCheckpoint;
  /** Token usage summed over the provider calls that reported it. */
  usage?: UsageInfo;
  /**
   * With `config.output`: the final answer's value, parsed from `content` and validated (zod's
   * parsed value for a zod schema). Absent when the run ended otherwise than with a valid answer.
   */
  output?: T;
}
