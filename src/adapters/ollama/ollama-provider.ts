import { type InvalidProviderResponseError, isInvalidProviderResponseError } from "../../errors.js";
import { toOllamaTools } from "../../formats/ollama.js";
import { describeType, isPlainObject, isRecord, showValue } from "../../internal/describe.js";
import type {
  FinishReason,
  LLMProvider,
  LLMResponse,
  Message,
  ProviderToolCall,
  ToolCall,
  ToolDefinition,
} from "../../provider.js";
import { toCallArguments } from "../shared/call-arguments.js";
import { invalidOption } from "../shared/invalid-option.js";
import { invalidResponse } from "../shared/invalid-response.js";
import { tokenCount, usageInfo } from "../shared/usage.js";

/** A tool call in an Ollama message (`id` and `function.index` are sent by newer servers only). */
export interface OllamaToolCall {
  id?: string;
  type?: string;
  function: { index?: number; name: string; arguments: Record<string, unknown> };
}

/** A message of Ollama's `/api/chat`, as this adapter sends it. */
export interface OllamaMessage {
  role: string;
  content: string;
  tool_calls?: OllamaToolCall[];
  tool_name?: string;
  tool_call_id?: string;
}

/** The `/api/chat` request this adapter sends (always streamed, see {@link createOllamaProvider}). */
export interface OllamaChatRequest {
  model: string;
  messages: OllamaMessage[];
  stream: true;
  tools?: Array<{ type: string; function: { name?: string; description?: string; parameters?: object } }>;
  options?: Record<string, unknown>;
  format?: string | object;
  keep_alive?: string | number;
  think?: boolean | "high" | "medium" | "low";
  logprobs?: boolean;
  top_logprobs?: number;
}

/** One NDJSON chunk of a streamed `/api/chat` answer (only the fields this adapter reads). */
export interface OllamaChatChunk {
  created_at?: Date | string;
  message?: {
    content?: string;
    tool_calls?: Array<{
      id?: string;
      function?: { index?: number; name?: string; arguments?: Record<string, unknown> | string };
    }>;
  };
  done?: boolean;
  done_reason?: string;
  prompt_eval_count?: number;
  eval_count?: number;
}

/** What the `ollama` client returns for `chat({ stream: true })`: chunks, and `abort()` to stop the request. */
export interface OllamaChatStream extends AsyncIterable<OllamaChatChunk> {
  abort(): void;
}

/** The part of the `ollama` package's client (`new Ollama()`) this adapter uses. */
export interface OllamaClientLike {
  chat(request: OllamaChatRequest): Promise<OllamaChatStream>;
}

/** Options of {@link createOllamaProvider}. */
export interface OllamaProviderOptions {
  /** Your client: `new Ollama({ host })` from the `ollama` package. */
  client: OllamaClientLike;
  /** What `getDefaultModel()` returns; a `model` given to `runToolLoop` wins. @default "llama3.2" */
  model?: string;
}

/** `providerMetadata` key under which the id an Ollama server gave a call is kept. */
const METADATA_KEY = "ollama";

// Top-level fields of Ollama's ChatRequest; every other llmOptions key is a model option.
const REQUEST_FIELDS = new Set(["format", "keep_alive", "think", "logprobs", "top_logprobs"]);

/** The id the server gave a call, kept in `providerMetadata.ollama.id`. */
function serverId(call: ToolCall | undefined): string | undefined {
  const metadata = call?.providerMetadata?.[METADATA_KEY];
  return isPlainObject(metadata) && typeof metadata.id === "string" ? metadata.id : undefined;
}

function toOllamaMessages(messages: readonly Message[]): OllamaMessage[] {
  const result: OllamaMessage[] = [];
  let lastCalls: readonly ToolCall[] = [];
  for (const message of messages) {
    switch (message.role) {
      case "assistant": {
        const converted: OllamaMessage = { role: "assistant", content: message.content ?? "" };
        lastCalls = message.toolCalls ?? [];
        if (lastCalls.length > 0) {
          converted.tool_calls = lastCalls.map((call, index) => {
            const id = serverId(call);
            return {
              ...(id === undefined ? {} : { id }),
              type: "function",
              function: { index, name: call.name, arguments: call.arguments ?? {} },
            };
          });
        }
        result.push(converted);
        break;
      }
      case "tool": {
        // Ollama matches answers by position and `tool_name`; a server-given id is echoed too.
        const call = lastCalls.find((candidate) => candidate.id === message.toolCallId);
        const converted: OllamaMessage = {
          role: "tool",
          content: message.content ?? "",
          tool_name: message.toolName ?? call?.name ?? "",
        };
        const id = serverId(call);
        if (id !== undefined) converted.tool_call_id = id;
        result.push(converted);
        break;
      }
      default:
        result.push({ role: message.role, content: message.content ?? "" });
    }
  }
  return result;
}

function buildRequest(
  messages: readonly Message[],
  tools: readonly ToolDefinition[] | undefined,
  model: string,
  llmOptions: Record<string, unknown>,
): OllamaChatRequest {
  const request: Record<string, unknown> = { model, messages: toOllamaMessages(messages), stream: true };
  if (tools !== undefined && tools.length > 0) request.tools = toOllamaTools(tools);
  const modelOptions: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(llmOptions)) {
    if (value === undefined) continue;
    if (REQUEST_FIELDS.has(key)) request[key] = value;
    // OpenAI's (and Go picoclaw's) name for the output cap.
    else if (key === "max_tokens") modelOptions.num_predict ??= value;
    else if (key !== "options" && key !== "model" && key !== "messages" && key !== "tools" && key !== "stream") {
      modelOptions[key] = value;
    }
  }
  if (isPlainObject(llmOptions.options)) Object.assign(modelOptions, llmOptions.options);
  if (Object.keys(modelOptions).length > 0) request.options = modelOptions;
  return request as unknown as OllamaChatRequest;
}

const PROVIDER = "Ollama";

/** What the `ollama` client throws when a stream ends without its final (`done`) chunk. */
const CLIENT_NO_DONE_MESSAGE = "Did not receive done or success response in stream.";

/** Chunks kept for the excerpt on an {@link InvalidProviderResponseError}. */
const MAX_KEPT_CHUNKS = 20;

type StreamedToolCall = { id?: unknown; function: { name: string; arguments?: unknown } };

/**
 * Gathers the chunks of one streamed answer and checks them: every chunk an object, every
 * `message` an object, every tool call named. {@link finish} checks that the stream was whole.
 */
class StreamReader {
  readonly #kept: unknown[] = [];
  #chunks = 0;
  #messages = 0;
  #done = false;
  #content = "";
  readonly #calls: StreamedToolCall[] = [];
  #last: Record<string, unknown> | undefined;
  #createdAt = "";

  add(chunk: unknown): void {
    this.#chunks++;
    if (this.#kept.length < MAX_KEPT_CHUNKS) this.#kept.push(chunk);
    if (!isRecord(chunk)) this.#fail(`a chunk of the stream is not an object (got ${describeType(chunk)})`);
    this.#last = chunk;
    if (chunk.done === true) this.#done = true;
    const { message } = chunk;
    if (message === undefined || message === null) return;
    if (!isRecord(message)) this.#fail(`a chunk's message is not an object (got ${describeType(message)})`);
    this.#messages++;
    if (typeof message.content === "string") this.#content += message.content;
    const calls = message.tool_calls;
    if (calls === undefined || calls === null) return;
    if (!Array.isArray(calls)) this.#fail(`a chunk's tool_calls is not an array (got ${describeType(calls)})`);
    for (const call of calls) {
      if (!isRecord(call)) this.#fail(`a tool call is not an object (got ${describeType(call)})`);
      const name = isRecord(call.function) ? call.function.name : undefined;
      if (typeof name !== "string" || name === "") {
        this.#fail(`a tool call has no function name (got ${showValue(name)})`);
      }
      this.#calls.push(call as StreamedToolCall);
    }
    if (calls.length > 0) this.#createdAt ||= String(chunk.created_at ?? "");
  }

  /** The error for a stream the client found unfinished (it threw `error`). */
  unfinished(error: unknown): InvalidProviderResponseError {
    return this.#error(this.#endProblem() ?? "the stream ended before its final chunk", error);
  }

  finish(): {
    content: string;
    calls: StreamedToolCall[];
    last: Record<string, unknown> | undefined;
    createdAt: string;
  } {
    const problem =
      this.#endProblem() ?? (this.#messages === 0 ? "no chunk of the stream carries a message" : undefined);
    if (problem !== undefined) throw this.#error(problem);
    return { content: this.#content, calls: this.#calls, last: this.#last, createdAt: this.#createdAt };
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
    return invalidResponse(PROVIDER, problem, this.#kept, cause);
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

function finishReason(doneReason: string | undefined, hasCalls: boolean): FinishReason {
  if (hasCalls) return "tool_calls";
  if (doneReason === "length") return "length";
  return "stop";
}

/**
 * An {@link LLMProvider} for Ollama's native `/api/chat`, through your `ollama` client.
 *
 * The request is always streamed (`stream: true`), because the `ollama` client can only abort a
 * streamed request: the chunks are gathered into one response, and the loop's signal calls the
 * stream's `abort()`. Ollama's `done_reason` stays `"stop"` when the model calls tools; the
 * adapter reports `"tool_calls"` then. Ollama gives no call ids (newer servers do): the adapter
 * makes stable ones from the response (`ollama_<hash>_<index>`), and answers carry `tool_name`.
 *
 * `llmOptions`: `format`, `keep_alive`, `think`, `logprobs` and `top_logprobs` go to the request's
 * top level; every other key (`temperature`, `num_ctx`, `seed`, `stop` …) goes into Ollama's
 * `options`, as do the entries of an `options` object; `max_tokens` becomes `num_predict`.
 *
 * @example
 * ```ts
 * import { Ollama } from "ollama";
 * import { createOllamaProvider } from "toolloop/ollama";
 *
 * const provider = createOllamaProvider({ client: new Ollama(), model: "qwen3" });
 * const result = await runToolLoop({ provider, tools: registry, maxIterations: 10 }, messages);
 * ```
 */
export function createOllamaProvider(options: OllamaProviderOptions): LLMProvider {
  const factory = "createOllamaProvider()";
  if (!isPlainObject(options)) {
    throw new TypeError(`createOllamaProvider() expects an options object, got ${describeType(options)}`);
  }
  const { client, model: defaultModel = "llama3.2" } = options;
  if (typeof client !== "object" || client === null || typeof client.chat !== "function") {
    throw invalidOption(factory, "client", "an Ollama client (new Ollama())", describeType(client));
  }
  if (typeof defaultModel !== "string") throw invalidOption(factory, "model", "a string", describeType(defaultModel));
  let responses = 0;

  return {
    getDefaultModel: () => defaultModel,

    async chat(messages, tools, model, llmOptions, signal) {
      signal?.throwIfAborted();
      const request = buildRequest(messages, tools, model, isPlainObject(llmOptions) ? llmOptions : {});
      const pending = client.chat(request);
      const stream = await streamOrAbort(pending, signal);
      const onAbort = () => stream.abort();
      signal?.addEventListener("abort", onAbort, { once: true });

      const read = new StreamReader();
      try {
        for await (const chunk of stream) read.add(chunk);
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        // An unreadable chunk: the rest of the stream is not wanted, so the request is closed.
        if (isInvalidProviderResponseError(error)) stream.abort();
        if (error instanceof Error && error.message === CLIENT_NO_DONE_MESSAGE) throw read.unfinished(error);
        throw error;
      } finally {
        signal?.removeEventListener("abort", onAbort);
      }
      const { content, calls, last, createdAt } = read.finish();

      responses++;
      const seed = createdAt === "" ? `${responses}` : createdAt;
      const toolCalls: ProviderToolCall[] = calls.map((call, index) => {
        const { name } = call.function;
        const args = call.function.arguments;
        const given = typeof call.id === "string" && call.id !== "" ? call.id : undefined;
        const converted: ProviderToolCall = {
          id: given ?? `ollama_${hash(`${seed}|${index}|${name}`)}_${index}`,
          type: "function",
          name,
          // An object normally; text (a model that wrote broken JSON) or any other value reaches
          // the loop, which tells the model.
          arguments: toCallArguments(args),
        };
        if (given !== undefined) converted.providerMetadata = { [METADATA_KEY]: { id: given } };
        return converted;
      });

      const response: LLMResponse = {
        content,
        toolCalls,
        finishReason: finishReason(
          typeof last?.done_reason === "string" ? last.done_reason : undefined,
          toolCalls.length > 0,
        ),
      };
      const promptTokens = tokenCount(last?.prompt_eval_count);
      const completionTokens = tokenCount(last?.eval_count);
      if (promptTokens !== undefined || completionTokens !== undefined) {
        response.usage = usageInfo(promptTokens, completionTokens);
      }
      return response;
    },
  };
}

/**
 * Waits for the stream to start. The client cannot abort a request before its response headers
 * arrive, so on abort this stops waiting at once and aborts the stream as soon as it exists.
 */
function streamOrAbort(pending: Promise<OllamaChatStream>, signal: AbortSignal | undefined): Promise<OllamaChatStream> {
  if (signal === undefined) return pending;
  return new Promise<OllamaChatStream>((resolve, reject) => {
    const onAbort = () => {
      pending.then(
        (stream) => stream.abort(),
        () => {},
      );
      reject(signal.reason);
    };
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener("abort", onAbort, { once: true });
    pending.then(
      (stream) => {
        signal.removeEventListener("abort", onAbort);
        resolve(stream);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
