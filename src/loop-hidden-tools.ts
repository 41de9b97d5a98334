import { optionError } from "./internal/options.js";
import { PromotionScope, type PromotionView } from "./internal/promotion-scope.js";
import type { ToolDefinition } from "./provider.js";
import type { RegistryLike } from "./registry-like.js";
import { CACHED_DEFINITIONS, PROMOTION_MARK, TICK_HIDDEN_TOOLS, VIEW_DEFINITIONS } from "./registry-symbols.js";

/** `tickHiddenTools`: a mark taken before each tool round, and the tick after it. */
export interface HiddenToolTicker {
  mark(): number;
  tick(mark: number): void;
}

/**
 * The tick of `tickHiddenTools`: through the registry's marks, so that a promotion made during a
 * round does not count that round; a registry of another copy without them ticks with `tickTTL()`
 * (one without that is a `TypeError`). `undefined` without tools.
 */
export function hiddenToolTicker(tools: RegistryLike | null, where: string): HiddenToolTicker | undefined {
  if (tools === null) return undefined;
  const registry = tools as Partial<Record<typeof PROMOTION_MARK | typeof TICK_HIDDEN_TOOLS | "tickTTL", unknown>>;
  const mark = registry[PROMOTION_MARK];
  const tick = registry[TICK_HIDDEN_TOOLS];
  if (typeof mark === "function" && typeof tick === "function") {
    return { mark: () => mark.call(tools) as number, tick: (before) => tick.call(tools, before) };
  }
  const { tickTTL } = registry;
  if (typeof tickTTL !== "function") {
    throw optionError(where, "tools", "a registry with tickTTL() when tickHiddenTools is set", tools);
  }
  return { mark: () => 0, tick: () => tickTTL.call(tools) };
}

/** One turn of a run, as the registry reads it: what the run promoted, and the turn it is in. */
export interface RunPromotions extends PromotionView {
  turn: number;
}

/**
 * The hidden tools this run's searches promote: the run's own, never the registry's — one view,
 * its turn moved on with each iteration (a turn's calls all end before the next begins). A resumed
 * run starts without any (a checkpoint does not carry them). `undefined` for a registry that keeps
 * none per run.
 */
export function runPromotions(tools: RegistryLike | null): RunPromotions | undefined {
  return tools !== null && VIEW_DEFINITIONS in tools ? { scope: new PromotionScope(), turn: 0 } : undefined;
}

/**
 * The definitions to offer: the registry's cached list — with the hidden tools this run promoted
 * for this turn, which the model is then shown — or (another copy's registry) a copy; `undefined`
 * when every tool is hidden, as for no tools.
 */
export function definitionsOf(tools: RegistryLike, view: PromotionView | undefined): ToolDefinition[] | undefined {
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
