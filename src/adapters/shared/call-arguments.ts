import { isPlainObject } from "../../internal/describe.js";

/**
 * A call's arguments as the loop takes them from an API that sends an object: the object itself,
 * `{}` when absent, a string as it is, and anything else as JSON text so the loop tells the model
 * what was wrong.
 */
export function toCallArguments(input: unknown): Record<string, unknown> | string {
  if (input === undefined || input === null) return {};
  if (isPlainObject(input)) return input;
  return typeof input === "string" ? input : (JSON.stringify(input) ?? "");
}
