import type { Next } from "./internal/compose.js";
import type { ResumeState } from "./internal/resume-state.js";
import type { LoopCall } from "./loop-call.js";
import type { LLMResponse, Message } from "./provider.js";
import type { ToolLoopCheckpoint } from "./tool-loop-checkpoint.js";
import type { ModelCallRequest } from "./tool-loop-middleware.js";
import type { StopReason, ToolLoopResult } from "./tool-loop-result.js";
import type { ToolResult } from "./tool-result.js";

/** The result a message of the transcript carries: a tool's answer, or an async completion fed back. */
export interface Answer {
  /** The result, whole (the message may be cut). */
  result: ToolResult;
  /** The tool that was called. */
  toolName: string;
  /** The call's id. */
  toolCallId: string;
}

/** Why the run stops after a turn, and its `content`. */
export interface Stop {
  /** The result's `stopReason`. */
  reason: StopReason;
  /** The result's `content`. */
  content: string;
}

/** What a checkpoint records of a stop (a final answer and a loop-breaking tool are read from its messages). */
export type SavedStop = ToolLoopCheckpoint["stopped"];

/** The points of a run a feature may act at besides its own (see {@link LoopFeature.answered}). */
export interface FeatureRun {
  /** A message was appended: every feature's {@link LoopFeature.message}, in order (a promise when one waits). */
  message(message: Message, answer: Answer | undefined): Promise<void> | undefined;
  /** The state is worth saving: every feature's {@link LoopFeature.checkpoint} (a promise when one waits). */
  checkpoint(transcript: Message[], iteration: number, stopped?: SavedStop): Promise<void> | undefined;
  /** Throws the run's `ToolLoopError` when a listener failed. */
  check(transcript: Message[], iteration: number): void;
}

/**
 * One optional feature of the loop — events, approval, async results, a stop policy, checkpoints —
 * installed by its option of `ToolLoopConfig`. Its hooks have the seam's shape (`(request, next)`,
 * composed in the features' order, outside the user's middleware); its points are told, in the
 * features' order, what the algorithm just did. Every member is optional.
 */
export interface LoopFeature {
  /** Around each call the loop answers (refused ones too), with the call's record. */
  wrapToolCall?(call: LoopCall, next: Next<LoopCall, ToolResult>): Promise<ToolResult>;
  /** Around each provider call, outside the user's middleware. */
  wrapModelCall?(request: ModelCallRequest, next: Next<ModelCallRequest, LLMResponse>): Promise<LLMResponse>;
  /** The run begins with `signal` as its own; a resumed run, from `resume`. */
  begin?(signal: AbortSignal | undefined, resume: ResumeState | undefined): void;
  /** A provider call begins. */
  stepStart?(iteration: number): Promise<void>;
  /** The provider call of `iteration` failed (the run not aborted): `true` to resolve `"max_iterations"`. */
  modelCallFailed?(iteration: number, error: unknown): boolean;
  /** A message was appended to the transcript (`answer`: the result of a tool message or a completion fed back). */
  message?(message: Message, answer: Answer | undefined): Promise<void> | void;
  /** After the messages of a turn's answers: why the run stops after it, if it does. */
  turnStop?(iteration: number): Stop | undefined;
  /** The state is worth saving: after an assistant message, a turn's answers, completions fed back. */
  checkpoint?(transcript: Message[], iteration: number, stopped?: SavedStop): Promise<void> | undefined;
  /** A provider call's step is complete (its calls answered). */
  stepEnd?(response: LLMResponse, iteration: number): Promise<void>;
  /**
   * The model answered without calls and its answer was delivered: `"continue"` for another turn,
   * a stop reason, or `undefined` to let the next feature decide (none: `"completed"`).
   */
  answered?(
    run: FeatureRun,
    transcript: Message[],
    iteration: number,
    signal: AbortSignal | undefined,
  ): Promise<"continue" | StopReason | undefined> | "continue" | StopReason | undefined;
  /** The run's result was made, before anything sees it: the feature may complete it (or throw the run's error). */
  result?(result: ToolLoopResult): void;
  /** The loop settled (resolved or rejected). */
  settled?(): void;
  /** The run resolved with `result` (delivered before the run returns it). */
  finish?(result: ToolLoopResult): Promise<void>;
  /** The run is over, whatever its outcome. */
  end?(): void;
}
