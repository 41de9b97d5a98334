import type { CallWrapper } from "./execute-tool-call.js";
import type { ResolvedLogger } from "./internal/logger.js";
import type { NormalizedToolCall } from "./internal/normalize-tool-call.js";
import type { PromotionView } from "./internal/promotion-scope.js";
import { NO_PROGRESS } from "./progress.js";
import type { AsyncCallback, ToolContext } from "./tool.js";
import type { ToolResult } from "./tool-result.js";

/** The run's context as each of its calls sees it: checked, with the run's own signal. */
export interface RunScope {
  channel: string;
  chatId: string;
  signal: AbortSignal | undefined;
  metadata: Readonly<Record<string, string>> | undefined;
  /** The run's current turn and its promoted hidden tools; `undefined` when the registry keeps none per run. */
  promotions: PromotionView | undefined;
  /** The run's tool-call middleware, given to the registry with each call. */
  wrap: CallWrapper | undefined;
}

/** Runs a call once it may take one of the turn's `maxConcurrency` slots. */
export type Slot = (run: () => Promise<ToolResult>) => Promise<ToolResult>;

/** One call of a turn on its way through the loop's features to the registry. */
export interface LoopCall {
  /** The call as the transcript has it, and why it cannot run, if so. */
  readonly normalized: NormalizedToolCall;
  /** The step that made it (a resumed call: its checkpoint's). */
  readonly iteration: number;
  /** The run's context. */
  readonly scope: RunScope;
  /** The turn's `maxConcurrency` bound; `undefined`: none. An approval is waited for outside it. */
  readonly slot: Slot | undefined;
  /** The callback the tool gets (`onAsyncResult`, `awaitAsync`); `undefined`: none. */
  asyncCallback: AsyncCallback | undefined;
  /** Told the result as soon as it is known, before the call's slot frees. */
  settled: ((result: ToolResult) => void) | undefined;
  /**
   * The call's approval, already decided (a resume's decision, or a `needsApproval` predicate that
   * said none is needed): the approval gate applies it without asking. `undefined`: not decided.
   */
  approval?: unknown;
}

/** The context of a call before it runs, as an approver (and a `needsApproval` predicate) receives it. */
export function callContext(call: NormalizedToolCall["call"], logger: ResolvedLogger, scope: RunScope): ToolContext {
  return {
    signal: scope.signal ?? new AbortController().signal,
    channel: scope.channel,
    chatId: scope.chatId,
    toolCallId: call.id,
    metadata: scope.metadata ?? {},
    logger,
    reportProgress: NO_PROGRESS,
  };
}
