import * as z from "zod";
import { describeType, isPlainObject } from "./internal/describe.js";
import { formatIssues } from "./internal/json-schema-validator.js";
import type { ParseArgumentsResult, Tool, ToolContext } from "./tool.js";
import { newToolResult, type ToolResult } from "./tool-result.js";

/** What a defined tool's `execute` may return: a result, or a string (→ `newToolResult`). */
export type ToolReturn = ToolResult | string;

/** Options of {@link defineTool}. */
export interface DefineToolOptions<Schema extends z.ZodObject> {
  /** Unique tool name, `/^[A-Za-z0-9_-]{1,64}$/`. */
  name: string;
  /** What the model reads to decide when to call the tool. */
  description: string;
  /** A zod (v4) object schema: converted to JSON Schema for the model and used to validate arguments. */
  parameters: Schema;
  /** Runs the tool with arguments parsed by the schema (defaults and transforms applied). */
  execute(args: z.output<Schema>, context: ToolContext): ToolReturn | Promise<ToolReturn>;
}

/** A {@link Tool} made by {@link defineTool}: `execute` keeps the argument type inferred from the schema. */
export interface DefinedTool<Args extends Record<string, unknown>> extends Tool {
  /** The zod schema the tool was defined with. */
  readonly schema: z.ZodType<Args>;
  execute(args: Args, context: ToolContext): ToolResult | Promise<ToolResult>;
  parseArguments(args: Record<string, unknown>): ParseArgumentsResult;
}

function isZodObject(value: unknown): value is z.ZodObject {
  const internals = (value as { _zod?: { def?: { type?: unknown } } } | null | undefined)?._zod;
  return internals?.def?.type === "object";
}

function formatZodIssues(error: z.ZodError): string {
  return formatIssues(
    error.issues.map((issue) => {
      const path = issue.path.map(String).join(".");
      return `${path === "" ? "(root)" : path}: ${issue.message}`;
    }),
  );
}

function toToolResult(value: ToolReturn): ToolResult {
  return typeof value === "string" ? newToolResult(value) : value;
}

/**
 * Defines a tool from a zod object schema. The JSON Schema sent to the model is made once with
 * `z.toJSONSchema` (input side, so fields with defaults are optional); arguments are validated by
 * zod before `execute` runs, and `execute` receives the parsed, typed value.
 *
 * @example
 * ```ts
 * const weather = defineTool({
 *   name: "get_weather",
 *   description: "Current weather for a city",
 *   parameters: z.object({ city: z.string() }),
 *   execute: async ({ city }) => `Sunny in ${city}`,
 * });
 * ```
 */
export function defineTool<Schema extends z.ZodObject>(
  options: DefineToolOptions<Schema>,
): DefinedTool<z.output<Schema> & Record<string, unknown>> {
  if (!isPlainObject(options)) {
    throw new TypeError(`defineTool() expects an options object, got ${describeType(options)}`);
  }
  const { name, description, parameters: schema, execute } = options;
  if (!isZodObject(schema)) {
    throw new TypeError(
      `defineTool(${JSON.stringify(name)}): parameters must be a zod v4 object schema (z.object({...})), got ${describeType(schema)}`,
    );
  }
  if (typeof execute !== "function") {
    throw new TypeError(
      `defineTool(${JSON.stringify(name)}): execute must be a function, got ${describeType(execute)}`,
    );
  }
  let parameters: Record<string, unknown>;
  try {
    const { $schema: _dialect, ...jsonSchema } = z.toJSONSchema(schema, { io: "input" }) as Record<string, unknown>;
    parameters = jsonSchema;
  } catch (error) {
    throw new TypeError(
      `defineTool(${JSON.stringify(name)}): the schema cannot be converted to JSON Schema: ${String(error)}`,
      {
        cause: error,
      },
    );
  }

  type Args = z.output<Schema> & Record<string, unknown>;
  return {
    name,
    description,
    parameters,
    schema: schema as unknown as z.ZodType<Args>,
    parseArguments(args) {
      const parsed = schema.safeParse(args);
      return parsed.success
        ? { success: true, data: parsed.data as Record<string, unknown> }
        : { success: false, error: formatZodIssues(parsed.error) };
    },
    execute(args: Args, context: ToolContext) {
      const value = execute(args, context);
      return value instanceof Promise ? value.then(toToolResult) : toToolResult(value);
    },
  };
}
