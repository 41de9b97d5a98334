import type { Logger } from "./logger.js";
import type { ProgressListener } from "./progress.js";
import type { RegisterHiddenOptions } from "./schema-budget.js";

/** Options of `ToolRegistry`. */
export interface ToolRegistryOptions {
  /**
   * Logger for start, completion and failure of every call (fields `tool`, `toolCallId`,
   * `durationMs`): pino, `console`, or any object with `debug`/`info`/`warn`/`error` methods.
   * Tools receive `logger.child({ tool })` as `context.logger` (the logger itself without `child`).
   * @default a silent pino logger
   */
  logger?: Logger | undefined;
  /**
   * Also log tool arguments and results (both debug). Off by default because they may hold
   * personal data.
   * @default false
   */
  logPayloads?: boolean | undefined;
  /**
   * What `register` does with a name that is taken: `"replace"` the tool (logged as a warning), or
   * `"throw"` a TypeError, for an application in which a duplicate name is a mistake.
   * @default "replace"
   */
  onDuplicate?: "replace" | "throw" | undefined;
}

/** Options of `ToolRegistry.register`. */
export interface RegisterOptions extends RegisterHiddenOptions {
  /**
   * A locked tool cannot be overridden: registering its name again throws (whatever `onDuplicate`
   * says) and `unregister` returns `false`.
   * @default false
   */
  locked?: boolean | undefined;
}

/** Per-call options of `ToolRegistry.execute`. */
export interface ExecuteOptions {
  /** Aborts the call; the tool sees it as `context.signal`. */
  signal?: AbortSignal | undefined;
  /** The model's call id, passed to the tool as `context.toolCallId`. */
  toolCallId?: string | undefined;
  /** Fails the call with a timeout error result after this many milliseconds, aborting the tool's signal. */
  timeoutMs?: number | undefined;
  /** Message metadata for `context.metadata` and `setMetadata`. */
  metadata?: Readonly<Record<string, string>> | undefined;
  /**
   * Receives the call's progress: every `context.reportProgress` as a `"running"` update, then one
   * final update (`"completed"`, `"failed"` or `"cancelled"`). What it throws is logged and ignored.
   */
  onProgress?: ProgressListener | undefined;
}
