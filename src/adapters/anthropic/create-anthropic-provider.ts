import { toAnthropicTools } from "../../formats/anthropic.js";
import { optionError } from "../../internal/options.js";
import type { LLMProvider, Message, ToolDefinition } from "../../provider.js";
import { checkedClient, checkModel } from "../shared/factory-options.js";
import { portableLLMOptions, signalOption } from "../shared/request-options.js";
import { convertOncePerArray, frozenTools } from "../shared/tools-cache.js";
import { type AnthropicMessageLike, fromAnthropicMessage, PROVIDER } from "./convert-anthropic-response.js";
import { fromAnthropicStream } from "./convert-anthropic-stream.js";
import { toAnthropicMessages } from "./convert-to-anthropic-messages.js";

/** The model used when neither the factory nor the loop names one. */
export const DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-4-6";

/**
 * `max_tokens` sent when `llmOptions.max_tokens` is not set (the API requires it). 4096 is
 * accepted by every Claude model, and stays well under the output size for which the SDK demands
 * streaming.
 */
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 4096;

/**
 * The request body this adapter sends to `messages.create`. Typed loosely on purpose so that the
 * official client's stricter parameter types fit.
 */
export interface AnthropicMessagesRequest {
  /** The loop's model, else the factory's. */
  model: string;
  /** `llmOptions.max_tokens`, else the factory's `maxTokens`. */
  max_tokens: number;
  /** The transcript without its system messages (see `toAnthropicMessages`). */
  messages: readonly unknown[];
  /** The system messages, joined; without them, `llmOptions.system` as given. */
  system?: unknown;
  /** The registry's tools in Anthropic's shape, when it has any. */
  tools?: readonly unknown[];
}

/** Per-request options; the loop's signal goes here. */
export interface AnthropicRequestOptions {
  /** The loop's signal: aborting it cancels the HTTP request. */
  signal?: AbortSignal;
}

/**
 * What this adapter needs from an Anthropic client: `messages.create`. `new Anthropic()` from
 * `@anthropic-ai/sdk` fits; the SDK is not imported by toolloop.
 */
export interface AnthropicClientLike {
  /** The Messages resource. */
  readonly messages: {
    /**
     * Sends one request (`POST /v1/messages`) and resolves with the whole message, or, when the
     * body has `stream: true` (`chatStream`), with the stream of its events.
     */
    create(
      body: AnthropicMessagesRequest,
      options?: AnthropicRequestOptions,
    ): PromiseLike<AnthropicMessageLike | AsyncIterable<unknown>>;
  };
}

/** Options of {@link createAnthropicProvider}. */
export interface AnthropicProviderOptions {
  /** Your client, e.g. `new Anthropic()` from `@anthropic-ai/sdk`. Retries, timeouts and base URL are its own. */
  client: AnthropicClientLike;
  /** The model `getDefaultModel()` returns; a `model` given to the loop wins. @default "claude-sonnet-4-6" */
  model?: string;
  /** `max_tokens` of every request unless `llmOptions.max_tokens` is set. @default 4096 */
  maxTokens?: number;
}

const CLIENT = {
  option: "client",
  method: ["messages", "create"],
  expected: "an Anthropic client (with messages.create)",
} as const;

const anthropicTools = convertOncePerArray((definitions) => frozenTools(toAnthropicTools(definitions)));

/**
 * An {@link LLMProvider} for Anthropic's Messages API through your `@anthropic-ai/sdk` client
 * (`client.messages.create`; `chat` is not streamed, `chatStream` is).
 *
 * System messages become the top-level `system`; each turn's tool results are sent first in one
 * user message, with `is_error` from the tool message. `llmOptions` pass through to the request
 * (`temperature`, `tool_choice`, `thinking` …); `llmOptions.max_tokens` overrides the factory's
 * `maxTokens`, and `stream` is refused, as in every adapter (see "`max_tokens` and `stream`" in
 * `docs/adapters.md`). API errors propagate unchanged as the client threw them. `chatStream` sends
 * the same request with `stream: true`, yields the text as it arrives and ends with the answer
 * `chat` would give (see {@link fromAnthropicStream}).
 *
 * @example
 * ```ts
 * import Anthropic from "@anthropic-ai/sdk";
 * import { createAnthropicProvider } from "toolloop/anthropic";
 *
 * const provider = createAnthropicProvider({ client: new Anthropic(), model: "claude-haiku-4-5" });
 * const result = await runToolLoop({ provider, tools: registry, maxIterations: 10 }, messages);
 * ```
 */
export function createAnthropicProvider(options: AnthropicProviderOptions): LLMProvider {
  const factory = "createAnthropicProvider";
  const client = checkedClient({ factory, options, ...CLIENT });
  const { maxTokens = DEFAULT_ANTHROPIC_MAX_TOKENS } = options;
  const model = checkModel(factory, options.model, DEFAULT_ANTHROPIC_MODEL);
  if (!Number.isInteger(maxTokens) || maxTokens < 1) {
    throw optionError(factory, "maxTokens", "an integer ≥ 1", maxTokens);
  }

  const request = (
    messages: Message[],
    definitions: ToolDefinition[] | undefined,
    requestModel: string,
    llmOptions: Record<string, unknown>,
  ): AnthropicMessagesRequest & Record<string, unknown> => {
    const { max_tokens, ...passthrough } = portableLLMOptions({
      provider: PROVIDER,
      llmOptions,
      maxTokensField: "max_tokens",
    });
    const { system, messages: wireMessages } = toAnthropicMessages(messages);
    const body: AnthropicMessagesRequest & Record<string, unknown> = {
      ...passthrough,
      model: typeof requestModel === "string" && requestModel !== "" ? requestModel : model,
      max_tokens: typeof max_tokens === "number" ? max_tokens : maxTokens,
      messages: wireMessages,
    };
    if (system !== undefined) body.system = system;
    if (definitions !== undefined && definitions.length > 0) body.tools = anthropicTools(definitions);
    return body;
  };

  return {
    async chat(messages, definitions, requestModel, llmOptions, signal) {
      const body = request(messages, definitions, requestModel, llmOptions);
      const response = await client.messages.create(body, signalOption(signal));
      // Without `stream: true` the client resolves with the whole message.
      return fromAnthropicMessage(response as AnthropicMessageLike);
    },
    async *chatStream(messages, definitions, requestModel, llmOptions, signal) {
      const body = { ...request(messages, definitions, requestModel, llmOptions), stream: true };
      const stream = await client.messages.create(body, signalOption(signal));
      yield* fromAnthropicStream({ stream, signal });
    },
    getDefaultModel(): string {
      return model;
    },
  };
}
