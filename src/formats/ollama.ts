/**
 * Tool definitions in Ollama's format (`POST /api/chat` `tools`), without the client library.
 * @module
 */

import { isPlainObject } from "../internal/describe.js";
import type { ToolDefinition } from "../provider.js";

/** One entry of Ollama's `tools`: the OpenAI Chat shape. */
export interface OllamaTool {
  /** Always `"function"`. */
  type: "function";
  /** The function the model may call. */
  function: {
    /** The tool's name, as the model calls it. */
    name: string;
    /** What the tool does, for the model. */
    description: string;
    /** The JSON Schema of the tool's arguments. */
    parameters: Record<string, unknown>;
  };
}

/**
 * Ollama's `tools` for these definitions, in the same order: the OpenAI Chat shape, with the
 * JSON Schema passed as is (`$schema` dropped; the server ignores keywords it does not know).
 * Returns new tool objects and a new top-level `parameters` object; nested schema parts (each
 * property's schema …) are shared with the input, so copy them before changing them.
 *
 * @example
 * ```ts
 * await ollama.chat({ model: "llama3.2", messages, tools: toOllamaTools(registry.getDefinitions()) });
 * ```
 */
export function toOllamaTools(defs: readonly ToolDefinition[]): OllamaTool[] {
  return defs.map(({ function: fn }) => {
    const { $schema: _dialect, ...parameters } = isPlainObject(fn.parameters) ? fn.parameters : {};
    return {
      type: "function",
      function: {
        name: fn.name,
        description: fn.description,
        parameters: { type: "object", properties: {}, ...parameters },
      },
    };
  });
}
