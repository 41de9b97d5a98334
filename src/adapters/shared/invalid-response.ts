import { InvalidProviderResponseError } from "../../errors.js";
import { boundText, isRecord } from "../../internal/describe.js";

/** Longest text of an API's own error message quoted in ours. */
const MAX_QUOTED_CHARS = 300;

/** What {@link invalidResponse} reports. */
export interface InvalidResponseReport {
  /** The API's name, e.g. `"Anthropic"`: the message's prefix and the error's `provider`. */
  provider: string;
  /** What is wrong, e.g. `the response has no content array (got undefined)`. */
  problem: string;
  /** The raw response (bounded by the error itself). */
  body: unknown;
  /** The error that revealed the problem, when there is one. */
  cause?: unknown;
}

/**
 * The error an adapter throws for a response it cannot read: `<provider>: <problem>`, with the
 * raw response as `body` and, when there is one, the `cause`.
 */
export function invalidResponse({
  provider,
  problem,
  body,
  cause,
}: InvalidResponseReport): InvalidProviderResponseError {
  return new InvalidProviderResponseError(`${provider}: ${problem}`, {
    provider,
    body,
    ...(cause === undefined ? {} : { cause }),
  });
}

/**
 * Text the API sent (an error message, Gemini's `finishMessage` …), to quote in a message: a
 * non-empty string bounded to a few hundred characters, a number as text, else `undefined`.
 */
export function quoted(value: unknown): string | undefined {
  if (typeof value === "string") return value === "" ? undefined : boundText(value, MAX_QUOTED_CHARS);
  if (typeof value === "number") return String(value);
  return undefined;
}

/**
 * When `body` is an API error object that arrived as a response (status 200) — `{ error: {…} }`,
 * `{ error: "…" }`, or Anthropic's `{ type: "error", error: {…} }` — what to tell: `the response
 * is an error (overloaded_error: Overloaded)`. Otherwise `undefined`.
 */
export function errorBodyProblem(body: unknown): string | undefined {
  if (!isRecord(body)) return undefined;
  // `error: null` is a field of ordinary responses (OpenAI Responses), not an error.
  if ((body.error === undefined || body.error === null) && body.type !== "error") return undefined;
  const { error } = body;
  const details = isRecord(error)
    ? [quoted(error.type) ?? quoted(error.status) ?? quoted(error.code), quoted(error.message)]
    : [quoted(error)];
  const text = details.filter((part) => part !== undefined).join(": ");
  return text === "" ? "the response is an error" : `the response is an error (${text})`;
}
