import type { InvalidProviderResponseError } from "../../errors.js";
import { describeType, errorMessage, isRecord, showValue } from "../../internal/describe.js";
import type { FinishReason, LLMResponse, ProviderToolCall } from "../../provider.js";
import { mapFinishReason } from "../shared/finish-reason.js";
import { errorBodyProblem, invalidResponse } from "../shared/invalid-response.js";
import { toLLMResponse } from "../shared/llm-response.js";
import { toOpenAIToolCall } from "./convert-openai-chat-response.js";
import { openAIUsage, RESPONSES_USAGE_FIELDS } from "./openai-usage.js";

/** @internal The API's name in error messages. */
export const PROVIDER = "OpenAI Responses";

const INCOMPLETE_REASONS: ReadonlyMap<string, FinishReason> = new Map([["max_output_tokens", "length"]]);

function unreadable(problem: string, response: unknown): InvalidProviderResponseError {
  return invalidResponse({ provider: PROVIDER, problem, body: response });
}

/** The stop reason a response without calls gives: its `status`, or why it is incomplete. */
function stopReasonOf(response: Record<string, unknown>): string {
  const { status } = response;
  if (status === "incomplete") {
    const reason = isRecord(response.incomplete_details) ? response.incomplete_details.reason : undefined;
    return typeof reason === "string" ? reason : "incomplete";
  }
  return status === "completed" || status === undefined || status === null ? "stop" : String(status);
}

/** @throws InvalidProviderResponseError for a response that carries no answer (failed, cancelled, not done yet) */
function checkStatus(response: Record<string, unknown>): void {
  const { status } = response;
  if (status === "failed") {
    const error = isRecord(response.error) ? errorMessage(response.error.message ?? response.error) : "no details";
    throw unreadable(`the response failed: ${error}`, response);
  }
  if (status === "cancelled") throw unreadable("the response was cancelled", response);
  if (status === "queued" || status === "in_progress") {
    throw unreadable(`the response has no answer yet (status: ${status})`, response);
  }
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
    throw unreadable(problem, response);
  }
  checkStatus(response);
  const texts: string[] = [];
  const refusals: string[] = [];
  const toolCalls: ProviderToolCall[] = [];
  for (const item of response.output) {
    if (!isRecord(item)) throw unreadable(`an output item is not an object (got ${describeType(item)})`, response);
    if (item.type === "function_call") {
      if (typeof item.name !== "string" || item.name === "") {
        throw unreadable(`a function_call item has no name (got ${showValue(item.name)})`, response);
      }
      toolCalls.push(
        toOpenAIToolCall({ id: item.call_id, name: item.name, rawArguments: item.arguments, strictSchemas }),
      );
    } else if (item.type === "message" && Array.isArray(item.content)) {
      for (const part of item.content) {
        if (!isRecord(part)) continue;
        if (part.type === "output_text" && typeof part.text === "string") texts.push(part.text);
        else if (part.type === "refusal" && typeof part.refusal === "string") refusals.push(part.refusal);
      }
    }
  }
  return toLLMResponse({
    content: texts.length > 0 ? texts.join("") : refusals.join(""),
    toolCalls,
    finishReason: mapFinishReason({
      reason: stopReasonOf(response),
      hasCalls: toolCalls.length > 0,
      table: INCOMPLETE_REASONS,
    }),
    usage: openAIUsage(response.usage, RESPONSES_USAGE_FIELDS),
  });
}
