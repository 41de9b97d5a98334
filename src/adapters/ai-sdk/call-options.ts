import { isPlainObject } from "../../internal/describe.js";

/** `llmOptions` keys in OpenAI's or Anthropic's spelling, and the LanguageModel call option each sets. */
const ALIASES: ReadonlyMap<string, string> = new Map([
  ["max_tokens", "maxOutputTokens"],
  ["max_completion_tokens", "maxOutputTokens"],
  ["max_output_tokens", "maxOutputTokens"],
  ["maxTokens", "maxOutputTokens"],
  ["top_p", "topP"],
  ["top_k", "topK"],
  ["presence_penalty", "presencePenalty"],
  ["frequency_penalty", "frequencyPenalty"],
  ["stop", "stopSequences"],
  ["stop_sequences", "stopSequences"],
  ["tool_choice", "toolChoice"],
]);

/**
 * A tool choice in any common spelling, as a LanguageModel `toolChoice`: `"auto"`, `"none"`,
 * `"required"` (Anthropic's `"any"` too), OpenAI's `{ type: "function", function: { name } }`,
 * Anthropic's `{ type: "tool", name }`, or the AI SDK's own `{ type: "tool", toolName }`.
 */
export function toToolChoice(choice: unknown): unknown {
  const type = typeof choice === "string" ? choice : isPlainObject(choice) ? choice.type : undefined;
  if (type === "auto" || type === "none" || type === "required") return { type };
  if (type === "any") return { type: "required" };
  if (!isPlainObject(choice)) return choice;
  if (type === "function" && isPlainObject(choice.function) && typeof choice.function.name === "string") {
    return { type: "tool", toolName: choice.function.name };
  }
  if (type === "tool" && typeof choice.toolName !== "string" && typeof choice.name === "string") {
    return { type: "tool", toolName: choice.name };
  }
  return choice;
}

/**
 * Maps `llmOptions` to LanguageModel call options: the AI SDK's own names (`maxOutputTokens`,
 * `temperature`, `topP`, `toolChoice`, `providerOptions`, `headers` …) pass as they are; OpenAI-style
 * names (`max_tokens`, `top_p`, `stop`, `tool_choice` …) are renamed, the AI SDK's name winning when
 * both are given. A `stop` string becomes a one-element `stopSequences`. Other keys pass through.
 */
export function toCallOptions(llmOptions: Record<string, unknown>): Record<string, unknown> {
  const options: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(llmOptions)) {
    if (value === undefined) continue;
    const target = ALIASES.get(key);
    if (target === undefined) options[key] = value;
    else if (!(target in llmOptions)) options[target] = value;
  }
  if (typeof options.stopSequences === "string") options.stopSequences = [options.stopSequences];
  if (options.toolChoice !== undefined) options.toolChoice = toToolChoice(options.toolChoice);
  return options;
}
