import { toOpenAIChatTools } from "../../formats/openai.js";
import { describeType, isRecord, showValue } from "../../internal/describe.js";
import type { LLMProvider, LLMResponse, Message, ProviderToolCall } from "../../provider.js";
import { invalidOption } from "../shared/invalid-option.js";
import { errorBodyProblem, invalidResponse } from "../shared/invalid-response.js";
import { toLLMResponse } from "../shared/llm-response.js";
import type { OpenAIChatClient } from "./client-types.js";
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

/** Options of {@link createOpenAIChatProvider}. */
export interface OpenAIChatProviderOptions extends OpenAIProviderOptionsBase {
  /**
   * Your client, e.g. `new OpenAI()` — or `new OpenAI({ baseURL })` for any OpenAI-compatible
   * server (vLLM, llama.cpp server, LM Studio, Ollama's `/v1`). Its retries, timeout and headers apply.
   */
  client: OpenAIChatClient;
}

/** A Chat Completions message as the adapter sends it (`ChatCompletionMessageParam` in the SDK). */
export type OpenAIChatMessage =
  | { role: "system" | "user"; content: string }
  | {
      role: "assistant";
      content: string | null;
      tool_calls?: Array<{ id: string; type: "function"; function: { name: string; arguments: string } }>;
    }
  | { role: "tool"; tool_call_id: string; content: string };

/**
 * Converts a toolloop transcript to Chat Completions messages: system, user and assistant text
 * as they are; an assistant turn with calls becomes one message with `tool_calls` (its text as
 * `content`, or `null` when there is none); each `tool` message becomes
 * `{ role: "tool", tool_call_id, content }`, in transcript order.
 */
export function toOpenAIChatMessages(messages: readonly Message[]): OpenAIChatMessage[] {
  return messages.map((message): OpenAIChatMessage => {
    switch (message.role) {
      case "system":
      case "user":
        return { role: message.role, content: message.content };
      case "assistant": {
        const calls = message.toolCalls ?? [];
        if (calls.length === 0) return { role: "assistant", content: message.content };
        return {
          role: "assistant",
          content: message.content === "" ? null : message.content,
          tool_calls: calls.map((call) => ({
            id: call.id,
            type: "function",
            function: { name: call.name || (call.function?.name ?? ""), arguments: argumentsText(call) },
          })),
        };
      }
      case "tool":
        return { role: "tool", tool_call_id: message.toolCallId ?? "", content: message.content };
      default:
        throw new TypeError(`unsupported message role ${JSON.stringify((message as Message).role)}`);
    }
  });
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  // Some compatible servers answer with content parts.
  if (Array.isArray(content)) {
    return content.map((part) => (isRecord(part) && typeof part.text === "string" ? part.text : "")).join("");
  }
  return "";
}

const PROVIDER = "OpenAI Chat Completions";

/** The name of a `function` or `custom` tool call. @throws InvalidProviderResponseError when it has none */
function callName(kind: "function" | "custom", name: unknown, completion: unknown): string {
  if (typeof name === "string" && name !== "") return name;
  throw invalidResponse(PROVIDER, `a ${kind} tool call has no name (got ${showValue(name)})`, completion);
}

/**
 * Converts a Chat Completions response to an {@link LLMResponse}: the first choice's text (its
 * `refusal` when there is no text), its function calls with the arguments as the raw JSON text,
 * `finishReason` (`"tool_calls"` whenever there are calls, otherwise the API's `finish_reason`,
 * `"stop"` when missing) and `usage`. In strict mode pass the tool definitions' schemas by name
 * so the strict-mode nulls are stripped.
 * @throws InvalidProviderResponseError when the response has no choice with a message (an error
 *   body, `{}` …), or a tool call that is not an object, has no `function`/`custom`, or no name
 */
export function fromOpenAIChatCompletion(
  completion: unknown,
  strictSchemas?: Map<string, Record<string, unknown>>,
): LLMResponse {
  const choices = isRecord(completion) ? completion.choices : undefined;
  const choice = Array.isArray(choices) ? choices[0] : undefined;
  if (!isRecord(choice) || !isRecord(choice.message)) {
    const problem =
      (choices === undefined ? errorBodyProblem(completion) : undefined) ??
      `the response has no choice with a message (choices: ${describeType(choices)})`;
    throw invalidResponse(PROVIDER, problem, completion);
  }
  const { message } = choice;
  const calls = message.tool_calls ?? [];
  if (!Array.isArray(calls)) {
    throw invalidResponse(
      PROVIDER,
      `the message's tool_calls is not an array (got ${describeType(calls)})`,
      completion,
    );
  }
  const toolCalls: ProviderToolCall[] = [];
  for (const call of calls) {
    if (!isRecord(call)) {
      throw invalidResponse(PROVIDER, `a tool call is not an object (got ${describeType(call)})`, completion);
    }
    if (isRecord(call.function)) {
      const name = callName("function", call.function.name, completion);
      toolCalls.push(toProviderToolCall(call.id, name, call.function.arguments, strictSchemas));
    } else if (isRecord(call.custom)) {
      const name = callName("custom", call.custom.name, completion);
      toolCalls.push(toProviderToolCall(call.id, name, call.custom.input, undefined));
    } else {
      throw invalidResponse(PROVIDER, `a tool call has no function (type: ${showValue(call.type)})`, completion);
    }
  }
  const text = textOf(message.content);
  const content = text === "" && typeof message.refusal === "string" ? message.refusal : text;
  const finishReason =
    toolCalls.length > 0 ? "tool_calls" : typeof choice.finish_reason === "string" ? choice.finish_reason : "stop";
  const usage = toUsage(isRecord(completion) ? completion.usage : undefined, "prompt_tokens", "completion_tokens");
  return toLLMResponse(content, toolCalls, finishReason, usage);
}

/**
 * An {@link LLMProvider} over OpenAI's Chat Completions API, using your own client
 * (`client.chat.completions.create(body, { signal })`). `llmOptions` go into the request body
 * (`temperature`, `max_tokens`, `tool_choice`, `parallel_tool_calls` …); the loop's `model` is the
 * one sent; API errors propagate unchanged (the loop's `ToolLoopError.cause` is the client's error).
 *
 * Works with every OpenAI-compatible server through the client's `baseURL`.
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
  const factory = "createOpenAIChatProvider";
  if (!isRecord(options)) throw invalidOption(factory, "options", "an object", describeType(options));
  const { client } = options;
  if (!isRecord(client) || !isRecord(client.chat) || typeof client.chat.completions?.create !== "function") {
    throw invalidOption(factory, "client", "an OpenAI client (client.chat.completions.create)", describeType(client));
  }
  const { model: defaultModel, strict } = resolveBaseOptions(factory, options);

  return {
    async chat(messages, tools, model, llmOptions, signal) {
      const body: JsonObject = {
        ...passthroughOptions("OpenAI Chat Completions", llmOptions),
        model,
        messages: toOpenAIChatMessages(messages),
      };
      if (tools !== undefined && tools.length > 0) body.tools = toOpenAIChatTools(tools, { strict });
      const completion = await client.chat.completions.create(
        body as { model: string; messages: OpenAIChatMessage[] },
        requestOptions(signal),
      );
      return fromOpenAIChatCompletion(completion, strict ? schemasByName(tools) : undefined);
    },
    getDefaultModel() {
      return defaultModel;
    },
  };
}
