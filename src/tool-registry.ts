import { convertDefinitions, type DefinitionFormat, type DefinitionFormats } from "./definition-format.js";
import { type DispatchTarget, dispatchCheckedCall, dispatchToolCall } from "./dispatch-tool-call.js";
import { type BatchOptions, type BatchResult, executeBatch, type ToolRequest } from "./execute-batch.js";
import type { CheckedCall } from "./execute-tool-call.js";
import { DefinitionCache } from "./internal/definition-cache.js";
import { isRecord, quoteName } from "./internal/describe.js";
import { HiddenToolSearch, type HiddenToolSearchRequest, SEARCH_HIDDEN_TOOLS } from "./internal/hidden-tool-search.js";
import { HiddenTools } from "./internal/hidden-tools.js";
import { log, resolveLogger } from "./internal/logger.js";
import { isStringArray, optionError } from "./internal/options.js";
import type { PromotionView } from "./internal/promotion-scope.js";
import { prepareTool, type RegisteredTool } from "./internal/registered-tool.js";
import type { SearchDocument } from "./internal/tool-search.js";
import { logCallEnd } from "./log-tool-call.js";
import type { ToolDefinition } from "./provider.js";
import {
  APPROVAL_NAMES,
  CACHED_DEFINITIONS,
  EXECUTE_CHECKED,
  LOG_REFUSED_CALL,
  LOOP_BREAKING_NAMES,
  PROMOTION_MARK,
  REGISTERED_TOOL,
  TICK_HIDDEN_TOOLS,
  VIEW_DEFINITIONS,
} from "./registry-symbols.js";
import { RegistryViews } from "./registry-views.js";
import { type RegisterHiddenOptions, type SchemaBudget, schemaBudgetOption } from "./schema-budget.js";
import type { AsyncCallback, Tool } from "./tool.js";
import { startToolExecution, type ToolExecution } from "./tool-execution.js";
import type { ExecuteOptions, RegisterOptions, ToolRegistryOptions } from "./tool-registry-options.js";
import type { ToolResult } from "./tool-result.js";
import { TOOL_SEARCH_TOOL_NAMES } from "./tool-search-names.js";

/** A hidden tool found by {@link ToolRegistry.searchRegex} or {@link ToolRegistry.searchBM25}. */
export interface ToolSearchResult {
  /** The tool's name. */
  name: string;
  /** The tool's description, as registered. */
  description: string;
}

/** A search match as the registry returns it: a fresh object the caller may keep. */
function searchResult({ name, description }: SearchDocument): ToolSearchResult {
  return { name, description };
}

/** Adds `name` to `set` when `on`, else removes it. */
function mark(set: Set<string>, name: string, on: boolean): void {
  if (on) set.add(name);
  else set.delete(name);
}

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
  readonly #hidden = new HiddenTools();
  readonly #definitions = new DefinitionCache<DefinitionFormat>(this.#tools, this.#hidden, convertDefinitions);
  /** Lower-cased names a registration must have to be kept; `null`: every name. */
  #allowlist: ReadonlySet<string> | null = null;
  /** Searches of the hidden tools (the BM25 index kept as they come and go). */
  readonly #search = new HiddenToolSearch(this.#hidden, this.#tools);
  // Kept as tools come and go, so that a loop without loop-breaking tools checks an empty set once per turn.
  readonly #loopBreaking = new Set<string>();
  // Likewise for needsApproval, so that a loop without such tools looks none up per call.
  readonly #needsApproval = new Set<string>();
  readonly #dispatch: DispatchTarget;
  readonly #onDuplicate: "replace" | "throw";
  readonly #locked = new Set<string>();
  readonly #options: ToolRegistryOptions;
  /** The registry as each turn of a run or MCP session sees it (its promoted hidden tools). */
  readonly #views: RegistryViews;

  constructor(options: ToolRegistryOptions = {}) {
    if (typeof options !== "object" || options === null) {
      throw optionError("ToolRegistry", "options", "an object", options);
    }
    const logger = resolveLogger(options.logger, "ToolRegistry");
    if (options.logPayloads !== undefined && typeof options.logPayloads !== "boolean") {
      throw optionError("ToolRegistry", "logPayloads", "a boolean", options.logPayloads);
    }
    const { onDuplicate = "replace" } = options;
    if (onDuplicate !== "replace" && onDuplicate !== "throw") {
      throw optionError("ToolRegistry", "onDuplicate", '"replace" or "throw"', onDuplicate);
    }
    this.#onDuplicate = onDuplicate;
    this.#options = options;
    const tools = this.#tools;
    const definitions = this.#definitions;
    this.#dispatch = {
      get: (name) => tools.get(name),
      names: () => definitions.names(),
      logger,
      logPayloads: options.logPayloads ?? false,
    };
    this.#views = new RegistryViews(tools, this.#hidden, definitions, this.#dispatch);
  }

  /**
   * Adds a tool, or replaces the tool of the same name (logged as a warning) — unless the registry
   * was made with `onDuplicate: "throw"` or that tool is locked.
   * @throws TypeError when the name does not match `/^[A-Za-z0-9_-]{1,64}$/`, or `parameters` is
   * not a plain object, has a `type` other than `"object"`, is not a valid JSON Schema, or is over
   * the schema limits (of one schema, or of the registry's schemas together; see the guide); when
   * the name is taken and `onDuplicate` is `"throw"`, or its tool is locked.
   */
  register(tool: Tool, options: RegisterOptions = {}): void {
    const budget = schemaBudgetOption("register", options);
    const { locked = false } = options;
    if (typeof locked !== "boolean") throw optionError("register", "locked", "a boolean", locked);
    this.#add(tool, locked, false, budget);
  }

  /**
   * Adds a hidden tool (picoclaw HEAD's `RegisterHidden`): counted by `count()` and listed by
   * `list()`, but absent from definitions and summaries, and "not found" by `execute` and `get`,
   * until {@link promoteTools} offers it to everyone — or, in one run or MCP session only, a search
   * of `createToolSearchTools`'s discovery tools. Found by {@link searchRegex} and {@link searchBM25}.
   * Replacing a name follows `register`'s rules; a tool replaced this way is hidden from then on.
   * @throws TypeError as `register` does
   */
  registerHidden(tool: Tool, options: RegisterHiddenOptions = {}): void {
    this.#add(tool, false, true, schemaBudgetOption("registerHidden", options));
  }

  #add(tool: Tool, locked: boolean, hidden: boolean, budget: SchemaBudget | undefined): void {
    // Checked before the schema is compiled (a skipped tool costs nothing), and again on the name
    // read once by prepareTool (a name getter cannot slip another name past the allowlist).
    if (this.#allowlist !== null && isRecord(tool) && this.#disallowed(tool.name)) return;
    const entry = prepareTool(tool, this.#tools.values(), budget);
    const { name } = entry;
    if (this.#disallowed(name)) return;
    const replaced = this.#tools.has(name);
    if (replaced && this.#locked.has(name)) {
      throw new TypeError(`register: tool ${quoteName(name)} is locked and cannot be overridden`);
    }
    if (replaced && this.#onDuplicate === "throw") {
      throw new TypeError(`register: a tool named ${quoteName(name)} is already registered`);
    }
    if (locked) this.#locked.add(name);
    this.#tools.set(name, entry);
    if (hidden) this.#hidden.add(name);
    else this.#hidden.delete(name);
    this.#gateHiddenTools();
    this.#definitions.invalidate();
    mark(this.#loopBreaking, name, tool.loopBreaking === true);
    const { needsApproval } = tool;
    mark(this.#needsApproval, name, needsApproval !== undefined && needsApproval !== false);
    if (replaced) log(this.#dispatch.logger, "warn", () => ({ tool: name }), "tool replaced by a new registration");
  }

  /** `true` (logged at debug) when the allowlist keeps a tool named `name` out. */
  #disallowed(name: unknown): boolean {
    const allowlist = this.#allowlist;
    if (allowlist === null || typeof name !== "string") return false;
    if (allowlist.has(name.trim().toLowerCase()) || TOOL_SEARCH_TOOL_NAMES.includes(name)) return false;
    log(this.#dispatch.logger, "debug", () => ({ tool: name }), "tool not registered: not in the allowlist");
    return true;
  }

  /** Removes a tool; `true` when it was registered, `false` when it was not or is locked. */
  unregister(name: string): boolean {
    if (this.#locked.has(name)) return false;
    const removed = this.#tools.delete(name);
    if (removed) this.#definitions.invalidate();
    this.#hidden.delete(name);
    this.#gateHiddenTools();
    this.#loopBreaking.delete(name);
    this.#needsApproval.delete(name);
    return removed;
  }

  /**
   * A snapshot: a new registry with the same options, tools, locks, hidden tools (and their
   * promotions) and allowlist. Later changes on either registry do not reach the other (the tool
   * objects themselves are shared). Used by `spawn` so that a subagent cannot see the spawn tool or
   * tools registered after it.
   */
  clone(): ToolRegistry {
    const copy = new ToolRegistry(this.#options);
    for (const [name, entry] of this.#tools) copy.#tools.set(name, entry);
    copy.#hidden.adopt(this.#hidden);
    copy.#gateHiddenTools();
    copy.#allowlist = this.#allowlist;
    for (const name of this.#locked) copy.#locked.add(name);
    for (const name of this.#loopBreaking) copy.#loopBreaking.add(name);
    for (const name of this.#needsApproval) copy.#needsApproval.add(name);
    return copy;
  }

  /**
   * Makes dispatch treat a hidden tool that is not promoted as "not found" — only while there are
   * hidden tools: a registry without any looks names up exactly as before they existed.
   */
  #gateHiddenTools(): void {
    const tools = this.#tools;
    const hidden = this.#hidden;
    this.#dispatch.get =
      hidden.size === 0
        ? (name) => tools.get(name)
        : (name) => (hidden.isConcealed(name) ? undefined : tools.get(name));
  }

  /** The tool registered under `name`, or `undefined` — also for a hidden tool that is not promoted (as picoclaw's `Get`). */
  get(name: string): Tool | undefined {
    return this.#dispatch.get(name)?.tool;
  }

  /** `true` when a tool is registered under `name`, hidden or not (picoclaw's `HasRegistered`). */
  has(name: string): boolean {
    return this.#tools.has(name);
  }

  /**
   * Offers the hidden tools among `names` to every run and MCP session of this registry (your
   * code's decision: the discovery tools promote for their own run only), for the next `ttl`
   * provider calls of a loop that ticks (`tickHiddenTools`; the tool round in which they are
   * promoted does not count), or until `ttl` calls of {@link tickTTL}. `ttl` 0 hides them again.
   * Names that are not hidden tools are ignored. Takes effect from the next provider call of a
   * running loop.
   * @throws TypeError when `names` is not an array of strings or `ttl` not an integer ≥ 0
   */
  promoteTools(names: readonly string[], ttl: number): void {
    if (!isStringArray(names)) {
      throw optionError("promoteTools", "names", "an array of strings", names);
    }
    if (!Number.isSafeInteger(ttl) || ttl < 0) throw optionError("promoteTools", "ttl", "an integer ≥ 0", ttl);
    if (this.#hidden.promote(names, ttl)) this.#definitions.invalidate();
  }

  /** One tool round passed (picoclaw's `TickTTL`): every promoted hidden tool's ttl − 1; at 0 it is hidden again. */
  tickTTL(): void {
    if (this.#hidden.tick()) this.#definitions.invalidate();
  }

  /** @internal see REGISTERED_TOOL. */
  [REGISTERED_TOOL](name: string): Tool | undefined {
    return this.#tools.get(name)?.tool;
  }

  /** @internal see PROMOTION_MARK. */
  [PROMOTION_MARK](): number {
    return this.#hidden.mark();
  }

  /** @internal see PROMOTION_MARK: the loop's tick after a tool round. */
  [TICK_HIDDEN_TOOLS](mark: number): void {
    if (this.#hidden.tick(mark)) this.#definitions.invalidate();
  }

  /** @internal see VIEW_DEFINITIONS. */
  [VIEW_DEFINITIONS](view: PromotionView): readonly ToolDefinition[] {
    return this.#views.definitions(view);
  }

  /**
   * Restricts later registrations (`register`, `registerHidden`) to these names, compared trimmed
   * and lower-cased: any other tool is skipped (logged at debug), as in picoclaw. `null` allows
   * every name, `[]` none. The two tool-search tools are always allowed. Tools already registered
   * stay.
   * @throws TypeError when `names` is neither `null` nor an array of strings
   */
  setAllowlist(names: readonly string[] | null): void {
    if (names === null) {
      this.#allowlist = null;
      return;
    }
    if (!isStringArray(names)) {
      throw optionError("setAllowlist", "names", "an array of strings or null", names);
    }
    this.#allowlist = new Set(names.map((name) => name.trim().toLowerCase()));
  }

  /**
   * The hidden tools (promoted or not) whose name or description `pattern` matches, case-insensitively:
   * name matches first, then by name; at most `max`. The pattern runs on the linear-time engine of
   * schema patterns (RE2 syntax as JavaScript understands it: no backreferences or lookaround), so a
   * model-written pattern cannot hang the process; one too costly is refused, and a search stops
   * after 500 ms of matching (the discovery tools' searches run in slices that yield).
   * @throws TypeError for an invalid pattern (saying why), one over 1,000 characters, one too
   * costly or too slow, or a `max` that is not an integer ≥ 0
   */
  searchRegex(pattern: string, max: number): ToolSearchResult[] {
    return this.#search.regex(pattern, max).map(searchResult);
  }

  /**
   * The hidden tools (promoted or not) ranked by BM25 against `query` over their name and
   * description (split at `_`, `-`, case changes and spaces): best first, then by name; at most
   * `max`; only tools sharing a term with the query. A hidden tool is indexed when a search first
   * needs it (here at once; by the discovery tools in slices that yield), dropped when it goes.
   * @throws TypeError for a query over 1,000 characters or a `max` that is not an integer ≥ 0
   */
  searchBM25(query: string, max: number): ToolSearchResult[] {
    return this.#search.bm25(query, max).map(searchResult);
  }

  /** @internal see SEARCH_HIDDEN_TOOLS. */
  async [SEARCH_HIDDEN_TOOLS](request: HiddenToolSearchRequest): Promise<ToolSearchResult[]> {
    return (await this.#search.inSlices(request)).map(searchResult);
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
    return dispatchToolCall(this.#dispatch, { name, args, channel, chatId, asyncCallback, options });
  }

  /**
   * Runs several calls: concurrently, at most `concurrency` at once, each
   * only after every request named in its `dependsOn` has finished. A request whose dependency
   * failed is not run: its result is an error (`code: "dependency_failed"`) naming that dependency.
   * Never rejects; every result carries `metadata`.
   * @throws TypeError (synchronously, before anything runs) for a request that is not an object or
   * has no string `name`, an id used twice, a `dependsOn` id no request has, a dependency cycle, or
   * options of the wrong type
   * @example
   * ```ts
   * const batch = await registry.executeBatch([
   *   { id: "read", name: "read_file", parameters: { path: "config.json" } },
   *   { id: "check", name: "validate", parameters: {}, dependsOn: ["read"] },
   * ]);
   * batch.results.check?.forLLM;
   * ```
   */
  executeBatch(requests: readonly ToolRequest[], options: BatchOptions = {}): Promise<BatchResult> {
    return executeBatch(this.#dispatch, requests, options);
  }

  /**
   * Starts one call at once and returns its handle: its `result`
   * (never rejects, with `metadata`), its `progress` as an async iterable, and `cancel()`.
   * @throws TypeError (synchronously) for a request without a string `name`, a non-empty
   * `dependsOn`, or options of the wrong type
   * @example
   * ```ts
   * const execution = registry.executeAsync({ name: "index_repo", parameters: { path: "." } });
   * for await (const update of execution.progress) console.log(update.progress, update.message);
   * const result = await execution.result;
   * ```
   */
  executeAsync(request: ToolRequest, options: ExecuteOptions = {}): ToolExecution {
    return startToolExecution(this.#dispatch, request, options);
  }

  /**
   * Definitions of every visible tool (hidden ones only while promoted), sorted by name (stable for prompt caching). Without a format (or
   * with `"openai"`) they are what `toolToSchema` makes; other formats are the shape that API's
   * `tools` takes (`"openai-responses"`, `"anthropic"`, `"ollama"`, `"gemini"`). Each call returns a deep copy, free to
   * modify; the loop reads the cached arrays instead (see {@link CACHED_DEFINITIONS}).
   */
  getDefinitions(): ToolDefinition[];
  getDefinitions<F extends DefinitionFormat>(format: F): DefinitionFormats[F][];
  getDefinitions(format: DefinitionFormat = "openai"): unknown[] {
    // A deep copy: some SDKs rewrite the declarations they are given in place (e.g. @google/genai),
    // which must never reach the cached definitions the loop sends.
    return structuredClone(this.#definitions.definitions(format)) as unknown[];
  }

  /** @internal see CACHED_DEFINITIONS: the loop hands these to the provider without a copy. */
  [CACHED_DEFINITIONS](): readonly ToolDefinition[] {
    return this.#definitions.definitions("openai") as readonly ToolDefinition[];
  }

  /** @internal see APPROVAL_NAMES: read by the loop before each turn. */
  [APPROVAL_NAMES](): ReadonlySet<string> {
    return this.#needsApproval;
  }

  /** @internal see LOOP_BREAKING_NAMES: read by the loop after each turn. */
  [LOOP_BREAKING_NAMES](): ReadonlySet<string> {
    return this.#loopBreaking;
  }

  /** @internal see EXECUTE_CHECKED: the loop's calls, whose options it checked once per run. */
  [EXECUTE_CHECKED](call: CheckedCall, view?: PromotionView): Promise<ToolResult> {
    return dispatchCheckedCall(view === undefined ? this.#dispatch : this.#views.target(view), call);
  }

  /** @internal see LOG_REFUSED_CALL: refused calls are logged like every other failed call. */
  [LOG_REFUSED_CALL](name: string, toolCallId: string | undefined, result: ToolResult): void {
    logCallEnd(name, result, undefined, { ...this.#dispatch, toolCallId });
  }

  /** The definitions in the provider format `LLMProvider.chat` takes; sorted by name. */
  toProviderDefs(): ToolDefinition[] {
    return this.getDefinitions();
  }

  /** Registered names, hidden tools included, sorted. */
  list(): string[] {
    if (this.#hidden.size === 0) return [...this.#definitions.names()];
    return [...this.#tools.keys()].sort();
  }

  /** Number of registered tools, hidden tools included. */
  count(): number {
    return this.#tools.size;
  }

  /** One line per visible tool for humans: ``- `name` - description``, sorted by name. */
  getSummaries(): string[] {
    return this.#definitions
      .names()
      .map((name) => `- \`${name}\` - ${(this.#tools.get(name) as RegisteredTool).tool.description}`);
  }
}
