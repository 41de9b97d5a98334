import type { Next } from "./internal/compose.js";
import { DELIVERED, type Deliveries } from "./internal/deliveries.js";
import type { ResumeState } from "./internal/resume-state.js";
import type { AsyncResults } from "./loop-async-results.js";
import type { LoopCall } from "./loop-call.js";
import type { LoopFeature, SavedStop } from "./loop-feature.js";
import type { Message } from "./provider.js";
import type { ToolLoopCheckpoint } from "./tool-loop-checkpoint.js";
import type { ToolResult } from "./tool-result.js";

/** `ToolLoopConfig.onCheckpoint`'s listener. */
export type CheckpointListener = (checkpoint: ToolLoopCheckpoint) => void | Promise<void>;

/** An async call whose completion the loop has not received. */
type PendingAsyncCall = ToolLoopCheckpoint["pendingAsync"][number];

/**
 * `onCheckpoint`: the run's state — a copy of the transcript, the iterations, the pending async
 * calls — whenever it is worth saving, delivered in order with the run's other listeners.
 */
export class Checkpoints implements LoopFeature {
  /** Without async tracking: records every async call of the run, since no completion can reach it. */
  readonly wrapToolCall?: (loopCall: LoopCall, next: Next<LoopCall, ToolResult>) => Promise<ToolResult>;
  readonly #listener: CheckpointListener;
  readonly #deliveries: Deliveries;
  readonly #async: AsyncResults | undefined;
  /** Without `onAsyncResult` and `awaitAsync`: every async call of the run. */
  readonly #asyncCalls: PendingAsyncCall[] = [];
  /** The run's signal: none is taken once it aborted. */
  #signal: AbortSignal | undefined;
  /** The pending async calls of the checkpoint this run resumed. */
  #resumedAsync: readonly PendingAsyncCall[] = [];

  constructor(listener: CheckpointListener, deliveries: Deliveries, async: AsyncResults | undefined) {
    this.#listener = listener;
    this.#deliveries = deliveries;
    this.#async = async;
    if (async === undefined) {
      this.wrapToolCall = async (loopCall, next) => {
        const result = await next(loopCall);
        if (result.async === true) {
          const { id, name } = loopCall.normalized.call;
          this.#asyncCalls.push({ toolCallId: id, toolName: name });
        }
        return result;
      };
    }
  }

  begin(signal: AbortSignal | undefined, resume: ResumeState | undefined): void {
    this.#signal = signal;
    if (resume !== undefined) this.#resumedAsync = resume.pendingAsync;
  }

  /**
   * Hands `onCheckpoint` the run's state as it is now (taken at once, delivered in order with the
   * other listeners); what it throws fails the run like a listener. None once the run's signal
   * aborted: the run rejects, and its calls' "aborted" answers must not replace the checkpoint
   * taken before they ran (resuming that one runs them).
   */
  checkpoint(transcript: Message[], iteration: number, stopped?: SavedStop): Promise<void> {
    if (this.#signal?.aborted) return DELIVERED;
    const pending = [...this.#resumedAsync, ...(this.#async?.undelivered() ?? this.#asyncCalls)];
    const checkpoint: ToolLoopCheckpoint = {
      version: 1,
      messages: [...transcript],
      iterations: iteration,
      pendingAsync: pending.map(({ toolCallId, toolName }) => ({ toolCallId, toolName })),
    };
    if (stopped !== undefined) checkpoint.stopped = { ...stopped };
    const listener = this.#listener;
    return this.#deliveries.enqueue("onCheckpoint", () => listener(checkpoint));
  }
}
