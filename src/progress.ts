import { isToolExecutionError } from "./errors.js";
import { boundText, cutName, errorMessage, MAX_VALIDATION_MESSAGE_CHARS } from "./internal/describe.js";
import { log, type ResolvedLogger } from "./internal/logger.js";
import type { ProgressStatus, ProgressUpdate } from "./tool.js";
import type { ToolResult } from "./tool-result.js";

// Declared in the contract (src/internal/ buffers updates), and named here with the rest of progress.
export type { ProgressStatus, ProgressUpdate };

/** Receives the progress updates of calls. It should return quickly; what it throws is ignored. */
export type ProgressListener = (update: ProgressUpdate) => void;

/** The final status of a call that ended with `result` (`"failed"` when its fields cannot be read). */
function finalStatus(result: ToolResult): ProgressStatus {
  try {
    if (!result.isError) return "completed";
    return isToolExecutionError(result.err) && result.err.code === "aborted" ? "cancelled" : "failed";
  } catch {
    return "failed";
  }
}

/** Does nothing: the `reportProgress` of calls nobody listens to. */
export const NO_PROGRESS = (): void => {};

/**
 * The progress of one call for one listener: `report` is the call's `context.reportProgress`
 * (values cleaned, never throws, ignored once the call ended), `finish` sends the final update.
 * @internal
 */
export class ProgressReporter {
  readonly #listener: ProgressListener;
  readonly #toolName: string;
  readonly #toolCallId: string;
  readonly #logger: ResolvedLogger;
  #done = false;

  /** @param call.toolName as the call asked for it: anything a model or caller sent (cut, never converted with `String`) */
  constructor(listener: ProgressListener, call: { toolName: unknown; toolCallId: string; logger: ResolvedLogger }) {
    this.#listener = listener;
    this.#toolName = cutName(call.toolName);
    this.#toolCallId = call.toolCallId;
    this.#logger = call.logger;
  }

  /** `context.reportProgress`: a bound function, so a tool may pass it around. */
  readonly report = (progress?: unknown, message?: unknown): void => {
    if (!this.#done) this.#send("running", progress, message);
  };

  /** Sends the final update for `result` (once) and returns `result`. */
  finish(result: ToolResult): ToolResult {
    if (!this.#done) {
      this.#done = true;
      this.#send(finalStatus(result), undefined, undefined);
    }
    return result;
  }

  #send(status: ProgressStatus, progress: unknown, message: unknown): void {
    const update: ProgressUpdate = { toolCallId: this.#toolCallId, toolName: this.#toolName, status };
    if (typeof progress === "number" && Number.isFinite(progress)) update.progress = Math.min(1, Math.max(0, progress));
    if (typeof message === "string" && message !== "") {
      update.message = boundText(message, MAX_VALIDATION_MESSAGE_CHARS);
    }
    try {
      this.#listener(update);
    } catch (error) {
      // A listener's failure must not fail the tool that reported (nor reach its result).
      const fields = () => ({
        tool: update.toolName,
        toolCallId: cutName(update.toolCallId),
        error: errorMessage(error),
      });
      log(this.#logger, "warn", fields, "progress listener threw");
    }
  }
}

/**
 * Sends the one final update of a call that never ran (refused before dispatch: arguments that are
 * not a JSON object, no registry, approval denied or not configurable …) and returns `result`, so
 * that every call a listener saw — or did not see — start still gets its final update.
 * @internal
 */
export function finishUnrun(
  listener: ProgressListener | undefined,
  call: { toolName: unknown; toolCallId: string; logger: ResolvedLogger },
  result: ToolResult,
): ToolResult {
  return listener === undefined ? result : new ProgressReporter(listener, call).finish(result);
}
