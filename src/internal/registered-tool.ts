import type { Logger } from "../logger.js";
import type { ToolDefinition } from "../provider.js";
import type { ParseArgumentsResult, Tool } from "../tool.js";
import { errorMessage, isPlainObject, quoteName } from "./describe.js";
import { compileJsonSchemaValidator } from "./json-schema-validator.js";
import { optionError } from "./options.js";

const TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** A registered tool with what was prepared once at registration. */
export interface RegisteredTool {
  tool: Tool;
  /** The name checked at registration (read once: a getter cannot change it afterwards). */
  name: string;
  /** Built from the tool once, at registration. */
  definition: ToolDefinition;
  validate: (args: Record<string, unknown>) => ParseArgumentsResult;
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
 * Checks a tool and prepares it once: its definition is built and frozen, its schema compiled
 * (a tool's own `parseArguments` is used instead when it has one). `parameters` is read only here.
 * @throws TypeError for a tool the registry cannot hold
 */
export function prepareTool(tool: Tool): RegisteredTool {
  const checked = validateTool(tool);
  const { name } = checked;
  const definition: ToolDefinition = Object.freeze({ type: "function", function: checked });
  if (typeof tool.parseArguments === "function") {
    return { tool, name, definition, validate: tool.parseArguments.bind(tool) };
  }
  try {
    return { tool, name, definition, validate: compileJsonSchemaValidator(checked.parameters) };
  } catch (error) {
    throw new TypeError(`tool ${quoteName(name)}: parameters is not a valid JSON Schema: ${errorMessage(error)}`, {
      cause: error,
    });
  }
}
