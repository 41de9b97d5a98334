import { quoteName } from "../internal/describe.js";
import { optionError } from "../internal/options.js";
import { SchemaBudget } from "../schema-budget.js";
import type { Tool } from "../tool.js";
import type { ToolRegistry } from "../tool-registry.js";

/** The option of `registerMcpTools` that bounds what one import's schemas may cost. */
export interface SchemaShareOption {
  /**
   * The share of the registry's schema limits the imported tools may use together, measure by
   * measure (subschemas, keywords, patterns, characters of `enum` and `const` values, units of
   * compiling): a tool that would take the import past it is skipped with a warning, like one over
   * the registry's own limits, so that one server cannot use up what the application's own tools
   * need. Each import (each call) has its own share; 1 lets it use the registry's whole total.
   * @default 0.25
   */
  maxSchemaShare?: number | undefined;
}

/** How an import registers its tools: hidden or not, against its own share of the registry's schema limits. */
export interface Registration {
  hidden: boolean;
  budget: SchemaBudget;
}

const DEFAULT_MAX_SCHEMA_SHARE = 0.25;

/** Checks the options `hidden` and `maxSchemaShare`, and makes the import's budget. */
export function checkRegistration(
  where: string,
  registry: Record<string, unknown>,
  options: Record<string, unknown>,
  serverName: string,
): Registration {
  const { hidden = false, maxSchemaShare = DEFAULT_MAX_SCHEMA_SHARE } = options;
  if (typeof hidden !== "boolean") throw optionError(where, "hidden", "a boolean", hidden);
  if (hidden && typeof registry.registerHidden !== "function") {
    throw optionError(where, "registry", "a ToolRegistry with registerHidden (for hidden: true)", registry);
  }
  if (typeof maxSchemaShare !== "number" || !(maxSchemaShare > 0 && maxSchemaShare <= 1)) {
    throw optionError(where, "maxSchemaShare", "a number in (0, 1]", maxSchemaShare);
  }
  return { hidden, budget: new SchemaBudget(`MCP server ${quoteName(serverName)}`, maxSchemaShare) };
}

/** Registers an imported tool, hidden or not, against the import's budget. */
export function registerImported(registry: ToolRegistry, registration: Registration, tool: Tool): void {
  const options = { schemaBudget: registration.budget };
  if (registration.hidden) registry.registerHidden(tool, options);
  else registry.register(tool, options);
}
