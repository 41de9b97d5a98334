import PQueue from "p-queue";
import type { Logger } from "pino";
import { ToolLoopError } from "./errors.js";
import { failure, isValidTimeout, TIMEOUT_EXPECTATION } from "./execute-tool-call.js";
import { linkSignal, raceAbort } from "./internal/abort.js";
import { describeType, errorMessage, isPlainObject, quoteName } from "./internal/describe.js";
import { defaultLogger } from "./internal/logger.js";
import { type NormalizedToolCall, normalizeToolCall } from "./internal/normalize-tool-call.js";
import type { LLMProvider, LLMResponse, Message, UsageInfo } from "./provider.js";
import { cachedDefinitions, type ToolRegistry } from "./tool-registry.js";
import type { ToolResult } from "./tool-result.js";

/** Configuration of one {@link runToolLoop} run (Go's `ToolLoopConfig`). */
export interface ToolLoopConfig {
  /** The LLM to call. */
  provider: LLMProvider;
  /** Model identifier. @default provider.getDefaultModel() */
  model?: string | undefined;
  /** The tools the model may call; `null` or absent: every call is answered "No tools available". */
  tools?: ToolRegistry | null | undefined;
  /** Maximum provider calls; at the cap the loop stops with `stopReason: "max_iterations"`. `0` makes no call. */
  maxIterations: number;
  /** Passed through to every `provider.chat` call (e.g. `{ temperature: 0.2 }`). @default {} */
  llmOptions?: Record<string, unknown> | undefined;
  /** Most tool calls of one turn running at once; results stay in call order. @default Infinity */
  maxConcurrency?: number | undefined;
  /** A tool call still running after this many milliseconds becomes an error result and its signal is aborted. @default no timeout */
  toolTimeoutMs?: number | undefined;
  /** pino logger for the loop's iterations (tool calls are logged by the registry's logger). @default silent */
  logger?: Logger | undefined;
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
export type StopReason = "completed" | "max_iterations";

/** The outcome of {@link runToolLoop} (Go's `ToolLoopResult`, plus the transcript). */
export interface ToolLoopResult {
  /** The final assistant text; `""` when the iteration cap was hit. */
  content: string;
  /** Provider calls made. */
  iterations: number;
  /** The full transcript: the caller's messages, then every assistant and tool message of this run. */
  messages: Message[];
  /** `"completed"` when the model answered without tool calls, `"max_iterations"` at the cap. */
  stopReason: StopReason;
  /** Token usage summed over the provider calls that reported it. */
  usage?: UsageInfo;
}

interface ResolvedConfig {
  provider: LLMProvider;
  model: string;
  tools: ToolRegistry | null;
  maxIterations: number;
  llmOptions: Record<string, unknown>;
  maxConcurrency: number;
  toolTimeoutMs: number | undefined;
  logger: Logger;
}

function invalid(option: string, expected: string, value: unknown): TypeError {
  let shown: string;
  try {
    // JSON.stringify shows NaN and Infinity as "null": numbers are echoed as they are.
    shown = typeof value === "number" ? String(value) : (JSON.stringify(value) ?? String(value));
  } catch {
    shown = String(value);
  }
  return new TypeError(`runToolLoop: ${option} must be ${expected}, got ${shown}`);
}

function resolveConfig(config: ToolLoopConfig): ResolvedConfig {
  if (!isPlainObject(config)) throw invalid("config", "an object", config);
  const { provider, maxIterations, maxConcurrency = Number.POSITIVE_INFINITY, toolTimeoutMs } = config;
  if (
    typeof provider !== "object" ||
    provider === null ||
    typeof provider.chat !== "function" ||
    typeof provider.getDefaultModel !== "function"
  ) {
    throw invalid("provider", "an LLMProvider (chat and getDefaultModel)", describeType(provider));
  }
  if (!Number.isInteger(maxIterations) || maxIterations < 0) {
    throw invalid("maxIterations", "an integer ≥ 0", maxIterations);
  }
  if (!(maxConcurrency === Number.POSITIVE_INFINITY || (Number.isInteger(maxConcurrency) && maxConcurrency >= 1))) {
    throw invalid("maxConcurrency", "an integer ≥ 1 or Infinity", maxConcurrency);
  }
  if (toolTimeoutMs !== undefined && !isValidTimeout(toolTimeoutMs)) {
    throw invalid("toolTimeoutMs", TIMEOUT_EXPECTATION, toolTimeoutMs);
  }
  if (config.llmOptions !== undefined && !isPlainObject(config.llmOptions)) {
    throw invalid("llmOptions", "an object", config.llmOptions);
  }
  const model = config.model ?? provider.getDefaultModel();
  if (typeof model !== "string") throw invalid("model", "a string", model);
  return {
    provider,
    model,
    tools: config.tools ?? null,
    maxIterations,
    llmOptions: config.llmOptions ?? {},
    maxConcurrency,
    toolTimeoutMs,
    logger: config.logger ?? defaultLogger(),
  };
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
export async function runToolLoop(
  config: ToolLoopConfig,
  messages: Message[],
  context: ToolLoopContext = {},
): Promise<ToolLoopResult> {
  const resolved = resolveConfig(config);
  if (!Array.isArray(messages)) throw invalid("messages", "an array of messages", describeType(messages));
  // Without a caller's signal there is nothing to unlink: return the loop's promise directly, so
  // that a waiting run keeps one suspended async frame instead of two.
  if (context.signal === undefined) return loop(resolved, messages, context);
  const link = linkSignal(context.signal);
  try {
    return await loop(resolved, messages, { ...context, signal: link.signal });
  } finally {
    link.dispose();
  }
}

async function loop(resolved: ResolvedConfig, messages: Message[], context: ToolLoopContext): Promise<ToolLoopResult> {
  const { provider, model, tools, maxIterations, llmOptions, logger } = resolved;
  const { signal } = context;
  const transcript: Message[] = [...messages];
  let iterations = 0;
  let usage: UsageInfo | undefined;
  // Call ids must be unique in the whole transcript (Anthropic rejects duplicates), also against
  // the caller's history: a provider may repeat ids across turns or send none.
  const usedIds = new Set<string>();
  for (const message of messages) {
    for (const call of Array.isArray(message?.toolCalls) ? message.toolCalls : []) {
      if (typeof call?.id === "string") usedIds.add(call.id);
    }
  }

  const fail = (message: string, cause: unknown) =>
    new ToolLoopError(message, { messages: transcript, iterations, cause });
  const aborted = () => fail(`tool loop aborted: ${errorMessage(signal?.reason)}`, signal?.reason);

  while (iterations < maxIterations) {
    if (signal?.aborted) throw aborted();
    iterations++;
    const definitions = tools !== null && tools.count() > 0 ? cachedDefinitions(tools) : undefined;
    if (logger.isLevelEnabled("debug")) {
      logger.debug({ iteration: iterations, model, messages: transcript.length }, "llm call");
    }

    let response: LLMResponse;
    try {
      response = await raceAbort(
        Promise.resolve(provider.chat(transcript, definitions, model, llmOptions, signal)),
        signal,
      );
    } catch (error) {
      if (signal?.aborted) throw aborted();
      throw fail(`LLM call failed: ${errorMessage(error)}`, error);
    }
    if (!isPlainObject(response) || (response.toolCalls != null && !Array.isArray(response.toolCalls))) {
      const problem = isPlainObject(response) ? "toolCalls is not an array" : `got ${describeType(response)}`;
      throw fail(`LLM call failed: the provider returned an invalid response (${problem})`, response);
    }
    usage = addUsage(usage, response.usage);
    const content = typeof response.content === "string" ? response.content : "";
    const rawCalls = response.toolCalls ?? [];

    if (rawCalls.length === 0) {
      transcript.push({ role: "assistant", content });
      logger.debug({ iteration: iterations }, "tool loop completed");
      return withUsage({ content, iterations, messages: transcript, stopReason: "completed" }, usage);
    }

    const calls = rawCalls.map((raw, index) => normalizeToolCall(raw, `call_${iterations}_${index}`, usedIds));
    transcript.push({ role: "assistant", content, toolCalls: calls.map(({ call }) => call) });
    if (logger.isLevelEnabled("debug")) {
      logger.debug({ iteration: iterations, toolCalls: calls.map(({ call }) => call.name) }, "running tool calls");
    }

    const results = await runTurn(calls, resolved, context);
    for (let index = 0; index < calls.length; index++) {
      const { call } = calls[index] as NormalizedToolCall;
      const result = results[index] as ToolResult;
      transcript.push({
        role: "tool",
        content: result.contentForLLM(),
        toolCallId: call.id,
        toolName: call.name,
        isError: result.isError,
      });
    }
  }

  if (signal?.aborted) throw aborted();
  logger.debug({ iterations }, "tool loop stopped at maxIterations");
  return withUsage({ content: "", iterations, messages: transcript, stopReason: "max_iterations" }, usage);
}

function withUsage(result: ToolLoopResult, usage: UsageInfo | undefined): ToolLoopResult {
  if (usage !== undefined) result.usage = usage;
  return result;
}

function runCall(
  { call, argumentsError }: NormalizedToolCall,
  config: ResolvedConfig,
  context: ToolLoopContext,
): Promise<ToolResult> {
  if (argumentsError !== undefined) return Promise.resolve(failure(call.name, "invalid_json", argumentsError));
  if (config.tools === null) {
    return Promise.resolve(
      failure(call.name, "tool_not_found", `No tools available: tool ${quoteName(call.name)} cannot be called.`),
    );
  }
  return config.tools
    .executeWithContext(call.name, call.arguments, context.channel ?? "", context.chatId ?? "", undefined, {
      signal: context.signal,
      metadata: context.metadata,
      timeoutMs: config.toolTimeoutMs,
      toolCallId: call.id,
    })
    .catch(
      // executeWithContext resolves every tool failure; this only guards the transcript against a
      // broken injected logger, so the call still gets its one answer.
      (error: unknown) =>
        failure(call.name, "tool_failed", `tool ${quoteName(call.name)} failed: ${errorMessage(error)}`, error),
    );
}

/** Runs one turn's calls, at most `maxConcurrency` at once; results are written back by index. */
async function runTurn(
  calls: NormalizedToolCall[],
  config: ResolvedConfig,
  context: ToolLoopContext,
): Promise<ToolResult[]> {
  // When the bound cannot be reached, a queue would only add its overhead to every call.
  if (calls.length === 1) return [await runCall(calls[0] as NormalizedToolCall, config, context)];
  if (config.maxConcurrency >= calls.length) {
    return Promise.all(calls.map((call) => runCall(call, config, context)));
  }
  const queue = new PQueue({ concurrency: config.maxConcurrency });
  const results: ToolResult[] = new Array(calls.length);
  await Promise.all(
    calls.map((call, index) =>
      queue.add(async () => {
        results[index] = await runCall(call, config, context);
      }),
    ),
  );
  return results;
}
