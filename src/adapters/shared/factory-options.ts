import { isRecord } from "../../internal/describe.js";
import { optionError } from "../../internal/options.js";

/**
 * Checks the options object an adapter factory is given.
 * @throws TypeError `<factory>: options must be an object, got …`
 */
export function checkFactoryOptions(factory: string, options: unknown): asserts options is Record<string, unknown> {
  if (!isRecord(options)) throw optionError(factory, "options", "an object", options);
}

/** What {@link checkClientMethod} checks. */
export interface ClientMethodCheck {
  /** The factory's name, the message's prefix. */
  factory: string;
  /** The option holding the client, e.g. `"client"`. */
  option: string;
  /** The client. */
  value: unknown;
  /** The path to the method the adapter calls, e.g. `["chat", "completions", "create"]`. */
  method: readonly string[];
  /** What the option must be, e.g. `"an OpenAI client (client.chat.completions.create)"`. */
  expected: string;
}

/**
 * Checks that a client (typed structurally) has the method the adapter calls.
 * @throws TypeError `<factory>: <option> must be <expected>, got …`
 */
export function checkClientMethod({ factory, option, value, method, expected }: ClientMethodCheck): void {
  let node: unknown = value;
  for (const key of method) {
    const readable = (typeof node === "object" || typeof node === "function") && node !== null;
    node = readable ? (node as Record<string, unknown>)[key] : undefined;
  }
  if (typeof node !== "function") throw optionError(factory, option, expected, value);
}

/**
 * The factory's `model`: `fallback` when absent, else a non-empty string.
 * @throws TypeError `<factory>: model must be a non-empty string, got …`
 */
export function checkModel(factory: string, model: unknown, fallback: string): string {
  if (model === undefined) return fallback;
  if (typeof model !== "string" || model === "") throw optionError(factory, "model", "a non-empty string", model);
  return model;
}
