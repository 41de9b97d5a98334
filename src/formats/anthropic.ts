import type { ToolDefinition } from "../provider.js";

/** The JSON Schema of a tool's input in Anthropic's format; `type` is always `"object"`. */
export interface AnthropicInputSchema {
  /** Always `"object"`: Anthropic takes object schemas only. */
  type: "object";
  [keyword: string]: unknown;
}

/** A client tool in the Anthropic Messages API's shape (`tools[]` of `POST /v1/messages`). */
export interface AnthropicToolDefinition {
  /** The tool's name, as the model calls it. */
  name: string;
  /** What the tool does, for the model; left out when the tool has none. */
  description?: string;
  /** The JSON Schema of the tool's arguments. */
  input_schema: AnthropicInputSchema;
}

/**
 * Converts definitions in OpenAI's function shape to Anthropic's `{ name, description,
 * input_schema }`, in the same order. The schema is copied as it is (the API accepts `$schema` and
 * `additionalProperties`), with `type: "object"` set because the API requires it. An empty
 * description is left out.
 */
export function toAnthropicTools(definitions: readonly ToolDefinition[]): AnthropicToolDefinition[] {
  return definitions.map(({ function: { name, description, parameters } }) => {
    const input_schema: AnthropicInputSchema = { ...parameters, type: "object" };
    return typeof description === "string" && description !== ""
      ? { name, description, input_schema }
      : { name, input_schema };
  });
}
