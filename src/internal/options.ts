import type { LLMProvider } from "../provider.js";
import { describeType, isPlainObject, isRecord, showValue } from "./describe.js";

/**
 * The one `TypeError` wording for a bad option or argument of any public API:
 * `<where>: <option> must be <expected>, got <the value>` (the value echoed, bounded).
 */
export function optionError(where: string, option: string, expected: string, value: unknown): TypeError {
  // A class instance (a Date, a client object) is named by its class, a function by its type
  // (never its source); anything else is echoed, bounded.
  const instance = typeof value === "object" && value !== null && !Array.isArray(value) && !isPlainObject(value);
  const shown = instance || typeof value === "function" ? describeType(value) : showValue(value);
  return new TypeError(`${where}: ${option} must be ${expected}, got ${shown}`);
}

/** `true` for an `AbortSignal`, also one of another realm or a polyfill with the same surface. */
export function isAbortSignal(value: unknown): value is AbortSignal {
  if (value instanceof AbortSignal) return true;
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as Partial<AbortSignal>;
  return (
    typeof candidate.aborted === "boolean" &&
    typeof candidate.addEventListener === "function" &&
    typeof candidate.removeEventListener === "function"
  );
}

/** Checks an optional `signal` option. */
export function checkSignal(where: string, option: string, value: unknown): AbortSignal | undefined {
  if (value === undefined || isAbortSignal(value)) return value;
  throw optionError(where, option, "an AbortSignal", value);
}

/** Checks an optional `metadata` option: a plain object of strings. */
export function checkMetadata(
  where: string,
  option: string,
  value: unknown,
): Readonly<Record<string, string>> | undefined {
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) throw optionError(where, option, "an object of strings", value);
  for (const key of Object.keys(value)) {
    if (typeof value[key] !== "string") {
      throw optionError(where, `${option}[${JSON.stringify(key)}]`, "a string", value[key]);
    }
  }
  return value as Readonly<Record<string, string>>;
}

/** Checks an optional string option. */
export function checkString(where: string, option: string, value: unknown): string | undefined {
  if (value === undefined || typeof value === "string") return value;
  throw optionError(where, option, "a string", value);
}

/** Checks an `LLMProvider` option: an object with `chat` and `getDefaultModel` methods. */
export function checkProvider(where: string, value: unknown): LLMProvider {
  if (isRecord(value) && typeof value.chat === "function" && typeof value.getDefaultModel === "function") {
    return value as unknown as LLMProvider;
  }
  throw optionError(where, "provider", "an LLMProvider (chat and getDefaultModel)", value);
}

/**
 * `true` for an array whose every element is a string. Index by index: a hole of a sparse array is
 * refused at once (not skipped, nor iterated to the array's length).
 */
export function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.findIndex((item) => typeof item !== "string") === -1;
}

/** Checks an optional count or size option: a safe integer > 0, or `fallback` when absent. */
export function checkCount(where: string, option: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value === "number" && Number.isSafeInteger(value) && value > 0) return value;
  throw optionError(where, option, "an integer > 0", value);
}

/** Checks an optional function option (a callback). */
export function checkFunction<F extends (...args: never[]) => unknown>(
  where: string,
  option: string,
  value: F | undefined,
): F | undefined {
  if (value === undefined || typeof value === "function") return value;
  throw optionError(where, option, "a function", value);
}

/** Checks an optional concurrency bound: an integer ≥ 1 or `Infinity` (the default). */
export function checkConcurrency(where: string, option: string, value: unknown): number {
  if (value === undefined) return Number.POSITIVE_INFINITY;
  if (value === Number.POSITIVE_INFINITY || (Number.isInteger(value) && (value as number) >= 1)) return value as number;
  throw optionError(where, option, "an integer ≥ 1 or Infinity", value);
}
