import type { InvalidProviderResponseError } from "../../errors.js";
import { stripNullsForOptional } from "../../formats/openai.js";
import { describeType, isPlainObject, isRecord, showValue } from "../../internal/describe.js";
import type { LLMResponse, ProviderToolCall } from "../../provider.js";
import { toCallArguments } from "../shared/call-arguments.js";
import { mapFinishReason } from "../shared/finish-reason.js";
import { errorBodyProblem, invalidResponse } from "../shared/invalid-response.js";
import { toLLMResponse } from "../shared/llm-response.js";
import { CHAT_USAGE_FIELDS, openAIUsage } from "./openai-usage.js";

/** What {@link toOpenAIToolCall} reads: one call of either OpenAI API. */
export interface OpenAIToolCallParts {
  /** The call's id as sent (`id` in Chat, `call_id` in Responses); kept when a non-empty string. */
  id: unknown;
  name: string;
  /** The arguments as sent: JSON text normally, a JSON value from some compatible servers. */
  rawArguments: unknown;
  /** In strict mode, the tool schemas by name, to strip the strict-mode nulls against. */
  strictSchemas?: ReadonlyMap<string, Record<string, unknown>> | undefined;
}

/**
 * One call as the loop takes it. The raw JSON text goes through unchanged (empty stays empty,
 * invalid JSON reaches the loop so the model is told); in strict mode, parsable arguments are
 * passed parsed with the strict-mode nulls removed, and the raw text stays in `function.arguments`.
 * Some OpenAI-compatible servers send a JSON value instead of text: an object is taken as it is
 * (strict-mode nulls removed), `null` means no arguments, and any other value reaches the loop
 * (see {@link toCallArguments}), which tells the model arguments must be an object.
 */
export function toOpenAIToolCall({ id, name, rawArguments, strictSchemas }: OpenAIToolCallParts): ProviderToolCall {
  const call: ProviderToolCall = { type: "function", name };
  if (typeof id === "string" && id !== "") call.id = id;
  if (rawArguments === undefined || rawArguments === null) {
    call.arguments = "";
    return call;
  }
  const schema = strictSchemas?.get(name);
  if (typeof rawArguments !== "string") {
    call.arguments =
      schema !== undefined && isPlainObject(rawArguments)
        ? stripNullsForOptional(rawArguments, schema)
        : toCallArguments(rawArguments);
    return call;
  }
  call.arguments = rawArguments;
  if (schema === undefined || rawArguments.trim() === "") return call;
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawArguments);
  } catch {
    return call;
  }
  if (!isPlainObject(parsed)) return call;
  call.arguments = stripNullsForOptional(parsed, schema);
  call.function = { name, arguments: rawArguments };
  return call;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  // Some compatible servers answer with content parts.
  if (Array.isArray(content)) {
    return content.map((part) => (isRecord(part) && typeof part.text === "string" ? part.text : "")).join("");
  }
  return "";
}

/** @internal The API's name in error messages. */
export const PROVIDER = "OpenAI Chat Completions";

function unreadable(problem: string, completion: unknown): InvalidProviderResponseError {
  return invalidResponse({ provider: PROVIDER, problem, body: completion });
}

/** What {@link toolCallsOf} reads. */
interface ChatToolCalls {
  /** The message's `tool_calls`. */
  calls: readonly unknown[];
  /** The whole response, for the errors. */
  completion: unknown;
  strictSchemas: ReadonlyMap<string, Record<string, unknown>> | undefined;
}

/**
 * A call's name.
 * @throws InvalidProviderResponseError when it is not a non-empty string
 */
function callName(kind: "function" | "custom", name: unknown, completion: unknown): string {
  if (typeof name === "string" && name !== "") return name;
  throw unreadable(`a ${kind} tool call has no name (got ${showValue(name)})`, completion);
}

/**
 * The calls of a Chat Completions message (a loop, no closure per response).
 * @throws InvalidProviderResponseError for a call that is not an object, has neither `function`
 *   nor `custom`, or has no name
 */
function toolCallsOf({ calls, completion, strictSchemas }: ChatToolCalls): ProviderToolCall[] {
  const out: ProviderToolCall[] = [];
  for (const call of calls) {
    if (!isRecord(call)) throw unreadable(`a tool call is not an object (got ${describeType(call)})`, completion);
    if (isRecord(call.function)) {
      const name = callName("function", call.function.name, completion);
      out.push(toOpenAIToolCall({ id: call.id, name, rawArguments: call.function.arguments, strictSchemas }));
    } else if (isRecord(call.custom)) {
      const name = callName("custom", call.custom.name, completion);
      out.push(toOpenAIToolCall({ id: call.id, name, rawArguments: call.custom.input }));
    } else throw unreadable(`a tool call has no function (type: ${showValue(call.type)})`, completion);
  }
  return out;
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
    throw unreadable(problem, completion);
  }
  const { message } = choice;
  const calls = message.tool_calls ?? [];
  if (!Array.isArray(calls)) {
    throw unreadable(`the message's tool_calls is not an array (got ${describeType(calls)})`, completion);
  }
  const toolCalls = toolCallsOf({ calls, completion, strictSchemas });
  const text = textOf(message.content);
  return toLLMResponse({
    content: text === "" && typeof message.refusal === "string" ? message.refusal : text,
    toolCalls,
    finishReason: mapFinishReason({ reason: choice.finish_reason, hasCalls: toolCalls.length > 0 }),
    usage: openAIUsage(isRecord(completion) ? completion.usage : undefined, CHAT_USAGE_FIELDS),
  });
}
