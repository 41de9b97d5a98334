import { contentPartsProblem } from "./content-part.js";
import { checkTimeout } from "./execute-tool-call.js";
import { DEFAULT_MAX_RESULT_BYTES } from "./internal/content-of.js";
import { errorMessage, isPlainObject, isRecord } from "./internal/describe.js";
import { type ResolvedLogger, resolveLogger } from "./internal/logger.js";
import { MIN_RESULT_CHARS } from "./internal/loop-policies.js";
import {
  checkConcurrency,
  checkCount,
  checkFunction,
  checkMetadata,
  checkProvider,
  checkSignal,
  checkString,
  optionError,
} from "./internal/options.js";
import type { RunScope } from "./loop-call.js";
import { createLoopFeatures, type FeatureOptions, type LoopFeatures } from "./loop-features.js";
import { type HiddenToolTicker, hiddenToolTicker } from "./loop-hidden-tools.js";
import { checkMiddleware, type MiddlewareLayers } from "./middleware-chain.js";
import { resolveOutput } from "./output-schema.js";
import type { ProgressListener } from "./progress.js";
import type { LLMProvider, Message } from "./provider.js";
import { isRegistryLike, type RegistryLike } from "./registry-like.js";
import type { Tool } from "./tool.js";
import type { ToolLoopConfig } from "./tool-loop-config.js";
import { ToolRegistry } from "./tool-registry.js";

/** A run's configuration, checked: what the loop reads. */
export interface ResolvedConfig {
  provider: LLMProvider;
  model: string;
  tools: RegistryLike | null;
  maxIterations: number;
  llmOptions: Record<string, unknown>;
  maxConcurrency: number;
  toolTimeoutMs: number | undefined;
  /** `maxResultBytes`: the most decoded bytes one result's parts may hold. */
  maxResultBytes: number;
  logger: ResolvedLogger;
  /** The run's progress listener (with `onEvent`, it also queues `tool-progress` events). */
  onProgress: ProgressListener | undefined;
  /** The loop's optional features of this run; `undefined` when no such option is set. */
  features: LoopFeatures | undefined;
  /** With `tickHiddenTools`: a mark taken before each tool round, and the tick after it. */
  hiddenTools: HiddenToolTicker | undefined;
  /** The configured middleware; `undefined` when none has a hook. */
  middleware: MiddlewareLayers | undefined;
}

const ROLES: ReadonlySet<string> = new Set(["system", "user", "assistant", "tool"]);

/** An optional count: `undefined` when absent (the policy is off). */
function optionalCount(where: string, option: string, value: unknown): number | undefined {
  return value === undefined ? undefined : checkCount(where, option, value, 0);
}

/** Checks `approve`: a function, `"interrupt"`, or absent. */
function checkApprove(where: string, approve: unknown): FeatureOptions["approve"] {
  if (approve === undefined || approve === "interrupt" || typeof approve === "function") {
    return approve as FeatureOptions["approve"];
  }
  throw optionError(where, "approve", 'a function or "interrupt"', approve);
}

/** Checks the loop-control options; `undefined` when none is set (the loop then runs without features). */
function checkFeatureOptions(config: ToolLoopConfig, where: string): FeatureOptions | undefined {
  const { onEvent, onUserMessage, approve, onAsyncResult, awaitAsync, finalAnswerOnMaxIterations } = config;
  if (
    onEvent === undefined &&
    onUserMessage === undefined &&
    approve === undefined &&
    onAsyncResult === undefined &&
    awaitAsync === undefined &&
    (finalAnswerOnMaxIterations === undefined || finalAnswerOnMaxIterations === false) &&
    config.maxRepeatedFailures === undefined &&
    config.maxResultChars === undefined &&
    config.onCheckpoint === undefined &&
    config.output === undefined
  ) {
    resolveOutput(where, undefined, config.outputRetries);
    return undefined;
  }
  let awaitAsyncMs: number | undefined;
  if (awaitAsync !== undefined) {
    if (!isPlainObject(awaitAsync)) throw optionError(where, "awaitAsync", "an object { timeoutMs }", awaitAsync);
    awaitAsyncMs = checkTimeout(where, "awaitAsync.timeoutMs", awaitAsync.timeoutMs);
    if (awaitAsyncMs === undefined) {
      throw optionError(where, "awaitAsync.timeoutMs", "a number of milliseconds", awaitAsyncMs);
    }
  }
  if (finalAnswerOnMaxIterations !== undefined && typeof finalAnswerOnMaxIterations !== "boolean") {
    throw optionError(where, "finalAnswerOnMaxIterations", "a boolean", finalAnswerOnMaxIterations);
  }
  const maxResultChars = optionalCount(where, "maxResultChars", config.maxResultChars);
  if (maxResultChars !== undefined && maxResultChars < MIN_RESULT_CHARS) {
    const expected = `an integer ≥ ${MIN_RESULT_CHARS} (room for the cut marker and the repeated-failure note)`;
    throw optionError(where, "maxResultChars", expected, maxResultChars);
  }
  return {
    onEvent: checkFunction(where, "onEvent", onEvent),
    onUserMessage: checkFunction(where, "onUserMessage", onUserMessage),
    approve: checkApprove(where, approve),
    onAsyncResult: checkFunction(where, "onAsyncResult", onAsyncResult),
    awaitAsyncMs,
    finalAnswer: finalAnswerOnMaxIterations === true,
    maxRepeatedFailures: optionalCount(where, "maxRepeatedFailures", config.maxRepeatedFailures),
    maxResultChars,
    onCheckpoint: checkFunction(where, "onCheckpoint", config.onCheckpoint),
    output: resolveOutput(where, config.output, config.outputRetries),
  };
}

/** `config.tools` as a registry: one given (of any copy), one built from an array, or `null`. */
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

/** The model: `config.model`, or the provider's default. */
function resolveModel(config: ToolLoopConfig, provider: LLMProvider, where: string): string {
  let model: unknown = config.model;
  if (model === undefined) {
    try {
      model = provider.getDefaultModel();
    } catch (error) {
      throw new TypeError(`${where}: provider.getDefaultModel() threw: ${errorMessage(error)}`, { cause: error });
    }
  }
  if (typeof model !== "string") throw optionError(where, "model", "a string", model);
  return model;
}

/**
 * Checks a run's configuration (a `TypeError` that echoes the first bad value, before anything
 * runs) and makes what the run needs of it: its registry, its features, its middleware.
 */
export function resolveConfig(config: ToolLoopConfig, where: string): ResolvedConfig {
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
  const onProgress = checkFunction(where, "onProgress", config.onProgress);
  const logger = resolveLogger(config.logger, where);
  const model = resolveModel(config, provider, where);
  const featureOptions = checkFeatureOptions(config, where);
  const tools = resolveTools(config.tools, logger, where);
  // needsApproval is read through get(name): without it, approval could not be enforced.
  if (config.approve !== undefined && tools !== null && typeof (tools as { get?: unknown }).get !== "function") {
    const expected = "a registry with get(name) when approve is set (needsApproval is read through it)";
    throw optionError(where, "tools", expected, tools);
  }
  const { tickHiddenTools } = config;
  if (tickHiddenTools !== undefined && typeof tickHiddenTools !== "boolean") {
    throw optionError(where, "tickHiddenTools", "a boolean", tickHiddenTools);
  }
  const maxResultBytes = checkCount(where, "maxResultBytes", config.maxResultBytes, DEFAULT_MAX_RESULT_BYTES);
  const context = { provider, maxIterations, logger, tools, onProgress, maxResultBytes };
  const features = createLoopFeatures(featureOptions, context);
  return {
    provider,
    model,
    tools,
    hiddenTools: tickHiddenTools === true ? hiddenToolTicker(tools, where) : undefined,
    maxIterations,
    llmOptions: config.llmOptions ?? {},
    maxConcurrency,
    toolTimeoutMs,
    maxResultBytes,
    logger,
    onProgress: features === undefined ? onProgress : features.onProgress,
    features,
    middleware: checkMiddleware(where, config.middleware),
  };
}

/** Checks a run's context (`context` of `runToolLoop`): the scope its calls run in, without its own signal yet. */
export function resolveContext(context: unknown, where: string): RunScope {
  if (context === undefined) {
    return { channel: "", chatId: "", signal: undefined, metadata: undefined, promotions: undefined, wrap: undefined };
  }
  if (!isRecord(context)) throw optionError(where, "context", "an object", context);
  return {
    channel: checkString(where, "context.channel", context.channel) ?? "",
    chatId: checkString(where, "context.chatId", context.chatId) ?? "",
    signal: checkSignal(where, "context.signal", context.signal),
    metadata: checkMetadata(where, "context.metadata", context.metadata),
    promotions: undefined,
    wrap: undefined,
  };
}

/** Checks a transcript (`option` names it in the `TypeError`: `messages`, `checkpoint.messages`). */
export function checkMessages(messages: unknown, where: string, option: string): asserts messages is Message[] {
  if (!Array.isArray(messages)) throw optionError(where, option, "an array of messages", messages);
  for (let index = 0; index < messages.length; index++) {
    const message: unknown = messages[index];
    if (!isRecord(message)) throw optionError(where, `${option}[${index}]`, "a message object", message);
    if (typeof message.role !== "string" || !ROLES.has(message.role)) {
      throw optionError(where, `${option}[${index}].role`, '"system", "user", "assistant" or "tool"', message.role);
    }
    const { content } = message;
    if (typeof content !== "string") {
      if (!Array.isArray(content))
        throw optionError(where, `${option}[${index}].content`, "a string or an array of content parts", content);
      const problem = contentPartsProblem(content, message.role === "system" || message.role === "assistant");
      if (problem !== undefined) throw new TypeError(`${where}: ${option}[${index}].content${problem}`);
    }
    if (message.toolCalls !== undefined && !Array.isArray(message.toolCalls)) {
      throw optionError(where, `${option}[${index}].toolCalls`, "an array", message.toolCalls);
    }
  }
}
