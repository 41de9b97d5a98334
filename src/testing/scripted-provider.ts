import { optionError } from "../internal/options.js";
import type {
  LLMProvider,
  LLMResponse,
  LLMStreamDelta,
  LLMStreamPart,
  Message,
  ProviderToolCall,
  ToolDefinition,
} from "../provider.js";

/** What the provider received in one `chat` call (the messages are a snapshot). */
export interface ScriptedCall {
  /** A copy of the transcript the provider was sent, taken when the call was made. */
  messages: Message[];
  /** The definitions offered, or `undefined` when there were none. */
  tools: ToolDefinition[] | undefined;
  /** The model asked for. */
  model: string;
  /** The provider options (`llmOptions`). */
  options: Record<string, unknown>;
  /** The signal the call was given, if any. */
  signal: AbortSignal | undefined;
}

/** The fields every {@link ScriptedResponse} may carry. */
type ScriptedResponseBase = Omit<LLMResponse, "toolCalls" | "finishReason" | "content"> & {
  /** The calls the model makes; passed to the loop as written. @default [] */
  toolCalls?: ProviderToolCall[] | undefined;
  /** Why the model stopped. @default "tool_calls" when there are calls, else "stop" */
  finishReason?: LLMResponse["finishReason"] | undefined;
};

/**
 * A scripted response: an {@link LLMResponse} whose `toolCalls` (default `[]`) and `finishReason`
 * (default `"tool_calls"` when there are calls, else `"stop"`) may be left out. Deliberately loose
 * (`toolCalls` may hold anything) so tests can feed the loop malformed provider output.
 *
 * With `textDeltas`, the text is streamed: `chatStream` yields each piece as a `text-delta`
 * (`content` defaults to the pieces joined; `chat` answers with the content alone). With
 * `streamParts`, `chatStream` yields those parts as written (reasoning, tool input, text), and
 * `content` defaults to their text pieces joined.
 */
export type ScriptedResponse =
  | (ScriptedResponseBase & {
      /** The assistant's text. */
      content: string;
      /** The text as `chatStream` streams it, piece by piece. @default the content as one piece */
      textDeltas?: string[] | undefined;
      /** Every part `chatStream` yields before the response, in order (instead of `textDeltas`). */
      streamParts?: LLMStreamDelta[] | undefined;
    })
  | (ScriptedResponseBase & {
      /** The assistant's text. @default the `textDeltas` joined */
      content?: string | undefined;
      /** The text as `chatStream` streams it, piece by piece. */
      textDeltas: string[];
      /** Not with `textDeltas`. */
      streamParts?: undefined;
    })
  | (ScriptedResponseBase & {
      /** The assistant's text. @default the `text-delta` parts' pieces joined */
      content?: string | undefined;
      /** Not with `streamParts`. */
      textDeltas?: undefined;
      /** Every part `chatStream` yields before the response, in order: `text-delta`, `reasoning-delta`, `tool-input-*`. */
      streamParts: LLMStreamDelta[];
    });

/** A function step: computes the response from the request (and may wait on `call.signal`). */
export type ScriptedResponder = (call: ScriptedCall) => ScriptedResponse | Promise<ScriptedResponse>;

/** One step of the script: a response, an error to reject with, or a function computing the response. */
export type ScriptStep = ScriptedResponse | Error | ScriptedResponder;

/** A step's answer: the response the loop gets, and the parts `chatStream` yields before it. */
interface PlayedStep {
  response: LLMResponse;
  parts: readonly unknown[];
}

function complete(scripted: ScriptedResponse): PlayedStep {
  // Only fill in what is missing: a malformed step must reach the loop as it is.
  if (scripted === null || typeof scripted !== "object") return { response: scripted as LLMResponse, parts: [] };
  const { textDeltas, streamParts, ...response } = scripted;
  const toolCalls = response.toolCalls ?? [];
  const parts: unknown[] | undefined = Array.isArray(streamParts)
    ? streamParts
    : Array.isArray(textDeltas)
      ? textDeltas.map((delta) => ({ type: "text-delta", delta }))
      : undefined;
  const texts = parts?.flatMap((part) => (isTextDelta(part) ? [part.delta] : []));
  const content = response.content ?? texts?.join("");
  const completed = {
    ...response,
    ...(content === undefined ? {} : { content }),
    toolCalls,
    finishReason: response.finishReason ?? (Array.isArray(toolCalls) && toolCalls.length > 0 ? "tool_calls" : "stop"),
  } as LLMResponse;
  const oneDelta = typeof content === "string" && content !== "" ? [{ type: "text-delta", delta: content }] : [];
  return { response: completed, parts: parts ?? oneDelta };
}

function isTextDelta(part: unknown): part is { delta: string } {
  return typeof part === "object" && part !== null && (part as { type?: unknown }).type === "text-delta";
}

/** Options of {@link ScriptedProvider}. */
export interface ScriptedProviderOptions {
  /** What `getDefaultModel()` returns. @default "scripted-model" */
  defaultModel?: string;
  /**
   * Whether the provider has `chatStream` (so a loop with a listener streams its text). A step
   * without `textDeltas` or `streamParts` is then streamed as one piece.
   * @default true when a response step of the script has `textDeltas` or `streamParts`, else false
   */
  stream?: boolean;
}

/** `LLMProvider.chatStream`'s signature. */
type ChatStream = NonNullable<LLMProvider["chatStream"]>;

/**
 * An `LLMProvider` that plays a script: each `chat` call takes the next step. It records every
 * call and honours the abort signal, so you can test your tools and loops without a model.
 *
 * @example
 * ```ts
 * const provider = new ScriptedProvider([
 *   toolCallResponse({ name: "get_weather", arguments: { city: "Paris" } }),
 *   textResponse("It is sunny in Paris."),
 * ]);
 * const result = await runToolLoop({ provider, tools: registry, maxIterations: 5 }, messages);
 * provider.assertDone();
 * ```
 */
export class ScriptedProvider implements LLMProvider {
  /** Every call received, in order (`chat` and `chatStream` calls alike). */
  readonly calls: ScriptedCall[] = [];
  /**
   * Plays the next step streamed: its `streamParts`, or a `text-delta` per piece of its
   * `textDeltas` (without either, its content as one piece), then the `response` part. Present only when streaming is on (see
   * {@link ScriptedProviderOptions.stream}); an Error step rejects, an aborted signal ends it.
   */
  readonly chatStream?: ChatStream;
  readonly #steps: ScriptStep[];
  readonly #defaultModel: string;

  constructor(steps: ScriptStep[], options: ScriptedProviderOptions = {}) {
    if (!Array.isArray(steps)) throw optionError("ScriptedProvider", "steps", "an array of steps", steps);
    this.#steps = [...steps];
    this.#defaultModel = options.defaultModel ?? "scripted-model";
    const { stream } = options;
    if (stream !== undefined && typeof stream !== "boolean") {
      throw optionError("ScriptedProvider", "stream", "a boolean", stream);
    }
    const scriptsDeltas = steps.some(
      (step) => typeof step === "object" && step !== null && ("textDeltas" in step || "streamParts" in step),
    );
    if (stream ?? scriptsDeltas) this.chatStream = (...args) => this.#streamed(...args);
  }

  /** Steps not played yet (never negative; see {@link assertDone} for calls beyond the script). */
  get remaining(): number {
    return Math.max(0, this.#steps.length - this.calls.length);
  }

  getDefaultModel(): string {
    return this.#defaultModel;
  }

  async chat(
    messages: Message[],
    tools: ToolDefinition[] | undefined,
    model: string,
    options: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<LLMResponse> {
    return (await this.#play(messages, tools, model, options, signal)).response;
  }

  async *#streamed(
    messages: Message[],
    tools: ToolDefinition[] | undefined,
    model: string,
    options: Record<string, unknown>,
    signal?: AbortSignal,
  ): AsyncGenerator<LLMStreamPart, void> {
    const { response, parts } = await this.#play(messages, tools, model, options, signal);
    for (const part of parts) {
      signal?.throwIfAborted();
      // Deliberately loose, like the rest of a script: a part reaches the loop as written.
      yield part as LLMStreamPart;
    }
    signal?.throwIfAborted();
    yield { type: "response", response };
  }

  async #play(
    messages: Message[],
    tools: ToolDefinition[] | undefined,
    model: string,
    options: Record<string, unknown>,
    signal: AbortSignal | undefined,
  ): Promise<PlayedStep> {
    const call: ScriptedCall = {
      messages: structuredClone(messages),
      tools,
      model,
      options,
      signal,
    };
    const index = this.calls.length;
    this.calls.push(call);
    signal?.throwIfAborted();
    const step = this.#steps[index];
    if (step === undefined) {
      throw new Error(
        `ScriptedProvider: the script has ${this.#steps.length} steps but chat() was called ${index + 1} times`,
      );
    }
    if (step instanceof Error) throw step;
    if (typeof step === "function") return complete(await step(call));
    return complete(structuredClone(step));
  }

  /** Throws when the script was not used up (fewer `chat` calls than steps), or was overrun (more). */
  assertDone(): void {
    if (this.calls.length > this.#steps.length) {
      throw new Error(
        `ScriptedProvider: chat() was called ${this.calls.length} times but the script has only ${this.#steps.length} steps`,
      );
    }
    if (this.remaining > 0) {
      throw new Error(
        `ScriptedProvider: ${this.remaining} of ${this.#steps.length} scripted steps were not used (chat() was called ${this.calls.length} times)`,
      );
    }
  }
}

/** A tool call for a script; `id` defaults to `call_<n>` numbered across the process. */
export interface ScriptedToolCall {
  /** The tool to call. */
  name: string;
  /** The arguments: an object, or JSON text (possibly malformed, to test what the model is told). @default {} */
  arguments?: Record<string, unknown> | string;
  /** The call id. @default `call_<n>`, numbered across the process */
  id?: string;
}

let nextCallId = 1;

/** A response asking for one or more tool calls (optionally with text). */
export function toolCallResponse(calls: ScriptedToolCall | ScriptedToolCall[], content = ""): LLMResponse {
  const list = Array.isArray(calls) ? calls : [calls];
  const toolCalls: ProviderToolCall[] = list.map((call) => ({
    id: call.id ?? `call_${nextCallId++}`,
    type: "function",
    name: call.name,
    arguments: call.arguments ?? {},
  }));
  return { content, toolCalls, finishReason: "tool_calls" };
}

/** A final text answer (no tool calls). */
export function textResponse(content: string): LLMResponse {
  return { content, toolCalls: [], finishReason: "stop" };
}
