import { failure } from "./execute-tool-call.js";
import { raceAbort } from "./internal/abort.js";
import type { Next } from "./internal/compose.js";
import { boundText, errorMessage, isRecord, MAX_VALIDATION_MESSAGE_CHARS, quoteName } from "./internal/describe.js";
import type { NormalizedToolCall } from "./internal/normalize-tool-call.js";
import type { PromotionView } from "./internal/promotion-scope.js";
import type { ResumeState } from "./internal/resume-state.js";
import { callContext, type LoopCall, type RunScope } from "./loop-call.js";
import type { LoopFeature } from "./loop-feature.js";
import { type RefusalTarget, refuseCall } from "./refuse-call.js";
import { APPROVAL_NAMES, REGISTERED_TOOL } from "./registry-symbols.js";
import type { ApprovalDecision, ToolApprover } from "./tool-approval.js";
import { errorResult, type ToolResult } from "./tool-result.js";

/**
 * The `needsApproval` of the tool a call names, read through the registry's `get` (fail closed on a
 * throw) — and in a run that promoted hidden tools, of the hidden tool it may call, so that a tool
 * only this run can call still asks for approval.
 */
export function approvalRule(tools: unknown, name: string, view: PromotionView | undefined): unknown {
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

/** An approver's answer read strictly: only `true` or `{ approved: true }` approves. */
export function readDecision(decision: unknown): { approved: boolean; reason: string } {
  const { reason, approved } = isRecord(decision) ? decision : {};
  return { approved: decision === true || approved === true, reason: typeof reason === "string" ? reason : "" };
}

/** A denied call's answer: `denied by the user: <reason>`, the reason bounded. */
export function denied(reason: string): ToolResult {
  const text = reason === "" ? "" : `: ${boundText(reason, MAX_VALIDATION_MESSAGE_CHARS)}`;
  return errorResult(`denied by the user${text}`);
}

/** The answer of a call whose run aborted while it waited for approval. */
export function abortedWhileWaiting(name: string, reason: unknown): ToolResult {
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
 * update), and the tool never runs. Calls that need no approval go straight to `run`. A decision
 * already made (`decided`: a resume's, see `LoopCall.approval`) is applied without asking.
 */
export function runApproved(
  normalized: NormalizedToolCall,
  target: RefusalTarget,
  scope: RunScope,
  approve: ToolApprover | undefined,
  run: () => Promise<ToolResult>,
  decided?: unknown,
): Promise<ToolResult> {
  const { call, argumentsError } = normalized;
  // Applied as an approver's answer would be (a call with no predicate to ask).
  if (decided !== undefined && argumentsError === undefined) {
    return runOnceApproved(normalized, target, scope, () => decided as ApprovalDecision, run, true);
  }
  const rule = argumentsError === undefined ? approvalRule(target.tools, call.name, scope.promotions) : undefined;
  // No approval needed (the usual call): its own promise, without an async frame around it.
  if (rule === undefined || rule === false) return run();
  return runOnceApproved(normalized, target, scope, approve, run, rule);
}

/**
 * Whether a call whose tool has `rule` (`true` or a `needsApproval` predicate) needs approval:
 * `false` only when the predicate said so; a predicate that throws cannot say the call is harmless
 * (`true`); `undefined` when the run aborted while it was asked.
 */
export async function askRule(
  rule: unknown,
  call: NormalizedToolCall["call"],
  logger: RefusalTarget["logger"],
  scope: RunScope,
): Promise<boolean | undefined> {
  if (typeof rule !== "function") return true;
  try {
    const context = callContext(call, logger, scope);
    return (await raceAbort(Promise.resolve(rule(call.arguments, context)), scope.signal)) !== false;
  } catch {
    return scope.signal?.aborted ? undefined : true;
  }
}

/** {@link runApproved} for a call whose tool needs approval (`rule`: `true` or its predicate). */
async function runOnceApproved(
  { call }: NormalizedToolCall,
  target: RefusalTarget,
  scope: RunScope,
  approve: ToolApprover | undefined,
  run: () => Promise<ToolResult>,
  rule: unknown,
): Promise<ToolResult> {
  const notRun = (result: ToolResult) => refuseCall(call, result, target);
  const needed = await askRule(rule, call, target.logger, scope);
  if (!needed) return needed === false ? run() : notRun(abortedWhileWaiting(call.name, scope.signal?.reason));
  const toolContext = callContext(call, target.logger, scope);
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
    decision = readDecision(await raceAbort(Promise.resolve(approve(request, toolContext)), scope.signal));
  } catch (error) {
    if (scope.signal?.aborted) return notRun(abortedWhileWaiting(call.name, scope.signal.reason));
    decision = { approved: false, reason: `the approval failed (${errorMessage(error)})` };
  }
  if (!decision.approved) return notRun(denied(decision.reason));
  if (scope.signal?.aborted) return notRun(abortedWhileWaiting(call.name, scope.signal.reason));
  return run();
}

/**
 * `approve`, and the refusal of calls that need approval without it: a call of a tool with
 * `needsApproval` runs only once approved; a resumed run's decisions come first. The wait holds none of the turn's `maxConcurrency`
 * slots (they are taken inside it).
 */
export class ApprovalGate implements LoopFeature {
  readonly #approve: ToolApprover | undefined;
  readonly #target: RefusalTarget;
  /** A resumed run's decisions (call id → decision), applied before `approve` is asked. */
  #decisions: ReadonlyMap<string, unknown> | undefined;

  constructor(approve: ToolApprover | undefined, target: RefusalTarget) {
    this.#approve = approve;
    this.#target = target;
  }

  begin(_signal: AbortSignal | undefined, resume: ResumeState | undefined): void {
    this.#decisions = resume?.decisions;
  }

  wrapToolCall(loopCall: LoopCall, next: Next<LoopCall, ToolResult>): Promise<ToolResult> {
    const { normalized } = loopCall;
    const decided = loopCall.approval ?? this.#decisions?.get(normalized.call.id);
    return runApproved(normalized, this.#target, loopCall.scope, this.#approve, () => next(loopCall), decided);
  }
}
