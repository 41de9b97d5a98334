import PQueue from "p-queue";
import {
  InvalidProviderResponseError,
  isInvalidProviderResponseError,
  isToolLoopError,
  ToolLoopError,
  type ToolLoopErrorCode,
} from "./errors.js";
import { checkTimeout, failure, WITHOUT_METADATA } from "./execute-tool-call.js";
import { isAborted, type LinkedSignal, linkSignal, SerialAbortRace } from "./internal/abort.js";
import {
  type CallRunner,
  type GateContext,
  needsAnyApproval,
  refuseCall,
  runApproved,
} from "./internal/approval-gate.js";
import { holdDeadlines } from "./internal/deadline.js";
import { cutName, describeType, errorMessage, isPlainObject, isRecord, quoteName } from "./internal/describe.js";
import { log, logEnabled, type ResolvedLogger, resolveLogger, roundMs, writeLine } from "./internal/logger.js";
import { LoopRun } from "./internal/loop-run.js";
import { CallIds, type NormalizedToolCall, normalizeToolCall } from "./internal/normalize-tool-call.js";
import {
  checkConcurrency,
  checkFunction,
  checkMetadata,
  checkProvider,
  checkSignal,
  checkString,
  optionError,
} from "./internal/options.js";
import { PromotionScope, type PromotionView } from "./internal/promotion-scope.js";
import type { Logger } from "./logger.js";
import type { ProgressListener } from "./progress.js";
import type { LLMProvider, LLMResponse, Message, ToolDefinition, UsageInfo } from "./provider.js";
import type { ToolLoopCheckpoint } from "./resume-tool-loop.js";
import type { AsyncCallback, Tool, ToolContext } from "./tool.js";
import type { ApprovalDecision, ApprovalRequest } from "./tool-approval.js";
import type { ToolLoopEvent } from "./tool-loop-event.js";
import {
  CACHED_DEFINITIONS,
  EXECUTE_CHECKED,
  type ExecuteOptions,
  LOOP_BREAKING_NAMES,
  PROMOTION_MARK,
  TICK_HIDDEN_TOOLS,
  ToolRegistry,
  VIEW_DEFINITIONS,
} from "./tool-registry.js";
import { isToolResult, type ToolResult } from "./tool-result.js";

/** Configuration of one {@link runToolLoop} run (Go's `ToolLoopConfig`). */
export interface ToolLoopConfig {
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
   * Receives the progress of every tool call (seed 003's progress): each `context.reportProgress`
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
   */
  approve?:
    | ((request: ApprovalRequest, context: ToolContext) => ApprovalDecision | Promise<ApprovalDecision>)
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
   * When one tool fails with the same error text this many times in a row (across turns), its
   * last answer tells the model to stop and the loop ends after the turn (`"repeated_failure"`).
   * @default off
   */
  maxRepeatedFailures?: number | undefined;
  /**
   * Longest tool message in the transcript: longer ones are cut with `[… N characters cut]`
   * (results themselves stay whole), the repeated-failure note included. At least 128 (a smaller
   * value is a `TypeError`). @default off
   */
  maxResultChars?: number | undefined;
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
}

/** Who is talking, passed to every tool call (Go's `channel, chatID` plus abort and metadata). */
export interface ToolLoopContext {
  /** Channel of the conversation (e.g. `"telegram"`). @default "" */
  channel?: string | undefined;
  /** Chat id of the conversation. @default "" */
  chatId?: string | undefined;
  /** Aborts the provider call and every tool call; the loop then rejects with `ToolLoopError`. */
  signal?: AbortSignal | undefined;
  /** Message metadata (message id, user id …) for every call's `context.metadata` and `setMetadata`. */
  metadata?: Readonly<Record<string, string>> | undefined;
}

/** Why the loop stopped. */
export type StopReason =
  | "completed"
  | "max_iterations"
  | "loop_breaking_tool"
  | "response_handled"
  | "repeated_failure";

/** The outcome of {@link runToolLoop} (Go's `ToolLoopResult`, plus the transcript). */
export interface ToolLoopResult {
  /**
   * The final assistant text; `""` when the iteration cap was hit; with `"loop_breaking_tool"`, the
   * result of the call that ended the loop (its `forUser`, or `forLLM` when that is empty).
   */
  content: string;
  /** Provider calls made. */
  iterations: number;
  /** The full transcript: the caller's messages, then every assistant and tool message of this run. */
  messages: Message[];
  /**
   * `"completed"` when the model answered without tool calls, `"max_iterations"` at the cap,
   * `"loop_breaking_tool"` after a turn in which a {@link Tool.loopBreaking} tool succeeded.
   */
  stopReason: StopReason;
  /** The call that ended the loop; set with `stopReason: "loop_breaking_tool"` only. */
  stoppedBy?: {
    /** The loop-breaking tool's name. */
    toolName: string;
    /** The id of its call in the transcript. */
    toolCallId: string;
  };
  /** Token usage summed over the provider calls that reported it. */
  usage?: UsageInfo;
}

/** What the loop needs of a registry: the public methods, which a registry of any installed copy has. */
type RegistryLike = Pick<ToolRegistry, "count" | "executeWithContext" | "toProviderDefs">;

interface ResolvedConfig {
  provider: LLMProvider;
  model: string;
  tools: RegistryLike | null;
  maxIterations: number;
  llmOptions: Record<string, unknown>;
  maxConcurrency: number;
  toolTimeoutMs: number | undefined;
  logger: ResolvedLogger;
  onProgress: ProgressListener | undefined;
  /** The loop-control hooks of this run; `undefined` when no such option is set. */
  hooks: LoopRun | undefined;
  /** The call runner with those hooks, when there are hooks. */
  runCall: CallRunner<ResolvedConfig, ResolvedContext> | undefined;
  /** With `tickHiddenTools`: a mark taken before each tool round, and the tick after it. */
  hiddenTools: HiddenToolTicker | undefined;
}

interface HiddenToolTicker {
  mark(): number;
  tick(mark: number): void;
}

type ResolvedContext = GateContext;

const WHERE = "runToolLoop";
const ROLES: ReadonlySet<string> = new Set(["system", "user", "assistant", "tool"]);

function isRegistryLike(value: unknown): value is RegistryLike {
  if (value instanceof ToolRegistry) return true;
  if (!isRecord(value)) return false;
  const candidate = value as Partial<Record<keyof RegistryLike, unknown>>;
  return (
    typeof candidate.count === "function" &&
    typeof candidate.executeWithContext === "function" &&
    typeof candidate.toProviderDefs === "function"
  );
}

function resolveTools(tools: unknown, logger: ResolvedLogger, where: string): RegistryLike | null {
  if (tools === undefined || tools === null) return null;
  if (isRegistryLike(tools)) return tools;
  if (!Array.isArray(tools)) {
    throw optionError(where, "tools", "a ToolRegistry, an array of tools or null", tools);
  }
  const registry = new ToolRegistry({ logger });
  for (let index = 0; index < tools.length; index++) {
    const tool: unknown = tools[index];
    const name = isRecord(tool) ? tool.name : undefined;
    if (typeof name === "string" && registry.has(name)) {
      throw optionError(where, `tools[${index}]`, "a tool with a name not used before in the array", name);
    }
    try {
      registry.register(tool as Tool);
    } catch (error) {
      throw new TypeError(`${where}: tools[${index}]: ${errorMessage(error)}`, { cause: error });
    }
  }
  return registry;
}

function resolveConfig(config: ToolLoopConfig, where: string): ResolvedConfig {
  if (!isPlainObject(config)) throw optionError(where, "config", "an object", config);
  const { provider, maxIterations } = config;
  checkProvider(where, provider);
  if (!Number.isInteger(maxIterations) || maxIterations < 0) {
    throw optionError(where, "maxIterations", "an integer ≥ 0", maxIterations);
  }
  const maxConcurrency = checkConcurrency(where, "maxConcurrency", config.maxConcurrency);
  const toolTimeoutMs = checkTimeout(where, "toolTimeoutMs", config.toolTimeoutMs);
  if (config.llmOptions !== undefined && !isPlainObject(config.llmOptions)) {
    throw optionError(where, "llmOptions", "an object", config.llmOptions);
  }
  checkFunction(where, "onProgress", config.onProgress);
  const logger = resolveLogger(config.logger, where);
  let model: unknown = config.model;
  if (model === undefined) {
    try {
      model = provider.getDefaultModel();
    } catch (error) {
      throw new TypeError(`${where}: provider.getDefaultModel() threw: ${errorMessage(error)}`, { cause: error });
    }
  }
  if (typeof model !== "string") throw optionError(where, "model", "a string", model);
  const hooks = LoopRun.create(config, provider, maxIterations, logger, where);
  const tools = resolveTools(config.tools, logger, where);
  // needsApproval is read through get(name): without it, approval could not be enforced.
  if (config.approve !== undefined && tools !== null && typeof (tools as { get?: unknown }).get !== "function") {
    const expected = "a registry with get(name) when approve is set (needsApproval is read through it)";
    throw optionError(where, "tools", expected, tools);
  }
  return {
    provider,
    model,
    tools,
    hiddenTools: resolveHiddenToolTicker(config.tickHiddenTools, tools),
    maxIterations,
    llmOptions: config.llmOptions ?? {},
    maxConcurrency,
    toolTimeoutMs,
    logger,
    onProgress: hooks === undefined ? config.onProgress : hooks.progressListener(config.onProgress),
    hooks,
    runCall: hooks?.wrap(runCall),
  };
}

/**
 * The tick of `tickHiddenTools`: through the registry's marks, so that a promotion made during a
 * round does not count that round; a registry of another copy without them ticks with `tickTTL()`.
 */
function resolveHiddenToolTicker(option: unknown, tools: RegistryLike | null): HiddenToolTicker | undefined {
  if (option === undefined || option === false) return undefined;
  if (option !== true) throw optionError(WHERE, "tickHiddenTools", "a boolean", option);
  if (tools === null) return undefined;
  const registry = tools as Partial<Record<typeof PROMOTION_MARK | typeof TICK_HIDDEN_TOOLS | "tickTTL", unknown>>;
  const mark = registry[PROMOTION_MARK];
  const tick = registry[TICK_HIDDEN_TOOLS];
  if (typeof mark === "function" && typeof tick === "function") {
    return { mark: () => mark.call(tools) as number, tick: (before) => tick.call(tools, before) };
  }
  const { tickTTL } = registry;
  if (typeof tickTTL !== "function") {
    throw optionError(WHERE, "tools", "a registry with tickTTL() when tickHiddenTools is set", tools);
  }
  return { mark: () => 0, tick: () => tickTTL.call(tools) };
}

function resolveContext(context: unknown, where: string): ResolvedContext {
  if (context === undefined) {
    return { channel: "", chatId: "", signal: undefined, metadata: undefined, promotions: undefined };
  }
  if (!isRecord(context)) throw optionError(where, "context", "an object", context);
  return {
    channel: checkString(where, "context.channel", context.channel) ?? "",
    chatId: checkString(where, "context.chatId", context.chatId) ?? "",
    signal: checkSignal(where, "context.signal", context.signal),
    metadata: checkMetadata(where, "context.metadata", context.metadata),
    promotions: undefined,
  };
}

/** Checks a transcript (`option` names it in the `TypeError`: `messages`, `checkpoint.messages`). @internal */
export function checkMessages(messages: unknown, where: string, option: string): asserts messages is Message[] {
  if (!Array.isArray(messages)) throw optionError(where, option, "an array of messages", messages);
  for (let index = 0; index < messages.length; index++) {
    const message: unknown = messages[index];
    if (!isRecord(message)) throw optionError(where, `${option}[${index}]`, "a message object", message);
    if (typeof message.role !== "string" || !ROLES.has(message.role)) {
      throw optionError(where, `${option}[${index}].role`, '"system", "user", "assistant" or "tool"', message.role);
    }
    if (typeof message.content !== "string") {
      throw optionError(where, `${option}[${index}].content`, "a string", message.content);
    }
    if (message.toolCalls !== undefined && !Array.isArray(message.toolCalls)) {
      throw optionError(where, `${option}[${index}].toolCalls`, "an array", message.toolCalls);
    }
  }
}

function addUsage(total: UsageInfo | undefined, usage: UsageInfo | undefined): UsageInfo | undefined {
  if (!isPlainObject(usage)) return total;
  const add = (a: number | undefined, b: unknown) => (a ?? 0) + (typeof b === "number" ? b : 0);
  return {
    promptTokens: add(total?.promptTokens, usage.promptTokens),
    completionTokens: add(total?.completionTokens, usage.completionTokens),
    totalTokens: add(total?.totalTokens, usage.totalTokens),
  };
}

/**
 * Runs the model ↔ tool loop (Go's `RunToolLoop`): ask the provider; if the answer has no tool
 * calls, finish with its text; otherwise append the assistant message, run the turn's calls
 * (concurrently, at most `maxConcurrency` at once), append one tool message per call in call
 * order, and ask again — until the model answers or `maxIterations` is reached.
 *
 * Tool failures never reject: the model receives them as tool messages. The promise rejects with
 * a {@link ToolLoopError} only when the provider fails or `context.signal` aborts; its
 * `messages` then hold the transcript so far, every tool call answered.
 *
 * @example
 * ```ts
 * const result = await runToolLoop(
 *   { provider, tools: registry, maxIterations: 10 },
 *   [{ role: "user", content: "What's the weather in Paris?" }],
 * );
 * console.log(result.content);
 * ```
 */
export function runToolLoop(
  config: ToolLoopConfig,
  messages: Message[],
  context: ToolLoopContext = {},
): Promise<ToolLoopResult> {
  return runFrom(WHERE, config, messages, context, undefined);
}

/**
 * Where a resumed run starts (see `resumeToolLoop`): the checkpoint's iterations, the calls of its
 * last assistant message still without an answer, and its pending async calls. @internal
 */
export interface ResumeState {
  /** Provider calls already made. */
  iterations: number;
  /** The calls to run first, in call order; `undefined` when none is unanswered. */
  calls: NormalizedToolCall[] | undefined;
  /** `true` when the transcript ends with an answer without calls: the run resolves at once. */
  finished: boolean;
  /** The checkpoint's `pendingAsync`, carried into every later checkpoint. */
  pendingAsync: { toolCallId: string; toolName: string }[];
  /** The checkpoint's `stopped`: the run stopped after its last turn, so the resume does too. */
  stopped?: { reason: "response_handled" | "repeated_failure"; content: string };
}

/**
 * Runs the loop on `messages`: from the start, or (`resume`) from a checkpoint's state, the
 * messages already checked. `where` names the public function in `TypeError`s. @internal
 */
export async function runFrom(
  where: string,
  config: ToolLoopConfig,
  messages: Message[],
  context: ToolLoopContext,
  resume: ResumeState | undefined,
): Promise<ToolLoopResult> {
  const resolved = resolveConfig(config, where);
  if (resume === undefined) checkMessages(messages, where, "messages");
  const run = resolveContext(context, where);
  // Without a caller's signal there is nothing to unlink: return the loop's promise directly, so
  // that a waiting run keeps one suspended async frame instead of two.
  if (run.signal === undefined)
    return finishRun(resolved, messages.length, () => loop(resolved, messages, run, resume));
  // The run's own signal follows the caller's through one shared subscription: however many runs
  // and calls wait on the caller's signal, it carries one listener of ours.
  let link: LinkedSignal;
  try {
    link = linkSignal(run.signal);
  } catch (error) {
    throw new TypeError(`${where}: context.signal cannot be listened to: ${errorMessage(error)}`, { cause: error });
  }
  try {
    return await finishRun(resolved, messages.length, () =>
      loop(resolved, messages, { ...run, signal: link.signal }, resume),
    );
  } finally {
    link.dispose();
  }
}

/**
 * Starts the run (`start`, then the hooks' `finish`) and writes its one `info` line, `tool loop
 * finished`, when it resolves or rejects: its `iterations`, `stopReason` (or the `ToolLoopError`'s
 * `error` code), the tool calls it answered (`toolCalls`, `failedCalls`: its tool messages from
 * `from` on) and `durationMs` (from before `start`). Nothing is added when `info` is off.
 */
function finishRun(
  { logger, hooks }: ResolvedConfig,
  from: number,
  start: () => Promise<ToolLoopResult>,
): Promise<ToolLoopResult> {
  const on = logEnabled(logger, "info");
  const started = on ? performance.now() : 0;
  const running = hooks === undefined ? start() : hooks.finish(start());
  if (!on) return running;
  const end = (outcome: ToolLoopResult | ToolLoopError): void => {
    const durationMs = roundMs(performance.now() - started);
    // Read inside `log`'s guard: a ToolLoopError passed through from a hook or a registry may
    // carry anything, and logging must never change what the run resolves or rejects with.
    const fields = () => {
      const { messages, iterations } = outcome;
      let toolCalls = 0;
      let failedCalls = 0;
      for (let index = from; index < messages.length; index++) {
        const message = messages[index];
        if (message?.role === "tool") {
          toolCalls++;
          if (message.isError === true) failedCalls++;
        }
      }
      // One literal, no spread: pino writes an object built by a spread about three times slower.
      return isToolLoopError(outcome)
        ? { iterations, error: outcome.code, toolCalls, failedCalls, durationMs }
        : { iterations, stopReason: outcome.stopReason, toolCalls, failedCalls, durationMs };
    };
    log(logger, "info", fields, "tool loop finished");
  };
  return running.then(
    (result) => {
      end(result);
      return result;
    },
    (error: unknown) => {
      if (isToolLoopError(error)) end(error);
      throw error;
    },
  );
}

/**
 * Whether a tool name is loop-breaking: the registry's set (symbol protocol), or for a registry
 * without it, its `get(name).loopBreaking`. `undefined` when no tool can be (the usual case: the
 * loop then checks nothing per call).
 */
function loopBreakingTest(tools: RegistryLike | null): ((name: string) => boolean) | undefined {
  if (tools === null) return undefined;
  const names = (tools as Partial<Record<symbol, unknown>>)[LOOP_BREAKING_NAMES];
  if (typeof names === "function") {
    const set = names.call(tools) as ReadonlySet<string>;
    return set.size === 0 ? undefined : (name) => set.has(name);
  }
  const get = (tools as { get?: unknown }).get;
  if (typeof get !== "function") return undefined;
  return (name) => (get.call(tools, name) as Partial<Tool> | undefined)?.loopBreaking === true;
}

/**
 * The definitions to offer: the registry's cached list — with the hidden tools this run promoted
 * for this turn, which the model is then shown — or (another copy's registry) a copy; `undefined`
 * when every tool is hidden, as for no tools.
 */
function definitionsOf(tools: RegistryLike, view: PromotionView | undefined): ToolDefinition[] | undefined {
  const registry = tools as Partial<Record<symbol, unknown>>;
  const inView = view === undefined ? undefined : registry[VIEW_DEFINITIONS];
  const cached = registry[CACHED_DEFINITIONS];
  let definitions: ToolDefinition[];
  if (typeof inView === "function") {
    definitions = inView.call(tools, view) as ToolDefinition[];
    (view as PromotionView).scope.showOffered((view as PromotionView).turn);
  } else {
    definitions = typeof cached === "function" ? (cached.call(tools) as ToolDefinition[]) : tools.toProviderDefs();
  }
  return definitions.length === 0 ? undefined : definitions;
}

/** Why a response cannot be read, or `undefined` when it can. */
function responseProblem(response: unknown): string | undefined {
  if (!isRecord(response)) return `expected an LLMResponse object, got ${describeType(response)}`;
  const { toolCalls, tool_calls: snakeCase } = response;
  const noCalls = toolCalls == null || (Array.isArray(toolCalls) && toolCalls.length === 0);
  // A provider written against OpenAI's wire names would otherwise be read as a final answer.
  if (noCalls && snakeCase != null && !(Array.isArray(snakeCase) && snakeCase.length === 0)) {
    return 'it has "tool_calls" but no "toolCalls": an LLMProvider returns its calls as toolCalls (camelCase)';
  }
  if (toolCalls != null && !Array.isArray(toolCalls))
    return `toolCalls must be an array, got ${describeType(toolCalls)}`;
  return undefined;
}

async function loop(
  resolved: ResolvedConfig,
  messages: Message[],
  context: ResolvedContext,
  resume: ResumeState | undefined,
): Promise<ToolLoopResult> {
  const { provider, model, tools, maxIterations, llmOptions, logger, hooks, hiddenTools } = resolved;
  const { signal } = context;
  const transcript: Message[] = [...messages];
  let iterations = resume === undefined ? 0 : resume.iterations;
  let usage: UsageInfo | undefined;
  const fail = (code: ToolLoopErrorCode, message: string, cause: unknown) =>
    new ToolLoopError(message, { messages: transcript, iterations, code, cause });
  const aborted = () => fail("aborted", `tool loop aborted: ${errorMessage(signal?.reason)}`, signal?.reason);
  // The run's calls share one timer for their timeouts, kept until the run ends.
  const releaseDeadlines = holdDeadlines(resolved.toolTimeoutMs);
  // Its provider calls, one at a time, share one subscription to the signal.
  const providerRace = signal === undefined || isAborted(signal) ? undefined : new SerialAbortRace(signal);
  // The hidden tools this run's searches promote: the run's own, never the registry's (issue 26).
  // A resumed run starts without any (a checkpoint does not carry them).
  // One view, its turn moved on with each iteration: a turn's calls all end before the next begins.
  const view = tools !== null && VIEW_DEFINITIONS in tools ? { scope: new PromotionScope(), turn: 0 } : undefined;
  context.promotions = view;

  try {
    // Call ids must be unique in the whole transcript (Anthropic rejects duplicates), also against
    // the caller's history: a provider may repeat ids across turns or send none.
    const ids = new CallIds();
    for (const message of messages) {
      for (const call of message.toolCalls ?? []) {
        if (typeof call?.id === "string") ids.add(call.id);
      }
    }

    hooks?.begin(signal);
    // A resumed run first answers its checkpoint's open calls (or, finished, resolves at once).
    let resumed: NormalizedToolCall[] | undefined;
    if (resume !== undefined) {
      if (resume.finished) return finishedResult(transcript, iterations, maxIterations);
      const stopped = resume.calls === undefined ? stoppedTurn(transcript, tools, iterations) : undefined;
      if (stopped !== undefined) return stopped;
      if (resume.stopped !== undefined) {
        const { reason, content } = resume.stopped;
        return { content, iterations, messages: transcript, stopReason: reason };
      }
      hooks?.resume(resume);
      resumed = resume.calls;
    }
    const limit = hooks === undefined ? maxIterations : hooks.limit;
    while (resumed !== undefined || iterations < limit) {
      if (isAborted(signal)) throw aborted();
      let calls: NormalizedToolCall[];
      let response: LLMResponse | undefined;
      // A resumed turn belongs to the checkpoint's last iteration. (One `iteration` per pass, in
      // this scope: a second one captured in the block below would cost a context per pass.)
      if (resumed === undefined) iterations++;
      const iteration = iterations;
      if (view !== undefined) view.turn = iteration;
      if (resumed !== undefined) {
        calls = resumed;
        resumed = undefined;
      } else {
        const definitions = tools !== null && tools.count() > 0 ? definitionsOf(tools, context.promotions) : undefined;
        // One level check for the step's lines.
        const debug = logEnabled(logger, "debug");
        if (debug) writeLine(logger, "debug", () => ({ iteration, model, messages: transcript.length }), "llm call");
        if (hooks !== undefined) await hooks.stepStart(iteration, transcript);

        try {
          const answer = Promise.resolve(
            hooks === undefined
              ? provider.chat(transcript, definitions, model, llmOptions, signal)
              : hooks.chat(provider, transcript, definitions, model, llmOptions, signal, iteration),
          );
          response = await (providerRace === undefined ? answer : providerRace.race(answer));
        } catch (error) {
          if (isAborted(signal)) throw aborted();
          hooks?.check(transcript, iterations);
          if (hooks?.finalCallFailed(iteration, error) === true) {
            return withUsage({ content: "", iterations, messages: transcript, stopReason: "max_iterations" }, usage);
          }
          const code = isInvalidProviderResponseError(error) ? "invalid_response" : "provider_failed";
          throw fail(code, `LLM call failed: ${errorMessage(error)}`, error);
        }
        const problem = responseProblem(response);
        if (problem !== undefined) {
          const cause = new InvalidProviderResponseError(`the provider returned an invalid response: ${problem}`, {
            provider: "LLMProvider",
            body: response,
          });
          throw fail("invalid_response", `LLM call failed: ${cause.message}`, cause);
        }
        usage = addUsage(usage, response.usage);
        const content = typeof response.content === "string" ? response.content : "";
        const rawCalls: readonly unknown[] = response.toolCalls ?? [];

        if (rawCalls.length === 0) {
          transcript.push({ role: "assistant", content });
          if (hooks !== undefined) {
            const outcome = await hooks.answered(transcript, response, iteration, signal);
            if (outcome === "continue") continue;
            if (outcome !== "completed")
              return withUsage({ content, iterations, messages: transcript, stopReason: outcome }, usage);
          }
          if (debug) writeLine(logger, "debug", () => ({ iteration }), "tool loop completed");
          return withUsage({ content, iterations, messages: transcript, stopReason: "completed" }, usage);
        }

        // By index, not `map`: a sparse array's holes are malformed calls that still get an answer.
        calls = new Array(rawCalls.length);
        for (let index = 0; index < rawCalls.length; index++) {
          calls[index] = normalizeToolCall(rawCalls[index], `call_${iterations}_${index}`, ids);
        }
        transcript.push({ role: "assistant", content, toolCalls: calls.map(({ call }) => call) });
        if (debug) writeLine(logger, "debug", () => ({ iteration, ...namesOf(calls) }), "running tool calls");
        if (hooks !== undefined) await hooks.callsMade(transcript, iteration);
      }

      const promotionMark = hiddenTools?.mark();
      // One call, the usual turn: awaited here, without a promise of runTurn's own.
      const results =
        calls.length === 1
          ? [await callRunner(resolved, calls, context)(calls[0] as NormalizedToolCall, resolved, context)]
          : await runTurn(calls, resolved, context);
      const isLoopBreaking = loopBreakingTest(tools);
      let stoppedAt = -1;
      let handled = calls.length > 0;
      for (let index = 0; index < calls.length; index++) {
        const { call } = calls[index] as NormalizedToolCall;
        const result = results[index] as ToolResult;
        transcript.push({
          role: "tool",
          content: contentOf(result),
          toolCallId: call.id,
          toolName: call.name,
          isError: result.isError === true,
        });
        // The first successful loop-breaking call in call order ends the loop, after the whole turn is answered.
        if (stoppedAt < 0 && isLoopBreaking !== undefined && result.isError !== true && isLoopBreaking(call.name)) {
          stoppedAt = index;
        }
        if (result.responseHandled !== true) handled = false;
      }
      if (hiddenTools !== undefined) hiddenTools.tick(promotionMark as number);
      if (hooks !== undefined) await hooks.turnAnswered(transcript, calls, results, response, iteration, handled);
      if (stoppedAt >= 0) {
        const { call } = calls[stoppedAt] as NormalizedToolCall;
        const result = results[stoppedAt] as ToolResult;
        const text = typeof result.forUser === "string" && result.forUser !== "" ? result.forUser : contentOf(result);
        log(
          logger,
          "debug",
          () => ({ iteration, tool: cutName(call.name) }),
          "tool loop stopped by a loop-breaking tool",
        );
        const stopped: ToolLoopResult = {
          content: text,
          iterations,
          messages: transcript,
          stopReason: "loop_breaking_tool",
        };
        stopped.stoppedBy = { toolName: call.name, toolCallId: call.id };
        return withUsage(stopped, usage);
      }
      // picoclaw HEAD: when every result of the turn says the response was handled, no further provider call.
      if (handled) {
        log(logger, "debug", () => ({ iteration }), "tool loop stopped: every result handled the response");
        return withUsage({ content: "", iterations, messages: transcript, stopReason: "response_handled" }, usage);
      }
      if (hooks?.stop !== undefined) {
        const { reason, content: text } = hooks.stop;
        return withUsage({ content: text, iterations, messages: transcript, stopReason: reason }, usage);
      }
    }

    if (isAborted(signal)) throw aborted();
    log(logger, "debug", () => ({ iterations }), "tool loop stopped at maxIterations");
    return withUsage({ content: "", iterations, messages: transcript, stopReason: "max_iterations" }, usage);
  } catch (error) {
    // The loop only ever rejects with a ToolLoopError, whatever broke (a registry that throws …).
    if (isToolLoopError(error)) throw error;
    throw fail("internal", `tool loop failed: ${errorMessage(error)}`, error);
  } finally {
    releaseDeadlines();
    providerRace?.dispose();
  }
}

const MAX_LOGGED_NAMES = 20;

/** The names of a turn's calls for a log line: cut, at most 20, and how many more there were. */
function namesOf(calls: readonly NormalizedToolCall[]): { toolCalls: string[]; more?: number } {
  const toolCalls = calls.slice(0, MAX_LOGGED_NAMES).map(({ call }) => cutName(call.name));
  return calls.length > MAX_LOGGED_NAMES ? { toolCalls, more: calls.length - MAX_LOGGED_NAMES } : { toolCalls };
}

/** The tool message's text: `contentForLLM()`, which reads a tool's own `err` and so may throw. @internal */
export function contentOf(result: ToolResult): string {
  try {
    const content: unknown = result.contentForLLM();
    if (typeof content === "string") return content;
    return `the tool's result has no text (got ${describeType(content)})`;
  } catch (error) {
    return `the tool's result cannot be read: ${errorMessage(error)}`;
  }
}

/**
 * The result of a run whose checkpoint ends with an answer without calls: that answer, with
 * `"max_iterations"` when it came past the cap (`finalAnswerOnMaxIterations`'s call).
 */
function finishedResult(transcript: Message[], iterations: number, maxIterations: number): ToolLoopResult {
  const content = (transcript[transcript.length - 1] as Message).content;
  const stopReason: StopReason = iterations > maxIterations ? "max_iterations" : "completed";
  return { content, iterations, messages: transcript, stopReason };
}

/**
 * A checkpoint taken after the answers of a turn in which a loop-breaking tool succeeded: the run
 * stopped there, so its resume does too (`content` is that answer's text, the result's `forUser`
 * not being in the transcript). `undefined` when the transcript does not end with such a turn.
 */
function stoppedTurn(
  transcript: Message[],
  tools: RegistryLike | null,
  iterations: number,
): ToolLoopResult | undefined {
  const isLoopBreaking = loopBreakingTest(tools);
  let start = transcript.length;
  while (start > 0 && transcript[start - 1]?.role === "tool") start--;
  const turn = transcript[start - 1];
  if (isLoopBreaking === undefined || start === transcript.length || turn?.toolCalls === undefined) return undefined;
  const answers = new Map<unknown, Message>();
  for (let index = start; index < transcript.length; index++) {
    const answer = transcript[index] as Message;
    answers.set(answer.toolCallId, answer);
  }
  // As the loop decides: the first successful loop-breaking call in call order.
  for (const call of turn.toolCalls) {
    const answer = answers.get(call.id);
    if (answer === undefined || answer.isError === true || !isLoopBreaking(call.name)) continue;
    const result: ToolLoopResult = {
      content: answer.content,
      iterations,
      messages: transcript,
      stopReason: "loop_breaking_tool",
    };
    result.stoppedBy = { toolName: call.name, toolCallId: call.id };
    return result;
  }
  return undefined;
}

function withUsage(result: ToolLoopResult, usage: UsageInfo | undefined): ToolLoopResult {
  if (usage !== undefined) result.usage = usage;
  return result;
}

/** Answers a call refused before dispatch, logged like every failed call, with its final progress update. */
function refuse(call: NormalizedToolCall["call"], result: ToolResult, config: ResolvedConfig): Promise<ToolResult> {
  return Promise.resolve(refuseCall(call, result, config));
}

const EXECUTE_WITH_CONTEXT = ToolRegistry.prototype.executeWithContext;

function runCall(
  { call, argumentsError, errorCode = "invalid_json" }: NormalizedToolCall,
  config: ResolvedConfig,
  context: ResolvedContext,
  asyncCallback?: AsyncCallback,
): Promise<ToolResult> {
  if (argumentsError !== undefined) return refuse(call, failure(call.name, errorCode, argumentsError), config);
  if (config.tools === null) {
    const message = `No tools available: tool ${quoteName(call.name)} cannot be called.`;
    return refuse(call, failure(call.name, "tool_not_found", message), config);
  }
  const { tools } = config;
  // Also a stand-in that borrows the method: it has no EXECUTE_CHECKED, and takes the public path.
  if (tools.executeWithContext === EXECUTE_WITH_CONTEXT && EXECUTE_CHECKED in tools) {
    // This copy's own registry: the options were checked when the run started, and its answer is
    // always a ToolResult (no guard, no promise of its own).
    return (tools as ToolRegistry)[EXECUTE_CHECKED](
      {
        name: call.name,
        args: call.arguments,
        channel: context.channel,
        chatId: context.chatId,
        asyncCallback,
        signal: context.signal,
        metadata: context.metadata,
        toolCallId: call.id,
        timeoutMs: config.toolTimeoutMs,
        onProgress: config.onProgress,
      },
      context.promotions,
    );
  }
  let pending: Promise<ToolResult>;
  try {
    pending = tools.executeWithContext(call.name, call.arguments, context.channel, context.chatId, asyncCallback, {
      signal: context.signal,
      metadata: context.metadata,
      timeoutMs: config.toolTimeoutMs,
      toolCallId: call.id,
      onProgress: config.onProgress,
      // The transcript reads no metadata: no copy of the result, no clock reads.
      [WITHOUT_METADATA]: true,
    } as ExecuteOptions);
  } catch (error) {
    pending = Promise.reject(error);
  }
  // executeWithContext resolves every tool failure; this only guards the transcript against a
  // registry that breaks its contract (another copy, a subclass), so the call still gets its answer.
  return Promise.resolve(pending).then(
    (result) =>
      isToolResult(result)
        ? result
        : failure(call.name, "no_result", `tool ${quoteName(call.name)} returned no result`),
    (error: unknown) =>
      failure(call.name, "tool_failed", `tool ${quoteName(call.name)} failed: ${errorMessage(error)}`, error),
  );
}

/** How a turn's calls run: through the loop-control hooks, or (without them) refusing the calls that need an approval nobody can give. */
function callRunner(
  config: ResolvedConfig,
  calls: readonly NormalizedToolCall[],
  context: ResolvedContext,
): CallRunner<ResolvedConfig, ResolvedContext> {
  return config.runCall ?? (needsAnyApproval(config.tools, calls, context.promotions) ? refuseUnapproved : runOneCall);
}

/** Runs one turn's calls (more than one), at most `maxConcurrency` at once; results are written back by index. */
async function runTurn(
  calls: NormalizedToolCall[],
  config: ResolvedConfig,
  context: ResolvedContext,
): Promise<ToolResult[]> {
  const runCall = callRunner(config, calls, context);
  // When the bound cannot be reached, a queue would only add its overhead to every call.
  if (config.maxConcurrency >= calls.length) {
    return Promise.all(calls.map((call) => runCall(call, config, context)));
  }
  const queue = new PQueue({ concurrency: config.maxConcurrency });
  const slot = (run: () => Promise<ToolResult>) => queue.add(run);
  // Through the approval gate, only the run takes a slot: a call waiting for approval holds none.
  if (runCall !== runOneCall) {
    const turn: ResolvedContext = { ...context, slot };
    return Promise.all(calls.map((call) => runCall(call, config, turn)));
  }
  return Promise.all(calls.map((call) => slot(() => runCall(call, config, context))));
}

const runOneCall: CallRunner<ResolvedConfig, ResolvedContext> = runCall;

/** Without `approve`, a call of a tool with `needsApproval` is answered that no approver is configured. */
const refuseUnapproved: CallRunner<ResolvedConfig, ResolvedContext> = (call, config, context) =>
  runApproved(runCall, call, config, context, undefined);
