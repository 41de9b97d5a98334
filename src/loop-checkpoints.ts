import type { Next } from "./internal/compose.js";
import type { Deliveries } from "./internal/deliveries.js";
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
  /** The last checkpoint taken (an interrupted run's result carries it). */
  latest: ToolLoopCheckpoint | undefined;
  readonly #listener: CheckpointListener | undefined;
  /** `true` when a checkpoint is wanted without a listener: the turn left calls waiting. */
  readonly #wanted: () => boolean;
  readonly #deliveries: Deliveries;
  readonly #async: AsyncResults | undefined;
  /** Without `onAsyncResult` and `awaitAsync`: every async call of the run. */
  readonly #asyncCalls: PendingAsyncCall[] = [];
  /** The run's signal: none is taken once it aborted. */
  #signal: AbortSignal | undefined;
  /** The pending async calls of the checkpoint this run resumed. */
  #resumedAsync: readonly PendingAsyncCall[] = [];

  constructor(
    listener: CheckpointListener | undefined,
    deliveries: Deliveries,
    async: AsyncResults | undefined,
    wanted: () => boolean,
  ) {
    this.#listener = listener;
    this.#wanted = wanted;
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
   * taken before they ran (resuming that one runs them). Without `onCheckpoint` (`approve:
   * "interrupt"` alone), one is taken only after a turn that left calls waiting.
   */
  checkpoint(transcript: Message[], iteration: number, stopped?: SavedStop): Promise<void> | undefined {
    // A turn that left calls waiting has no "aborted" answers: the run's result carries its checkpoint.
    const wanted = this.#wanted();
    if (!wanted && (this.#listener === undefined || this.#signal?.aborted)) return undefined;
    const pending = [...this.#resumedAsync, ...(this.#async?.undelivered() ?? this.#asyncCalls)];
    const checkpoint: ToolLoopCheckpoint = {
      version: 1,
      messages: [...transcript],
      iterations: iteration,
      pendingAsync: pending.map(({ toolCallId, toolName }) => ({ toolCallId, toolName })),
    };
    if (stopped !== undefined) checkpoint.stopped = { ...stopped };
    this.latest = checkpoint;
    const listener = this.#listener;
    if (listener === undefined) return undefined;
    return this.#deliveries.enqueue("onCheckpoint", () => listener(checkpoint));
  }
}
