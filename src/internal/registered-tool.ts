import type { Logger } from "../logger.js";
import type { ToolDefinition } from "../provider.js";
import type { ParseArgumentsResult, Tool } from "../tool.js";
import { errorMessage, isPlainObject, quoteName } from "./describe.js";
import { compileJsonSchema } from "./json-schema-validator.js";
import { optionError } from "./options.js";
import { addCost, NO_COST, type SchemaCost, SchemaLimitError } from "./schema-limits.js";

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

/** What the schemas of `registered` cost together, leaving out the tool named `name` (a registration replaces it). */
function registeredCost(registered: Iterable<RegisteredTool>, name: string): SchemaCost {
  let used: SchemaCost = NO_COST;
  for (const entry of registered) if (entry.name !== name && entry.cost !== undefined) used = addCost(used, entry.cost);
  return used;
}

/**
 * Checks a tool and prepares it once: its definition is built and frozen, its schema measured and
 * compiled (a tool's own `parseArguments` is used instead when it has one). `parameters` is read
 * only here. `registered`: the registry's tools, whose schemas count against its limits.
 * @throws TypeError for a tool the registry cannot hold (a `SchemaLimitError` for a schema over the
 * limits of one schema or of the registry)
 */
export function prepareTool(tool: Tool, registered: Iterable<RegisteredTool> = []): RegisteredTool {
  const checked = validateTool(tool);
  const { name } = checked;
  const definition: ToolDefinition = Object.freeze({ type: "function", function: checked });
  if (typeof tool.parseArguments === "function") {
    return { tool, name, definition, validate: tool.parseArguments.bind(tool) };
  }
  try {
    const { validate, cost } = compileJsonSchema(checked.parameters, registeredCost(registered, name));
    return { tool, name, definition, validate, cost };
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
