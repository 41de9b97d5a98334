import { type AsyncCompletion, AsyncCompletions } from "./internal/async-completions.js";
import type { Next } from "./internal/compose.js";
import { contentOf, messageContent } from "./internal/content-of.js";
import { cutName, errorMessage } from "./internal/describe.js";
import { log, type ResolvedLogger } from "./internal/logger.js";
import type { LoopCall } from "./loop-call.js";
import type { FeatureRun, LoopFeature } from "./loop-feature.js";
import type { UserMessages } from "./loop-user-messages.js";
import type { Message } from "./provider.js";
import type { ToolLoopConfig } from "./tool-loop-config.js";
import type { ToolResult } from "./tool-result.js";

/** `ToolLoopConfig.onAsyncResult`'s listener. */
export type AsyncResultListener = NonNullable<ToolLoopConfig["onAsyncResult"]>;

/** What {@link AsyncResults} is made with. */
export interface AsyncResultsOptions {
  onAsyncResult: AsyncResultListener | undefined;
  /** `awaitAsync.timeoutMs`; `undefined`: completions are not fed back. */
  awaitAsyncMs: number | undefined;
  /** Where a completion's `forUser` goes, when `onUserMessage` is set. */
  userMessages: UserMessages | undefined;
  maxIterations: number;
  logger: ResolvedLogger;
  /** `maxResultBytes`: a completion's parts above it are not fed back (a note says so). */
  maxResultBytes: number;
}

/**
 * `onAsyncResult` and `awaitAsync`: every call gets its own async callback; with `awaitAsync`, the
 * completions that arrive while the model answers are fed back as user messages (another turn),
 * and everything else goes to `onAsyncResult`, then its `forUser` to `onUserMessage`.
 */
export class AsyncResults implements LoopFeature {
  readonly #options: AsyncResultsOptions;
  readonly #completions: AsyncCompletions;
  /** `true` once the loop settled: later deliveries are logged, not awaited by anyone. */
  #ended = false;

  constructor(options: AsyncResultsOptions) {
    this.#options = options;
    const awaiting = options.awaitAsyncMs !== undefined;
    this.#completions = new AsyncCompletions(awaiting, (done) => this.#deliverLate(done), options.logger);
  }

  /** Gives the call its callback; an async result is pending until the callback fires. */
  async wrapToolCall(loopCall: LoopCall, next: Next<LoopCall, ToolResult>): Promise<ToolResult> {
    const { id, name } = loopCall.normalized.call;
    loopCall.asyncCallback = this.#completions.callback(name, id);
    const result = await next(loopCall);
    this.#completions.started(id, result, name);
    return result;
  }

  /** The async calls whose completion nobody has received yet (see `AsyncCompletions.undelivered`). */
  undelivered(): { toolCallId: string; toolName: string }[] {
    return this.#completions.undelivered();
  }

  /**
   * With `awaitAsync`, when async calls are pending: waits for them (at most `timeoutMs`), appends
   * each completion as a user message and asks for another turn (`"continue"`).
   */
  async answered(
    run: FeatureRun,
    transcript: Message[],
    iteration: number,
    signal: AbortSignal | undefined,
  ): Promise<"continue" | undefined> {
    const { awaitAsyncMs, maxIterations } = this.#options;
    const pending = this.#completions;
    if (awaitAsyncMs === undefined || !pending.hasWork || iteration >= maxIterations) return undefined;
    const completions = await pending.collect(awaitAsyncMs, signal);
    if (signal?.aborted) return "continue"; // the loop's own abort check rejects
    if (completions.length === 0) return undefined;
    for (const completion of completions) {
      const { result, toolName, toolCallId } = completion;
      const text = `[async result from ${cutName(toolName)} (${cutName(toolCallId)})] ${contentOf(result)}`;
      const message: Message = { role: "user", content: messageContent(result, text, this.#options.maxResultBytes) };
      transcript.push(message);
      await run.message(message, completion);
    }
    await run.checkpoint(transcript, iteration);
    run.check(transcript, iteration);
    return "continue";
  }

  settled(): void {
    this.#ended = true;
  }

  /** The run is over: what is queued, and every later completion, goes to `onAsyncResult`. */
  end(): void {
    this.#completions.end();
  }

  /**
   * A completion that is not fed back: `onAsyncResult`, then `forUser` — while the loop runs, in
   * order with its other deliveries (a throw rejects the run); after, logged.
   */
  #deliverLate({ result, toolName, toolCallId }: AsyncCompletion): void {
    const { onAsyncResult, userMessages, logger } = this.#options;
    const run = async () => {
      await onAsyncResult?.(result, { toolName, toolCallId });
      if (!this.#ended) return userMessages?.deliver(result, toolName, toolCallId);
      await userMessages?.delivery(result, toolName, toolCallId)?.();
    };
    run().catch((error: unknown) => {
      log(
        logger,
        "warn",
        () => ({ tool: cutName(toolName), error: errorMessage(error) }),
        "async result listener threw",
      );
    });
  }
}
