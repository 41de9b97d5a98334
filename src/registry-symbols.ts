// What the loop reads from a registry beyond its public API. `Symbol.for`, so that a registry made
// by another installed copy of toolloop serves the loop too (no private fields read across copies).

/** @internal `() => readonly ToolDefinition[]`: the cached, frozen definitions, without a copy. */
export const CACHED_DEFINITIONS: unique symbol = Symbol.for("toolloop.registry.cachedDefinitions");

/** @internal `(name, toolCallId, result) => void`: logs a call the loop refused before dispatch. */
export const LOG_REFUSED_CALL: unique symbol = Symbol.for("toolloop.registry.logRefusedCall");

/** @internal `() => ReadonlySet<string>`: the names of the registered loop-breaking tools. */
export const LOOP_BREAKING_NAMES: unique symbol = Symbol.for("toolloop.registry.loopBreakingNames");

/**
 * @internal `(call: CheckedCall, view?: PromotionView) => Promise<ToolResult>`: `executeWithContext`
 * without its option checks and result metadata, for the loop, which checks its own options once per
 * run; with `view`, in that turn of the run (see VIEW_DEFINITIONS). The loop takes it only while
 * `executeWithContext` is this copy's own (not overridden by a subclass).
 */
export const EXECUTE_CHECKED: unique symbol = Symbol.for("toolloop.registry.executeChecked");

/**
 * @internal `(view: PromotionView) => readonly ToolDefinition[]`: the definitions offered in one turn
 * of a run or MCP session: the cached ones, plus the hidden tools that run or session promoted for
 * that turn (frozen, sorted, the same array while nothing changes). A call in that turn may run such
 * a tool once its scope says the model was shown it; a discovery tool called in it promotes into
 * that scope.
 */
export const VIEW_DEFINITIONS: unique symbol = Symbol.for("toolloop.registry.viewDefinitions");

/** @internal `() => ReadonlySet<string>`: the names of the registered tools with a `needsApproval`. */
export const APPROVAL_NAMES: unique symbol = Symbol.for("toolloop.registry.approvalNames");

/**
 * @internal `() => number`: a mark taken before a tool round; `[TICK_HIDDEN_TOOLS](mark)` after it
 * ticks every promoted hidden tool except those promoted during the round.
 */
export const PROMOTION_MARK: unique symbol = Symbol.for("toolloop.registry.promotionMark");

/** @internal `(name) => Tool | undefined`: the tool registered under `name`, hidden or not (an importer's `close()` checks it is still its own). */
export const REGISTERED_TOOL: unique symbol = Symbol.for("toolloop.registry.registeredTool");

/** @internal `(mark: number) => void`: see PROMOTION_MARK. */
export const TICK_HIDDEN_TOOLS: unique symbol = Symbol.for("toolloop.registry.tickHiddenTools");
