import { stripNullsForOptional, toOpenAIStrictSchema } from "../../formats/openai.js";
import { isPlainObject, isRecord } from "../../internal/describe.js";
import type { LLMResponse, LLMStreamPart, OutputRequest } from "../../provider.js";

/** Each output schema's strict form, converted once per schema object (the loop sends the same one every step). */
const strictForms = new WeakMap<object, Record<string, unknown>>();

/** `output.schema` as OpenAI's strict structured output accepts it ({@link toOpenAIStrictSchema}), converted once. */
export function strictOutputSchema(output: OutputRequest): Record<string, unknown> {
  let strict = strictForms.get(output.schema);
  if (strict === undefined) {
    strict = toOpenAIStrictSchema(output.schema);
    strictForms.set(output.schema, strict);
  }
  return strict;
}

/**
 * Chat Completions' request for the final answer's schema:
 * `response_format: { type: "json_schema", json_schema: { name, schema, strict: true } }`.
 */
export function openAIChatOutputFields(output: OutputRequest): Record<string, unknown> {
  return {
    response_format: {
      type: "json_schema",
      json_schema: { name: output.name, schema: strictOutputSchema(output), strict: true },
    },
  };
}

/**
 * The Responses API's request for the final answer's schema:
 * `text: { format: { type: "json_schema", name, schema, strict: true } }`; the caller's other
 * `text` options (`verbosity` …) are kept.
 */
export function openAIResponsesOutputFields(
  output: OutputRequest,
  body: Record<string, unknown>,
): Record<string, unknown> {
  return {
    text: {
      ...(isRecord(body.text) ? body.text : {}),
      format: { type: "json_schema", name: output.name, schema: strictOutputSchema(output), strict: true },
    },
  };
}

/**
 * A final answer (a turn without calls) whose text is a JSON object, with the `null`s strict mode
 * made the model send for properties optional in `schema` removed ({@link stripNullsForOptional}),
 * so the loop validates them as absent; the text is rewritten only when a `null` was removed. Any
 * other answer (calls, text that is not a JSON object) is returned as it is.
 */
export function withoutOutputNulls(response: LLMResponse, schema: Record<string, unknown>): LLMResponse {
  if (response.toolCalls.length > 0 || !response.content.includes("null")) return response;
  let parsed: unknown;
  try {
    parsed = JSON.parse(response.content);
  } catch {
    return response;
  }
  if (!isPlainObject(parsed)) return response;
  const stripped = JSON.stringify(stripNullsForOptional(parsed, schema));
  return stripped === JSON.stringify(parsed) ? response : { ...response, content: stripped };
}

/** A streamed answer whose last part, the whole response, goes through {@link withoutOutputNulls}. */
export async function* streamWithoutOutputNulls(
  parts: AsyncIterable<LLMStreamPart>,
  schema: Record<string, unknown>,
): AsyncGenerator<LLMStreamPart, void> {
  for await (const part of parts) {
    yield part.type === "response" ? { ...part, response: withoutOutputNulls(part.response, schema) } : part;
  }
}
