import { failure, logCallEnd } from "../execute-tool-call.js";
import { finishUnrun, NO_PROGRESS, type ProgressListener } from "../progress.js";
import type { AsyncCallback, ToolContext } from "../tool.js";
import type { ToolApprover } from "../tool-approval.js";
import { APPROVAL_NAMES, LOG_REFUSED_CALL, REGISTERED_TOOL } from "../tool-registry.js";
import { errorResult, type ToolResult } from "../tool-result.js";
import { raceAbort } from "./abort.js";
import { boundText, errorMessage, isRecord, MAX_VALIDATION_MESSAGE_CHARS, quoteName } from "./describe.js";
import type { ResolvedLogger } from "./logger.js";
import type { NormalizedToolCall } from "./normalize-tool-call.js";
import type { PromotionView } from "./promotion-scope.js";

/** Runs one call of a turn (the loop's `runCall`, or a wrapper of it). */
export type CallRunner<C, X> = (
  call: NormalizedToolCall,
  config: C,
  context: X,
  asyncCallback?: AsyncCallback,
) => Promise<ToolResult>;

/** What the gate reads of the loop's resolved config. */
export interface GateConfig {
  tools: unknown;
  logger: ResolvedLogger;
  /** Receives the final update of a call the gate answers without running it. */
  onProgress: ProgressListener | undefined;
}

/** What the gate reads of the loop's resolved context. */
export interface GateContext {
  channel: string;
  chatId: string;
  signal: AbortSignal | undefined;
  metadata: Readonly<Record<string, string>> | undefined;
  /**
   * The turn's `maxConcurrency` bound: runs the tool once approved (or when it needs no approval);
   * the wait for approval holds no slot. `undefined`: no bound.
   */
  slot?: ((run: () => Promise<ToolResult>) => Promise<ToolResult>) | undefined;
  /** The run's current turn and its promoted hidden tools; `undefined` when the registry keeps none per run. */
  promotions?: PromotionView | undefined;
}

/**
 * Answers a call the loop refuses without running it: logged like every failed call (by the
 * registry's logger, or the loop's when the registry cannot), with the call's final progress update.
 */
export function refuseCall(call: NormalizedToolCall["call"], result: ToolResult, config: GateConfig): ToolResult {
  const { tools, logger, onProgress } = config;
  const log = isRecord(tools) ? (tools as Partial<Record<symbol, unknown>>)[LOG_REFUSED_CALL] : undefined;
  try {
    if (typeof log === "function") log.call(tools, call.name, call.id, result);
    else logCallEnd(call.name, result, undefined, { logger, toolCallId: call.id, logPayloads: false });
  } catch {
    // a broken logger must not cost the call its answer
  }
  return finishUnrun(onProgress, { toolName: call.name, toolCallId: call.id, logger }, result);
}

/**
 * The `needsApproval` of the tool a call names, read through the registry's `get` (fail closed on a
 * throw) — and in a run that promoted hidden tools, of the hidden tool it may call, so that a tool
 * only this run can call still asks for approval.
 */
function approvalRule(tools: unknown, name: string, view: PromotionView | undefined): unknown {
  const get = isRecord(tools) ? tools.get : undefined;
  if (typeof get !== "function") return undefined;
  try {
    let tool: unknown = get.call(tools, name);
    const registered = (tools as Partial<Record<symbol, unknown>>)[REGISTERED_TOOL];
    if (tool === undefined && view?.scope.callable(name, view.turn) === true && typeof registered === "function") {
      tool = registered.call(tools, name);
    }
    return isRecord(tool) ? tool.needsApproval : undefined;
  } catch {
    return true;
  }
}

/**
 * `true` when a call of the turn names a tool with a `needsApproval` set: made only on the loop's
 * path without any loop-control option. A registry that keeps the names of such tools (see
 * `APPROVAL_NAMES`) and has none answers at once; otherwise one lookup per call.
 */
export function needsAnyApproval(tools: unknown, calls: readonly NormalizedToolCall[], view?: PromotionView): boolean {
  if (tools === null) return false;
  const names = (tools as Partial<Record<symbol, unknown>>)[APPROVAL_NAMES];
  if (typeof names === "function" && (names.call(tools) as ReadonlySet<string>).size === 0) return false;
  for (const { call, argumentsError } of calls) {
    if (argumentsError !== undefined) continue;
    const rule = approvalRule(tools, call.name, view);
    if (rule !== undefined && rule !== false) return true;
  }
  return false;
}

/** The context an approver (and a `needsApproval` predicate) receives: the call's, before it runs. */
function approvalContext(call: NormalizedToolCall["call"], config: GateConfig, context: GateContext): ToolContext {
  return {
    signal: context.signal ?? new AbortController().signal,
    channel: context.channel,
    chatId: context.chatId,
    toolCallId: call.id,
    metadata: context.metadata ?? {},
    logger: config.logger,
    reportProgress: NO_PROGRESS,
  };
}

/** An approver's answer read strictly: only `true` or `{ approved: true }` approves. */
function readDecision(decision: unknown): { approved: boolean; reason: string } {
  if (decision === true) return { approved: true, reason: "" };
  if (isRecord(decision)) {
    const reason = typeof decision.reason === "string" ? decision.reason : "";
    return { approved: decision.approved === true, reason };
  }
  return { approved: false, reason: "" };
}

function denied(reason: string): ToolResult {
  const text = reason === "" ? "" : `: ${boundText(reason, MAX_VALIDATION_MESSAGE_CHARS)}`;
  return errorResult(`denied by the user${text}`);
}

function abortedWhileWaiting(name: string, reason: unknown): ToolResult {
  return failure(
    name,
    "aborted",
    `tool ${quoteName(name)} was not run: the call was aborted while waiting for approval`,
    reason,
  );
}

/**
 * Runs `run` for a call, first asking `approve` when its tool needs approval: a denial, a missing
 * approver, or an abort while waiting each become the call's result (with the call's final progress
 * update), and the tool never runs. Calls that need no approval go straight to `run`; `run` waits
 * for the turn's {@link GateContext.slot}, the approval does not.
 */
export async function runApproved<C extends GateConfig, X extends GateContext>(
  run: CallRunner<C, X>,
  normalized: NormalizedToolCall,
  config: C,
  context: X,
  approve: ToolApprover | undefined,
  asyncCallback?: AsyncCallback,
): Promise<ToolResult> {
  const { call, argumentsError } = normalized;
  const start = () => run(normalized, config, context, asyncCallback);
  const runNow = () => (context.slot === undefined ? start() : context.slot(start));
  const rule = argumentsError === undefined ? approvalRule(config.tools, call.name, context.promotions) : undefined;
  if (rule === undefined || rule === false) return runNow();
  const notRun = (result: ToolResult) => refuseCall(call, result, config);
  const toolContext = approvalContext(call, config, context);
  try {
    if (typeof rule === "function") {
      const needed: unknown = await raceAbort(Promise.resolve(rule(call.arguments, toolContext)), context.signal);
      if (needed === false) return runNow();
    }
  } catch {
    if (context.signal?.aborted) return notRun(abortedWhileWaiting(call.name, context.signal.reason));
    // A predicate that throws cannot say the call is harmless: it needs approval.
  }
  if (approve === undefined) {
    return notRun(
      errorResult(
        `tool ${quoteName(call.name)} requires approval, but no approver is configured (ToolLoopConfig.approve): it was not run`,
      ),
    );
  }
  let decision: { approved: boolean; reason: string };
  try {
    const request = { toolName: call.name, toolCallId: call.id, arguments: call.arguments };
    decision = readDecision(await raceAbort(Promise.resolve(approve(request, toolContext)), context.signal));
  } catch (error) {
    if (context.signal?.aborted) return notRun(abortedWhileWaiting(call.name, context.signal.reason));
    decision = { approved: false, reason: `the approval failed (${errorMessage(error)})` };
  }
  if (!decision.approved) return notRun(denied(decision.reason));
  if (context.signal?.aborted) return notRun(abortedWhileWaiting(call.name, context.signal.reason));
  return runNow();
}
