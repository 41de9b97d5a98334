import { isPlainObject } from "../../internal/describe.js";
import { optionError } from "../../internal/options.js";
import type { LLMProvider, ToolDefinition } from "../../provider.js";
import { checkedClient } from "../shared/factory-options.js";
import { outputRequest, portableLLMOptions } from "../shared/request-options.js";
import { convertOncePerArray, frozenTools } from "../shared/tools-cache.js";
import { type AISDKGenerateResultLike, fromAISDKResult, PROVIDER } from "./convert-ai-sdk-response.js";
import { type AISDKStreamResultLike, fromAISDKStream } from "./convert-ai-sdk-stream.js";
import { toAISDKPrompt } from "./convert-to-ai-sdk-messages.js";
import { aiSdkProviderName } from "./provider-name.js";

/**
 * The call options this adapter passes to `doGenerate` and `doStream`. Typed loosely on purpose so that the
 * stricter option types of every LanguageModel spec version fit.
 */
export interface AISDKCallOptions {
  /** The transcript as a LanguageModel prompt (see `toAISDKPrompt`). */
  prompt: readonly unknown[];
  /** The registry's tools as function tools, when it has any. */
  tools?: readonly unknown[];
  /** The loop's signal: aborting it cancels the request. */
  abortSignal?: AbortSignal;
  /** The loop's output schema (`options.output`) as a JSON response format; else `llmOptions.responseFormat`. */
  responseFormat?: unknown;
}

/**
 * What this adapter needs from an AI SDK model: `modelId` and `doGenerate` of the LanguageModel
 * specification v2 (`ai@5`) or v3 (`ai@6`). Any provider's model fits (`openai.chat("gpt-4o")`,
 * `anthropic("claude-…")` …); neither `ai` nor `@ai-sdk/*` is imported by toolloop.
 */
export interface AISDKLanguageModelLike {
  /** `"v2"` or `"v3"`; version 1 models (`ai@4`) are rejected. */
  readonly specificationVersion?: string;
  /** The provider's model id; what `getDefaultModel()` returns. */
  readonly modelId: string;
  /**
   * The AI SDK's provider id (`"openai.chat"`, `"anthropic.messages"` …): the provider's
   * `providerName`, as the GenAI conventions name it (see `aiSdkProviderName`).
   */
  readonly provider?: string;
  /** Generates one whole answer (not streamed) for the call options. */
  doGenerate(options: AISDKCallOptions): PromiseLike<AISDKGenerateResultLike>;
  /** Streams the answer (spec v2 and v3 models have it): the provider's `chatStream` reads it. */
  doStream?(options: AISDKCallOptions): PromiseLike<AISDKStreamResultLike>;
}

/** Options of {@link createAISDKProvider}. */
export interface AISDKProviderOptions {
  /** A LanguageModel object (spec v2 or v3), e.g. `createOpenAI().chat("gpt-4o")`. Model id strings are not accepted. */
  model: AISDKLanguageModelLike;
}

/** A function tool of the LanguageModel call options. */
export interface AISDKFunctionTool {
  /** Always `"function"`. */
  type: "function";
  /** The tool's name. */
  name: string;
  /** What the tool does; left out when empty. */
  description?: string;
  /** The tool's JSON Schema, with `type: "object"`. */
  inputSchema: Record<string, unknown>;
}

/** Converts definitions in OpenAI's function shape to LanguageModel function tools, in the same order. */
export function toAISDKTools(definitions: readonly ToolDefinition[]): AISDKFunctionTool[] {
  return definitions.map(({ function: { name, description, parameters } }) => {
    const inputSchema = { ...parameters, type: "object" };
    return typeof description === "string" && description !== ""
      ? { type: "function", name, description, inputSchema }
      : { type: "function", name, inputSchema };
  });
}

/** `llmOptions` keys in OpenAI's or Anthropic's spelling, and the LanguageModel call option each sets. */
const ALIASES: ReadonlyMap<string, string> = new Map([
  ["max_tokens", "maxOutputTokens"],
  ["max_completion_tokens", "maxOutputTokens"],
  ["max_output_tokens", "maxOutputTokens"],
  ["maxTokens", "maxOutputTokens"],
  ["top_p", "topP"],
  ["top_k", "topK"],
  ["presence_penalty", "presencePenalty"],
  ["frequency_penalty", "frequencyPenalty"],
  ["stop", "stopSequences"],
  ["stop_sequences", "stopSequences"],
  ["tool_choice", "toolChoice"],
]);

/**
 * A tool choice in any common spelling, as a LanguageModel `toolChoice`: `"auto"`, `"none"`,
 * `"required"` (Anthropic's `"any"` too), OpenAI's `{ type: "function", function: { name } }`,
 * Anthropic's `{ type: "tool", name }`, or the AI SDK's own `{ type: "tool", toolName }`.
 */
export function toToolChoice(choice: unknown): unknown {
  const type = typeof choice === "string" ? choice : isPlainObject(choice) ? choice.type : undefined;
  if (type === "auto" || type === "none" || type === "required") return { type };
  if (type === "any") return { type: "required" };
  if (!isPlainObject(choice)) return choice;
  if (type === "function" && isPlainObject(choice.function) && typeof choice.function.name === "string") {
    return { type: "tool", toolName: choice.function.name };
  }
  if (type === "tool" && typeof choice.toolName !== "string" && typeof choice.name === "string") {
    return { type: "tool", toolName: choice.name };
  }
  return choice;
}

/**
 * Maps `llmOptions` to LanguageModel call options: the AI SDK's own names (`maxOutputTokens`,
 * `temperature`, `topP`, `toolChoice`, `providerOptions`, `headers` …) pass as they are; OpenAI-style
 * names (`max_tokens`, `top_p`, `stop`, `tool_choice` …) are renamed, the AI SDK's name winning when
 * both are given. A `stop` string becomes a one-element `stopSequences`. Other keys pass through.
 */
export function toCallOptions(llmOptions: Record<string, unknown>): Record<string, unknown> {
  const options: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(llmOptions)) {
    if (value === undefined) continue;
    const target = ALIASES.get(key);
    if (target === undefined) options[key] = value;
    else if (!(target in llmOptions)) options[target] = value;
  }
  if (typeof options.stopSequences === "string") options.stopSequences = [options.stopSequences];
  if (options.toolChoice !== undefined) options.toolChoice = toToolChoice(options.toolChoice);
  return options;
}

const MODEL = {
  option: "model",
  method: ["doGenerate"],
  expected: "an AI SDK LanguageModel object (with doGenerate)",
} as const;

const aiSdkTools = convertOncePerArray((definitions) => frozenTools(toAISDKTools(definitions)));

/**
 * An {@link LLMProvider} for any Vercel AI SDK language model (specification v2 or v3), calling
 * `model.doGenerate` directly: the AI SDK's own loop, retries and tool execution are not used.
 *
 * The model object is bound to its model id, so `getDefaultModel()` returns `model.modelId` and a
 * `model` given to the loop is not sent (create another provider for another model).
 * `llmOptions` become call options ({@link toCallOptions}: `maxOutputTokens`, `temperature`,
 * `toolChoice`, `providerOptions` …; OpenAI spellings such as `max_tokens` and `tool_choice` are
 * renamed, and `stream` is refused, as in every adapter: see "`max_tokens` and `stream`" in
 * `docs/adapters.md`). Errors the model throws (e.g. `APICallError`) propagate unchanged.
 *
 * `chatStream` (when the model has `doStream`, as every spec v2 and v3 model does) sends the same
 * call options to `doStream` and yields text, reasoning and tool-input deltas as they arrive, then
 * the answer `chat` would give (see {@link fromAISDKStream}). `providerName` is the model's
 * `provider` as the GenAI conventions name it (`"openai.chat"` → `"openai"`; see
 * {@link aiSdkProviderName}). Usage carries the cached-input, cache-write and reasoning counts
 * the model reports.
 *
 * Content parts: a user message's images and files become `file` parts (base64 text, a URL as a
 * `URL`); a tool's become its result's `content` output (see `toAISDKPrompt`). The loop's output
 * schema (`options.output`) is sent as `responseFormat: { type: "json", schema, name }`.
 *
 * @example
 * ```ts
 * import { createOpenAI } from "@ai-sdk/openai";
 * import { createAISDKProvider } from "toolloop/ai-sdk";
 *
 * const provider = createAISDKProvider({ model: createOpenAI().chat("gpt-4o") });
 * const result = await runToolLoop({ provider, tools: registry, maxIterations: 10 }, messages);
 * ```
 */
export function createAISDKProvider(options: AISDKProviderOptions): LLMProvider {
  const factory = "createAISDKProvider";
  const model = checkedClient({ factory, options, ...MODEL });
  if (model.specificationVersion === "v1") {
    throw optionError(factory, "model.specificationVersion", '"v2" or newer (ai >= 5)', model.specificationVersion);
  }
  const modelId = typeof model.modelId === "string" ? model.modelId : "";
  // A model that names no version gets the current spec's shapes.
  const version = model.specificationVersion === "v2" ? "v2" : "v3";

  const callOptions = (
    messages: Parameters<LLMProvider["chat"]>[0],
    definitions: readonly ToolDefinition[] | undefined,
    llmOptions: Record<string, unknown>,
    signal: AbortSignal | undefined,
  ): AISDKCallOptions => {
    const portable = portableLLMOptions({ provider: PROVIDER, llmOptions, maxTokensField: "maxOutputTokens" });
    const output = outputRequest(PROVIDER, llmOptions);
    const options: AISDKCallOptions & Record<string, unknown> = {
      ...toCallOptions(portable),
      prompt: toAISDKPrompt(messages, version),
    };
    if (output !== undefined) options.responseFormat = { type: "json", schema: output.schema, name: output.name };
    if (definitions !== undefined && definitions.length > 0) options.tools = aiSdkTools(definitions);
    if (signal !== undefined) options.abortSignal = signal;
    return options;
  };

  const provider: { -readonly [K in keyof LLMProvider]: LLMProvider[K] } = {
    async chat(messages, definitions, _model, llmOptions, signal) {
      return fromAISDKResult(await model.doGenerate(callOptions(messages, definitions, llmOptions, signal)));
    },
    getDefaultModel(): string {
      return modelId;
    },
  };
  if (typeof model.doStream === "function") {
    const doStream = model.doStream;
    provider.chatStream = async function* (messages, definitions, _model, llmOptions, signal) {
      const result = await doStream.call(model, callOptions(messages, definitions, llmOptions, signal));
      yield* fromAISDKStream({ result, signal });
    };
  }
  const providerName = aiSdkProviderName(model.provider);
  if (providerName !== undefined) provider.providerName = providerName;
  return provider;
}
