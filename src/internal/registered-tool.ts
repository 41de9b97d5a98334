import type { Logger } from "../logger.js";
import type { ToolDefinition } from "../provider.js";
import type { ParseArgumentsResult, Tool } from "../tool.js";
import { errorMessage, isPlainObject, quoteName } from "./describe.js";
import { compileJsonSchema } from "./json-schema-validator.js";
import { optionError } from "./options.js";
import { type BudgetShare, checkBudgetCost } from "./schema-budget.js";
import { addCost, checkRegistryCost, NO_COST, type SchemaCost, SchemaLimitError } from "./schema-cost.js";

const TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** A registered tool with what was prepared once at registration. */
export interface RegisteredTool {
  tool: Tool;
  /** The name checked at registration (read once: a getter cannot change it afterwards). */
  name: string;
  /** Built from the tool once, at registration. */
  definition: ToolDefinition;
  validate: (args: Record<string, unknown>) => ParseArgumentsResult;
  /** What compiling its JSON Schema cost (none for a tool with its own `parseArguments`), for the registry's limits. */
  cost?: SchemaCost;
  /** The budget its schema counts against besides the registry's total, when registered with one. */
  budget?: BudgetShare;
  /** The registry's logger bound to `{ tool }`, made on the tool's first call. */
  logger?: Logger;
}

/** Checks a tool; returns what was read of it once (a getter may answer differently each time). */
function validateTool(tool: Tool): { name: string; description: string; parameters: Record<string, unknown> } {
  if (typeof tool !== "object" || tool === null) throw optionError("register", "tool", "an object", tool);
  const { name, parameters, description } = tool;
  if (typeof name !== "string" || !TOOL_NAME_PATTERN.test(name)) {
    throw optionError("register", "tool.name", `a string matching ${TOOL_NAME_PATTERN}`, name);
  }
  const where = `tool ${quoteName(name)}`;
  if (typeof description !== "string") throw optionError(where, "description", "a string", description);
  if (typeof tool.execute !== "function") throw optionError(where, "execute", "a function", tool.execute);
  if (!isPlainObject(parameters)) throw optionError(where, "parameters", "a JSON Schema object", parameters);
  if ("type" in parameters && parameters.type !== "object") {
    throw optionError(where, "parameters.type", '"object"', parameters.type);
  }
  return { name, description, parameters };
}

/**
 * What the schemas of `registered` cost together, and those registered with `budget`, leaving out
 * the tool named `name` (a registration replaces it).
 */
function registeredCost(
  registered: Iterable<RegisteredTool>,
  name: string,
  budget: BudgetShare | undefined,
): { all: SchemaCost; budget: SchemaCost } {
  let all: SchemaCost = NO_COST;
  let inBudget: SchemaCost = NO_COST;
  for (const entry of registered) {
    if (entry.name === name || entry.cost === undefined) continue;
    all = addCost(all, entry.cost);
    if (budget !== undefined && entry.budget === budget) inBudget = addCost(inBudget, entry.cost);
  }
  return { all, budget: inBudget };
}

/**
 * Checks a tool and prepares it once: its definition is built and frozen, its schema measured and
 * compiled (a tool's own `parseArguments` is used instead when it has one). `parameters` is read
 * only here. `registered`: the registry's tools, whose schemas count against its limits; `budget`:
 * the share of those limits the tool counts against with the others registered with it.
 * @throws TypeError for a tool the registry cannot hold (a `SchemaLimitError` for a schema over the
 * limits of one schema, of the registry or of the budget)
 */
export function prepareTool(
  tool: Tool,
  registered: Iterable<RegisteredTool> = [],
  budget?: BudgetShare,
): RegisteredTool {
  const checked = validateTool(tool);
  const { name } = checked;
  const definition: ToolDefinition = Object.freeze({ type: "function", function: checked });
  if (typeof tool.parseArguments === "function") {
    return { tool, name, definition, validate: tool.parseArguments.bind(tool) };
  }
  try {
    const used = registeredCost(registered, name, budget);
    const { validate, cost } = compileJsonSchema(checked.parameters, (cost) => {
      checkRegistryCost(used.all, cost);
      if (budget !== undefined) checkBudgetCost(budget, used.budget, cost);
    });
    const entry: RegisteredTool = { tool, name, definition, validate, cost };
    if (budget !== undefined) entry.budget = budget;
    return entry;
  } catch (error) {
    if (error instanceof SchemaLimitError) {
      throw new SchemaLimitError(`tool ${quoteName(name)}: parameters is over the schema limits: ${error.message}`, {
        cause: error,
      });
    }
    throw new TypeError(`tool ${quoteName(name)}: parameters is not a valid JSON Schema: ${errorMessage(error)}`, {
      cause: error,
    });
  }
}
