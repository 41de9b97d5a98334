const MAX_NAME_LENGTH = 80;

/** Longest text of a thrown value's message that reaches the model or the log. */
export const MAX_ERROR_MESSAGE_CHARS = 4_000;

/** Longest validation message (what is wrong with the model's arguments) that reaches the model. */
export const MAX_VALIDATION_MESSAGE_CHARS = 1_000;

/** Longest echo of a bad value in a `TypeError` or an error message. */
const MAX_SHOWN_VALUE_CHARS = 200;

/** Whether `code` (a UTF-16 code unit) is the first half of a surrogate pair. */
export const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;
/** Whether `code` (a UTF-16 code unit) is the second half of a surrogate pair. */
export const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;

/** `end`, or one less where `text.slice(0, end)` would end on the first half of a surrogate pair. */
export function wholeEnd(text: string, end: number): number {
  return end > 0 && isHighSurrogate(text.charCodeAt(end - 1)) ? end - 1 : end;
}

/**
 * `text` cut to at most `max` characters, ending with a marker that says how many were cut
 * (`… [1234 more characters cut]`). Every text a model or a caller can make toolloop produce
 * goes through here, so none is unbounded.
 */
export function boundText(text: string, max: number): string {
  if (text.length <= max) return text;
  // The marker's own length depends on the count; reserve room for the longest one.
  const marker = ` … [${text.length} more characters cut]`;
  const keep = wholeEnd(text, Math.max(0, max - marker.length));
  return `${text.slice(0, keep)} … [${text.length - keep} more characters cut]`;
}

/** A (possibly model-supplied) name or id cut to a readable length, for messages and log fields. */
export function cutName(name: unknown): string {
  const text = typeof name === "string" ? name : describeType(name);
  return text.length > MAX_NAME_LENGTH ? `${text.slice(0, MAX_NAME_LENGTH)}…` : text;
}

/** An optional call id for a log field, cut like {@link cutName}; `undefined` stays `undefined`. */
export function cutId(id: string | undefined): string | undefined {
  return id === undefined ? undefined : cutName(id);
}

/** Quotes a (possibly model-supplied) name for a message: JSON-escaped and cut to a readable length. */
export function quoteName(name: unknown): string {
  return JSON.stringify(cutName(name));
}

/** The class name of an object, or `undefined` for a plain or null-prototype object (never throws). */
function className(value: object): string | undefined {
  try {
    const proto = Object.getPrototypeOf(value);
    if (proto === null || proto === Object.prototype) return undefined;
    const name = typeof proto.constructor === "function" ? proto.constructor.name : undefined;
    return typeof name === "string" && name !== "" ? name : "an instance of an anonymous class";
  } catch {
    return "an object with a throwing prototype";
  }
}

/**
 * A short description of a value's type for error messages: `"array"`, `"null"`, `"number"`,
 * `"object"` for a plain object, and the class for an instance (`"Date"`, `"Map"`, `"Foo"`).
 */
export function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "object") return className(value) ?? "object";
  return typeof value;
}

/**
 * A value as bounded text for a message that echoes it: numbers as they are (JSON shows `NaN` as
 * `null`), other values as JSON, `String(value)` when there is no JSON form. Never throws.
 */
export function showValue(value: unknown): string {
  let text: string;
  if (typeof value === "number") text = String(value);
  else {
    const json = jsonText(value);
    if (json !== undefined) text = json;
    else if (typeof value === "object" && value !== null) text = describeType(value);
    else text = String(value);
  }
  return boundText(text, MAX_SHOWN_VALUE_CHARS);
}

/**
 * The JSON text of `value`, or `undefined` when it has none: `undefined`, a function or a symbol,
 * or a value that cannot be serialised (a cycle, a BigInt, a throwing `toJSON`). Never throws. The
 * one place toolloop serialises a value it did not build; callers bound the text.
 */
export function jsonText(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}

/** `true` for any non-array object, class instances included (SDK responses are plain JSON, but a custom client may use classes). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `true` for `{}`-like objects (not arrays, not class instances such as Date or Map). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function isError(value: unknown): value is Error {
  // Also errors from another realm (vm, worker), which fail `instanceof Error`.
  return value instanceof Error || Object.prototype.toString.call(value) === "[object Error]";
}

/**
 * The message of anything thrown, bounded: an Error's message; a string, number, `null` or
 * `undefined` as text; any other value only by its type (`threw a non-Error value: object`) — an object is never serialised,
 * since it may hold secrets (a request with its headers) and need not be serialisable. Never throws.
 */
export function errorMessage(error: unknown): string {
  let text: string;
  try {
    if (isError(error)) {
      text = typeof error.message === "string" ? error.message : `${describeType(error)} without a message`;
    } else if (typeof error === "string") {
      text = error;
    } else if (typeof error === "number" || error === undefined || error === null) {
      text = String(error);
    } else {
      text = `threw a non-Error value: ${describeType(error)}`;
    }
  } catch {
    text = "threw an error whose message cannot be read";
  }
  return boundText(text, MAX_ERROR_MESSAGE_CHARS);
}
