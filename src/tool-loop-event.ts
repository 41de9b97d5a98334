import type { ProgressUpdate } from "./progress.js";
import type { FinishReason, Message, UsageInfo } from "./provider.js";
import type { ToolLoopResult } from "./tool-loop-result.js";
import type { ToolResult } from "./tool-result.js";

/**
 * What happens in a run of the loop, in order: `step-start`, the streamed deltas (`text-delta`,
 * `reasoning-delta`, per call `tool-input-start` then its `tool-input-delta`s), `message`
 * (the assistant's), per call `tool-call-start` … `tool-call-end` (or `tool-approval-requested` for a
 * call left waiting for a decision; ends may interleave across the
 * turn's parallel calls), one `message` per tool answer in call order, `step-end`; finally
 * `loop-end`. Replaying the `message` events onto the caller's messages gives `result.messages`.
 */
export type ToolLoopEvent =
  | {
      /** A provider call begins. */
      type: "step-start";
      /** Which provider call (1-based). */
      iteration: number;
    }
  | {
      /** A piece of the assistant's text, streamed (only when the provider has `chatStream`). */
      type: "text-delta";
      /** Which provider call (1-based). */
      iteration: number;
      /** The text received. */
      delta: string;
    }
  | {
      /** A piece of the model's reasoning, streamed (where the provider sends it). */
      type: "reasoning-delta";
      /** Which provider call (1-based). */
      iteration: number;
      /** The text received. */
      delta: string;
    }
  | {
      /**
       * The model began a tool call, streamed: before the call's first `tool-input-delta`, and
       * before its `tool-call-start` (which comes once the answer is whole).
       */
      type: "tool-input-start";
      /** Which provider call (1-based). */
      iteration: number;
      /** The call's id, as the provider sent it. */
      toolCallId: string;
      /** The tool the model asked for (as sent; may be unknown). */
      toolName: string;
    }
  | {
      /**
       * A piece of a streamed tool call's arguments: raw JSON text, as the provider sent it. The
       * pieces of one id joined parse to the call's arguments (whitespace may differ from the
       * transcript's `function.arguments`); parallel calls' pieces may interleave.
       */
      type: "tool-input-delta";
      /** Which provider call (1-based). */
      iteration: number;
      /** The id of a call a `tool-input-start` began. */
      toolCallId: string;
      /** The JSON text received. */
      delta: string;
    }
  | {
      /** A tool call begins (before its approval, when it needs one). */
      type: "tool-call-start";
      /** Which provider call made it (1-based). */
      iteration: number;
      /** The call's id in the transcript. */
      toolCallId: string;
      /** The tool the model asked for (as sent; may be unknown). */
      toolName: string;
      /** The arguments as the model sent them. */
      arguments: Record<string, unknown>;
    }
  | {
      /**
       * A call waits for a person's decision (`approve: "interrupt"`): it does not run in this run
       * (no `tool-call-start` until it runs), and the run resolves `stopReason: "interrupted"`.
       */
      type: "tool-approval-requested";
      /** Which provider call made it (1-based). */
      iteration: number;
      /** The call's id in the transcript: the key of its decision. */
      toolCallId: string;
      /** The tool the model asked for. */
      toolName: string;
      /** The arguments as the model sent them. */
      arguments: Record<string, unknown>;
    }
  | {
      /** A tool call reported progress, or ended (its final update), as `ToolLoopConfig.onProgress` receives it. */
      type: "tool-progress";
      /** The update. */
      update: ProgressUpdate;
    }
  | {
      /** A tool call has its result (before any cut by `maxResultChars`). */
      type: "tool-call-end";
      /** Which provider call made it (1-based). */
      iteration: number;
      /** The call's id in the transcript. */
      toolCallId: string;
      /** The tool the model asked for. */
      toolName: string;
      /** The result, whole. */
      result: ToolResult;
      /** Milliseconds from `tool-call-start` to the result (approval included). */
      durationMs: number;
    }
  | {
      /** A message was appended to the transcript. */
      type: "message";
      /** The message, as it stands in `result.messages`. */
      message: Message;
    }
  | {
      /** A provider call's turn is complete (its tool calls answered). */
      type: "step-end";
      /** Which provider call (1-based). */
      iteration: number;
      /** Why the model stopped, as the provider said. */
      finishReason: FinishReason;
      /** This call's token usage, when the provider reported it. */
      usage?: UsageInfo;
    }
  | {
      /** The loop ended; the same result the promise resolves to. */
      type: "loop-end";
      /** The run's outcome. */
      result: ToolLoopResult;
    };

/**
 * Receives every {@link ToolLoopEvent} of a run. The loop awaits it (back-pressure: a slow
 * listener holds the loop, nothing is dropped); what it throws rejects the run with a
 * `ToolLoopError` whose transcript has every call answered.
 */
export type ToolLoopEventListener = (event: ToolLoopEvent) => void | Promise<void>;
