import { type AnthropicToolDefinition, toAnthropicTools } from "./formats/anthropic.js";
import { type GeminiFunctionDeclaration, toGeminiTools } from "./formats/gemini.js";
import { type OllamaTool, toOllamaTools } from "./formats/ollama.js";
import { type OpenAIResponsesFunctionTool, toOpenAIResponsesToolsAsGiven } from "./formats/openai.js";
import { optionError } from "./internal/options.js";
import type { ToolDefinition } from "./provider.js";

/** The tool-definition shape of each API, as returned by `registry.getDefinitions(format)`. */
export interface DefinitionFormats {
  /** Chat Completions (and every OpenAI-compatible server): `{ type: "function", function: {…} }`. */
  openai: ToolDefinition;
  /** Responses API: flat `{ type: "function", name, description, parameters, strict: false }`. */
  "openai-responses": OpenAIResponsesFunctionTool;
  /** Messages API: `{ name, description, input_schema }`. */
  anthropic: AnthropicToolDefinition;
  /** `/api/chat`: the Chat Completions shape. */
  ollama: OllamaTool;
  /** `functionDeclarations`: `{ name, description, parameters }` in Gemini's schema subset. */
  gemini: GeminiFunctionDeclaration;
}

/** A format name accepted by `registry.getDefinitions(format)`. */
export type DefinitionFormat = keyof DefinitionFormats;

const converters: { [F in DefinitionFormat]: (definitions: readonly ToolDefinition[]) => DefinitionFormats[F][] } = {
  openai: (definitions) => [...definitions],
  "openai-responses": toOpenAIResponsesToolsAsGiven,
  anthropic: toAnthropicTools,
  ollama: toOllamaTools,
  gemini: toGeminiTools,
};

/** @internal converts OpenAI-shaped definitions to `format`, keeping their order. */
export function convertDefinitions<F extends DefinitionFormat>(
  definitions: readonly ToolDefinition[],
  format: F,
): DefinitionFormats[F][] {
  if (!Object.hasOwn(converters, format)) {
    const names = Object.keys(converters).map((name) => JSON.stringify(name));
    throw optionError("getDefinitions", "format", `one of ${names.join(", ")}`, format);
  }
  return converters[format](definitions);
}
