import { InvalidProviderResponseError } from "./errors.js";
import type { Next } from "./internal/compose.js";
import type { Deliveries } from "./internal/deliveries.js";
import { errorMessage, isPlainObject, isRecord } from "./internal/describe.js";
import { log, type ResolvedLogger } from "./internal/logger.js";
import type { NormalizedToolCall } from "./internal/normalize-tool-call.js";
import type { LoopCall } from "./loop-call.js";
import type { LoopFeature } from "./loop-feature.js";
import type { ProgressListener, ProgressUpdate } from "./progress.js";
import type { LLMProvider, LLMResponse, LLMStreamPart, Message, ToolDefinition } from "./provider.js";
import type { ToolLoopEvent, ToolLoopEventListener } from "./tool-loop-event.js";
import type { ModelCallRequest } from "./tool-loop-middleware.js";
import type { ToolLoopResult } from "./tool-loop-result.js";
import type { ToolResult } from "./tool-result.js";

/**
 * Most `tool-progress` events of one call queued for `onEvent` and not delivered yet: past it, the
 * oldest `"running"` one is dropped (the call's final update never is). A tool's `reportProgress` is
 * synchronous and never waits for the listener, so without a bound a tool reporting in a loop would
 * queue events (and memory) without end behind a slow listener. `onProgress` still receives every
 * update.
 */
export const MAX_QUEUED_PROGRESS_EVENTS = 16;

/**
 * `onEvent`: every {@link ToolLoopEvent} of the run, delivered in order with the run's other
 * listeners, and the provider's stream read (its deltas) when it has `chatStream`.
 */
export class LoopEvents implements LoopFeature {
  /** `true` when provider calls are streamed: the provider has `chatStream`. */
  readonly stream: boolean;
  readonly #listener: ToolLoopEventListener;
  readonly #deliveries: Deliveries;
  readonly #logger: ResolvedLogger;
  /** Per call id, its `tool-progress` updates queued and not delivered yet (at most {@link MAX_QUEUED_PROGRESS_EVENTS}). */
  readonly #progress = new Map<string, ProgressUpdate[]>();

  constructor(listener: ToolLoopEventListener, deliveries: Deliveries, logger: ResolvedLogger, provider: LLMProvider) {
    this.#listener = listener;
    this.#deliveries = deliveries;
    this.#logger = logger;
    this.stream = typeof provider.chatStream === "function";
  }

  /** The progress listener of the run: the caller's `onProgress`, and `tool-progress` events. */
  progressListener(onProgress: ProgressListener | undefined): ProgressListener {
    return (update) => {
      if (onProgress !== undefined) {
        try {
          onProgress(update);
        } catch (error) {
          log(this.#logger, "warn", () => ({ error: errorMessage(error) }), "progress listener threw");
        }
      }
      // Ordered with the other events; not awaited: a tool's reportProgress is synchronous.
      this.#emitProgress(update);
    };
  }

  /**
   * Queues a `tool-progress` event, coalesced per call: each queued delivery sends the oldest
   * update of its call still waiting, and past {@link MAX_QUEUED_PROGRESS_EVENTS} waiting updates
   * the oldest is dropped instead of queuing one more delivery. Only a call's last update can be
   * final, so the dropped one is always `"running"`, and every update still reaches the listener
   * before the `tool-call-end` queued after it.
   */
  #emitProgress(update: ProgressUpdate): void {
    const key = update.toolCallId;
    const waiting = this.#progress.get(key);
    if (waiting !== undefined) {
      waiting.push(update);
      if (waiting.length > MAX_QUEUED_PROGRESS_EVENTS) {
        waiting.shift();
        return; // as many deliveries queued as updates waiting
      }
    } else this.#progress.set(key, [update]);
    void this.#deliveries.enqueue("onEvent", () => {
      const queue = this.#progress.get(key) as ProgressUpdate[];
      const next = queue.shift() as ProgressUpdate;
      if (queue.length === 0) this.#progress.delete(key);
      return this.#listener({ type: "tool-progress", update: next });
    });
  }

  /**
   * `tool-call-start` when the call is dispatched (before its approval and its slot), and
   * `tool-call-end` as soon as its result is known — queued before its slot frees, so that a call
   * waiting for that slot starts after it is delivered.
   */
  async wrapToolCall(loopCall: LoopCall, next: Next<LoopCall, ToolResult>): Promise<ToolResult> {
    const { call } = loopCall.normalized;
    const { iteration } = loopCall;
    const started = performance.now();
    await this.#emit({
      type: "tool-call-start",
      iteration,
      toolCallId: call.id,
      toolName: call.name,
      arguments: call.arguments,
    });
    let ended: Promise<void> | undefined;
    const end = (result: ToolResult) =>
      (ended ??= this.#emit({
        type: "tool-call-end",
        iteration,
        toolCallId: call.id,
        toolName: call.name,
        result,
        durationMs: performance.now() - started,
      }));
    loopCall.settled = (result) => {
      void end(result);
    };
    const result = await next(loopCall);
    await end(result);
    return result;
  }

  /** `tool-approval-requested`: the call waits for a person's decision and does not run in this run. */
  approvalRequested(call: NormalizedToolCall["call"], iteration: number): Promise<void> {
    return this.#emit({
      type: "tool-approval-requested",
      iteration,
      toolCallId: call.id,
      toolName: call.name,
      arguments: call.arguments,
    });
  }

  /** `step-start`. */
  stepStart(iteration: number): Promise<void> {
    return this.#emit({ type: "step-start", iteration });
  }

  /** `message`: every message the loop appends, as it stands in the transcript. */
  message(message: Message): Promise<void> {
    return this.#emit({ type: "message", message });
  }

  /** `step-end`, with the call's finish reason and usage. */
  stepEnd(response: LLMResponse, iteration: number): Promise<void> {
    const finishReason = typeof response.finishReason === "string" ? response.finishReason : "";
    const event: ToolLoopEvent = { type: "step-end", iteration, finishReason };
    if (isPlainObject(response.usage)) event.usage = response.usage as NonNullable<LLMResponse["usage"]>;
    return this.#emit(event);
  }

  /** `loop-end`. */
  finish(result: ToolLoopResult): Promise<void> {
    return this.#emit({ type: "loop-end", result });
  }

  /**
   * A provider call through `chatStream`: every delta part becomes an event (see {@link deltaEvent}),
   * the `response` part is the answer. Reading stops when the run aborts or a listener failed (then rethrown).
   */
  async streamed(provider: LLMProvider, request: ModelCallRequest): Promise<LLMResponse> {
    const { messages, model, options, signal, iteration } = request;
    const chatStream = provider.chatStream as NonNullable<LLMProvider["chatStream"]>;
    const stream = chatStream.call(
      provider,
      messages as Message[],
      request.tools as ToolDefinition[] | undefined,
      model,
      options,
      signal,
    );
    let response: unknown;
    let seen = false;
    const calls = new Set<string>();
    // Parts are read as untrusted: a custom provider may send anything.
    for await (const part of stream as AsyncIterable<LLMStreamPart | unknown>) {
      // The loop has moved on (aborted, or the listener failed): stop reading and emitting.
      if (signal?.aborted || this.#deliveries.failed) break;
      if (!isRecord(part)) continue;
      if (part.type === "response") {
        response = part.response;
        seen = true;
        continue;
      }
      const event = deltaEvent(part, iteration, calls);
      if (event !== undefined) await this.#emit(event);
    }
    if (this.#deliveries.failed) throw this.#deliveries.error;
    if (!seen) {
      throw new InvalidProviderResponseError(
        "the provider returned an invalid response: the stream ended without a response part",
        { provider: "LLMProvider", body: undefined },
      );
    }
    return response as LLMResponse;
  }

  #emit(event: ToolLoopEvent): Promise<void> {
    const listener = this.#listener;
    return this.#deliveries.enqueue("onEvent", () => listener(event));
  }
}

/**
 * The event of a streamed delta part; `undefined` for a malformed part, a repeated
 * `tool-input-start`, or a `tool-input-delta` of a call no `tool-input-start` began (dropped, so
 * that a listener always sees a call's start before its input).
 */
function deltaEvent(part: Record<string, unknown>, iteration: number, calls: Set<string>): ToolLoopEvent | undefined {
  const { type, delta, toolCallId } = part;
  if (type === "tool-input-start") {
    const { toolName } = part;
    if (typeof toolCallId !== "string" || typeof toolName !== "string" || calls.has(toolCallId)) return undefined;
    calls.add(toolCallId);
    return { type, iteration, toolCallId, toolName };
  }
  if (typeof delta !== "string") return undefined;
  if (type === "text-delta" || type === "reasoning-delta") return { type, iteration, delta };
  if (type === "tool-input-delta" && calls.has(toolCallId as string)) {
    return { type, iteration, toolCallId: toolCallId as string, delta };
  }
  return undefined;
}
