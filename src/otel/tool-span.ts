import { type Attributes, type Context, type Span, SpanKind, SpanStatusCode, type Tracer } from "@opentelemetry/api";
import { isToolExecutionError } from "../errors.js";
import { boundText, cutName, jsonText } from "../internal/describe.js";
import { isToolResult, type ToolResult } from "../tool-result.js";
import { GEN_AI, MAX_CAPTURED_CHARS } from "./gen-ai-attributes.js";
import { recordFailure } from "./record-failure.js";

/** What an `execute_tool` span describes: the call as the loop (or a queue's worker) runs it. @internal */
export interface ToolSpanCall {
  toolName: string;
  toolCallId: string;
  /** The arguments, recorded (as JSON, cut) only when content is captured. */
  arguments?: unknown;
}

/**
 * Starts the `execute_tool {name}` span of one call (kind INTERNAL) under `parent`. The names and
 * ids are cut: a call id comes from the model and may be a megabyte long.
 * @internal
 */
export function startToolSpan(tracer: Tracer, call: ToolSpanCall, parent: Context, captureContent: boolean): Span {
  const toolName = cutName(call.toolName);
  const attributes: Attributes = {
    [GEN_AI.operationName]: "execute_tool",
    [GEN_AI.toolName]: toolName,
    [GEN_AI.toolType]: "function",
  };
  if (call.toolCallId !== "") attributes[GEN_AI.toolCallId] = cutName(call.toolCallId);
  const span = tracer.startSpan(`execute_tool ${toolName}`, { kind: SpanKind.INTERNAL, attributes }, parent);
  if (captureContent) {
    const text = jsonText(call.arguments);
    if (text !== undefined) span.setAttribute(GEN_AI.toolCallArguments, boundText(text, MAX_CAPTURED_CHARS));
  }
  return span;
}

/**
 * The `error.type` of a call whose answer is an error result: the failure's code when toolloop
 * made it (`"tool_failed"` for a throw, `"timeout"`, `"aborted"`, `"no_result"`,
 * `"invalid_arguments"` …), else `"tool_error"` (an error result the tool returned itself).
 * @internal
 */
export function toolErrorType(result: ToolResult): string {
  return isToolExecutionError(result.err) ? result.err.code : "tool_error";
}

/**
 * Ends a call's span with its answer: an error result sets `error.type` and the ERROR status
 * (whose description, the error text, only when content is captured); a success records the
 * result (cut) when content is captured. Anything that is not a ToolResult ends it as failed.
 * @internal
 */
export function endToolSpan(span: Span, answer: unknown, captureContent: boolean): void {
  try {
    if (!isToolResult(answer)) {
      recordFailure(span, answer);
    } else if (answer.isError) {
      span.setAttribute(GEN_AI.errorType, toolErrorType(answer));
      const status = captureContent
        ? { code: SpanStatusCode.ERROR, message: boundText(String(answer.forLLM), MAX_CAPTURED_CHARS) }
        : { code: SpanStatusCode.ERROR };
      span.setStatus(status);
    } else if (captureContent && typeof answer.forLLM === "string") {
      span.setAttribute(GEN_AI.toolCallResult, boundText(answer.forLLM, MAX_CAPTURED_CHARS));
    }
  } catch (error) {
    // A result whose getters throw: the call's own answer says so; the span only ends failed.
    recordFailure(span, error);
  } finally {
    span.end();
  }
}

/**
 * Ends a call's span when the call's signal aborted before the tool answered (its timeout, or the
 * run's abort): the loop answers the call at once then, whatever the tool still does.
 * @internal
 */
export function endAbortedToolSpan(span: Span, reason: unknown): void {
  let timedOut = false;
  try {
    // A DOMException named TimeoutError, as the call's timeout aborts with.
    timedOut = typeof reason === "object" && reason !== null && (reason as { name?: unknown }).name === "TimeoutError";
  } catch {
    timedOut = false;
  }
  span.setAttribute(GEN_AI.errorType, timedOut ? "timeout" : "aborted");
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}
