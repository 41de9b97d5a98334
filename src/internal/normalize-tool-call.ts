import type { ToolCall } from "../provider.js";
import { describeType, errorMessage, isPlainObject, quoteName } from "./describe.js";

/** A provider's tool call made fit for the transcript, with the reason it cannot run, if any. */
export interface NormalizedToolCall {
  call: ToolCall;
  /** Set when the arguments are not a JSON object; the model is told this instead of running the tool. */
  argumentsError?: string;
}

function notAnObject(name: string, value: unknown): string {
  return `arguments for tool ${quoteName(name)} must be a JSON object, got ${describeType(value)}`;
}

/** Parses arguments text that is not blank. */
function parseArgumentsText(name: string, text: string): { args: Record<string, unknown>; error?: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return {
      args: {},
      error: `invalid JSON in arguments for tool ${quoteName(name)}: ${errorMessage(error)}. Send the arguments as one JSON object.`,
    };
  }
  if (!isPlainObject(value)) {
    return {
      args: {},
      error: notAnObject(name, value),
    };
  }
  return { args: value };
}

/**
 * Every call id of one transcript, made unique: a repeated id gets the next free suffix (`a_2`,
 * `a_3` …) in amortised O(1) per call, also when a provider repeats one id thousands of times.
 */
export class CallIds {
  readonly #used = new Set<string>();
  readonly #nextSuffix = new Map<string, number>();

  /** Records an id that is already in the transcript (the caller's history). */
  add(id: string): void {
    this.#used.add(id);
  }

  /** `id` if unused, else `id_<n>` with the smallest free n ≥ 2 after the last one given for `id`. */
  unique(id: string): string {
    let unique = id;
    if (this.#used.has(id)) {
      let n = this.#nextSuffix.get(id) ?? 2;
      while (this.#used.has(`${id}_${n}`)) n++;
      this.#nextSuffix.set(id, n + 1);
      unique = `${id}_${n}`;
    }
    this.#used.add(unique);
    return unique;
  }
}

/**
 * Normalises one call as a provider returned it: the name and arguments may sit only in the
 * OpenAI-style `function`, arguments may be JSON text (empty means `{}`), and the id may be
 * missing or repeated — ids are made unique so every call gets exactly one answer.
 */
export function normalizeToolCall(raw: unknown, fallbackId: string, ids: CallIds): NormalizedToolCall {
  const isObject = isPlainObject(raw);
  const source = (isObject ? raw : {}) as Record<string, unknown>;
  const fn = isPlainObject(source.function) ? source.function : undefined;
  const name = typeof source.name === "string" ? source.name : typeof fn?.name === "string" ? fn.name : "";
  const given = source.arguments;

  let args: Record<string, unknown> = {};
  let argumentsText: string;
  let argumentsError: string | undefined;
  if (isPlainObject(given)) {
    args = given;
    if (typeof fn?.arguments === "string") {
      argumentsText = fn.arguments;
    } else {
      try {
        argumentsText = JSON.stringify(args);
      } catch (error) {
        // The transcript must record what the tool got: a call whose arguments have no JSON form
        // (a cycle, a BigInt) is refused rather than recorded as something else.
        args = {};
        argumentsText = "{}";
        argumentsError = `arguments for tool ${quoteName(name)} cannot be sent as JSON: ${errorMessage(error)}`;
      }
    }
  } else {
    const text = typeof given === "string" ? given : typeof fn?.arguments === "string" ? fn.arguments : "";
    const blank = text.trim() === "";
    if (!blank) ({ args, error: argumentsError } = parseArgumentsText(name, text));
    argumentsText = blank ? "{}" : text;
    // An array or a scalar is not "no arguments": tell the model instead of running with `{}`.
    if (given != null && typeof given !== "string") argumentsError = notAnObject(name, given);
  }
  if (!isObject) {
    argumentsError = `malformed tool call: expected an object, got ${describeType(raw)}`;
  }

  const id = ids.unique(typeof source.id === "string" && source.id !== "" ? source.id : fallbackId);

  const call: ToolCall = { id, type: "function", name, arguments: args, function: { name, arguments: argumentsText } };
  if (isPlainObject(source.providerMetadata)) call.providerMetadata = source.providerMetadata;
  return argumentsError === undefined ? { call } : { call, argumentsError };
}

/**
 * A call of the transcript made ready to run again (a resumed checkpoint's unanswered call): the
 * tool gets its `arguments`, unless its `function.arguments` text is not a JSON object — then, as
 * when the model sent it, the call is refused with the same message.
 */
export function resumedToolCall(call: ToolCall): NormalizedToolCall {
  const text = call.function?.arguments;
  if (typeof text !== "string" || text.trim() === "") return { call };
  const { error } = parseArgumentsText(call.name, text);
  return error === undefined ? { call } : { call, argumentsError: error };
}
