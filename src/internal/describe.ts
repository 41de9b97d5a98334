const MAX_NAME_LENGTH = 80;

/** Quotes a (possibly model-supplied) name for a message: JSON-escaped and cut to a readable length. */
export function quoteName(name: unknown): string {
  const text = typeof name === "string" ? name : String(name);
  const shown = text.length > MAX_NAME_LENGTH ? `${text.slice(0, MAX_NAME_LENGTH)}…` : text;
  return JSON.stringify(shown);
}

/** A short description of a value's type for error messages ("array", "null", "number" …). */
export function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
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

/** The message of anything thrown: an Error's message, or the value as text. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === "string") return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

/** Anything thrown, as an Error (non-Errors are wrapped, keeping the value as `cause`). */
export function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(errorMessage(error), { cause: error });
}
