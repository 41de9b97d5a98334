import { optionError } from "./internal/options.js";
import type { BudgetShare } from "./internal/schema-budget.js";

/**
 * A share of a registry's schema limits that the tools registered with it use together: an MCP
 * import has one (see `registerMcpTools`' `maxSchemaShare`), so that one server cannot use up the
 * budget the application's own tools need. Each registry counts, among its own tools, those
 * registered with the budget (a tool replaced or removed stops counting); one budget may serve
 * several registries.
 *
 * @example
 * ```ts
 * const plugins = new SchemaBudget("plugins", 0.1);
 * registry.register(pluginTool, { schemaBudget: plugins });
 * ```
 */
export class SchemaBudget implements BudgetShare {
  /** Names the budget in a refusal: `with it, the schemas of <name> would have …`. */
  readonly name: string;
  /** The share of each of the registry's schema limits (subschemas, keywords, patterns, enum and const characters, units of compiling) its tools may use together: in (0, 1]. */
  readonly share: number;

  /**
   * @param name names the budget in refusals (at most 200 characters)
   * @param share of each of the registry's schema limits, in (0, 1]
   * @throws TypeError for a name that is not a string of 1–200 characters, or a share outside (0, 1]
   */
  constructor(name: string, share: number) {
    if (typeof name !== "string" || name.length === 0 || name.length > 200) {
      throw optionError("SchemaBudget", "name", "a string of 1–200 characters", name);
    }
    if (typeof share !== "number" || !(share > 0 && share <= 1)) {
      throw optionError("SchemaBudget", "share", "a number in (0, 1]", share);
    }
    this.name = name;
    this.share = share;
  }
}

/** Options of `ToolRegistry.registerHidden` (and, with `locked`, of `register`). */
export interface RegisterHiddenOptions {
  /**
   * A share of the registry's schema limits the tool's schema counts against, with the other tools
   * registered with the same budget (besides the registry's total): an MCP import registers its
   * tools with one, so that a server cannot use up what the application's own tools need.
   * @default none: only the registry's total applies
   */
  schemaBudget?: SchemaBudget | undefined;
}

/** Reads the `schemaBudget` option of `register` or `registerHidden`. */
export function schemaBudgetOption(where: string, options: unknown): SchemaBudget | undefined {
  if (typeof options !== "object" || options === null) throw optionError(where, "options", "an object", options);
  const { schemaBudget } = options as { schemaBudget?: unknown };
  if (schemaBudget === undefined || schemaBudget instanceof SchemaBudget) return schemaBudget;
  throw optionError(where, "schemaBudget", "a SchemaBudget", schemaBudget);
}
