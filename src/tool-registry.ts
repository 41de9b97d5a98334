import { convertDefinitions, type DefinitionFormat, type DefinitionFormats } from "./definition-format.js";
import {
  executeRegisteredTool,
  failure,
  isValidTimeout,
  logCallEnd,
  type RegisteredTool,
  TIMEOUT_EXPECTATION,
} from "./execute-tool-call.js";
import { describeType, errorMessage, isPlainObject, quoteName, showValue } from "./internal/describe.js";
import { compileJsonSchemaValidator } from "./internal/json-schema-validator.js";
import { log, type ResolvedLogger, resolveLogger } from "./internal/logger.js";
import { checkMetadata, checkSignal, checkString, optionError } from "./internal/options.js";
import type { Logger } from "./logger.js";
import type { ToolDefinition } from "./provider.js";
import { type AsyncCallback, type Tool, toolToSchema } from "./tool.js";
import type { ToolResult } from "./tool-result.js";

const TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_LISTED_NAMES = 20;

/** Options of {@link ToolRegistry}. */
export interface ToolRegistryOptions {
  /**
   * Logger for start, completion and failure of every call (fields `tool`, `toolCallId`,
   * `durationMs`): pino, `console`, or any object with `debug`/`info`/`warn`/`error` methods.
   * Tools receive `logger.child({ tool })` as `context.logger` (the logger itself without `child`).
   * @default a silent pino logger
   */
  logger?: Logger | undefined;
  /**
   * Also log tool arguments (debug) and results (info). Off by default because they may hold
   * personal data.
   * @default false
   */
  logPayloads?: boolean | undefined;
}

/** Per-call options of {@link ToolRegistry.execute}. */
export interface ExecuteOptions {
  /** Aborts the call; the tool sees it as `context.signal`. */
  signal?: AbortSignal | undefined;
  /** The model's call id, passed to the tool as `context.toolCallId`. */
  toolCallId?: string | undefined;
  /** Fails the call with a timeout error result after this many milliseconds, aborting the tool's signal. */
  timeoutMs?: number | undefined;
  /** Message metadata for `context.metadata` and `setMetadata`. */
  metadata?: Readonly<Record<string, string>> | undefined;
}

function validateTool(tool: Tool): void {
  if (typeof tool !== "object" || tool === null) {
    throw new TypeError(`register() expects a tool object, got ${describeType(tool)}`);
  }
  const { name, parameters } = tool;
  if (typeof name !== "string" || !TOOL_NAME_PATTERN.test(name)) {
    throw new TypeError(`tool name must match ${TOOL_NAME_PATTERN}, got ${showValue(name)}`);
  }
  if (typeof tool.description !== "string") {
    throw new TypeError(`tool ${quoteName(name)}: description must be a string, got ${describeType(tool.description)}`);
  }
  if (typeof tool.execute !== "function") {
    throw new TypeError(`tool ${quoteName(name)}: execute must be a function, got ${describeType(tool.execute)}`);
  }
  if (!isPlainObject(parameters)) {
    throw new TypeError(
      `tool ${quoteName(name)}: parameters must be a JSON Schema object, got ${describeType(parameters)}`,
    );
  }
  if ("type" in parameters && parameters.type !== "object") {
    throw new TypeError(
      `tool ${quoteName(name)}: parameters.type must be "object", got ${JSON.stringify(parameters.type) ?? "undefined"}`,
    );
  }
}

function prepare(tool: Tool): RegisteredTool {
  const definition = Object.freeze(toolToSchema(tool));
  if (typeof tool.parseArguments === "function") {
    const parseArguments = tool.parseArguments.bind(tool);
    return { tool, definition, validate: parseArguments };
  }
  try {
    return { tool, definition, validate: compileJsonSchemaValidator(definition.function.parameters) };
  } catch (error) {
    throw new TypeError(`tool ${quoteName(tool.name)}: parameters is not a valid JSON Schema: ${errorMessage(error)}`, {
      cause: error,
    });
  }
}

// What the loop reads from a registry beyond its public API. `Symbol.for`, so that a registry made
// by another installed copy of toolloop serves the loop too (no private fields read across copies).

/** @internal `() => readonly ToolDefinition[]`: the cached, frozen definitions, without a copy. */
export const CACHED_DEFINITIONS: unique symbol = Symbol.for("toolloop.registry.cachedDefinitions");

/** @internal `(name, toolCallId, result) => void`: logs a call the loop refused before dispatch. */
export const LOG_REFUSED_CALL: unique symbol = Symbol.for("toolloop.registry.logRefusedCall");

/**
 * Tools by name (Go's `ToolRegistry`): registration, definitions for the model, and dispatch of
 * one call, where every failure becomes an error result.
 *
 * Schemas are validated and compiled, and definitions built, when a tool is registered: a tool's
 * `parameters` is read once then.
 *
 * @example
 * ```ts
 * const registry = new ToolRegistry();
 * registry.register(weatherTool);
 * const result = await registry.execute("weather", { city: "Paris" });
 * ```
 */
export class ToolRegistry {
  // A Map, never a plain object: tool names come from the model ("__proto__", "constructor" …).
  readonly #tools = new Map<string, RegisteredTool>();
  readonly #logger: ResolvedLogger;
  readonly #logPayloads: boolean;
  #definitions: readonly ToolDefinition[] | undefined;
  readonly #converted = new Map<DefinitionFormat, readonly unknown[]>();
  #names: string[] | undefined;

  constructor(options: ToolRegistryOptions = {}) {
    if (typeof options !== "object" || options === null) {
      throw new TypeError(`ToolRegistry options must be an object, got ${describeType(options)}`);
    }
    this.#logger = resolveLogger(options.logger, "ToolRegistry");
    if (options.logPayloads !== undefined && typeof options.logPayloads !== "boolean") {
      throw optionError("ToolRegistry", "logPayloads", "a boolean", options.logPayloads);
    }
    this.#logPayloads = options.logPayloads ?? false;
  }

  /**
   * Adds a tool, or replaces the tool of the same name (logged as a warning).
   * @throws TypeError when the name does not match `/^[A-Za-z0-9_-]{1,64}$/`, or `parameters` is
   * not a plain object, has a `type` other than `"object"`, or is not a valid JSON Schema.
   */
  register(tool: Tool): void {
    validateTool(tool);
    const entry = prepare(tool);
    const replaced = this.#tools.has(tool.name);
    this.#tools.set(tool.name, entry);
    this.#changed();
    if (replaced) log(this.#logger, "warn", () => ({ tool: tool.name }), "tool replaced by a new registration");
  }

  /** Removes a tool; `true` when it was registered. */
  unregister(name: string): boolean {
    const removed = this.#tools.delete(name);
    if (removed) this.#changed();
    return removed;
  }

  /** The tool registered under `name`, or `undefined`. */
  get(name: string): Tool | undefined {
    return this.#tools.get(name)?.tool;
  }

  /** `true` when a tool is registered under `name`. */
  has(name: string): boolean {
    return this.#tools.has(name);
  }

  /**
   * Runs a tool by name without channel or chat context. Never rejects: an unknown tool, invalid
   * arguments, a throw, a timeout or an abort each resolve to an error result with `err` set.
   */
  execute(name: string, args: Record<string, unknown>, options: ExecuteOptions = {}): Promise<ToolResult> {
    return this.executeWithContext(name, args, "", "", undefined, options);
  }

  /**
   * Runs a tool by name with the conversation's context: the call's `ToolContext` carries
   * `channel`, `chatId`, `metadata` and `asyncCallback` (this call's own, when given); right before
   * `execute`, `setContext` is called (when both are non-empty), `setCallback` (always: the
   * callback, or a no-op when there is none) and `setMetadata`. Never rejects.
   * @throws TypeError (synchronously) for options of the wrong type
   */
  executeWithContext(
    name: string,
    args: Record<string, unknown>,
    channel: string,
    chatId: string,
    asyncCallback?: AsyncCallback,
    options: ExecuteOptions = {},
  ): Promise<ToolResult> {
    const where = "executeWithContext";
    if (typeof options !== "object" || options === null) throw optionError(where, "options", "an object", options);
    if (asyncCallback !== undefined && typeof asyncCallback !== "function") {
      throw optionError(where, "asyncCallback", "a function", asyncCallback);
    }
    if (options.timeoutMs !== undefined && !isValidTimeout(options.timeoutMs)) {
      throw optionError(where, "timeoutMs", TIMEOUT_EXPECTATION, options.timeoutMs);
    }
    const signal = checkSignal(where, "signal", options.signal);
    const metadata = checkMetadata(where, "metadata", options.metadata);
    const toolCallId = checkString(where, "toolCallId", options.toolCallId);
    if (typeof channel !== "string") throw optionError(where, "channel", "a string", channel);
    if (typeof chatId !== "string") throw optionError(where, "chatId", "a string", chatId);
    const entry = typeof name === "string" ? this.#tools.get(name) : undefined;
    if (entry === undefined) return Promise.resolve(this.#notFound(name, toolCallId));
    return executeRegisteredTool(entry, args, {
      channel,
      chatId,
      metadata,
      signal,
      toolCallId,
      asyncCallback,
      timeoutMs: options.timeoutMs,
      logger: this.#logger,
      logPayloads: this.#logPayloads,
    });
  }

  #notFound(name: unknown, toolCallId: string | undefined): ToolResult {
    const names = this.list();
    let available = "No tools are available.";
    if (names.length > 0) {
      const listed = names.slice(0, MAX_LISTED_NAMES).join(", ");
      const more = names.length > MAX_LISTED_NAMES ? ` and ${names.length - MAX_LISTED_NAMES} more` : "";
      available = `Available tools: ${listed}${more}.`;
    }
    const toolName = typeof name === "string" ? name : describeType(name);
    const result = failure(toolName, "tool_not_found", `tool ${quoteName(toolName)} not found. ${available}`);
    return logCallEnd(toolName, result, 0, { logger: this.#logger, toolCallId, logPayloads: this.#logPayloads });
  }

  /**
   * Definitions of every tool, sorted by name (stable for prompt caching). Without a format (or
   * with `"openai"`) they are what `toolToSchema` makes; other formats are the shape that API's
   * `tools` takes (seed 003's `GetDefinitions(format)`). Each array is cached until the registry
   * changes; each call returns a deep copy, free to modify.
   */
  getDefinitions(): ToolDefinition[];
  getDefinitions<F extends DefinitionFormat>(format: F): DefinitionFormats[F][];
  getDefinitions(format: DefinitionFormat = "openai"): unknown[] {
    // A deep copy: some SDKs rewrite the declarations they are given in place (e.g. @google/genai),
    // which must never reach the cached definitions the loop sends.
    return structuredClone(this.#cachedDefinitions(format)) as unknown[];
  }

  #cachedDefinitions(format: DefinitionFormat): readonly unknown[] {
    if (format === "openai") {
      this.#definitions ??= Object.freeze(
        this.list().map((name) => (this.#tools.get(name) as RegisteredTool).definition),
      );
      return this.#definitions;
    }
    let converted = this.#converted.get(format);
    if (converted === undefined) {
      converted = Object.freeze(convertDefinitions(this.#cachedDefinitions("openai") as ToolDefinition[], format));
      this.#converted.set(format, converted);
    }
    return converted;
  }

  /** @internal see CACHED_DEFINITIONS: the loop hands these to the provider without a copy. */
  [CACHED_DEFINITIONS](): readonly ToolDefinition[] {
    return this.#cachedDefinitions("openai") as readonly ToolDefinition[];
  }

  /** @internal see LOG_REFUSED_CALL: refused calls are logged like every other failed call. */
  [LOG_REFUSED_CALL](name: string, toolCallId: string | undefined, result: ToolResult): void {
    logCallEnd(name, result, 0, { logger: this.#logger, toolCallId, logPayloads: this.#logPayloads });
  }

  /** The definitions in the provider format `LLMProvider.chat` takes; sorted by name. */
  toProviderDefs(): ToolDefinition[] {
    return this.getDefinitions();
  }

  /** Registered names, sorted. */
  list(): string[] {
    this.#names ??= [...this.#tools.keys()].sort();
    return [...this.#names];
  }

  /** Number of registered tools. */
  count(): number {
    return this.#tools.size;
  }

  /** One line per tool for humans: ``- `name` - description``, sorted by name. */
  getSummaries(): string[] {
    return this.list().map((name) => `- \`${name}\` - ${(this.#tools.get(name) as RegisteredTool).tool.description}`);
  }

  #changed(): void {
    this.#definitions = undefined;
    this.#converted.clear();
    this.#names = undefined;
  }
}
