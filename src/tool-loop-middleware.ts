import type { LLMProvider, LLMResponse, Message, ToolDefinition } from "./provider.js";
import type { ToolContext } from "./tool.js";
import type { ToolLoopContext } from "./tool-loop-context.js";
import type { ToolLoopResult } from "./tool-loop-result.js";
import type { ToolResult } from "./tool-result.js";

/**
 * One run, as `wrapRun` receives it: once per `runToolLoop`, `streamToolLoop` or `resumeToolLoop`
 * call. A fresh object per run; what `next` receives is what runs (messages, model and context are
 * checked again when they are not the ones given).
 */
export interface RunRequest {
  /** The conversation the run starts from: the caller's messages, or the checkpoint's on resume. */
  messages: readonly Message[];
  /** The model every provider call of the run names. */
  model: string;
  /** The run's context as the caller gave it (`{}` when none): channel, chat id, signal, metadata. */
  context: ToolLoopContext;
  /** `true` when the run continues a checkpoint (`resumeToolLoop`). */
  resumed: boolean;
}

/**
 * One provider call, as `wrapModelCall` receives it: a fresh object per call, `options` included.
 * Changing it changes what `next` sends to the provider — never the transcript.
 */
export interface ModelCallRequest {
  /** The messages sent: a copy of the transcript as it stands. */
  messages: readonly Message[];
  /** The tool definitions offered; `undefined` when none is. */
  tools: readonly ToolDefinition[] | undefined;
  /** The model asked. */
  model: string;
  /** The provider options of the call (a copy of `llmOptions`). */
  options: Record<string, unknown>;
  /** Which step of the loop (1-based), as the events number it: a retry inside a middleware is the same step. */
  iteration: number;
  /** The run's signal, passed to the provider. */
  signal: AbortSignal | undefined;
  /**
   * The provider's {@link LLMProvider.providerName} (`"openai"`, `"anthropic"` …), `undefined` when
   * it has none: for tracing and logs; changing it changes nothing.
   */
  providerName: string | undefined;
}

/**
 * One tool call the loop runs, as `wrapToolCall` receives it: after its arguments were parsed and
 * validated and its approval given, inside its timeout. `next` runs the tool with `arguments` and
 * `context` of the request it receives (arguments that are not the validated object are validated
 * again first); `toolCallId`, `toolName` and `iteration` only describe the call.
 */
export interface ToolCallRequest {
  /** The call's id in the transcript. */
  toolCallId: string;
  /** The tool that runs. */
  toolName: string;
  /** The validated arguments (the schema's parsed output). */
  arguments: Record<string, unknown>;
  /** The step of the loop that made the call; a resumed call keeps its checkpoint's step. */
  iteration: number;
  /** The call's own context: its signal (the run's, the call's timeout), channel, chat id, metadata … */
  context: ToolContext;
}

/**
 * A middleware of the loop (`ToolLoopConfig.middleware`): each hook wraps one kind of step and
 * calls `next` to go on — Koa's `(ctx, next)`. It may change the request before `next`, change or
 * replace what `next` returns, call `next` more than once (a retry) or not at all (a cache, a
 * guardrail). The first middleware of the list is the outermost; the loop's own features (events,
 * policies, checkpoints) sit outside all of them and see what they return.
 *
 * @example
 * ```ts
 * const logCalls: ToolLoopMiddleware = {
 *   name: "log-calls",
 *   async wrapToolCall(request, next) {
 *     const result = await next(request);
 *     console.log(request.toolName, result.isError ? "failed" : "ok");
 *     return result;
 *   },
 * };
 * ```
 */
export interface ToolLoopMiddleware {
  /** Names the middleware in logs and in the errors it causes (`middleware "<name>" failed: …`). */
  name: string;
  /**
   * Around the whole run. What it returns is the run's result (checked: a `ToolLoopResult`); what
   * it throws rejects the run with a `ToolLoopError` (code `"internal"`), one from `next` unchanged.
   */
  wrapRun?(request: RunRequest, next: (request: RunRequest) => Promise<ToolLoopResult>): Promise<ToolLoopResult>;
  /**
   * Around each provider call (streamed ones too, when `onEvent` is set). What it returns must be
   * an `LLMResponse`; what it throws rejects the run with a `ToolLoopError` (code
   * `"provider_failed"`), an error `next` rejected with keeping its origin.
   */
  wrapModelCall?(
    request: ModelCallRequest,
    next: (request: ModelCallRequest) => Promise<LLMResponse>,
  ): Promise<LLMResponse>;
  /**
   * Around each tool call the loop runs (not those it refuses before: unknown tool, bad arguments,
   * approval denied). `next` never rejects: a failure arrives as an error result. What it throws,
   * or returns that is not a `ToolResult`, becomes the call's error result
   * `middleware "<name>" failed: …`; the loop goes on.
   */
  wrapToolCall?(request: ToolCallRequest, next: (request: ToolCallRequest) => Promise<ToolResult>): Promise<ToolResult>;
}
