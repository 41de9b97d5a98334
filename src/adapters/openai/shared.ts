import { stripNullsForOptional } from "../../formats/openai.js";
import { describeType, isPlainObject, isRecord } from "../../internal/describe.js";
import type { ProviderToolCall, ToolDefinition, UsageInfo } from "../../provider.js";
import { toCallArguments } from "../shared/call-arguments.js";
import { invalidOption } from "../shared/invalid-option.js";
import { tokenCount, usageInfo } from "../shared/usage.js";
import type { OpenAIRequestOptions } from "./client-types.js";

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
}

export type JsonObject = Record<string, unknown>;

/** Validates `model` and `strict` and returns them resolved. */
export function resolveBaseOptions(
  factory: string,
  options: OpenAIProviderOptionsBase,
): { model: string; strict: boolean } {
  const { model = DEFAULT_OPENAI_MODEL, strict = false } = options;
  if (typeof model !== "string" || model === "") {
    throw invalidOption(factory, "model", "a non-empty string", describeType(model));
  }
  if (typeof strict !== "boolean") throw invalidOption(factory, "strict", "a boolean", describeType(strict));
  return { model, strict };
}

/** The second argument of `create`: only the signal, and only when there is one. */
export function requestOptions(signal: AbortSignal | undefined): OpenAIRequestOptions | undefined {
  return signal === undefined ? undefined : { signal };
}

/** The loop's `llmOptions` as request-body fields; streaming is refused (the adapters read whole responses). */
export function passthroughOptions(provider: string, options: Record<string, unknown>): JsonObject {
  if (options.stream !== undefined && options.stream !== false) {
    throw new TypeError(
      `${provider}: llmOptions.stream is not supported (the adapter reads whole responses); remove it`,
    );
  }
  return { ...options };
}

/** Tool schemas by name, kept so strict-mode nulls can be stripped against the original schema. */
export function schemasByName(tools: readonly ToolDefinition[] | undefined): Map<string, JsonObject> {
  const schemas = new Map<string, JsonObject>();
  for (const tool of tools ?? []) schemas.set(tool.function.name, tool.function.parameters);
  return schemas;
}

/**
 * One call as the loop takes it. The raw JSON text goes through unchanged (empty stays empty,
 * invalid JSON reaches the loop so the model is told); in strict mode, parsable arguments are
 * passed parsed with the strict-mode nulls removed, and the raw text stays in `function.arguments`.
 * Some OpenAI-compatible servers send a JSON value instead of text: an object is taken as it is
 * (strict-mode nulls removed), `null` means no arguments, and any other value reaches the loop
 * (see {@link toCallArguments}), which tells the model arguments must be an object.
 */
export function toProviderToolCall(
  id: unknown,
  name: string,
  rawArguments: unknown,
  strictSchemas: Map<string, JsonObject> | undefined,
): ProviderToolCall {
  const call: ProviderToolCall = { type: "function", name };
  if (typeof id === "string" && id !== "") call.id = id;
  if (rawArguments === undefined || rawArguments === null) {
    call.arguments = "";
    return call;
  }
  if (typeof rawArguments !== "string") {
    const schema = strictSchemas?.get(name);
    call.arguments =
      schema !== undefined && isPlainObject(rawArguments)
        ? stripNullsForOptional(rawArguments, schema)
        : toCallArguments(rawArguments);
    return call;
  }
  const text = rawArguments;
  call.arguments = text;
  const schema = strictSchemas?.get(name);
  if (schema === undefined || text.trim() === "") return call;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return call;
  }
  if (!isPlainObject(parsed)) return call;
  call.arguments = stripNullsForOptional(parsed, schema);
  call.function = { name, arguments: text };
  return call;
}

/** Maps `{ [input]: n, [output]: n, total_tokens: n }` to {@link UsageInfo}; `undefined` when absent. */
export function toUsage(usage: unknown, inputKey: string, outputKey: string): UsageInfo | undefined {
  if (!isRecord(usage)) return undefined;
  const promptTokens = tokenCount(usage[inputKey]);
  const completionTokens = tokenCount(usage[outputKey]);
  const totalTokens = tokenCount(usage.total_tokens);
  if (promptTokens === undefined && completionTokens === undefined && totalTokens === undefined) return undefined;
  return usageInfo(promptTokens, completionTokens, totalTokens);
}

/** The JSON text to replay for a transcript call: what the model sent, else the parsed arguments. */
export function argumentsText(call: { arguments?: unknown; function?: { arguments?: unknown } }): string {
  if (typeof call.function?.arguments === "string") return call.function.arguments;
  try {
    return JSON.stringify(isRecord(call.arguments) ? call.arguments : {});
  } catch {
    return "{}";
  }
}
