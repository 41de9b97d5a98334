import type { ToolErrorCode } from "../errors.js";
import type { ToolCall } from "../provider.js";
import { describeType, errorMessage, isPlainObject, quoteName } from "./describe.js";

/** A provider's tool call made fit for the transcript, with the reason it cannot run, if any. */
export interface NormalizedToolCall {
  call: ToolCall;
  /** Set when the arguments are not a JSON object; the model is told this instead of running the tool. */
  argumentsError?: string;
  /** The code of {@link argumentsError} when it is not `"invalid_json"`: arguments nested too deep. */
  errorCode?: ToolErrorCode | undefined;
}

/**
 * How deep a call's arguments may nest: the arguments object is level 1, each object or array in
 * it one more. Real arguments nest a few levels (OpenAI's strict mode allows 10 in a schema;
 * serde_json, which parses JSON for many services, stops at 128). Arguments nested thousands deep
 * would pass into the transcript and overflow the stack of whatever serialises it next: a
 * checkpoint's JSON, the next provider request.
 */
export const MAX_ARGUMENT_DEPTH = 64;

/** One object or array of the arguments, how deep it is, and the path that leads to it. */
type Level = [value: object, depth: number, parent: Level | undefined, key: string];

/**
 * `undefined` when `args` nest at most {@link MAX_ARGUMENT_DEPTH} levels; otherwise the JSON text
 * of the first path found that nests deeper, cut one level past the bound (`{"a":[[…{}]]}`, keys
 * cut to a readable length), which the transcript records instead of the arguments. Iterative
 * (no recursion to overflow) and linear: each object or array is visited once, also when shared or
 * in a cycle, and the walk stops at the first level past the bound.
 */
function nestedTooDeep(args: object): string | undefined {
  const seen = new Set<object>([args]);
  const stack: Level[] = [[args, 1, undefined, ""]];
  for (let level = stack.pop(); level !== undefined; level = stack.pop()) {
    const [value, depth] = level;
    if (depth > MAX_ARGUMENT_DEPTH) {
      let text = Array.isArray(value) ? "[]" : "{}";
      for (let child = level, parent = level[2]; parent !== undefined; child = parent, parent = parent[2]) {
        text = Array.isArray(parent[0]) ? `[${text}]` : `{${quoteName(child[3])}:${text}}`;
      }
      return text;
    }
    for (const key of Object.keys(value)) {
      const child: unknown = (value as Record<string, unknown>)[key];
      if (typeof child === "object" && child !== null && !seen.has(child)) {
        seen.add(child);
        stack.push([child, depth + 1, level, key]);
      }
    }
  }
  return undefined;
}

/** The arguments a call runs with, or why it is refused (and, when it is not as sent, the text to record). */
interface CheckedArguments {
  args: Record<string, unknown>;
  error?: string;
  errorCode?: ToolErrorCode;
  text?: string;
}

/** The refusal of `args` when they nest deeper than {@link MAX_ARGUMENT_DEPTH}, else `undefined`. */
function refuseTooDeep(name: string, args: object): CheckedArguments | undefined {
  const text = nestedTooDeep(args);
  if (text === undefined) return undefined;
  return {
    args: {},
    text,
    error: `invalid arguments for tool ${quoteName(name)}: more than ${MAX_ARGUMENT_DEPTH} levels of nested objects and arrays. Send flatter arguments.`,
    errorCode: "invalid_arguments",
  };
}

function notAnObject(name: string, value: unknown): string {
  return `arguments for tool ${quoteName(name)} must be a JSON object, got ${describeType(value)}`;
}

/** Parses arguments text that is not blank. */
function parseArgumentsText(name: string, text: string): CheckedArguments {
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
  return refuseTooDeep(name, value) ?? { args: value };
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
  let errorCode: ToolErrorCode | undefined;
  if (isPlainObject(given)) {
    // Arguments nested too deep are neither kept nor serialised (that would overflow the stack).
    const deep = refuseTooDeep(name, given);
    if (deep !== undefined) {
      ({ args, error: argumentsError, errorCode, text: argumentsText = "{}" } = deep);
    } else if (typeof fn?.arguments === "string") {
      args = given;
      argumentsText = fn.arguments;
    } else {
      try {
        argumentsText = JSON.stringify(given);
        args = given;
      } catch (error) {
        // The transcript must record what the tool got: a call whose arguments have no JSON form
        // (a cycle, a BigInt) is refused rather than recorded as something else.
        argumentsText = "{}";
        argumentsError = `arguments for tool ${quoteName(name)} cannot be sent as JSON: ${errorMessage(error)}`;
      }
    }
  } else {
    const text = typeof given === "string" ? given : typeof fn?.arguments === "string" ? fn.arguments : "";
    const blank = text.trim() === "";
    argumentsText = blank ? "{}" : text;
    // Text nested too deep is recorded as refuseTooDeep's cut text.
    if (!blank)
      ({ args, error: argumentsError, errorCode, text: argumentsText = text } = parseArgumentsText(name, text));
    // An array or a scalar is not "no arguments": tell the model instead of running with `{}`.
    if (given != null && typeof given !== "string") argumentsError = notAnObject(name, given);
  }
  if (!isObject) {
    argumentsError = `malformed tool call: expected an object, got ${describeType(raw)}`;
  }

  const id = ids.unique(typeof source.id === "string" && source.id !== "" ? source.id : fallbackId);

  const call: ToolCall = { id, type: "function", name, arguments: args, function: { name, arguments: argumentsText } };
  if (isPlainObject(source.providerMetadata)) call.providerMetadata = source.providerMetadata;
  return refused(call, argumentsError, errorCode);
}

/** `call`, refused with `error` (and its code when not `"invalid_json"`) when there is one. */
function refused(call: ToolCall, error: string | undefined, errorCode: ToolErrorCode | undefined): NormalizedToolCall {
  return error === undefined ? { call } : { call, argumentsError: error, errorCode };
}

/**
 * A call of the transcript made ready to run again (a resumed checkpoint's unanswered call): the
 * tool gets its `arguments`, unless its `function.arguments` text is not a JSON object, or the
 * text or the arguments nest too deep — then, as when the model sent it, the call is refused with
 * the same message.
 */
export function resumedToolCall(call: ToolCall): NormalizedToolCall {
  const text = call.function?.arguments;
  const parsed = typeof text === "string" && text.trim() !== "" ? parseArgumentsText(call.name, text) : undefined;
  const checked =
    parsed?.error !== undefined || !isPlainObject(call.arguments) ? parsed : refuseTooDeep(call.name, call.arguments);
  return refused(call, checked?.error, checked?.errorCode);
}
