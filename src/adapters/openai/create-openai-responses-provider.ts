import { toOpenAIResponsesTools } from "../../formats/openai.js";
import type { LLMProvider } from "../../provider.js";
import { fromOpenAIResponse, PROVIDER } from "./convert-openai-responses-response.js";
import { fromOpenAIResponsesStream } from "./convert-openai-responses-stream.js";
import { toOpenAIResponsesInput } from "./convert-to-openai-responses-messages.js";
import {
  type OpenAIProviderOptionsBase,
  type OpenAIRequestOptions,
  openAIProvider,
  openAIToolsConversion,
} from "./create-openai-chat-provider.js";
import { openAIResponsesOutputFields } from "./openai-output.js";

/** A Responses API response, as far as the adapter relies on it (`Response` in the SDK). */
export interface OpenAIResponseLike {
  /** The output items: `message` items with text, `function_call` items with calls. */
  output: readonly unknown[];
  /** `"completed"`, `"incomplete"` (see `incomplete_details`), or a state without an answer. */
  status?: unknown;
  /** Token counts (`input_tokens`, `output_tokens`, `total_tokens`). */
  usage?: unknown;
}

/** What {@link createOpenAIResponsesProvider} needs from `new OpenAI()`: `client.responses.create`. */
export interface OpenAIResponsesClient {
  /** The Responses resource. */
  responses: {
    /**
     * Sends one request (`POST /responses`) and resolves with the whole response, or, when the
     * body has `stream: true` (`chatStream`), with the stream of its events.
     */
    create(
      body: { model?: string; input?: unknown },
      options?: OpenAIRequestOptions,
    ): PromiseLike<OpenAIResponseLike | AsyncIterable<unknown>>;
  };
}

/** Options of {@link createOpenAIResponsesProvider}. */
export interface OpenAIResponsesProviderOptions extends OpenAIProviderOptionsBase {
  /** Your client, e.g. `new OpenAI()`. Its retries, timeout and headers apply. */
  client: OpenAIResponsesClient;
}

const responsesTools = openAIToolsConversion(toOpenAIResponsesTools);

/**
 * An {@link LLMProvider} over OpenAI's Responses API, using your own client
 * (`client.responses.create(body, { signal })`). Stateless: every call sends the whole transcript
 * as input items (`function_call` / `function_call_output` keyed by `call_id`), never a
 * `previous_response_id`. Function tools carry `strict` explicitly (`false` unless `strict: true`,
 * since the API treats an omitted `strict` as `true`). `llmOptions` go into the request body
 * (`temperature`, `max_output_tokens`, `tool_choice`, `instructions`, `store`, `reasoning` …);
 * `max_tokens` becomes `max_output_tokens` unless that is given, and `stream` is refused, as in
 * every adapter (see "`max_tokens` and `stream`" in `docs/adapters.md`). API errors propagate
 * unchanged (the loop's `ToolLoopError.cause` is the client's error). `chatStream` sends the same
 * request with `stream: true`, yields the text as it arrives and ends with the answer `chat` would
 * give (see {@link fromOpenAIResponsesStream}).
 *
 * @example
 * ```ts
 * import OpenAI from "openai";
 * import { runToolLoop } from "toolloop";
 * import { createOpenAIResponsesProvider } from "toolloop/openai";
 *
 * const provider = createOpenAIResponsesProvider({ client: new OpenAI(), strict: true });
 * const result = await runToolLoop({ provider, tools: registry, maxIterations: 10 }, [
 *   { role: "user", content: "What's the weather in Paris?" },
 * ]);
 * ```
 */
export function createOpenAIResponsesProvider(options: OpenAIResponsesProviderOptions): LLMProvider {
  return openAIProvider(options, {
    factory: "createOpenAIResponsesProvider",
    provider: PROVIDER,
    client: { method: ["responses", "create"], expected: "an OpenAI client (client.responses.create)" },
    maxTokensField: "max_output_tokens",
    tools: responsesTools,
    outputFields: openAIResponsesOutputFields,
    addTranscript: (body, messages) => {
      body.input = toOpenAIResponsesInput(messages);
    },
    send: ({ client, body, options: request }) =>
      client.responses.create(body as { model: string; input: unknown }, request),
    read: fromOpenAIResponse,
    streamFields: () => ({ stream: true }),
    readStream: fromOpenAIResponsesStream,
  });
}
