import { isPlainObject, isRecord, quoteName } from "./internal/describe.js";
import { type NormalizedToolCall, resumedToolCall } from "./internal/normalize-tool-call.js";
import { optionError } from "./internal/options.js";
import type { ResumeState } from "./internal/resume-state.js";
import { checkMessages } from "./loop-options.js";
import type { InferOutput, OutputSchema } from "./output-schema.js";
import type { Message, ToolCall } from "./provider.js";
import { runFrom } from "./run-tool-loop.js";
import type { ApprovalDecision } from "./tool-approval.js";
import type { ToolLoopCheckpoint } from "./tool-loop-checkpoint.js";
import type { ToolLoopConfig } from "./tool-loop-config.js";
import type { ToolLoopContext } from "./tool-loop-context.js";
import type { ToolLoopResult } from "./tool-loop-result.js";

const WHERE = "resumeToolLoop";

/** The `TypeError` for a checkpoint whose messages do not fit together: `checkpoint.messages[index] <problem>`. */
function structureError(index: number, problem: string): TypeError {
  return new TypeError(`${WHERE}: checkpoint.messages[${index}] ${problem}`);
}

/** Checks a call of the transcript that will run again: the shape the loop gives its calls. */
function checkCall(call: Record<string, unknown>, at: string): ToolCall {
  if (typeof call.name !== "string") throw optionError(WHERE, `${at}.name`, "a string", call.name);
  if (!isPlainObject(call.arguments)) throw optionError(WHERE, `${at}.arguments`, "an object", call.arguments);
  const fn = call.function;
  if (fn !== undefined && !(isRecord(fn) && (fn.arguments === undefined || typeof fn.arguments === "string"))) {
    throw optionError(WHERE, `${at}.function`, "an object { name, arguments: <JSON text> }", fn);
  }
  return call as unknown as ToolCall;
}

/** The open turn while reading a transcript: the last assistant message with calls and which are answered. */
interface OpenTurn {
  index: number;
  calls: readonly Record<string, unknown>[];
  /** id → answered. */
  answered: Map<string, boolean>;
  unanswered: number;
}

/** The id of the first call of `turn` without an answer (called only when there is one). */
function firstUnanswered(turn: OpenTurn): string {
  for (const [id, answered] of turn.answered) if (!answered) return id;
  return "";
}

/**
 * Checks that every tool message answers a call of the assistant message before it, once, and
 * that only the last assistant message has calls without an answer; returns those calls. Adds
 * every call id to `ids`.
 */
function unansweredCalls(messages: readonly Message[], ids: Set<string>): NormalizedToolCall[] | undefined {
  let turn: OpenTurn | undefined;
  /** Each call id → the message that made a call of it first (a caller's history may repeat ids). */
  const madeAt = new Map<string, number>();
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index] as Message;
    if (message.role === "tool") {
      const id: unknown = message.toolCallId;
      if (typeof id !== "string") throw optionError(WHERE, `checkpoint.messages[${index}].toolCallId`, "a string", id);
      const answered = turn?.answered.get(id);
      if (turn === undefined || answered === undefined) {
        const problem = "which the assistant message before it did not make (a tool answer without its call)";
        throw structureError(index, `answers tool call ${quoteName(id)}, ${problem}`);
      }
      if (answered) throw structureError(index, `answers tool call ${quoteName(id)} a second time`);
      turn.answered.set(id, true);
      turn.unanswered--;
      continue;
    }
    if (turn !== undefined && turn.unanswered > 0) {
      const call = quoteName(firstUnanswered(turn));
      throw structureError(turn.index, `has tool call ${call} without an answer before checkpoint.messages[${index}]`);
    }
    turn = undefined;
    const calls: unknown = message.toolCalls;
    if (message.role !== "assistant" || !Array.isArray(calls) || calls.length === 0) continue;
    const answered = new Map<string, boolean>();
    for (let position = 0; position < calls.length; position++) {
      const call: unknown = calls[position];
      const at = `checkpoint.messages[${index}].toolCalls[${position}]`;
      if (!isRecord(call)) throw optionError(WHERE, at, "a tool call object", call);
      if (typeof call.id !== "string" || call.id === "")
        throw optionError(WHERE, `${at}.id`, "a non-empty string", call.id);
      if (answered.has(call.id)) throw structureError(index, `has two tool calls with the id ${quoteName(call.id)}`);
      answered.set(call.id, false);
      if (!madeAt.has(call.id)) madeAt.set(call.id, index);
      ids.add(call.id);
    }
    turn = { index, calls: calls as Record<string, unknown>[], answered, unanswered: calls.length };
  }
  if (turn === undefined || turn.unanswered === 0) return undefined;
  const open: NormalizedToolCall[] = [];
  for (let position = 0; position < turn.calls.length; position++) {
    const call = turn.calls[position] as Record<string, unknown>;
    if (turn.answered.get(call.id as string) === true) continue;
    // The loop never makes a call with an id of the transcript: running it would answer an id that
    // has its answer (a queued tool would join the earlier call's job and get its result).
    const earlier = madeAt.get(call.id as string) ?? turn.index;
    if (earlier !== turn.index) {
      const problem = `the id of a call of checkpoint.messages[${earlier}], which has its answer`;
      throw structureError(turn.index, `has tool call ${quoteName(call.id)} without an answer, with ${problem}`);
    }
    open.push(resumedToolCall(checkCall(call, `checkpoint.messages[${turn.index}].toolCalls[${position}]`)));
  }
  return open;
}

/** Checks `pendingAsync`: each entry names a call of the transcript (`ids`). */
function checkPendingAsync(value: unknown, ids: ReadonlySet<string>): ToolLoopCheckpoint["pendingAsync"] {
  const option = "checkpoint.pendingAsync";
  if (!Array.isArray(value)) throw optionError(WHERE, option, "an array of { toolCallId, toolName }", value);
  const pending: ToolLoopCheckpoint["pendingAsync"] = [];
  for (let index = 0; index < value.length; index++) {
    const entry: unknown = value[index];
    const at = `${option}[${index}]`;
    if (!isPlainObject(entry)) throw optionError(WHERE, at, "an object { toolCallId, toolName }", entry);
    const { toolCallId, toolName } = entry;
    if (typeof toolCallId !== "string") throw optionError(WHERE, `${at}.toolCallId`, "a string", toolCallId);
    if (typeof toolName !== "string") throw optionError(WHERE, `${at}.toolName`, "a string", toolName);
    if (!ids.has(toolCallId)) {
      throw optionError(WHERE, `${at}.toolCallId`, "the id of a tool call in checkpoint.messages", toolCallId);
    }
    pending.push({ toolCallId, toolName });
  }
  return pending;
}

/** Checks a checkpoint's optional `stopped`. */
function checkStopped(value: unknown): ToolLoopCheckpoint["stopped"] {
  if (value === undefined) return undefined;
  const expected = '{ reason: "response_handled" | "repeated_failure", content: string }';
  if (!isPlainObject(value)) throw optionError(WHERE, "checkpoint.stopped", expected, value);
  const { reason, content } = value;
  if ((reason !== "response_handled" && reason !== "repeated_failure") || typeof content !== "string") {
    throw optionError(WHERE, "checkpoint.stopped", expected, value);
  }
  return { reason, content };
}

/** Reads a checkpoint that may come from untrusted storage: a `TypeError` naming the first problem. */
function readCheckpoint(checkpoint: unknown): { messages: Message[]; resume: ResumeState } {
  if (!isPlainObject(checkpoint)) throw optionError(WHERE, "checkpoint", "a ToolLoopCheckpoint object", checkpoint);
  const { version, messages, iterations } = checkpoint;
  if (version !== 1) throw optionError(WHERE, "checkpoint.version", "1", version);
  if (typeof iterations !== "number" || !Number.isSafeInteger(iterations) || iterations < 0) {
    throw optionError(WHERE, "checkpoint.iterations", "an integer ≥ 0", iterations);
  }
  checkMessages(messages, WHERE, "checkpoint.messages");
  const ids = new Set<string>();
  const calls = unansweredCalls(messages, ids);
  const pendingAsync = checkPendingAsync(checkpoint.pendingAsync, ids);
  const stopped = checkStopped(checkpoint.stopped);
  const last = messages[messages.length - 1];
  const finished =
    calls === undefined && last?.role === "assistant" && (last.toolCalls === undefined || last.toolCalls.length === 0);
  const resume: ResumeState = { iterations, calls, finished, pendingAsync };
  if (stopped !== undefined && calls === undefined && last?.role === "tool") resume.stopped = stopped;
  return { messages, resume };
}

/**
 * Checks `resumeToolLoop`'s decisions (untrusted: they may come from a request body): an object
 * whose own keys are ids of the checkpoint's unanswered calls (`open`), each value `true`/`false` or
 * `{ approved: boolean, reason?: string }`. Read into a `Map`, so that no key (`__proto__`) is
 * looked up on a prototype.
 */
function readDecisions(decisions: unknown, open: readonly NormalizedToolCall[] | undefined): Map<string, unknown> {
  if (!isPlainObject(decisions)) throw optionError(WHERE, "decisions", "an object", decisions);
  const ids = new Set(open?.map(({ call }) => call.id));
  const read = new Map<string, unknown>();
  for (const [id, decision] of Object.entries(decisions)) {
    if (!ids.has(id)) throw optionError(WHERE, "decisions", "keyed by the ids of the calls left waiting", id);
    const { approved, reason = "" } = isPlainObject(decision) ? decision : { approved: decision };
    if (typeof approved !== "boolean" || typeof reason !== "string") {
      throw optionError(WHERE, `decisions[${quoteName(id)}]`, "true, false or { approved, reason? }", decision);
    }
    read.set(id, decision);
  }
  return read;
}

/**
 * Continues a run from a {@link ToolLoopCheckpoint} (one `onCheckpoint` saved, also after a round
 * trip through JSON): the calls of its last assistant message that have no answer run — never one
 * already answered — and the loop goes on as `runToolLoop` would; its `iterations` count toward
 * `config.maxIterations`. A checkpoint of a finished run (it ends with an answer without calls,
 * or with the answers of a turn in which a loop-breaking tool succeeded) resolves at once with the
 * same result, without a provider call. The result's `usage` counts this run's provider calls only.
 *
 * The checkpoint is read as untrusted data before anything runs: a wrong version, messages that
 * are not an array of messages, a tool message that answers no call of the assistant message
 * before it (or answers one twice), calls left without an answer before a later message, or a
 * `pendingAsync` entry naming no call reject with a `TypeError` that names the problem.
 *
 * `decisions` answer the calls an interrupted run left waiting (`approve: "interrupt"`), by call
 * id, before anything else is asked: an approved call runs, a denied one is answered
 * `denied by the user: <reason>`; a waiting call without a decision goes to `config.approve` when
 * it is a function, and is interrupted again otherwise (never run, never denied) — also when
 * `config.approve` is not set. A decision for an id the checkpoint does not leave unanswered, or
 * one that is not `true`, `false` or `{ approved, reason? }`, rejects with a `TypeError` before
 * anything runs.
 *
 * @example
 * ```ts
 * const config = { provider, tools: registry, maxIterations: 10, onCheckpoint: (c) => store.save(JSON.stringify(c)) };
 * // after a crash:
 * const result = await resumeToolLoop(config, JSON.parse(await store.load()));
 * ```
 */
export async function resumeToolLoop<Output extends OutputSchema = OutputSchema>(
  config: ToolLoopConfig<Output>,
  checkpoint: ToolLoopCheckpoint,
  context: ToolLoopContext = {},
  decisions?: Record<string, ApprovalDecision>,
): Promise<ToolLoopResult<InferOutput<Output>>> {
  const { messages, resume } = readCheckpoint(checkpoint);
  let run: ToolLoopConfig = config;
  if (decisions !== undefined) {
    resume.decisions = readDecisions(decisions, resume.calls);
    // Without an approver, the calls left without a decision wait again rather than being refused.
    if (isPlainObject(config) && config.approve === undefined) run = { ...config, approve: "interrupt" };
  }
  const reread = (changed: unknown) => {
    const { messages: read, resume: state } = readCheckpoint({ ...checkpoint, messages: changed });
    if (resume.decisions !== undefined) state.decisions = resume.decisions;
    return { messages: read, state };
  };
  const result = runFrom(WHERE, run, messages, context, { state: resume, reread });
  return result as Promise<ToolLoopResult<InferOutput<Output>>>;
}
