import { describeType, isRecord } from "./describe.js";

/** Why a provider's response (or what a middleware returned for one) cannot be read; `undefined` when it can. */
export function responseProblem(response: unknown): string | undefined {
  if (!isRecord(response)) return `expected an LLMResponse object, got ${describeType(response)}`;
  const { toolCalls, tool_calls: snakeCase } = response;
  const noCalls = toolCalls == null || (Array.isArray(toolCalls) && toolCalls.length === 0);
  // A provider written against OpenAI's wire names would otherwise be read as a final answer.
  if (noCalls && snakeCase != null && !(Array.isArray(snakeCase) && snakeCase.length === 0)) {
    return 'it has "tool_calls" but no "toolCalls": an LLMProvider returns its calls as toolCalls (camelCase)';
  }
  if (toolCalls != null && !Array.isArray(toolCalls))
    return `toolCalls must be an array, got ${describeType(toolCalls)}`;
  return undefined;
}
