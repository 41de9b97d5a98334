import type { Logger } from "./logger.js";
import type { OutputSchema } from "./output-schema.js";
import type { ProgressListener } from "./progress.js";
import type { LLMProvider } from "./provider.js";
import type { Tool, ToolContext } from "./tool.js";
import type { ApprovalDecision, ApprovalRequest } from "./tool-approval.js";
import type { ToolLoopCheckpoint } from "./tool-loop-checkpoint.js";
import type { ToolLoopEvent } from "./tool-loop-event.js";
import type { ToolLoopMiddleware } from "./tool-loop-middleware.js";
import type { ToolRegistry } from "./tool-registry.js";
import type { ToolResult } from "./tool-result.js";

/**
 * Configuration of one `runToolLoop` run (Go's `ToolLoopConfig`); `Output` is the type of its
 * `output` schema, from which the result's `output` is typed.
 */
export interface ToolLoopConfig<Output extends OutputSchema = OutputSchema> {
  /** The LLM to call. */
  provider: LLMProvider;
  /** Model identifier. @default provider.getDefaultModel() */
  model?: string | undefined;
  /**
   * The tools the model may call: a `ToolRegistry` (also one made by another installed copy of
   * toolloop), or an array of tools (a registry is built from it once per run, with this run's
   * `logger`; duplicate names are a `TypeError`). `null` or absent: every call is answered
   * "No tools available".
   */
  tools?: ToolRegistry | readonly Tool[] | null | undefined;
  /** Maximum provider calls; at the cap the loop stops with `stopReason: "max_iterations"`. `0` makes no call. */
  maxIterations: number;
  /** Passed through to every `provider.chat` call (e.g. `{ temperature: 0.2 }`). @default {} */
  llmOptions?: Record<string, unknown> | undefined;
  /** Most tool calls of one turn running at once; results stay in call order. @default Infinity */
  maxConcurrency?: number | undefined;
  /** A tool call still running after this many milliseconds becomes an error result and its signal is aborted. @default no timeout */
  toolTimeoutMs?: number | undefined;
  /**
   * Logger for the loop's iterations: pino, `console`, or any object with `debug`/`info`/`warn`/
   * `error` methods. Tool calls are logged by the registry's logger (calls the loop refuses before
   * dispatch too); with `tools` as an array, or `tools: null`, by this one. @default silent
   */
  logger?: Logger | undefined;
  /**
   * Receives the progress of every tool call: each `context.reportProgress`
   * as a `"running"` update and one final update per call, with the call's `toolCallId` — also for
   * calls the loop answers without running them (arguments that are not a JSON object, no tools,
   * approval denied …). Called synchronously, never coalesced; what it throws is logged and ignored.
   */
  onProgress?: ProgressListener | undefined;
  /**
   * Receives every {@link ToolLoopEvent} of the run, in order. Awaited (back-pressure: a slow
   * listener holds the loop; nothing is dropped) — except `tool-progress`: a tool never waits for
   * it, so behind a slow listener at most 16 of a call's updates wait, the oldest `"running"` ones
   * dropped first (the final update always arrives, before the call's `tool-call-end`). What it
   * throws rejects the run with a `ToolLoopError` whose transcript has every call answered. With
   * it, a provider that has `chatStream` is streamed (`text-delta` events).
   */
  onEvent?: ((event: ToolLoopEvent) => void | Promise<void>) | undefined;
  /**
   * Receives each result's `forUser` that is not empty on a result that is not `silent`, in call
   * order, with the call's id — also for async completions. Awaited; what it throws rejects the
   * run like `onEvent` (after the loop ended, it is logged).
   */
  onUserMessage?:
    | ((message: { content: string; toolName: string; toolCallId: string }) => void | Promise<void>)
    | undefined;
  /**
   * Decides the calls of tools with `needsApproval`: only `true` or `{ approved: true }` runs the
   * call; a denial is the result `denied by the user: <reason>`. Other calls run meanwhile (a call
   * waiting for approval holds no `maxConcurrency` slot); an
   * abort while waiting answers the call as aborted. Without it, such calls are refused. With it,
   * `tools` must have `get(name)` (a registry of another copy has): otherwise a `TypeError`.
   *
   * `"interrupt"`: nobody is asked during the run. The turn's other calls run, then the run
   * resolves `stopReason: "interrupted"` with the waiting calls in `result.interruptions` and a
   * JSON `result.checkpoint`; `resumeToolLoop(config, checkpoint, context, decisions)` answers
   * them by call id (a call without a decision is interrupted again).
   */
  approve?:
    | ((request: ApprovalRequest, context: ToolContext) => ApprovalDecision | Promise<ApprovalDecision>)
    | "interrupt"
    | undefined;
  /**
   * Receives what async tools report through their callback (`context.asyncCallback` or
   * `setCallback`), with the call's name and id: during the run, or with `awaitAsync` once the
   * loop stopped waiting. Setting it (or `awaitAsync`) gives every call its own callback.
   */
  onAsyncResult?:
    | ((result: ToolResult, info: { toolName: string; toolCallId: string }) => void | Promise<void>)
    | undefined;
  /**
   * When the model answers while async calls are pending, wait for them (at most `timeoutMs`) and
   * feed each completion back as a user message `[async result from <tool> (<id>)] <text>`, then
   * ask the model again (an iteration). @default no waiting
   */
  awaitAsync?:
    | {
        /** Longest wait for pending async calls, in milliseconds (`Infinity`: until they all report). */
        timeoutMs: number;
      }
    | undefined;
  /**
   * At the cap, make one more provider call without tools, telling the model to answer with what it
   * has; its text becomes `content` (`stopReason` stays `"max_iterations"`). That call gets no
   * `tool_choice`, `toolChoice` or `parallel_tool_calls` from `llmOptions`; when it fails, the failure
   * is logged and the run resolves `max_iterations` with `content: ""`. @default false
   */
  finalAnswerOnMaxIterations?: boolean | undefined;
  /**
   * Structured output: the final answer (a turn without tool calls) must be JSON matching this
   * schema — a zod schema (zod 4 or 3.25+, converted to JSON Schema; its name is `"output"`), or
   * `{ name, schema }` with a JSON Schema (validated like tool arguments) or a zod schema. Every
   * provider call gets `options.output = { name, schema }` (JSON Schema), which the adapters turn
   * into their provider's structured-output request; the answer's value becomes `result.output`
   * (`content` keeps its text). An answer that is not JSON or fails the schema is fed back with the
   * problem and asked again (see `outputRetries`). Runs that end otherwise (`max_iterations`, a
   * loop-breaking tool, a handled response) resolve without `output`. @default none
   */
  output?: Output | undefined;
  /**
   * How many times an invalid final answer is fed back and asked again (each an iteration, within
   * `maxIterations`) before the run rejects with `ToolLoopError` code `"invalid_output"`. @default 1
   */
  outputRetries?: number | undefined;
  /**
   * When one tool fails with the same error text this many times in a row (across turns), its
   * last answer tells the model to stop and the loop ends after the turn (`"repeated_failure"`).
   * @default off
   */
  maxRepeatedFailures?: number | undefined;
  /**
   * Longest tool message in the transcript: longer ones are cut with `[… N characters cut]`
   * (results themselves stay whole), the repeated-failure note included. Counts text only: a
   * message's images and files are kept whole (see `maxResultBytes`). At least 128 (a smaller
   * value is a `TypeError`). @default off
   */
  maxResultChars?: number | undefined;
  /**
   * Most decoded bytes of one tool result's `parts` (images and files, see `ToolResult.parts`):
   * above it the tool message holds the result's text and a note saying the parts were not shown
   * (parts are never cut). `maxResultChars` counts text only. @default 20 MB (20,971,520 bytes)
   */
  maxResultBytes?: number | undefined;
  /**
   * After each tool round, tick the hidden tools your code promoted for every run with
   * `registry.promoteTools` (`tickTTL`): a tool promoted with ttl n is offered in the next n
   * provider calls — the round that promoted it does not count. Off, as in picoclaw's `RunToolLoop`,
   * such promotions last until something else calls `tickTTL`. The discovery tools of
   * `createToolSearchTools` need no ticking: their promotions belong to the run and end by
   * themselves. @default false
   */
  tickHiddenTools?: boolean | undefined;
  /**
   * Receives a {@link ToolLoopCheckpoint} — the transcript so far, the iterations and the pending
   * async calls — after each assistant message is appended (before its calls run; the final
   * answer too), after each turn's answers are appended, and after `awaitAsync` fed completions
   * back. Awaited: save it, and `resumeToolLoop` continues from the last one saved after a crash.
   * None is taken once the run's signal aborted. What it throws rejects the run with a
   * `ToolLoopError` (code `"internal"`; calls not run yet are answered as not run).
   * @default no checkpoints
   */
  onCheckpoint?: ((checkpoint: ToolLoopCheckpoint) => void | Promise<void>) | undefined;
  /**
   * Middleware around the run, each provider call and each tool call ({@link ToolLoopMiddleware}),
   * the first the outermost; the options above are the loop's own features and sit outside them
   * (they see what the middleware return). `null` or absent: none, and the loop pays nothing for
   * them. Checked when the run starts: an entry without a string `name`, or a hook that is not a
   * function, is a `TypeError` naming its index. @default none
   */
  middleware?: readonly ToolLoopMiddleware[] | null | undefined;
}
