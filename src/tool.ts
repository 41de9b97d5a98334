import type { Logger } from "./logger.js";
import type { ToolDefinition } from "./provider.js";
import type { ToolResult } from "./tool-result.js";

/**
 * Everything one tool call knows about its caller. A fresh object is made for every call, so
 * concurrent calls of one tool instance never see each other's context (unlike the
 * `setContext`/`setCallback`/`setMetadata` mixins, which write to the shared instance).
 * Spreading it (`{ ...context, chatId: "other" }`) gives a complete context.
 */
export interface ToolContext {
  /**
   * This call's own signal: aborted when the caller's signal aborts or the call times out; pass it
   * to your I/O. It is made when first read, and once the call has ended it no longer follows the
   * caller's signal, so listeners you add and forget end with the call.
   */
  readonly signal: AbortSignal;
  /** Channel of the conversation (e.g. `"telegram"`); `""` when unknown. */
  channel: string;
  /** Chat id of the conversation; `""` when unknown. */
  chatId: string;
  /** The id of the model's tool call, when the call came from a model. */
  toolCallId?: string;
  /** Message metadata (message id, user id, …), as given to `runToolLoop` or `executeWithContext`. */
  metadata: Readonly<Record<string, string>>;
  /** The registry's logger, bound to `{ tool }` when it has `child` (pino's has). */
  logger: Logger;
  /**
   * This call's own completion callback, when the caller gave one (`executeWithContext`'s
   * `asyncCallback`) — for any tool, race-free (picoclaw's `ExecuteAsync(ctx, args, cb)`). Prefer
   * it over {@link AsyncTool.setCallback}, which writes to the shared instance.
   */
  asyncCallback?: AsyncCallback;
  /**
   * Reports how far the call is: `progress` from 0 to 1 (clamped; dropped
   * when not a finite number) and a short `message`. Goes to the caller's `onProgress` and to
   * `executeAsync`'s `progress`, as a `"running"` update; never throws, and does nothing when
   * nobody listens or once the call has ended.
   */
  reportProgress(progress?: number, message?: string): void;
}

/** What a tool's `execute` may return: a result, or a string (→ `newToolResult`). */
export type ToolReturn = ToolResult | string;

/** Outcome of {@link Tool.parseArguments}. */
export type ParseArgumentsResult =
  | {
      /** The arguments are valid. */
      success: true;
      /** The arguments `execute` receives (possibly transformed, e.g. defaults applied). */
      data: Record<string, unknown>;
    }
  | {
      /** The arguments are invalid: the tool does not run. */
      success: false;
      /** What is wrong, for the model (`invalid arguments for tool "x": <error>`; bounded). */
      error: string;
    };

/**
 * A tool the model can call (Go's `tools.Tool`).
 *
 * @example
 * ```ts
 * const clock: Tool = {
 *   name: "clock",
 *   description: "Current time as ISO 8601",
 *   parameters: { type: "object", properties: {} },
 *   execute: () => newToolResult(new Date().toISOString()),
 * };
 * ```
 */
export interface Tool {
  /** Unique key in the registry and the name the model uses; must match `/^[A-Za-z0-9_-]{1,64}$/`. */
  readonly name: string;
  /** What the model reads to decide when to call the tool. */
  readonly description: string;
  /** JSON Schema of the arguments object (`{ type: "object", properties, required }`). */
  readonly parameters: Record<string, unknown>;
  /**
   * Runs the tool. Arguments were validated against `parameters` (or by `parseArguments`) before.
   * It may return a `ToolResult` or a string (→ `newToolResult`). Throwing is allowed: the
   * registry turns it into an error result the model sees.
   */
  execute(args: Record<string, unknown>, context: ToolContext): ToolReturn | Promise<ToolReturn>;
  /**
   * Optional: validates (and may transform) arguments instead of the registry's JSON Schema
   * validation. `defineTool` sets it to the zod schema's `safeParse`.
   */
  parseArguments?(args: Record<string, unknown>): ParseArgumentsResult;
  /**
   * Loop-breaking: after a turn in which this tool returned a result that is not an
   * error, `runToolLoop` stops without another provider call (`stopReason: "loop_breaking_tool"`).
   * Read once, when the tool is registered. @default false
   */
  readonly loopBreaking?: boolean;
  /**
   * In `runToolLoop`, the call runs only once `ToolLoopConfig.approve` approves it: `true`, or a
   * predicate of the model's (unvalidated) arguments. A predicate that throws or returns anything
   * but `false` requires approval (fail closed). Read at every call. @default false
   */
  readonly needsApproval?:
    | boolean
    | ((args: Record<string, unknown>, context: ToolContext) => boolean | Promise<boolean>)
    | undefined;
}

/** Optional mixin (Go's `ContextualTool`): receives channel and chat id before each call. */
export interface ContextualTool extends Tool {
  /**
   * Called synchronously right before `execute`, only when channel and chat id are both non-empty.
   * Writes to the shared instance: prefer `context.channel` and `context.chatId`.
   */
  setContext(channel: string, chatId: string): void;
}

/** Called by an async tool when its background work completes. */
export type AsyncCallback = (result: ToolResult) => void | Promise<void>;

/**
 * Optional mixin (Go's `AsyncTool`): receives the completion callback before each call — the
 * caller's, or a no-op when the caller gave none, so an earlier caller's callback never fires for
 * a later call. Concurrent calls still share the instance: use `context.asyncCallback` instead.
 */
export interface AsyncTool extends Tool {
  /** Called synchronously right before every `execute`: the caller's callback, or a no-op. */
  setCallback(callback: AsyncCallback): void;
}

/** Optional mixin (Go's `MetadataAwareTool`): receives message metadata before each call. */
export interface MetadataAwareTool extends Tool {
  /** Called synchronously right before every `execute` with a copy of the metadata (`{}` when there is none). */
  setMetadata(metadata: Record<string, string>): void;
}

type MixinMethods = Partial<Record<"setContext" | "setCallback" | "setMetadata", unknown>>;

/**
 * `value` when it is an object whose mixin methods can be read, else `undefined`. Each guard then
 * reads its method by name: one keyed read shared by the three names went megamorphic, a lookup in
 * V8's global stub cache on every call of every tool.
 */
function mixinsOf(value: unknown): MixinMethods | undefined {
  return typeof value === "object" && value !== null ? value : undefined;
}

/**
 * @internal What `defineTool` keeps on its tool (non-enumerable, so `{ ...tool }` does not copy
 * it): its `execute` method and the caller's function behind it, which the registry calls directly
 * (one promise less per call) while `tool.execute` is still that method. The registry turns what
 * the function returns into a result as the method would.
 */
export const DIRECT_EXECUTE: unique symbol = Symbol.for("toolloop.defineTool.directExecute");

/** @internal see {@link DIRECT_EXECUTE} */
export interface DirectExecute {
  method: Tool["execute"];
  execute(args: Record<string, unknown>, context: ToolContext): unknown;
}

/** `true` when `value` is a tool implementing {@link ContextualTool} (`false` for `undefined`). */
export function isContextualTool(value: unknown): value is ContextualTool {
  return typeof mixinsOf(value)?.setContext === "function";
}

/** `true` when `value` is a tool implementing {@link AsyncTool} (`false` for `undefined`). */
export function isAsyncTool(value: unknown): value is AsyncTool {
  return typeof mixinsOf(value)?.setCallback === "function";
}

/** `true` when `value` is a tool implementing {@link MetadataAwareTool} (`false` for `undefined`). */
export function isMetadataAwareTool(value: unknown): value is MetadataAwareTool {
  return typeof mixinsOf(value)?.setMetadata === "function";
}

/** The OpenAI-style definition the model receives: `{ type: "function", function: { name, description, parameters } }`. */
export function toolToSchema(tool: Tool): ToolDefinition {
  return {
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}

/** Where a call is: `"running"` while it reports, then one final status. */
export type ProgressStatus = "running" | "completed" | "failed" | "cancelled";

/** One progress report of a tool call. */
export interface ProgressUpdate {
  /** The call's id: its `toolCallId` in a loop, the request id in a batch, the execution id of `executeAsync`; `""` when the call has none. */
  toolCallId: string;
  /** The tool's name (as the call asked for it; cut when a model sent a huge one). */
  toolName: string;
  /** How far, from 0 to 1 (clamped); absent when the tool gave no finite number. */
  progress?: number;
  /** What the tool is doing (bounded to 1,000 characters); absent when it gave none. */
  message?: string;
  /**
   * `"running"` for every `reportProgress`; the call's last update says how it ended: `"completed"`
   * (a result that is not an error), `"cancelled"` (aborted) or `"failed"` (any other error result,
   * a timeout included).
   */
  status: ProgressStatus;
}
