import { toAnthropicTools } from "../../formats/anthropic.js";
import { isRecord } from "../../internal/describe.js";
import { optionError } from "../../internal/options.js";
import type { LLMProvider, Message, OutputRequest, ToolDefinition } from "../../provider.js";
import { checkedClient, checkModel, checkProviderName } from "../shared/factory-options.js";
import { outputRequest, portableLLMOptions, signalOption } from "../shared/request-options.js";
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
  /** The registry's tools in Anthropic's shape, when it has any (and the output tool, with `structuredOutput: "tool"`). */
  tools?: readonly unknown[];
  /** With `options.output` (native structured output): `format: { type: "json_schema", schema }`. */
  output_config?: unknown;
  /** With `options.output` and `structuredOutput: "tool"`: `{ type: "any" }`. */
  tool_choice?: unknown;
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
  /**
   * How a structured final answer (the loop's `output`, `options.output`) is asked for:
   * `"native"` sends the API's structured output, `output_config.format = { type: "json_schema",
   * schema }`; `"tool"`, for models without it, adds a final tool named `output.name` whose
   * `input_schema` is the schema (an object schema) and sets `tool_choice: { type: "any" }`, so the
   * model calls a tool every turn — the registry's while it works, that one to answer; its input
   * comes back as the answer's JSON text, not as a call.
   * @default "native"
   */
  structuredOutput?: "native" | "tool";
  /**
   * The provider's name as the OpenTelemetry GenAI conventions spell it (`gen_ai.provider.name`),
   * reported as {@link LLMProvider.providerName} to middleware such as tracing. Name the service
   * yourself when the client is not Anthropic's own API (`"aws.bedrock"` for `AnthropicBedrock`,
   * `"gcp.vertex_ai"` for `AnthropicVertex`).
   * @default "anthropic"
   */
  providerName?: string;
}

const CLIENT = {
  option: "client",
  method: ["messages", "create"],
  expected: "an Anthropic client (with messages.create)",
} as const;

/**
 * The final tool of `structuredOutput: "tool"`: named `output.name`, its `input_schema` the schema.
 * @throws TypeError when the schema is not an object schema (a tool's input is an object) or a
 *   tool of the registry has that name
 */
function outputTool(output: OutputRequest, tools: readonly unknown[] | undefined): Record<string, unknown> {
  const { name, schema } = output;
  if (schema.type !== undefined && schema.type !== "object") {
    throw new TypeError(
      `${PROVIDER}: structuredOutput "tool" needs an object schema (a tool's input is an object), got type ${JSON.stringify(schema.type).slice(0, 80)}`,
    );
  }
  if (tools?.some((tool) => isRecord(tool) && tool.name === name)) {
    throw new TypeError(
      `${PROVIDER}: the output tool's name ${JSON.stringify(name.slice(0, 80))} is a registry tool's name`,
    );
  }
  return {
    name,
    description: "Give your final answer by calling this tool, once you need no other tool.",
    input_schema: { ...schema, type: "object" },
  };
}

const anthropicTools = convertOncePerArray((definitions) => frozenTools(toAnthropicTools(definitions)));

/**
 * An {@link LLMProvider} for Anthropic's Messages API through your `@anthropic-ai/sdk` client
 * (`client.messages.create`; `chat` is not streamed, `chatStream` is).
 *
 * System messages become the top-level `system`; each turn's tool results are sent first in one
 * user message, with `is_error` from the tool message. `llmOptions` pass through to the request
 * (`temperature`, `tool_choice`, `thinking` …); `llmOptions.max_tokens` overrides the factory's
 * `maxTokens`, and `stream` is refused, as in every adapter (see "`max_tokens` and `stream`" in
 * `docs/adapters.md`). Images and files in user and tool messages are sent as `image` and
 * `document` blocks (see {@link toAnthropicMessages}); what the API cannot take is an
 * `UnsupportedContentError` before any request. A structured final answer (`options.output`) is
 * asked for as `structuredOutput` says. API errors propagate unchanged as the client threw them. `chatStream` sends
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
  const providerName = checkProviderName(factory, options.providerName, "anthropic");
  if (!Number.isInteger(maxTokens) || maxTokens < 1) {
    throw optionError(factory, "maxTokens", "an integer ≥ 1", maxTokens);
  }
  const { structuredOutput = "native" } = options;
  if (structuredOutput !== "native" && structuredOutput !== "tool") {
    throw optionError(factory, "structuredOutput", '"native" or "tool"', structuredOutput);
  }

  const request = (
    messages: Message[],
    definitions: ToolDefinition[] | undefined,
    requestModel: string,
    llmOptions: Record<string, unknown>,
  ): { body: AnthropicMessagesRequest & Record<string, unknown>; outputTool: string | undefined } => {
    const output = outputRequest(PROVIDER, llmOptions);
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
    if (output === undefined) return { body, outputTool: undefined };
    if (structuredOutput === "native") {
      // Merged into the caller's own `output_config` (e.g. `effort`), whose `format` it replaces.
      const config = isRecord(passthrough.output_config) ? passthrough.output_config : {};
      body.output_config = { ...config, format: { type: "json_schema", schema: output.schema } };
      return { body, outputTool: undefined };
    }
    body.tools = [...(body.tools ?? []), outputTool(output, body.tools)];
    // `any`: the model must call a tool, so it answers through the output tool, not in text.
    const choice = isRecord(passthrough.tool_choice) ? passthrough.tool_choice : {};
    body.tool_choice =
      typeof choice.disable_parallel_tool_use === "boolean"
        ? { type: "any", disable_parallel_tool_use: choice.disable_parallel_tool_use }
        : { type: "any" };
    return { body, outputTool: output.name };
  };

  return {
    providerName,
    async chat(messages, definitions, requestModel, llmOptions, signal) {
      const { body, outputTool } = request(messages, definitions, requestModel, llmOptions);
      const response = await client.messages.create(body, signalOption(signal));
      // Without `stream: true` the client resolves with the whole message.
      return fromAnthropicMessage(response as AnthropicMessageLike, { outputTool });
    },
    async *chatStream(messages, definitions, requestModel, llmOptions, signal) {
      const { body, outputTool } = request(messages, definitions, requestModel, llmOptions);
      const streamed = { ...body, stream: true };
      const stream = await client.messages.create(streamed, signalOption(signal));
      yield* fromAnthropicStream({ stream, signal, outputTool });
    },
    getDefaultModel(): string {
      return model;
    },
  };
}
