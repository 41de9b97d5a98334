import type { Message } from "./provider.js";

/**
 * The state of a run at one point, as `onCheckpoint` receives it: plain JSON data, so that
 * `JSON.parse(JSON.stringify(checkpoint))` resumes the same. Save it where the run may be
 * resumed from (`resumeToolLoop`) after the process died.
 */
export interface ToolLoopCheckpoint {
  /** The format of this object; `1` is the only one. */
  version: 1;
  /** The transcript so far: the caller's messages, then every message the loop appended. */
  messages: Message[];
  /** Provider calls made so far (they count toward `maxIterations` when resumed). */
  iterations: number;
  /**
   * The async calls whose completion the loop has not received: without `awaitAsync` or
   * `onAsyncResult` every async call (results with `async: true`); with them, those whose callback
   * has not fired or whose completion is not fed back yet. A resumed run cannot receive them (their
   * callbacks died with the process): fetch them where they are kept (`ToolQueue.completions`).
   */
  pendingAsync: {
    /** The id of the async call in `messages`. */
    toolCallId: string;
    /** The tool that was called. */
    toolName: string;
  }[];
  /**
   * Set on the checkpoint after the answers of a turn that ended the run because every result
   * handled the response, or because of repeated failures: resuming it resolves at once with that
   * stop, as the run did. (A final answer and a loop-breaking tool are read from `messages`.)
   */
  stopped?: {
    /** Why the run stopped after this turn. */
    reason: "response_handled" | "repeated_failure";
    /** The run's `content`. */
    content: string;
  };
}
