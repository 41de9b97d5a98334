import {
  type Attributes,
  type Context,
  context,
  INVALID_SPAN_CONTEXT,
  type Span,
  SpanKind,
  trace,
} from "@opentelemetry/api";
import { cutName, isRecord } from "../internal/describe.js";
import { isAbortSignal } from "../internal/options.js";
import type { LLMResponse, UsageInfo } from "../provider.js";
import type { ModelCallRequest, RunRequest, ToolCallRequest, ToolLoopMiddleware } from "../tool-loop-middleware.js";
import type { ToolLoopResult } from "../tool-loop-result.js";
import type { ToolResult } from "../tool-result.js";
import { GEN_AI } from "./gen-ai-attributes.js";
import { recordFailure } from "./record-failure.js";
import { endAbortedToolSpan, endToolSpan, startToolSpan } from "./tool-span.js";
import { checkTracingOptions, type TracingOptions, type TracingSettings } from "./tracing-options.js";

/**
 * A middleware that traces each run with OpenTelemetry, following the GenAI semantic conventions:
 * an `invoke_agent` span around the run, a `chat {model}` span (kind CLIENT) around each model call
 * and an `execute_tool {name}` span around each tool call, both children of the run's. Each tool
 * runs inside its span's context, so spans the tool makes itself (an HTTP client's) nest under it,
 * also for parallel calls. A call whose answer is an error result (a throw, a timeout, `isError`)
 * ends its span with `error.type` and the ERROR status; a run or model call that rejects records
 * the exception. Parent and child spans are linked through the active context: register a context
 * manager (the OpenTelemetry Node SDK does). See docs/tracing.md for every attribute.
 * @throws TypeError for options of the wrong type
 * @example
 * ```ts
 * import { tracing } from "toolloop/otel";
 * const result = await runToolLoop({ provider, tools, middleware: [tracing({ agentName: "support" })] }, messages);
 * ```
 */
export function tracing(options?: TracingOptions): ToolLoopMiddleware {
  const settings = checkTracingOptions("tracing", options);
  return {
    name: "tracing",
    wrapRun: (request, next) => traceRun(settings, request, next),
    wrapModelCall: (request, next) => traceModelCall(settings, request, next),
    wrapToolCall: (request, next) => traceToolCall(settings, request, next),
  };
}

/**
 * Whether a span is one nothing will ever see: not recorded, and with no trace of its own to pass
 * on (OpenTelemetry's no-op tracer, with no provider registered and no parent). Such a span is
 * ended at once and the step runs without it: no context to switch, no answer to wait for, so
 * that `tracing()` left in place costs little where tracing is off. A span sampled out by an SDK
 * has a valid context (its children must know they are not sampled): it takes the full path.
 */
function isInert(span: Span): boolean {
  // The no-op tracer's spans share this one context (an identity check: checking the ids' format
  // would cost more than the rest of the hook).
  if (span.spanContext() !== INVALID_SPAN_CONTEXT || span.isRecording()) return false;
  span.end();
  return true;
}

function traceRun(
  settings: TracingSettings,
  request: RunRequest,
  next: (request: RunRequest) => Promise<ToolLoopResult>,
): Promise<ToolLoopResult> {
  const { tracer, agentName } = settings;
  const attributes: Attributes = { [GEN_AI.operationName]: "invoke_agent" };
  if (agentName !== undefined) attributes[GEN_AI.agentName] = agentName;
  if (typeof request.model === "string") attributes[GEN_AI.requestModel] = cutName(request.model);
  const parent = context.active();
  const span = tracer.startSpan(
    agentName === undefined ? "invoke_agent" : `invoke_agent ${agentName}`,
    { kind: SpanKind.INTERNAL, attributes },
    parent,
  );
  return isInert(span) ? next(request) : runInSpan(span, parent, request, next);
}

async function runInSpan(
  span: Span,
  parent: Context,
  request: RunRequest,
  next: (request: RunRequest) => Promise<ToolLoopResult>,
): Promise<ToolLoopResult> {
  try {
    const result = await context.with(trace.setSpan(parent, span), next, undefined, request);
    if (isRecord(result)) recordUsage(span, result.usage);
    return result;
  } catch (error) {
    recordFailure(span, error);
    throw error;
  } finally {
    span.end();
  }
}

function traceModelCall(
  { tracer }: TracingSettings,
  request: ModelCallRequest,
  next: (request: ModelCallRequest) => Promise<LLMResponse>,
): Promise<LLMResponse> {
  const model = cutName(request.model);
  const attributes: Attributes = { [GEN_AI.operationName]: "chat", [GEN_AI.requestModel]: model };
  if (typeof request.providerName === "string") attributes[GEN_AI.providerName] = cutName(request.providerName);
  const parent = context.active();
  const span = tracer.startSpan(`chat ${model}`, { kind: SpanKind.CLIENT, attributes }, parent);
  if (isInert(span)) return next(request);
  // The provider call runs inside the span's context: an HTTP client's spans nest under it.
  return context.with(trace.setSpan(parent, span), next, undefined, request).then(
    (response) => {
      if (typeof response.finishReason === "string") {
        span.setAttribute(GEN_AI.finishReasons, [cutName(response.finishReason)]);
      }
      recordUsage(span, response.usage);
      span.end();
      return response;
    },
    (error: unknown) => {
      recordFailure(span, error);
      span.end();
      throw error;
    },
  );
}

/** The conventions' usage attributes of what a call or a run reported; a count not reported is left out. */
function recordUsage(span: Span, usage: UsageInfo | undefined): void {
  if (!isRecord(usage)) return;
  const counts: Array<[string, unknown]> = [
    [GEN_AI.inputTokens, usage.promptTokens],
    [GEN_AI.outputTokens, usage.completionTokens],
    [GEN_AI.cacheReadInputTokens, usage.cachedInputTokens],
    [GEN_AI.cacheCreationInputTokens, usage.cacheWriteTokens],
    [GEN_AI.reasoningOutputTokens, usage.reasoningTokens],
  ];
  for (const [key, value] of counts) {
    if (typeof value === "number" && Number.isFinite(value)) span.setAttribute(key, value);
  }
}

function traceToolCall(
  { tracer, captureContent }: TracingSettings,
  request: ToolCallRequest,
  next: (request: ToolCallRequest) => Promise<ToolResult>,
): Promise<ToolResult> {
  const parent = context.active();
  const span = startToolSpan(tracer, request, parent, captureContent);
  if (isInert(span)) return next(request);
  // The call's signal aborts on its timeout and on the run's abort: the loop then answers the call
  // at once (an error result), while the tool may go on; the span ends with that answer.
  // Read defensively: an outer middleware may have handed on a context of its own making.
  const given: unknown = isRecord(request.context) ? request.context.signal : undefined;
  const signal = isAbortSignal(given) ? given : undefined;
  let ended = false;
  const aborted = () => {
    if (ended) return;
    ended = true;
    endAbortedToolSpan(span, signal?.reason);
  };
  if (signal?.aborted === true) aborted();
  else signal?.addEventListener("abort", aborted, { once: true });
  const answer = context.with(trace.setSpan(parent, span), next, undefined, request);
  const settle = (outcome: unknown) => {
    signal?.removeEventListener("abort", aborted);
    if (ended) return;
    ended = true;
    endToolSpan(span, outcome, captureContent);
  };
  return answer.then(
    (result) => {
      settle(result);
      return result;
    },
    // `next` never rejects; should it, the span still ends (as failed) and the failure goes on.
    (error: unknown) => {
      settle(error);
      throw error;
    },
  );
}
