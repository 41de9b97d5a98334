/**
 * A call a run left waiting for a person's decision (`approve: "interrupt"`): it is in
 * `result.interruptions`, and unanswered in the last assistant message of `result.checkpoint`.
 * Answer it with `resumeToolLoop(config, checkpoint, context, { [toolCallId]: decision })`.
 */
export interface ToolInterruption {
  /** The call's id in the transcript: the key of its decision. */
  toolCallId: string;
  /** The tool the model asked for. */
  toolName: string;
  /** The arguments as the model sent them (not yet validated). */
  arguments: Record<string, unknown>;
}
