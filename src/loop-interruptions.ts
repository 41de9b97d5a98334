import type { Next } from "./internal/compose.js";
import { quoteName } from "./internal/describe.js";
import type { NormalizedToolCall } from "./internal/normalize-tool-call.js";
import type { ResumeState } from "./internal/resume-state.js";
import { abortedWhileWaiting, approvalRule, askRule } from "./loop-approval.js";
import type { LoopCall } from "./loop-call.js";
import type { Checkpoints } from "./loop-checkpoints.js";
import type { LoopEvents } from "./loop-events.js";
import type { LoopFeature, Stop } from "./loop-feature.js";
import { type RefusalTarget, refuseCall } from "./refuse-call.js";
import type { ToolInterruption } from "./tool-interruption.js";
import type { ToolLoopResult } from "./tool-loop-result.js";
import { errorResult, type ToolResult } from "./tool-result.js";

/** What a run that may leave calls waiting is made with besides its approval target. */
export interface InterruptionParts {
  /** The run's events (`tool-approval-requested`); `undefined` without `onEvent`. */
  events: LoopEvents | undefined;
  /** The run's checkpoints: the interrupted result carries the one taken after the turn. */
  checkpoints: Checkpoints;
  /** `true` once a listener failed: the run rejects, so no call is left waiting. */
  failed: () => boolean;
}

/**
 * `approve: "interrupt"`: a call whose tool needs approval, and that has no decision, is not run
 * and gets no answer — it waits for a person while the run ends. Sitting outside the events, such
 * a call emits `tool-approval-requested` and no `tool-call-start`. After the turn
 * ({@link leaveOpen}) the loop appends the other calls' answers only, and the run resolves
 * `"interrupted"` with the waiting calls and the checkpoint taken after those answers.
 */
export class Interruptions implements LoopFeature {
  readonly #target: RefusalTarget;
  readonly #parts: InterruptionParts;
  /** The results standing for calls left waiting in the current turn (never appended). */
  readonly #waiting = new Set<ToolResult>();
  /** The calls left waiting, in call order, once the turn is over. */
  #pending: ToolInterruption[] = [];
  #signal: AbortSignal | undefined;
  #decisions: ReadonlyMap<string, unknown> | undefined;

  constructor(target: RefusalTarget, parts: InterruptionParts) {
    this.#target = target;
    this.#parts = parts;
  }

  /** `true` once a turn left calls waiting: the run stops after it. */
  get interrupting(): boolean {
    return this.#pending.length > 0;
  }

  begin(signal: AbortSignal | undefined, resume: ResumeState | undefined): void {
    this.#signal = signal;
    this.#decisions = resume?.decisions;
  }

  async wrapToolCall(loopCall: LoopCall, next: Next<LoopCall, ToolResult>): Promise<ToolResult> {
    const { normalized, scope } = loopCall;
    const { call, argumentsError } = normalized;
    // A decided call goes to the approval gate; an aborting run answers every call there.
    if (argumentsError !== undefined || this.#decisions?.has(call.id) === true || scope.signal?.aborted) {
      return next(loopCall);
    }
    const rule = approvalRule(this.#target.tools, call.name, scope.promotions);
    if (rule === undefined || rule === false) return next(loopCall);
    const needed = await askRule(rule, call, this.#target.logger, scope);
    if (needed === false) {
      // Decided here, so that the gate does not ask the predicate a second time.
      loopCall.approval = true;
      return next(loopCall);
    }
    if (scope.signal?.aborted)
      return refuseCall(call, abortedWhileWaiting(call.name, scope.signal.reason), this.#target);
    // A stand-in result, never appended: {@link leaveOpen} recognises it by identity.
    const waiting = errorResult("waiting for approval");
    this.#waiting.add(waiting);
    await this.#parts.events?.approvalRequested(call, loopCall.iteration);
    return waiting;
  }

  /**
   * The turn's answered calls and their results, without the calls left waiting (recorded for the
   * result). When the run aborted or a listener failed, it rejects instead: the waiting calls are
   * answered (refused), so that the error's transcript has every call answered.
   */
  leaveOpen(
    calls: NormalizedToolCall[],
    results: ToolResult[],
  ): { calls: NormalizedToolCall[]; results: ToolResult[] } {
    const waiting = this.#waiting;
    if (waiting.size === 0) return { calls, results };
    const signal = this.#signal;
    const stopping = signal?.aborted === true || this.#parts.failed();
    const answered: NormalizedToolCall[] = [];
    const answers: ToolResult[] = [];
    for (let index = 0; index < calls.length; index++) {
      const normalized = calls[index] as NormalizedToolCall;
      let result = results[index] as ToolResult;
      if (waiting.has(result)) {
        const { call } = normalized;
        if (!stopping) {
          this.#pending.push({ toolCallId: call.id, toolName: call.name, arguments: call.arguments });
          continue;
        }
        // Its run rejects: aborted, or stopping because a listener failed.
        const answer = signal?.aborted ? abortedWhileWaiting(call.name, signal.reason) : stoppingResult(call.name);
        result = refuseCall(call, answer, this.#target);
      }
      answered.push(normalized);
      answers.push(result);
    }
    waiting.clear();
    return { calls: answered, results: answers };
  }

  /** A turn that left calls waiting stops the run (before any other stop: those calls need their answers). */
  turnStop(): Stop | undefined {
    return this.#pending.length === 0 ? undefined : { reason: "interrupted", content: "" };
  }

  result(result: ToolLoopResult): void {
    if (result.stopReason !== "interrupted") return;
    result.interruptions = this.#pending;
    const checkpoint = this.#parts.checkpoints.latest;
    if (checkpoint !== undefined) result.checkpoint = checkpoint;
  }
}

/** The answer of a call the loop will not start because it is stopping (a listener failed). */
export function stoppingResult(name: string): ToolResult {
  return errorResult(`tool ${quoteName(name)} was not run: the loop is stopping`);
}
