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

function parseArgumentsText(name: string, text: string): { args: Record<string, unknown>; error?: string } {
  if (text.trim() === "") return { args: {} };
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

function stringify(args: Record<string, unknown>): string {
  try {
    return JSON.stringify(args);
  } catch {
    return "{}";
  }
}

/**
 * Normalises one call as a provider returned it: the name and arguments may sit only in the
 * OpenAI-style `function`, arguments may be JSON text (empty means `{}`), and the id may be
 * missing or repeated — ids are made unique so every call gets exactly one answer.
 */
export function normalizeToolCall(raw: unknown, fallbackId: string, usedIds: Set<string>): NormalizedToolCall {
  const source = (isPlainObject(raw) ? raw : {}) as Record<string, unknown>;
  const fn = isPlainObject(source.function) ? source.function : undefined;
  const name = typeof source.name === "string" ? source.name : typeof fn?.name === "string" ? fn.name : "";

  let args: Record<string, unknown> = {};
  let argumentsText: string;
  let argumentsError: string | undefined;
  if (isPlainObject(source.arguments)) {
    args = source.arguments;
    argumentsText = typeof fn?.arguments === "string" ? fn.arguments : stringify(args);
  } else {
    const text =
      typeof source.arguments === "string" ? source.arguments : typeof fn?.arguments === "string" ? fn.arguments : "";
    const parsed = parseArgumentsText(name, text);
    args = parsed.args;
    argumentsError = parsed.error;
    argumentsText = text.trim() === "" ? "{}" : text;
  }
  if (source.arguments != null && typeof source.arguments !== "string" && !isPlainObject(source.arguments)) {
    // An array or a scalar is not "no arguments": tell the model instead of running with `{}`.
    argumentsError = notAnObject(name, source.arguments);
  }
  if (!isPlainObject(raw)) {
    argumentsError = `malformed tool call: expected an object, got ${describeType(raw)}`;
  }

  let id = typeof source.id === "string" && source.id !== "" ? source.id : fallbackId;
  if (usedIds.has(id)) {
    let n = 2;
    while (usedIds.has(`${id}_${n}`)) n++;
    id = `${id}_${n}`;
  }
  usedIds.add(id);

  const call: ToolCall = { id, type: "function", name, arguments: args, function: { name, arguments: argumentsText } };
  if (isPlainObject(source.providerMetadata)) call.providerMetadata = source.providerMetadata;
  return argumentsError === undefined ? { call } : { call, argumentsError };
}
