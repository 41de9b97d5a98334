import { toOpenAIResponsesTools } from "../../formats/openai.js";
import { describeType, errorMessage, isRecord, showValue } from "../../internal/describe.js";
import type { LLMProvider, LLMResponse, Message, ProviderToolCall } from "../../provider.js";
import { invalidOption } from "../shared/invalid-option.js";
import { errorBodyProblem, invalidResponse } from "../shared/invalid-response.js";
import { toLLMResponse } from "../shared/llm-response.js";
import type { OpenAIResponsesClient } from "./client-types.js";
import {
  argumentsText,
  type JsonObject,
  type OpenAIProviderOptionsBase,
  passthroughOptions,
  requestOptions,
  resolveBaseOptions,
  schemasByName,
  toProviderToolCall,
  toUsage,
} from "./shared.js";

/** Options of {@link createOpenAIResponsesProvider}. */
export interface OpenAIResponsesProviderOptions extends OpenAIProviderOptionsBase {
  /** Your client, e.g. `new OpenAI()`. Its retries, timeout and headers apply. */
  client: OpenAIResponsesClient;
}

/** A Responses API input item as the adapter sends it (`ResponseInputItem` in the SDK). */
export type OpenAIResponsesInputItem =
  | { role: "system" | "user" | "assistant"; content: string }
  | { type: "function_call"; call_id: string; name: string; arguments: string }
  | { type: "function_call_output"; call_id: string; output: string };

const PROVIDER = "OpenAI Responses";

/**
 * Converts a toolloop transcript to Responses API input items, statelessly (no
 * `previous_response_id`, no item ids): system, user and assistant text become messages (an
 * assistant turn's text comes before its calls, and is left out when empty); each call becomes a
 * `function_call` item and each `tool` message a `function_call_output` item, both keyed by
 * `call_id`, in transcript order.
 */
export function toOpenAIResponsesInput(messages: readonly Message[]): OpenAIResponsesInputItem[] {
  const input: OpenAIResponsesInputItem[] = [];
  for (const message of messages) {
    switch (message.role) {
      case "system":
      case "user":
        input.push({ role: message.role, content: message.content });
        break;
      case "assistant": {
        const calls = message.toolCalls ?? [];
        if (calls.length === 0 || message.content !== "") input.push({ role: "assistant", content: message.content });
        for (const call of calls) {
          input.push({
            type: "function_call",
            call_id: call.id,
            name: call.name || (call.function?.name ?? ""),
            arguments: argumentsText(call),
          });
        }
        break;
      }
      case "tool":
        input.push({ type: "function_call_output", call_id: message.toolCallId ?? "", output: message.content });
        break;
      default:
        throw new TypeError(`unsupported message role ${JSON.stringify((message as Message).role)}`);
    }
  }
  return input;
}

function finishReasonOf(response: JsonObject): string {
  const { status } = response;
  if (status === "incomplete") {
    const reason = isRecord(response.incomplete_details) ? response.incomplete_details.reason : undefined;
    if (reason === "max_output_tokens") return "length";
    return typeof reason === "string" ? reason : "incomplete";
  }
  return status === "completed" || status === undefined || status === null ? "stop" : String(status);
}

/**
 * Converts a Responses API response to an {@link LLMResponse}: the text of its `message` items
 * (their `refusal` when there is no text), its `function_call` items with `call_id` as the id and
 * the arguments as raw JSON text, `finishReason` (`"tool_calls"` whenever there are calls;
 * `"stop"` when completed; `"length"` / `"content_filter"` for an incomplete response) and
 * `usage` (`input_tokens` / `output_tokens` / `total_tokens`). In strict mode pass the tool
 * definitions' schemas by name so the strict-mode nulls are stripped.
 * @throws InvalidProviderResponseError when the response has no `output` array (an error body,
 *   `{}` …), has `status` `"failed"`, `"cancelled"`, `"queued"` or `"in_progress"` (background mode),
 *   or an output item that is not an object or a `function_call` without a name
 */
export function fromOpenAIResponse(
  response: unknown,
  strictSchemas?: Map<string, Record<string, unknown>>,
): LLMResponse {
  if (!isRecord(response) || !Array.isArray(response.output)) {
    const output = isRecord(response) ? response.output : response;
    const problem =
      (output === undefined ? errorBodyProblem(response) : undefined) ??
      `the response has no output array (got ${describeType(output)})`;
    throw invalidResponse(PROVIDER, problem, response);
  }
  const { status } = response;
  if (status === "failed") {
    const error = isRecord(response.error) ? errorMessage(response.error.message ?? response.error) : "no details";
    throw invalidResponse(PROVIDER, `the response failed: ${error}`, response);
  }
  if (status === "cancelled") throw invalidResponse(PROVIDER, "the response was cancelled", response);
  if (status === "queued" || status === "in_progress") {
    throw invalidResponse(PROVIDER, `the response has no answer yet (status: ${status})`, response);
  }
  const texts: string[] = [];
  const refusals: string[] = [];
  const toolCalls: ProviderToolCall[] = [];
  for (const item of response.output) {
    if (!isRecord(item)) {
      throw invalidResponse(PROVIDER, `an output item is not an object (got ${describeType(item)})`, response);
    }
    if (item.type === "function_call") {
      if (typeof item.name !== "string" || item.name === "") {
        throw invalidResponse(PROVIDER, `a function_call item has no name (got ${showValue(item.name)})`, response);
      }
      toolCalls.push(toProviderToolCall(item.call_id, item.name, item.arguments, strictSchemas));
    } else if (item.type === "message" && Array.isArray(item.content)) {
      for (const part of item.content) {
        if (!isRecord(part)) continue;
        if (part.type === "output_text" && typeof part.text === "string") texts.push(part.text);
        else if (part.type === "refusal" && typeof part.refusal === "string") refusals.push(part.refusal);
      }
    }
  }
  const content = texts.length > 0 ? texts.join("") : refusals.join("");
  const finishReason = toolCalls.length > 0 ? "tool_calls" : finishReasonOf(response);
  return toLLMResponse(content, toolCalls, finishReason, toUsage(response.usage, "input_tokens", "output_tokens"));
}

/**
 * An {@link LLMProvider} over OpenAI's Responses API, using your own client
 * (`client.responses.create(body, { signal })`). Stateless: every call sends the whole transcript
 * as input items (`function_call` / `function_call_output` keyed by `call_id`), never a
 * `previous_response_id`. Function tools carry `strict` explicitly (`false` unless `strict: true`,
 * since the API treats an omitted `strict` as `true`). `llmOptions` go into the request body
 * (`temperature`, `max_output_tokens`, `tool_choice`, `instructions`, `store`, `reasoning` …);
 * API errors propagate unchanged.
 *
 * @example
 * ```ts
 * import OpenAI from "openai";
 * import { createOpenAIResponsesProvider } from "toolloop/openai";
 *
 * const provider = createOpenAIResponsesProvider({ client: new OpenAI(), strict: true });
 * ```
 */
/**
 * `llmOptions` for the Responses API: the Chat-style `max_tokens` (which the Responses API
 * rejects) becomes `max_output_tokens` unless that is given too, so one `llmOptions` object works
 * with every adapter.
 */
function responsesOptions(llmOptions: Record<string, unknown>): JsonObject {
  const { max_tokens: maxTokens, ...rest } = passthroughOptions("OpenAI Responses", llmOptions);
  if (maxTokens !== undefined && rest.max_output_tokens === undefined) rest.max_output_tokens = maxTokens;
  return rest;
}

export function createOpenAIResponsesProvider(options: OpenAIResponsesProviderOptions): LLMProvider {
  const factory = "createOpenAIResponsesProvider";
  if (!isRecord(options)) throw invalidOption(factory, "options", "an object", describeType(options));
  const { client } = options;
  if (!isRecord(client) || !isRecord(client.responses) || typeof client.responses.create !== "function") {
    throw invalidOption(factory, "client", "an OpenAI client (client.responses.create)", describeType(client));
  }
  const { model: defaultModel, strict } = resolveBaseOptions(factory, options);

  return {
    async chat(messages, tools, model, llmOptions, signal) {
      const body: JsonObject = {
        ...responsesOptions(llmOptions),
        model,
        input: toOpenAIResponsesInput(messages),
      };
      if (tools !== undefined && tools.length > 0) body.tools = toOpenAIResponsesTools(tools, { strict });
      const response = await client.responses.create(body as { model: string; input: unknown }, requestOptions(signal));
      return fromOpenAIResponse(response, strict ? schemasByName(tools) : undefined);
    },
    getDefaultModel() {
      return defaultModel;
    },
  };
}
