import type { UIMessageChunk } from "ai";
import { contentText } from "../../content-part.js";
import { boundText, errorMessage } from "../../internal/describe.js";
import type { Message } from "../../provider.js";
import type { ToolLoopEvent } from "../../tool-loop-event.js";

/** Longest `errorText` of a `tool-output-error` chunk (a failed tool's text). */
const MAX_TOOL_ERROR_CHARS = 4_096;

/** Where a tool call stands in the UI message. */
type CallState = "input-streaming" | "input-available" | "output";

/** A call of the assistant's message, as the `message` event gave it. */
interface KnownCall {
  toolName: string;
  input: Record<string, unknown>;
}

/**
 * Turns a run's {@link ToolLoopEvent}s into the chunks of the AI SDK's UI message stream, keeping
 * what it must remember: the open text or reasoning block, the state of each call, and whether a
 * step's text was streamed.
 */
class UIMessageChunks {
  readonly #calls = new Map<string, CallState>();
  readonly #known = new Map<string, KnownCall>();
  #open: { type: "text" | "reasoning"; id: string } | undefined;
  #blocks = 0;
  #streamedText = false;
  #finished = false;

  /** The chunks for `event`, in order (often none or one). */
  of(event: ToolLoopEvent): UIMessageChunk[] {
    const out: UIMessageChunk[] = [];
    switch (event.type) {
      case "step-start":
        this.#close(out);
        this.#streamedText = false;
        out.push({ type: "start-step" });
        break;
      case "text-delta":
      case "reasoning-delta":
        if (event.delta === "") break;
        if (event.type === "text-delta") this.#streamedText = true;
        out.push({
          type: event.type,
          id: this.#block(event.type === "text-delta" ? "text" : "reasoning", out),
          delta: event.delta,
        });
        break;
      case "tool-input-start":
        this.#close(out);
        if (this.#calls.has(event.toolCallId)) break;
        this.#calls.set(event.toolCallId, "input-streaming");
        out.push({ type: "tool-input-start", toolCallId: event.toolCallId, toolName: event.toolName });
        break;
      case "tool-input-delta":
        if (this.#calls.get(event.toolCallId) !== "input-streaming") break;
        out.push({ type: "tool-input-delta", toolCallId: event.toolCallId, inputTextDelta: event.delta });
        break;
      case "tool-call-start":
        this.#close(out);
        this.#available(event.toolCallId, { toolName: event.toolName, input: event.arguments }, out);
        break;
      case "tool-approval-requested":
        // ai 6's approval part: the UI answers it by `approvalId`, which is the call's id (the key
        // of resumeToolLoop's decisions).
        this.#close(out);
        this.#available(event.toolCallId, { toolName: event.toolName, input: event.arguments }, out);
        out.push({ type: "tool-approval-request", approvalId: event.toolCallId, toolCallId: event.toolCallId });
        break;
      case "tool-call-end": {
        const { result } = event;
        this.#output(event.toolCallId, result.isError, result.forLLM, out);
        break;
      }
      case "message":
        this.#message(event.message, out);
        break;
      case "step-end":
        this.#close(out);
        out.push({ type: "finish-step" });
        break;
      case "loop-end":
        this.end(out);
        break;
    }
    return out;
  }

  /** Closes the open block and, once, finishes the message. */
  end(out: UIMessageChunk[]): UIMessageChunk[] {
    this.#close(out);
    if (!this.#finished) out.push({ type: "finish" });
    this.#finished = true;
    return out;
  }

  /** A failed run: the open block closed, then an `error` chunk with the failure's message (bounded). */
  failed(error: unknown): UIMessageChunk[] {
    const out: UIMessageChunk[] = [];
    this.#close(out);
    out.push({ type: "error", errorText: errorMessage(error) });
    return out;
  }

  /** The assistant's text when it was not streamed; its calls remembered; a tool answer whose call had no end event. */
  #message(message: Message, out: UIMessageChunk[]): void {
    if (message.role === "assistant") {
      this.#close(out);
      const text = contentText(message.content);
      if (!this.#streamedText && text !== "") {
        const id = this.#block("text", out);
        out.push({ type: "text-delta", id, delta: text });
        this.#close(out);
      }
      for (const call of message.toolCalls ?? []) {
        this.#known.set(call.id, { toolName: call.name, input: call.arguments });
      }
    } else if (message.role === "tool" && message.toolCallId !== undefined) {
      // An answer the loop wrote without running the call (an abort, the iteration cap …).
      const id = message.toolCallId;
      if (this.#calls.get(id) === "output") return;
      const known = this.#known.get(id) ?? { toolName: message.toolName ?? "", input: {} };
      this.#available(id, known, out);
      this.#output(id, message.isError === true, contentText(message.content), out);
    }
  }

  /** `tool-input-available` for a call, preceded by its `tool-input-start` when it was not streamed. */
  #available(toolCallId: string, call: KnownCall, out: UIMessageChunk[]): void {
    const state = this.#calls.get(toolCallId);
    if (state === "input-available" || state === "output") return;
    if (state === undefined) out.push({ type: "tool-input-start", toolCallId, toolName: call.toolName });
    out.push({ type: "tool-input-available", toolCallId, toolName: call.toolName, input: call.input });
    this.#calls.set(toolCallId, "input-available");
  }

  #output(toolCallId: string, isError: boolean, text: string, out: UIMessageChunk[]): void {
    if (this.#calls.get(toolCallId) !== "input-available") return;
    this.#calls.set(toolCallId, "output");
    out.push(
      isError
        ? { type: "tool-output-error", toolCallId, errorText: boundText(text, MAX_TOOL_ERROR_CHARS) }
        : { type: "tool-output-available", toolCallId, output: text },
    );
  }

  /** The id of the open block of `type`: the other kind is closed and a new block started when needed. */
  #block(type: "text" | "reasoning", out: UIMessageChunk[]): string {
    if (this.#open?.type === type) return this.#open.id;
    this.#close(out);
    this.#blocks++;
    const id = `${type}-${this.#blocks}`;
    this.#open = { type, id };
    out.push({ type: `${type}-start`, id });
    return id;
  }

  #close(out: UIMessageChunk[]): void {
    if (this.#open === undefined) return;
    out.push({ type: `${this.#open.type}-end`, id: this.#open.id });
    this.#open = undefined;
  }
}

/**
 * A run's events (`streamToolLoop`'s, or any `AsyncIterable<ToolLoopEvent>`) as the AI SDK's UI
 * message stream, the chunks `useChat` reads (protocol of `ai` 5 and 6): `start` (a new
 * `messageId`), per step `start-step` … `finish-step`, text and reasoning deltas in blocks with
 * stable ids (`text-1`, `reasoning-2` …: `-start`, `-delta`s, `-end`), per call `tool-input-start`,
 * its `tool-input-delta`s, `tool-input-available` (input = the call's arguments) and
 * `tool-output-available` (output = the result's `forLLM`) or `tool-output-error` (an error result:
 * its text, bounded), and `finish`. A call that waits for approval (`tool-approval-requested`) gets
 * `tool-input-available` and `tool-approval-request` with `approvalId` = its call id (the key of
 * `resumeToolLoop`'s decisions; a chunk of `ai` 6). A provider that does not stream gives each step's text as one
 * delta and each call's `tool-input-start` with its `tool-input-available`. A failed run (the
 * iteration throws) ends with an `error` chunk carrying the failure's message (bounded) and no
 * `finish`. The events are read as the stream is read (back-pressure: nothing is buffered ahead);
 * cancelling the stream stops iterating them, which aborts a `streamToolLoop` run.
 * Nothing of `ai` is loaded: the chunks are plain objects.
 *
 * @example
 * ```ts
 * const stream = toUIMessageStream(streamToolLoop({ provider, tools: registry, maxIterations: 10 }, messages));
 * ```
 */
export function toUIMessageStream(events: AsyncIterable<ToolLoopEvent>): ReadableStream<UIMessageChunk> {
  const chunks = new UIMessageChunks();
  let iterator: AsyncIterator<ToolLoopEvent> | undefined;
  return new ReadableStream<UIMessageChunk>(
    {
      start(controller) {
        controller.enqueue({ type: "start", messageId: globalThis.crypto.randomUUID() });
      },
      async pull(controller) {
        try {
          iterator ??= events[Symbol.asyncIterator]();
          // Read events until one gives a chunk, so that every pull enqueues something.
          while (true) {
            const next = await iterator.next();
            const out = next.done === true ? chunks.end([]) : chunks.of(next.value);
            for (const chunk of out) controller.enqueue(chunk);
            if (next.done === true) return controller.close();
            if (out.length > 0) return;
          }
        } catch (error) {
          for (const chunk of chunks.failed(error)) controller.enqueue(chunk);
          controller.close();
        }
      },
      cancel() {
        // Not awaited: an iterator busy in next() may settle its return() only after it.
        Promise.resolve(iterator?.return?.()).catch(() => {});
      },
    },
    { highWaterMark: 0 },
  );
}
