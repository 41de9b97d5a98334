import { toAnthropicTools } from "../../formats/anthropic.js";
import { describeType, isPlainObject, showValue } from "../../internal/describe.js";
import type { LLMProvider, LLMResponse, Message, ToolDefinition } from "../../provider.js";
import { invalidOption } from "../shared/invalid-option.js";
import { toAnthropicMessages } from "./convert-messages.js";
import { type AnthropicMessageLike, fromAnthropicMessage } from "./convert-response.js";

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
  model: string;
  max_tokens: number;
  messages: readonly unknown[];
  system?: unknown;
  tools?: readonly unknown[];
}

/** Per-request options; the loop's signal goes here. */
export interface AnthropicRequestOptions {
  signal?: AbortSignal;
}

/**
 * What this adapter needs from an Anthropic client: `messages.create`. `new Anthropic()` from
 * `@anthropic-ai/sdk` fits; the SDK is not imported by toolloop.
 */
export interface AnthropicClientLike {
  readonly messages: {
    create(body: AnthropicMessagesRequest, options?: AnthropicRequestOptions): PromiseLike<AnthropicMessageLike>;
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

function invalid(option: string, expected: string, value: unknown): TypeError {
  return invalidOption("createAnthropicProvider", option, expected, showValue(value));
}

/**
 * An {@link LLMProvider} for Anthropic's Messages API through your `@anthropic-ai/sdk` client
 * (`client.messages.create`, not streamed).
 *
 * System messages become the top-level `system`; each turn's tool results are sent first in one
 * user message, with `is_error` from the tool message. `llmOptions` pass through to the request
 * (`temperature`, `tool_choice`, `thinking` …; `max_tokens` overrides the factory's `maxTokens`;
 * `stream` is ignored). API errors propagate unchanged as the client threw them.
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
  if (!isPlainObject(options)) throw invalid("options", "an object", describeType(options));
  const { client, model = DEFAULT_ANTHROPIC_MODEL, maxTokens = DEFAULT_ANTHROPIC_MAX_TOKENS } = options;
  if (typeof client !== "object" || client === null || typeof client.messages?.create !== "function") {
    throw invalid("client", "an Anthropic client (with messages.create)", describeType(client));
  }
  if (typeof model !== "string" || model === "") throw invalid("model", "a non-empty string", model);
  if (!Number.isInteger(maxTokens) || maxTokens < 1) throw invalid("maxTokens", "an integer ≥ 1", maxTokens);

  return {
    async chat(
      messages: Message[],
      tools: ToolDefinition[] | undefined,
      requestModel: string,
      llmOptions: Record<string, unknown>,
      signal?: AbortSignal,
    ): Promise<LLMResponse> {
      const { stream: _stream, max_tokens, ...passthrough } = llmOptions ?? {};
      const { system, messages: wireMessages } = toAnthropicMessages(messages);
      const body: AnthropicMessagesRequest & Record<string, unknown> = {
        ...passthrough,
        model: typeof requestModel === "string" && requestModel !== "" ? requestModel : model,
        max_tokens: typeof max_tokens === "number" ? max_tokens : maxTokens,
        messages: wireMessages,
      };
      if (system !== undefined) body.system = system;
      if (tools !== undefined && tools.length > 0) body.tools = toAnthropicTools(tools);
      const response = await client.messages.create(body, signal === undefined ? undefined : { signal });
      return fromAnthropicMessage(response);
    },
    getDefaultModel(): string {
      return model;
    },
  };
}
