import { describeType, isPlainObject, showValue } from "../../internal/describe.js";
import type { LLMProvider, LLMResponse, Message, ToolDefinition } from "../../provider.js";
import { invalidOption } from "../shared/invalid-option.js";
import { toCallOptions } from "./call-options.js";
import { toAISDKPrompt, toAISDKTools } from "./convert-prompt.js";
import { type AISDKGenerateResultLike, fromAISDKResult } from "./convert-result.js";

/**
 * The call options this adapter passes to `doGenerate`. Typed loosely on purpose so that the
 * stricter option types of every LanguageModel spec version fit.
 */
export interface AISDKCallOptions {
  prompt: readonly unknown[];
  tools?: readonly unknown[];
  abortSignal?: AbortSignal;
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
  doGenerate(options: AISDKCallOptions): PromiseLike<AISDKGenerateResultLike>;
}

/** Options of {@link createAISDKProvider}. */
export interface AISDKProviderOptions {
  /** A LanguageModel object (spec v2 or v3), e.g. `createOpenAI().chat("gpt-4o")`. Model id strings are not accepted. */
  model: AISDKLanguageModelLike;
}

function invalid(option: string, expected: string, value: unknown): TypeError {
  return invalidOption("createAISDKProvider", option, expected, showValue(value));
}

/**
 * An {@link LLMProvider} for any Vercel AI SDK language model (specification v2 or v3), calling
 * `model.doGenerate` directly: the AI SDK's own loop, retries and tool execution are not used.
 *
 * The model object is bound to its model id, so `getDefaultModel()` returns `model.modelId` and a
 * `model` given to the loop is not sent (create another provider for another model).
 * `llmOptions` become call options (`maxOutputTokens`, `temperature`, `toolChoice`,
 * `providerOptions` …; OpenAI spellings such as `max_tokens` and `tool_choice` are renamed). Errors
 * the model throws (e.g. `APICallError`) propagate unchanged.
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
  if (!isPlainObject(options)) throw invalid("options", "an object", describeType(options));
  const { model } = options;
  if (typeof model !== "object" || model === null || typeof model.doGenerate !== "function") {
    throw invalid("model", "an AI SDK LanguageModel object (with doGenerate)", describeType(model));
  }
  if (model.specificationVersion === "v1") {
    throw invalid("model.specificationVersion", '"v2" or newer (ai >= 5)', model.specificationVersion);
  }
  const modelId = typeof model.modelId === "string" ? model.modelId : "";

  return {
    async chat(
      messages: Message[],
      tools: ToolDefinition[] | undefined,
      _model: string,
      llmOptions: Record<string, unknown>,
      signal?: AbortSignal,
    ): Promise<LLMResponse> {
      const callOptions: AISDKCallOptions & Record<string, unknown> = {
        ...toCallOptions(llmOptions ?? {}),
        prompt: toAISDKPrompt(messages),
      };
      if (tools !== undefined && tools.length > 0) callOptions.tools = toAISDKTools(tools);
      if (signal !== undefined) callOptions.abortSignal = signal;
      return fromAISDKResult(await model.doGenerate(callOptions));
    },
    getDefaultModel(): string {
      return modelId;
    },
  };
}
