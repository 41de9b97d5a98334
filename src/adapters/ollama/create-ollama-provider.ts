import { isInvalidProviderResponseError } from "../../errors.js";
import { toOllamaTools } from "../../formats/ollama.js";
import { raceAbort, subscribeAbort } from "../../internal/abort.js";
import { isPlainObject } from "../../internal/describe.js";
import { checkString } from "../../internal/options.js";
import type {
  LLMProvider,
  LLMResponse,
  LLMStreamDelta,
  Message,
  OutputRequest,
  ToolDefinition,
} from "../../provider.js";
import { checkedClient } from "../shared/factory-options.js";
import { outputRequest, portableLLMOptions } from "../shared/request-options.js";
import { convertOncePerArray, frozenTools } from "../shared/tools-cache.js";
import { fromOllamaAnswer, type OllamaChatChunk, OllamaStreamReader, PROVIDER } from "./convert-ollama-response.js";
import { type OllamaMessage, toOllamaMessages } from "./convert-to-ollama-messages.js";

/** The `/api/chat` request this adapter sends (always streamed, see {@link createOllamaProvider}). */
export interface OllamaChatRequest {
  /** The loop's model. */
  model: string;
  /** The transcript (see the adapter's description). */
  messages: OllamaMessage[];
  /** Always `true`: the `ollama` client can abort only a streamed request. */
  stream: true;
  /** The registry's tools in the Chat Completions shape, when it has any. */
  tools?: Array<{ type: string; function: { name?: string; description?: string; parameters?: object } }>;
  /** Model options: every `llmOptions` key not sent at the top level, and the entries of `llmOptions.options`. */
  options?: Record<string, unknown>;
  /**
   * `"json"` or a JSON Schema for the answer: the loop's output schema (`options.output`) on a
   * request without tools, else `llmOptions.format`.
   */
  format?: string | object;
  /** `llmOptions.keep_alive`: how long the model stays loaded. */
  keep_alive?: string | number;
  /** `llmOptions.think`: thinking on or off, or its level. */
  think?: boolean | "high" | "medium" | "low";
  /** `llmOptions.logprobs`. */
  logprobs?: boolean;
  /** `llmOptions.top_logprobs`. */
  top_logprobs?: number;
}

/** What the `ollama` client returns for `chat({ stream: true })`: chunks, and `abort()` to stop the request. */
export interface OllamaChatStream extends AsyncIterable<OllamaChatChunk> {
  /** Stops the request (the stream then ends with an `AbortError`). */
  abort(): void;
}

/** The part of the `ollama` package's client (`new Ollama()`) this adapter uses. */
export interface OllamaClientLike {
  /** Sends one `/api/chat` request and resolves with its stream once the response headers arrived. */
  chat(request: OllamaChatRequest): Promise<OllamaChatStream>;
}

/** Options of {@link createOllamaProvider}. */
export interface OllamaProviderOptions {
  /** Your client: `new Ollama({ host })` from the `ollama` package. */
  client: OllamaClientLike;
  /** What `getDefaultModel()` returns; a `model` given to `runToolLoop` wins. @default "llama3.2" */
  model?: string;
}

const DEFAULT_MODEL = "llama3.2";

const CLIENT = { option: "client", method: ["chat"], expected: "an Ollama client (new Ollama())" } as const;

// Top-level fields of Ollama's ChatRequest; every other llmOptions key is a model option.
const REQUEST_FIELDS = new Set(["format", "keep_alive", "think", "logprobs", "top_logprobs"]);

// Keys the adapter sets itself.
const OWN_FIELDS = new Set(["options", "model", "messages", "tools"]);

/** What the `ollama` client throws when a stream ends without its final (`done`) chunk. */
const CLIENT_NO_DONE_MESSAGE = "Did not receive done or success response in stream.";

const ollamaTools = convertOncePerArray((definitions) => frozenTools(toOllamaTools(definitions)));

/** What {@link buildRequest} puts together. */
interface RequestParts {
  messages: readonly Message[];
  definitions: readonly ToolDefinition[] | undefined;
  model: string;
  llmOptions: Record<string, unknown>;
  output: OutputRequest | undefined;
}

function buildRequest({ messages, definitions, model, llmOptions, output }: RequestParts): OllamaChatRequest {
  const request: Record<string, unknown> = { model, messages: toOllamaMessages(messages), stream: true };
  if (definitions !== undefined && definitions.length > 0) request.tools = ollamaTools(definitions);
  const modelOptions: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(llmOptions)) {
    if (value === undefined || OWN_FIELDS.has(key)) continue;
    if (REQUEST_FIELDS.has(key)) request[key] = value;
    else modelOptions[key] = value;
  }
  if (isPlainObject(llmOptions.options)) Object.assign(modelOptions, llmOptions.options);
  if (Object.keys(modelOptions).length > 0) request.options = modelOptions;
  // `format` constrains every token the model writes, so with tools it could never call one
  // (Ollama parses calls out of that text): the schema is asked for only when no tool is offered,
  // and the loop checks the answer either way.
  if (output !== undefined && request.tools === undefined) request.format = output.schema;
  return request as unknown as OllamaChatRequest;
}

/**
 * Waits for the stream to start. The client cannot abort a request before its response headers
 * arrive, so on abort this stops waiting at once and aborts the stream as soon as it exists.
 */
async function streamOrAbort(
  pending: Promise<OllamaChatStream>,
  signal: AbortSignal | undefined,
): Promise<OllamaChatStream> {
  try {
    return await raceAbort(pending, signal);
  } catch (error) {
    if (signal?.aborted) {
      pending.then(
        (stream) => stream.abort(),
        () => {},
      );
    }
    throw error;
  }
}

/**
 * Reads the whole stream into `read`, yielding each chunk's deltas; the loop's signal calls the
 * stream's `abort()`, and so does a consumer that stops early.
 */
async function* readStream(
  stream: OllamaChatStream,
  signal: AbortSignal | undefined,
  read: OllamaStreamReader,
): AsyncGenerator<LLMStreamDelta, void> {
  if (signal?.aborted) {
    stream.abort();
    throw signal.reason;
  }
  const unsubscribe = signal === undefined ? undefined : subscribeAbort(signal, () => stream.abort());
  let ended = false;
  try {
    for await (const chunk of stream) yield* read.add(chunk);
    ended = true;
  } catch (error) {
    ended = true;
    if (signal?.aborted) throw signal.reason;
    // An unreadable chunk: the rest of the stream is not wanted, so the request is closed.
    if (isInvalidProviderResponseError(error)) stream.abort();
    if (error instanceof Error && error.message === CLIENT_NO_DONE_MESSAGE) throw read.unfinished(error);
    throw error;
  } finally {
    unsubscribe?.();
    // The consumer stopped early: the request is not wanted any more.
    if (!ended) stream.abort();
  }
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
 * `options`, as do the entries of an `options` object; `max_tokens` becomes `num_predict` and
 * `stream` is refused, as in every adapter (see "`max_tokens` and `stream`" in `docs/adapters.md`).
 *
 * Content parts: text parts are joined into a message's `content`, base64 images go in its
 * `images` (tool answers' too); an image URL or a file throws `UnsupportedContentError` before any
 * request. The loop's output schema (`options.output`) is sent as `format` on requests that offer
 * no tools (with tools, Ollama's `format` would keep the model from calling any).
 *
 * `chatStream` reads the same stream but yields as it goes: `message.thinking` (with `think` on)
 * as reasoning, `message.content` as text, and each call Ollama sends (whole, in one chunk) as its
 * start and its arguments' JSON text, under the id `chat` gives it; it ends with the answer `chat`
 * would give. Ollama reports no cached or reasoning token counts. `providerName` is `"ollama"`.
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
  const factory = "createOllamaProvider";
  const client = checkedClient({ factory, options, ...CLIENT });
  const defaultModel = checkString(factory, "model", options.model) ?? DEFAULT_MODEL;
  let responses = 0;

  const start = (
    messages: Message[],
    definitions: ToolDefinition[] | undefined,
    model: string,
    llmOptions: Record<string, unknown>,
    signal: AbortSignal | undefined,
  ): Promise<OllamaChatStream> => {
    signal?.throwIfAborted();
    const portable = portableLLMOptions({ provider: PROVIDER, llmOptions, maxTokensField: "num_predict" });
    const output = outputRequest(PROVIDER, llmOptions);
    const request = buildRequest({ messages, definitions, model, llmOptions: portable, output });
    return streamOrAbort(client.chat(request), signal);
  };

  return {
    providerName: "ollama",

    getDefaultModel: () => defaultModel,

    async chat(messages, definitions, model, llmOptions, signal): Promise<LLMResponse> {
      const stream = await start(messages, definitions, model, llmOptions, signal);
      const read = new OllamaStreamReader(responses + 1);
      for await (const _delta of readStream(stream, signal, read)) {
        // chat gives only the whole answer
      }
      const answer = read.finish();
      responses++;
      return fromOllamaAnswer({ answer, sequence: responses });
    },

    async *chatStream(messages, definitions, model, llmOptions, signal) {
      const stream = await start(messages, definitions, model, llmOptions, signal);
      const read = new OllamaStreamReader(responses + 1);
      yield* readStream(stream, signal, read);
      const answer = read.finish();
      responses++;
      yield { type: "response", response: fromOllamaAnswer({ answer, sequence: responses }) };
    },
  };
}
