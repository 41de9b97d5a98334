import { isRecord } from "../../internal/describe.js";
import { optionError } from "../../internal/options.js";

/** The client a factory needs, as {@link checkedClient} checks it. */
export interface ClientSpec {
  /** The option holding the client, e.g. `"client"` (the AI SDK adapter's is `"model"`). */
  option: string;
  /** The path to the method the adapter calls, e.g. `["chat", "completions", "create"]`. */
  method: readonly string[];
  /** What the option must be, e.g. `"an OpenAI client (client.chat.completions.create)"`. */
  expected: string;
}

/** What {@link checkedClient} checks. */
export interface FactoryCheck<O, K extends keyof O> extends ClientSpec {
  /** The factory's name, the messages' prefix. */
  factory: string;
  /** The options the factory was given. */
  options: O;
  option: K & string;
}

/**
 * The client (typed structurally) in a factory's options, once checked: the options must be an
 * object, and the client must have the method the adapter calls.
 * @throws TypeError `<factory>: options must be an object, got …` or
 *   `<factory>: <option> must be <expected>, got …`
 */
export function checkedClient<O, K extends keyof O>({
  factory,
  options,
  option,
  method,
  expected,
}: FactoryCheck<O, K>): O[K] {
  if (!isRecord(options)) throw optionError(factory, "options", "an object", options);
  const client = options[option];
  let node: unknown = client;
  for (const key of method) {
    const readable = (typeof node === "object" || typeof node === "function") && node !== null;
    node = readable ? (node as Record<string, unknown>)[key] : undefined;
  }
  if (typeof node !== "function") throw optionError(factory, option, expected, client);
  return client;
}

/**
 * The factory's `model`: `fallback` when absent, else a non-empty string.
 * @throws TypeError `<factory>: model must be a non-empty string, got …`
 */
export function checkModel(factory: string, model: unknown, fallback: string): string {
  return checkName(factory, "model", model, fallback);
}

/**
 * The factory's `providerName` (the `gen_ai.provider.name` it reports): `fallback` when absent,
 * else a non-empty string.
 * @throws TypeError `<factory>: providerName must be a non-empty string, got …`
 */
export function checkProviderName(factory: string, providerName: unknown, fallback: string): string {
  return checkName(factory, "providerName", providerName, fallback);
}

function checkName(factory: string, option: string, value: unknown, fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== "string" || value === "") throw optionError(factory, option, "a non-empty string", value);
  return value;
}
