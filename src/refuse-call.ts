import { isRecord } from "./internal/describe.js";
import type { ResolvedLogger } from "./internal/logger.js";
import { logCallEnd } from "./log-tool-call.js";
import { finishUnrun, type ProgressListener } from "./progress.js";
import type { ToolCall } from "./provider.js";
import { LOG_REFUSED_CALL } from "./registry-symbols.js";
import type { ToolResult } from "./tool-result.js";

/** Where a refused call is logged and reported. */
export interface RefusalTarget {
  /** The run's tools: a registry that logs refused calls itself (`LOG_REFUSED_CALL`), or anything else. */
  tools: unknown;
  /** The loop's logger, for a registry that cannot log them. */
  logger: ResolvedLogger;
  /** Receives the call's final progress update. */
  onProgress: ProgressListener | undefined;
}

/**
 * Answers a call the loop refuses without running it: logged like every failed call (by the
 * registry's logger, or the loop's when the registry cannot), with the call's final progress update.
 */
export function refuseCall(call: ToolCall, result: ToolResult, target: RefusalTarget): ToolResult {
  const { tools, logger, onProgress } = target;
  const log = isRecord(tools) ? (tools as Partial<Record<symbol, unknown>>)[LOG_REFUSED_CALL] : undefined;
  try {
    if (typeof log === "function") log.call(tools, call.name, call.id, result);
    else logCallEnd(call.name, result, undefined, { logger, toolCallId: call.id, logPayloads: false });
  } catch {
    // a broken logger must not cost the call its answer
  }
  return finishUnrun(onProgress, { toolName: call.name, toolCallId: call.id, logger }, result);
}
