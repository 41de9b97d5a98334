import type { InvalidProviderResponseError } from "../../errors.js";
import { describeType, isRecord, showValue } from "../../internal/describe.js";
import type { LLMResponse, LLMStreamDelta, ProviderToolCall } from "../../provider.js";
import { callArgumentsText, toCallArguments } from "../shared/call-arguments.js";
import { mapFinishReason } from "../shared/finish-reason.js";
import { invalidResponse } from "../shared/invalid-response.js";
import { toLLMResponse } from "../shared/llm-response.js";
import { TextParts } from "../shared/stream.js";
import { usageOf } from "../shared/usage.js";
import { METADATA_KEY } from "./convert-to-ollama-messages.js";

/** One NDJSON chunk of a streamed `/api/chat` answer (only the fields this adapter reads). */
export interface OllamaChatChunk {
  /** When the server made the chunk (a `Date` from the `ollama` client); seeds the ids made for calls. */
  created_at?: Date | string;
  /** The chunk's part of the answer. */
  message?: {
    /** Text, to be joined with the other chunks'. */
    content?: string;
    /** The model's thinking (with `think` on): streamed as reasoning, not part of the answer. */
    thinking?: string;
    /** Calls (Ollama sends them whole, in one chunk). */
    tool_calls?: Array<{
      /** The call's id (newer servers only). */
      id?: string;
      /** The function called. */
      function?: {
        /** The call's position in the turn (newer servers only). */
        index?: number;
        /** The tool's name. */
        name?: string;
        /** The arguments: an object, or text from a model that wrote broken JSON. */
        arguments?: Record<string, unknown> | string;
      };
    }>;
  };
  /** `true` on the final chunk. */
  done?: boolean;
  /** Why the model stopped (final chunk): `"stop"`, `"length"`, `"load"` …. */
  done_reason?: string;
  /** Input tokens (final chunk). */
  prompt_eval_count?: number;
  /** Output tokens (final chunk). */
  eval_count?: number;
}

/** @internal The API's name in error messages. */
export const PROVIDER = "Ollama";

/** Chunks kept for the excerpt on an {@link InvalidProviderResponseError}. */
const MAX_KEPT_CHUNKS = 20;

const USAGE_FIELDS = { prompt: "prompt_eval_count", completion: "eval_count" } as const;

type StreamedToolCall = { id?: unknown; function: { name: string; arguments?: unknown } };

/** What one streamed answer gathered: its text, its calls, and its last (final) chunk. */
export interface OllamaStreamedAnswer {
  content: string;
  calls: StreamedToolCall[];
  last: Record<string, unknown> | undefined;
  /** `created_at` of the first chunk with calls: seeds the ids made for them. */
  createdAt: string;
}

/**
 * Gathers the chunks of one streamed answer and checks them: every chunk an object, every
 * `message` an object, every tool call named. {@link finish} checks that the stream was whole.
 */
export class OllamaStreamReader {
  readonly #kept: unknown[] = [];
  readonly #sequence: number;
  #chunks = 0;
  #messages = 0;
  #done = false;
  readonly #content = new TextParts();
  readonly #calls: StreamedToolCall[] = [];
  #last: Record<string, unknown> | undefined;
  #createdAt: string | undefined;

  /** @param sequence seeds the ids of the calls of an answer without `created_at`, as for {@link fromOllamaAnswer} */
  constructor(sequence = 1) {
    this.#sequence = sequence;
  }

  /**
   * Reads a chunk; returns what it adds to the answer as stream parts: its thinking, its text, and
   * each call's start and arguments (JSON text) under the id {@link fromOllamaAnswer} gives it.
   * @throws InvalidProviderResponseError for a chunk it cannot read
   */
  add(chunk: unknown): LLMStreamDelta[] {
    this.#chunks++;
    if (this.#kept.length < MAX_KEPT_CHUNKS) this.#kept.push(chunk);
    if (!isRecord(chunk)) this.#fail(`a chunk of the stream is not an object (got ${describeType(chunk)})`);
    this.#last = chunk;
    if (chunk.done === true) this.#done = true;
    const { message } = chunk;
    if (message === undefined || message === null) return [];
    if (!isRecord(message)) this.#fail(`a chunk's message is not an object (got ${describeType(message)})`);
    this.#messages++;
    const deltas: LLMStreamDelta[] = [];
    if (typeof message.thinking === "string" && message.thinking !== "") {
      deltas.push({ type: "reasoning-delta", delta: message.thinking });
    }
    if (this.#content.add(message.content) && message.content !== "") {
      deltas.push({ type: "text-delta", delta: message.content });
    }
    const calls = message.tool_calls;
    if (calls === undefined || calls === null) return deltas;
    if (!Array.isArray(calls)) this.#fail(`a chunk's tool_calls is not an array (got ${describeType(calls)})`);
    // The first chunk with calls seeds the ids of all of them.
    if (calls.length > 0) this.#createdAt ??= String(chunk.created_at ?? "");
    for (const call of calls) {
      if (!isRecord(call)) this.#fail(`a tool call is not an object (got ${describeType(call)})`);
      const name = isRecord(call.function) ? call.function.name : undefined;
      if (typeof name !== "string" || name === "") {
        this.#fail(`a tool call has no function name (got ${showValue(name)})`);
      }
      const streamed = call as StreamedToolCall;
      const seed = seedOf(this.#createdAt ?? "", this.#sequence);
      const toolCallId = ollamaCallId({ call: streamed, seed, index: this.#calls.length });
      this.#calls.push(streamed);
      deltas.push({ type: "tool-input-start", toolCallId, toolName: name });
      deltas.push({ type: "tool-input-delta", toolCallId, delta: callArgumentsText(streamed.function.arguments) });
    }
    return deltas;
  }

  /** The error for a stream the client found unfinished (it threw `error`). */
  unfinished(error: unknown): InvalidProviderResponseError {
    return this.#error(this.#endProblem() ?? "the stream ended before its final chunk", error);
  }

  /** @throws InvalidProviderResponseError for a stream that was not whole or carried no message */
  finish(): OllamaStreamedAnswer {
    const problem =
      this.#endProblem() ?? (this.#messages === 0 ? "no chunk of the stream carries a message" : undefined);
    if (problem !== undefined) throw this.#error(problem);
    const content = this.#content.text();
    return { content, calls: this.#calls, last: this.#last, createdAt: this.#createdAt ?? "" };
  }

  #endProblem(): string | undefined {
    if (this.#chunks === 0) return "the stream ended without any chunk";
    if (!this.#done) return "the stream ended before its final chunk (no chunk with done: true)";
    return undefined;
  }

  #fail(problem: string): never {
    throw this.#error(problem);
  }

  #error(problem: string, cause?: unknown): InvalidProviderResponseError {
    return invalidResponse({ provider: PROVIDER, problem, body: this.#kept, cause });
  }
}

/** A short, stable hash (FNV-1a, base 36) for generated call ids. */
function hash(text: string): string {
  let value = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    value ^= text.charCodeAt(index);
    value = Math.imul(value, 0x01000193) >>> 0;
  }
  return value.toString(36);
}

/** The seed of the ids made for an answer's calls: its first call chunk's `created_at`, else the sequence. */
function seedOf(createdAt: string, sequence: number): string {
  return createdAt === "" ? `${sequence}` : createdAt;
}

/** What {@link ollamaCallId} reads. */
interface CallIdSeed {
  call: StreamedToolCall;
  /** See {@link seedOf}. */
  seed: string;
  /** The call's position in the answer. */
  index: number;
}

/** A call's id: the server's, or `ollama_<hash of the seed, index and name>_<index>`. */
function ollamaCallId({ call, seed, index }: CallIdSeed): string {
  const given = typeof call.id === "string" && call.id !== "" ? call.id : undefined;
  return given ?? `ollama_${hash(`${seed}|${index}|${call.function.name}`)}_${index}`;
}

/** What {@link fromOllamaAnswer} reads. */
export interface OllamaAnswerRequest {
  /** The gathered stream. */
  answer: OllamaStreamedAnswer;
  /** Seeds the ids of the calls of an answer without `created_at`. */
  sequence: number;
}

/**
 * Converts a gathered answer: its text; its calls, with the server's ids (kept in
 * `providerMetadata.ollama.id`) or stable ones (`ollama_<hash of created_at, index and name>_<index>`);
 * `finishReason` (`"tool_calls"` whenever there are calls — Ollama says `"stop"` —, `"length"`,
 * else `"stop"`) and `usage` from the final chunk's counts.
 */
export function fromOllamaAnswer({ answer, sequence }: OllamaAnswerRequest): LLMResponse {
  const { content, calls, last, createdAt } = answer;
  const seed = seedOf(createdAt, sequence);
  const toolCalls = calls.map((call, index): ProviderToolCall => {
    const { name } = call.function;
    const given = typeof call.id === "string" && call.id !== "" ? call.id : undefined;
    const converted: ProviderToolCall = {
      id: ollamaCallId({ call, seed, index }),
      type: "function",
      name,
      // An object normally; text (a model that wrote broken JSON) or any other value reaches
      // the loop, which tells the model.
      arguments: toCallArguments(call.function.arguments),
    };
    if (given !== undefined) converted.providerMetadata = { [METADATA_KEY]: { id: given } };
    return converted;
  });
  // Ollama's `done_reason`s other than "length" ("stop", "load", "unload") are stops.
  const reason = last?.done_reason === "length" ? "length" : "stop";
  return toLLMResponse({
    content,
    toolCalls,
    finishReason: mapFinishReason({ reason, hasCalls: toolCalls.length > 0 }),
    usage: usageOf(last, USAGE_FIELDS),
  });
}
