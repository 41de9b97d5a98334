import { type Span, SpanStatusCode } from "@opentelemetry/api";
import { isToolloopBaseError } from "../errors.js";
import { boundText, cutName, errorMessage } from "../internal/describe.js";
import { GEN_AI, MAX_CAPTURED_CHARS } from "./gen-ai-attributes.js";

/**
 * The `error.type` of what a run or a model call rejected with: a toolloop error's `code`
 * (`"aborted"`, `"provider_failed"` …), else the error's class name (`"APIError"`), else `"_OTHER"`
 * (the conventions' fallback) — low-cardinality, never the message.
 * @internal
 */
export function errorTypeOf(error: unknown): string {
  try {
    if (isToolloopBaseError(error) && typeof error.code === "string") return error.code;
    if (error instanceof Error && typeof error.name === "string" && error.name !== "") return cutName(error.name);
  } catch {
    // a hostile error whose getters throw: the fallback below
  }
  return "_OTHER";
}

/**
 * Marks `span` as failed with `error`: `error.type`, an `exception` event and the ERROR status,
 * whose texts are cut (a provider's or a tool's error may say anything, at any length).
 * @internal
 */
export function recordFailure(span: Span, error: unknown): void {
  const type = errorTypeOf(error);
  const message = boundText(errorMessage(error), MAX_CAPTURED_CHARS);
  span.setAttribute(GEN_AI.errorType, type);
  let stack: string | undefined;
  try {
    stack = error instanceof Error && typeof error.stack === "string" ? error.stack : undefined;
  } catch {
    stack = undefined;
  }
  span.recordException(
    stack === undefined
      ? { name: type, message }
      : { name: type, message, stack: boundText(stack, MAX_CAPTURED_CHARS) },
  );
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}
