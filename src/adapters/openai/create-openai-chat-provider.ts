import { type OpenAIToolFormatOptions, toOpenAIChatTools } from "../../formats/openai.js";
import { isRecord } from "../../internal/describe.js";
import { optionError } from "../../internal/options.js";
import type {
  LLMProvider,
  LLMResponse,
  LLMStreamPart,
  Message,
  OutputRequest,
  ToolDefinition,
} from "../../provider.js";
import { type ClientSpec, checkedClient, checkModel, checkProviderName } from "../shared/factory-options.js";
import { outputRequest, portableLLMOptions, signalOption } from "../shared/request-options.js";
import { convertOncePerArray, frozenTools } from "../shared/tools-cache.js";
import { fromOpenAIChatCompletion, PROVIDER } from "./convert-openai-chat-response.js";
import { fromOpenAIChatStream } from "./convert-openai-chat-stream.js";
import { type OpenAIChatMessage, toOpenAIChatMessages } from "./convert-to-openai-chat-messages.js";
import { openAIChatOutputFields, streamWithoutOutputNulls, withoutOutputNulls } from "./openai-output.js";

/*
 * The parts of the `openai` client the adapters use are typed structurally, so that `toolloop`
 * never imports `openai` (an optional peer dependency). `new OpenAI()` from openai 5, 6 and 7 fits;
 * so does any object with the same methods (a proxy, a test double, a compatible client). The
 * request and response types are deliberately loose: the adapters check every field they read at
 * run time, so an OpenAI-compatible server that omits or adds fields does not break them.
 */

/** Per-request options the adapters pass as the second argument of `create`. */
export interface OpenAIRequestOptions {
  /** The loop's signal: aborting it cancels the HTTP request. */
  signal?: AbortSignal | undefined;
}

/** A Chat Completions response, as far as the adapter relies on it (`ChatCompletion` in the SDK). */
export interface OpenAIChatCompletionLike {
  /** The choices; the adapter reads the first one's `message` and `finish_reason`. */
  choices: readonly unknown[];
  /** Token counts (`prompt_tokens`, `completion_tokens`, `total_tokens`), when the server reports them. */
  usage?: unknown;
}

/** What {@link createOpenAIChatProvider} needs from `new OpenAI()`: `client.chat.completions.create`. */
export interface OpenAIChatClient {
  /** The Chat Completions resource. */
  chat: {
    /** Its completions. */
    completions: {
      /**
       * Sends one request (`POST /chat/completions`) and resolves with the whole completion, or,
       * when the body has `stream: true` (`chatStream`), with the stream of its chunks.
       */
      create(
        body: { model: string; messages: readonly unknown[] },
        options?: OpenAIRequestOptions,
      ): PromiseLike<OpenAIChatCompletionLike | AsyncIterable<unknown>>;
    };
  };
}

/** The model both OpenAI adapters use when the factory is given none. */
export const DEFAULT_OPENAI_MODEL = "gpt-4.1-mini";

/** Options shared by both OpenAI factories. */
export interface OpenAIProviderOptionsBase {
  /**
   * Model used when the loop is not given one (`getDefaultModel()`); a `model` passed to
   * `runToolLoop` wins on the wire.
   * @default "gpt-4.1-mini"
   */
  model?: string;
  /**
   * Strict function calling: every tool schema is made strict-compatible (all properties
   * required, optional ones nullable, `additionalProperties: false`) and sent with
   * `strict: true`; the nulls the model then sends for optional fields are removed before the
   * arguments reach the tool, so validation sees them absent.
   * @default false
   */
  strict?: boolean;
  /**
   * The provider's name as the OpenTelemetry GenAI conventions spell it (`gen_ai.provider.name`),
   * reported as {@link LLMProvider.providerName} to middleware such as tracing. The client's
   * `baseURL` does not change it: name the server you point the client at yourself (`"deepseek"`,
   * `"groq"`, `"x_ai"`, `"azure.ai.openai"` …).
   * @default "openai"
   */
  providerName?: string;
}

/** Options of {@link createOpenAIChatProvider}. */
export interface OpenAIChatProviderOptions extends OpenAIProviderOptionsBase {
  /**
   * Your client, e.g. `new OpenAI()` — or `new OpenAI({ baseURL })` for any OpenAI-compatible
   * server (vLLM, llama.cpp server, LM Studio, Ollama's `/v1`). Its retries, timeout and headers apply.
   */
  client: OpenAIChatClient;
}

/** @internal The tools of an OpenAI request, and in strict mode the schemas to strip the nulls against. */
export interface OpenAITools<T> {
  tools: readonly T[];
  strictSchemas: Map<string, Record<string, unknown>> | undefined;
}

/**
 * @internal Both OpenAI APIs' tool conversion, plain and strict, each run once per definitions
 * array (see {@link convertOncePerArray}): with 1,000 tools a strict step would otherwise spend
 * milliseconds converting schemas.
 */
export function openAIToolsConversion<T extends object>(
  toTools: (definitions: readonly ToolDefinition[], options: OpenAIToolFormatOptions) => T[],
): (definitions: readonly ToolDefinition[], strict: boolean) => OpenAITools<T> {
  const plain = convertOncePerArray((definitions) => ({
    tools: frozenTools(toTools(definitions, { strict: false })),
    strictSchemas: undefined,
  }));
  const strict = convertOncePerArray((definitions) => {
    const strictSchemas = new Map<string, Record<string, unknown>>();
    for (const tool of definitions) strictSchemas.set(tool.function.name, tool.function.parameters);
    return { tools: frozenTools(toTools(definitions, { strict: true })), strictSchemas };
  });
  return (definitions, isStrict) => (isStrict ? strict : plain)(definitions);
}

/** @internal What {@link OpenAIApi.readStream} reads. */
export interface OpenAIStreamRead {
  /** What the client resolved with. */
  stream: unknown;
  signal: AbortSignal | undefined;
  strictSchemas: Map<string, Record<string, unknown>> | undefined;
}

/** @internal One request of {@link OpenAIApi.send}. */
export interface OpenAIRequest<C> {
  client: C;
  body: Record<string, unknown>;
  options: OpenAIRequestOptions | undefined;
}

/** @internal What tells the two OpenAI APIs apart; {@link openAIProvider} does the rest. */
export interface OpenAIApi<C, T> {
  /** The factory's name, for its `TypeError`s. */
  factory: string;
  /** The API's name, for the adapter's errors. */
  provider: string;
  /** The client method the adapter calls. */
  client: Omit<ClientSpec, "option">;
  /** The API's own field for the output cap. */
  maxTokensField: string;
  /** The tools, converted once per definitions array. */
  tools(definitions: readonly ToolDefinition[], strict: boolean): OpenAITools<T>;
  /** The body fields that ask for the final answer's schema (`options.output`), given the body so far. */
  outputFields(output: OutputRequest, body: Record<string, unknown>): Record<string, unknown>;
  /** Sets the body's field that carries the transcript. */
  addTranscript(body: Record<string, unknown>, messages: readonly Message[]): void;
  /** Sends the request through the client. */
  send(request: OpenAIRequest<C>): PromiseLike<unknown>;
  /** Reads the response. */
  read(response: unknown, strictSchemas: Map<string, Record<string, unknown>> | undefined): LLMResponse;
  /** The body fields that ask for a streamed answer (`stream: true` …), given the body so far. */
  streamFields(body: Record<string, unknown>): Record<string, unknown>;
  /** Reads the streamed answer. */
  readStream(read: OpenAIStreamRead): AsyncIterable<LLMStreamPart>;
}

/** @internal An {@link LLMProvider} over one OpenAI API: options checked, body built, response read. */
export function openAIProvider<C, T>(
  options: OpenAIProviderOptionsBase & { client: C },
  api: OpenAIApi<C, T>,
): LLMProvider {
  const { factory } = api;
  const client = checkedClient({ factory, options, option: "client", ...api.client });
  const defaultModel = checkModel(factory, options.model, DEFAULT_OPENAI_MODEL);
  const { strict = false } = options;
  if (typeof strict !== "boolean") throw optionError(factory, "strict", "a boolean", strict);
  const providerName = checkProviderName(factory, options.providerName, "openai");

  const request = (
    messages: Message[],
    definitions: ToolDefinition[] | undefined,
    model: string,
    llmOptions: Record<string, unknown>,
  ) => {
    // The options' copy is the body (keys in the order of `{ ...options, model, <transcript> }`).
    const body = portableLLMOptions({ provider: api.provider, llmOptions, maxTokensField: api.maxTokensField });
    body.model = model;
    api.addTranscript(body, messages);
    const tools = definitions !== undefined && definitions.length > 0 ? api.tools(definitions, strict) : undefined;
    if (tools !== undefined) body.tools = tools.tools;
    const output = outputRequest(api.provider, llmOptions);
    if (output !== undefined) Object.assign(body, api.outputFields(output, body));
    return { body, strictSchemas: tools?.strictSchemas, outputSchema: output?.schema };
  };

  return {
    providerName,
    async chat(messages, definitions, model, llmOptions, signal) {
      const { body, strictSchemas, outputSchema } = request(messages, definitions, model, llmOptions);
      const response = api.read(await api.send({ client, body, options: signalOption(signal) }), strictSchemas);
      return outputSchema === undefined ? response : withoutOutputNulls(response, outputSchema);
    },
    async *chatStream(messages, definitions, model, llmOptions, signal) {
      const { body, strictSchemas, outputSchema } = request(messages, definitions, model, llmOptions);
      const streamed = { ...body, ...api.streamFields(body) };
      const stream = await api.send({ client, body: streamed, options: signalOption(signal) });
      const parts = api.readStream({ stream, signal, strictSchemas });
      yield* outputSchema === undefined ? parts : streamWithoutOutputNulls(parts, outputSchema);
    },
    getDefaultModel() {
      return defaultModel;
    },
  };
}

const chatTools = openAIToolsConversion(toOpenAIChatTools);

/**
 * An {@link LLMProvider} over OpenAI's Chat Completions API, using your own client
 * (`client.chat.completions.create(body, { signal })`). `llmOptions` go into the request body
 * (`temperature`, `max_tokens`, `tool_choice`, `parallel_tool_calls` …; `max_tokens` and `stream`
 * as in every adapter, see "`max_tokens` and `stream`" in `docs/adapters.md`); the loop's `model`
 * is the one sent; API errors propagate unchanged (the loop's `ToolLoopError.cause` is the
 * client's error).
 *
 * Works with every OpenAI-compatible server through the client's `baseURL`.
 *
 * `chatStream` sends the same request with `stream: true` and
 * `stream_options: { include_usage: true }`, yields the text as it arrives and ends with the
 * answer `chat` would give (see {@link fromOpenAIChatStream}).
 *
 * @example
 * ```ts
 * import OpenAI from "openai";
 * import { runToolLoop } from "toolloop";
 * import { createOpenAIChatProvider } from "toolloop/openai";
 *
 * const provider = createOpenAIChatProvider({ client: new OpenAI(), model: "gpt-4.1-mini" });
 * const result = await runToolLoop({ provider, tools: registry, maxIterations: 10 }, [
 *   { role: "user", content: "What's the weather in Paris?" },
 * ]);
 * ```
 */
export function createOpenAIChatProvider(options: OpenAIChatProviderOptions): LLMProvider {
  return openAIProvider(options, {
    factory: "createOpenAIChatProvider",
    provider: PROVIDER,
    client: {
      method: ["chat", "completions", "create"],
      expected: "an OpenAI client (client.chat.completions.create)",
    },
    maxTokensField: "max_tokens",
    tools: chatTools,
    outputFields: openAIChatOutputFields,
    addTranscript: (body, messages) => {
      body.messages = toOpenAIChatMessages(messages);
    },
    send: ({ client, body, options: request }) =>
      client.chat.completions.create(body as { model: string; messages: OpenAIChatMessage[] }, request),
    read: fromOpenAIChatCompletion,
    streamFields: (body) => ({
      stream: true,
      // Usage comes in a last chunk only when asked for; other stream options stay the caller's.
      stream_options: { ...(isRecord(body.stream_options) ? body.stream_options : {}), include_usage: true },
    }),
    readStream: fromOpenAIChatStream,
  });
}
