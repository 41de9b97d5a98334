import { isPlainObject, jsonText } from "../../internal/describe.js";

/**
 * A call's arguments as the loop takes them from an API that sends a JSON value: an object as it
 * is, `{}` when absent or `null` (no arguments), a string as it is (the loop parses it, and tells
 * the model when it is not JSON). Any other JSON value (an array, a number, a boolean) becomes its
 * JSON text: the transcript then records what the model sent, and the loop answers the model
 * "arguments for tool "x" must be a JSON object, got array" without running the tool. A value
 * with no JSON text (only a custom client can give one) reaches the loop as it is; the loop
 * refuses it the same way, naming its type.
 */
export function toCallArguments(input: unknown): Record<string, unknown> | string {
  if (input === undefined || input === null) return {};
  if (isPlainObject(input) || typeof input === "string") return input;
  const isJsonScalar = typeof input === "boolean" || (typeof input === "number" && Number.isFinite(input));
  // An array holding a cycle or a BigInt has no JSON text: handed over as it is below.
  const text = isJsonScalar || Array.isArray(input) ? jsonText(input) : undefined;
  if (text !== undefined) return text;
  // Typed as the loop's input; the loop checks the type at run time and refuses it.
  return input as Record<string, unknown>;
}

/**
 * The JSON text of a call's arguments as {@link toCallArguments} takes them, for a stream's
 * `tool-input-delta` of an API that sends calls whole: `{}` when absent, a string as it is, any
 * other value as JSON (`""` for one without JSON text).
 */
export function callArgumentsText(input: unknown): string {
  const args = toCallArguments(input);
  return typeof args === "string" ? args : (jsonText(args) ?? "");
}
