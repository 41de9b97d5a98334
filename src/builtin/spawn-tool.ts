import { isToolLoopError, type ToolLoopErrorCode } from "../errors.js";
import { failure } from "../execute-tool-call.js";
import { subscribeAbort } from "../internal/abort.js";
import { boundText, cutId, cutName, errorMessage, isRecord } from "../internal/describe.js";
import { checkConcurrency, checkCount, checkProvider, checkSignal, optionError } from "../internal/options.js";
import type { LLMProvider, Message } from "../provider.js";
import { runToolLoop } from "../run-tool-loop.js";
import type { AsyncCallback, AsyncTool, Tool, ToolContext } from "../tool.js";
import type { ToolRegistry } from "../tool-registry.js";
import { asyncResult, errorResult, isToolResult, newToolResult, type ToolResult } from "../tool-result.js";

/** Options of {@link createSpawnTool} and {@link createSubagentTool}. */
export interface SpawnToolOptions {
  /** The LLM the subagent talks to (the parent's, or a cheaper one). */
  provider: LLMProvider;
  /**
   * The subagent's tools. A snapshot (`registry.clone()`) is taken when the tool is created, so
   * neither this tool nor tools registered later reach the subagent: register the tools it may use
   * first, then create and register `spawn` / `subagent`. A subagent cannot spawn subagents.
   */
  registry: ToolRegistry;
  /** The model the subagent uses. @default provider.getDefaultModel() */
  model?: string | undefined;
  /** Most provider calls of one subagent run; a run that reaches it is an error result. @default 10 */
  maxIterations?: number | undefined;
  /** The subagent's system message; `""` sends none. @default a short prompt asking for a report of the task */
  systemPrompt?: string | undefined;
  /**
   * Most subagents of this tool running at once; a call beyond it is an error result the model
   * reads, so a model cannot start unbounded background work. @default 4
   */
  maxConcurrent?: number | undefined;
  /**
   * Cancels every subagent of this tool that still runs (e.g. your agent's shutdown). A call's own
   * `context.signal` is followed too, but a registry call's signal stops following yours once the
   * call ended — for `spawn`, as soon as it answers — so background subagents need this one.
   */
  signal?: AbortSignal | undefined;
}

/** Longest subagent answer passed on to the parent model; longer ones are cut with a marker. */
const MAX_REPORT_CHARS = 20_000;
const DEFAULT_MAX_ITERATIONS = 10;
const DEFAULT_MAX_CONCURRENT = 4;
const UNNAMED = "(unnamed)";
const DEFAULT_SYSTEM_PROMPT =
  "You are a subagent working on one task for another agent. Use your tools as needed and work on your " +
  "own: nobody will answer questions. Finish with a short report of what you did and what you found.";

/** What the parent model reads when a subagent's loop rejected, by the loop's error code. */
const FAILURES: Record<ToolLoopErrorCode, string> = {
  aborted: "it was cancelled",
  provider_failed: "its model call failed",
  invalid_response: "its model's response could not be read",
  invalid_output: "its final answer did not match the output schema",
  internal: "it stopped on an internal error",
};

/** The JSON Schema of both tools' arguments: a new object for each tool, so neither shares the other's. */
function parameters(): Record<string, unknown> {
  return {
    type: "object",
    properties: {
      task: { type: "string", description: "What the subagent should do, with everything it needs to know" },
      label: { type: "string", description: "Optional: a short name for the task, used in its report" },
    },
    required: ["task"],
    additionalProperties: false,
  };
}

/** One subagent run the model asked for, with the slot it holds. */
interface Job {
  task: string;
  label: string;
}

/**
 * What `spawn` and `subagent` share: the options, the registry snapshot, the count of running
 * subagents, and the run itself.
 */
class SubagentRunner {
  readonly #name: string;
  readonly #provider: LLMProvider;
  readonly #tools: ToolRegistry;
  readonly #model: string | undefined;
  readonly #maxIterations: number;
  readonly #systemPrompt: string;
  readonly #maxConcurrent: number;
  readonly #signal: AbortSignal | undefined;
  #running = 0;

  constructor(where: string, name: string, options: SpawnToolOptions) {
    if (!isRecord(options)) throw optionError(where, "options", "an object", options);
    const { registry, model, systemPrompt = DEFAULT_SYSTEM_PROMPT } = options;
    const provider = checkProvider(where, options.provider);
    if (!isRecord(registry) || typeof registry.clone !== "function") {
      throw optionError(where, "registry", "a ToolRegistry", registry);
    }
    if (model !== undefined && (typeof model !== "string" || model === "")) {
      throw optionError(where, "model", "a non-empty string", model);
    }
    const maxIterations = checkCount(where, "maxIterations", options.maxIterations, DEFAULT_MAX_ITERATIONS);
    if (typeof systemPrompt !== "string") throw optionError(where, "systemPrompt", "a string", systemPrompt);
    const maxConcurrent =
      options.maxConcurrent === undefined
        ? DEFAULT_MAX_CONCURRENT
        : checkConcurrency(where, "maxConcurrent", options.maxConcurrent);
    this.#signal = checkSignal(where, "signal", options.signal);
    this.#name = name;
    this.#provider = provider;
    this.#tools = registry.clone();
    this.#model = model;
    this.#maxIterations = maxIterations;
    this.#systemPrompt = systemPrompt;
    this.#maxConcurrent = maxConcurrent;
  }

  /** Checks the arguments and takes a slot: the job to run, or the error result the model reads. */
  begin(args: Record<string, unknown>): Job | ToolResult {
    const { task, label } = args;
    if (typeof task !== "string" || task.trim() === "")
      return errorResult("task is empty: say what the subagent should do");
    if (this.#running >= this.#maxConcurrent) {
      return errorResult(
        `too many subagents running (${this.#maxConcurrent}): wait for one to report, or do the task yourself`,
      );
    }
    this.#running++;
    return { task, label: typeof label === "string" && label.trim() !== "" ? cutName(label) : UNNAMED };
  }

  /**
   * Runs a job's tool loop on the snapshot and frees its slot; resolves to the report (never
   * rejects). Aborted by the call's signal or the tool's `signal`, whichever comes first.
   */
  async run(job: Job, context: ToolContext): Promise<ToolResult> {
    const controller = new AbortController();
    const unsubscribes: (() => void)[] = [];
    for (const signal of [context.signal, this.#signal]) {
      if (signal === undefined || controller.signal.aborted) continue;
      if (signal.aborted) controller.abort(signal.reason);
      else unsubscribes.push(subscribeAbort(signal, (reason) => controller.abort(reason)));
    }
    const messages: Message[] = [{ role: "user", content: job.task }];
    if (this.#systemPrompt !== "") messages.unshift({ role: "system", content: this.#systemPrompt });
    const subagent = `Subagent '${job.label}'`;
    try {
      const result = await runToolLoop(
        {
          provider: this.#provider,
          model: this.#model,
          tools: this.#tools,
          maxIterations: this.#maxIterations,
          logger: context.logger,
        },
        messages,
        { channel: context.channel, chatId: context.chatId, metadata: context.metadata, signal: controller.signal },
      );
      if (result.stopReason === "max_iterations") {
        return errorResult(`${subagent} did not finish within ${this.#maxIterations} model calls`);
      }
      return newToolResult(`${subagent} completed: ${boundText(result.content, MAX_REPORT_CHARS)}`);
    } catch (error) {
      // The loop's own message is not passed on: a provider's error text may hold addresses or
      // keys. Your code reads it as `err.cause`.
      const code: unknown = controller.signal.aborted ? "aborted" : isToolLoopError(error) ? error.code : "internal";
      // A loop of another installed copy may know codes this one does not.
      const reason =
        typeof code === "string" && Object.hasOwn(FAILURES, code)
          ? FAILURES[code as ToolLoopErrorCode]
          : FAILURES.internal;
      return failure(
        this.#name,
        code === "aborted" ? "aborted" : "tool_failed",
        `${subagent} failed: ${reason}`,
        error,
      );
    } finally {
      for (const unsubscribe of unsubscribes) unsubscribe();
      this.#running--;
    }
  }
}

/** Calls a spawn's own callback with its report; a callback that throws is logged, never thrown. */
async function report(callback: AsyncCallback, result: ToolResult, context: ToolContext): Promise<void> {
  try {
    await callback(result);
  } catch (error) {
    try {
      context.logger.warn(
        {
          tool: "spawn",
          toolCallId: cutId(context.toolCallId),
          error: errorMessage(error),
        },
        "spawn callback failed",
      );
    } catch {
      // a broken logger must not become an unhandled rejection
    }
  }
}

/**
 * The `spawn` tool (picoclaw's `SpawnTool`): `spawn { task, label? }` answers at once with an
 * async result and runs a subagent — `runToolLoop` on a snapshot of `options.registry` taken now —
 * in the background, then calls this call's own `context.asyncCallback` (never a callback shared
 * through `setCallback`, which it ignores) with `Subagent '<label>' completed: <content>`, or an
 * error result when the subagent failed, ran out of iterations or was cancelled. A call without a
 * callback (`runToolLoop` passes none) is an error result: nobody would hear the report.
 * @throws TypeError for a bad option, echoing it
 * @example
 * ```ts
 * registry.register(createSpawnTool({ provider, registry })); // after the subagent's tools
 * await registry.executeWithContext("spawn", { task: "Summarise README.md" }, "cli", "me", (report) => show(report));
 * ```
 */
export function createSpawnTool(options: SpawnToolOptions): AsyncTool {
  const runner = new SubagentRunner("createSpawnTool", "spawn", options);
  return Object.freeze({
    name: "spawn",
    description:
      "Start a subagent that works on a task in the background with your tools (except spawn) and a fresh " +
      "conversation. It returns at once; the subagent's report arrives later as a separate message.",
    parameters: parameters(),
    // Go's AsyncTool mixin: ignored, since a callback on the shared instance would let two concurrent
    // spawns swap reports. Each call's own context.asyncCallback is used instead.
    setCallback: () => {},
    execute: (args: Record<string, unknown>, context: ToolContext) => {
      const callback = context.asyncCallback;
      if (callback === undefined) {
        return errorResult("spawn cannot report back in this conversation: do the task yourself");
      }
      const job = runner.begin(args);
      if (isToolResult(job)) return job;
      // Started before answering: the run subscribes to the call's signal while the call still runs.
      const running = runner.run(job, context);
      void running.then((result) => report(callback, result, context));
      return asyncResult(`Subagent '${job.label}' started; its report will arrive when it is done.`);
    },
  });
}

/**
 * The `subagent` tool (picoclaw's `SubagentTool`): `subagent { task, label? }` runs a subagent —
 * `runToolLoop` on a snapshot of `options.registry` taken now — and returns its report,
 * `Subagent '<label>' completed: <content>`, or an error result when it failed, ran out of
 * iterations or was aborted (the call's signal and `options.signal` abort it).
 * @throws TypeError for a bad option, echoing it
 */
export function createSubagentTool(options: SpawnToolOptions): Tool {
  const runner = new SubagentRunner("createSubagentTool", "subagent", options);
  return Object.freeze({
    name: "subagent",
    description:
      "Run a subagent on a task and wait for its report. It has your tools (except this one) and a fresh " +
      "conversation: put everything it needs to know in the task.",
    parameters: parameters(),
    execute: (args: Record<string, unknown>, context: ToolContext) => {
      const job = runner.begin(args);
      return isToolResult(job) ? job : runner.run(job, context);
    },
  });
}
