import type { DefinitionFormat } from "./definition-format.js";
import type { DispatchTarget } from "./dispatch-tool-call.js";
import type { DefinitionCache } from "./internal/definition-cache.js";
import type { HiddenTools } from "./internal/hidden-tools.js";
import { isStringArray } from "./internal/options.js";
import { BIND_PROMOTIONS, type Promote, type PromotionView } from "./internal/promotion-scope.js";
import type { RegisteredTool } from "./internal/registered-tool.js";
import type { ToolDefinition } from "./provider.js";
import type { Tool } from "./tool.js";

/**
 * A registry as one turn of a run or MCP session sees it: the registered tools, plus the hidden
 * tools that run or session promoted (its `PromotionView`) — in the definitions it offers and in
 * the calls it dispatches. Made once per registry, over the registry's own maps.
 */
export class RegistryViews {
  readonly #tools: ReadonlyMap<string, RegisteredTool>;
  readonly #hidden: HiddenTools;
  readonly #definitions: DefinitionCache<DefinitionFormat>;
  readonly #dispatch: DispatchTarget;
  /** Per run or session (its scope): the definitions last offered beyond the cached ones. */
  readonly #offered = new WeakMap<
    object,
    { base: readonly ToolDefinition[]; key: string; definitions: readonly ToolDefinition[] }
  >();

  /** Over the registry's tools, hidden tools, definition cache and dispatch target (for every view alike). */
  constructor(
    tools: ReadonlyMap<string, RegisteredTool>,
    hidden: HiddenTools,
    definitions: DefinitionCache<DefinitionFormat>,
    dispatch: DispatchTarget,
  ) {
    this.#tools = tools;
    this.#hidden = hidden;
    this.#definitions = definitions;
    this.#dispatch = dispatch;
  }

  /** The hidden tools a run or session offers in `view`'s turn that are not promoted for everyone (those are visible anyway). */
  #names(view: PromotionView): string[] {
    const hidden = this.#hidden;
    return view.scope.offered(view.turn).filter((name) => hidden.isConcealed(name));
  }

  /**
   * Dispatch in one turn of a run or session: its promoted tools are found (once callable), and a
   * discovery tool is bound to its scope, so that its searches promote there and nowhere else.
   */
  target(view: PromotionView): DispatchTarget {
    if (this.#hidden.size === 0) return this.#dispatch;
    const hidden = this.#hidden;
    const { scope, turn } = view;
    const promote: Promote = (names, ttl) => {
      if (!Number.isSafeInteger(ttl) || ttl < 1 || !isStringArray(names)) return 0;
      const promoted = names.filter((name) => hidden.has(name));
      scope.promote(promoted, ttl, turn);
      return promoted.length;
    };
    return {
      get: (name) => {
        // A hidden tool only once the run or session may call it.
        const entry = hidden.isConcealed(name) && !scope.callable(name, turn) ? undefined : this.#tools.get(name);
        const bind = (entry?.tool as Partial<Record<typeof BIND_PROMOTIONS, unknown>> | undefined)?.[BIND_PROMOTIONS];
        // A copy of the entry: validation and the definition stay the registered tool's.
        return entry === undefined || typeof bind !== "function"
          ? entry
          : { ...entry, tool: bind.call(entry.tool, promote) as Tool };
      },
      // For a "not found" answer: what this call could have run.
      names: () => {
        const callable = this.#names(view).filter((name) => scope.callable(name, turn));
        return [...this.#definitions.names(), ...callable].sort();
      },
      logger: this.#dispatch.logger,
      logPayloads: this.#dispatch.logPayloads,
    };
  }

  /**
   * The definitions offered in `view`'s turn: the cached ones, plus the hidden tools promoted for
   * it (frozen, sorted, the same array while nothing changes).
   */
  definitions(view: PromotionView): readonly ToolDefinition[] {
    const base = this.#definitions.definitions("openai") as readonly ToolDefinition[];
    if (this.#hidden.size === 0 || view.scope.size === 0) return base;
    const names = this.#names(view).sort();
    if (names.length === 0) return base;
    // The same array while nothing changes: adapters cache their conversions by its identity.
    const key = names.join("\n");
    const cached = this.#offered.get(view.scope);
    if (cached !== undefined && cached.base === base && cached.key === key) return cached.definitions;
    const promoted = names.map((name) => (this.#tools.get(name) as RegisteredTool).definition);
    const definitions = Object.freeze(
      [...base, ...promoted].sort((a, b) => (a.function.name < b.function.name ? -1 : 1)),
    );
    this.#offered.set(view.scope, { base, key, definitions });
    return definitions;
  }
}
