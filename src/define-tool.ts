import type * as z4 from "zod/v4/core";
import { errorMessage, isPlainObject, showValue } from "./internal/describe.js";
import { optionError } from "./internal/options.js";
import {
  DIRECT_EXECUTE,
  type DirectExecute,
  type ParseArgumentsResult,
  type Tool,
  type ToolContext,
  type ToolReturn,
} from "./tool.js";
import { newToolResult, type ToolResult } from "./tool-result.js";
import { type Zod3Schema, zodMajor, zodToJsonSchema, zodValidator } from "./zod-schema.js";

/**
 * A zod 3 (3.25+) object schema (`z.object({...})` from `"zod"` 3 or `"zod/v3"`), described by its
 * shape rather than by zod 3's classes, so that a schema from any installed copy of zod 3 fits.
 */
export interface Zod3ObjectSchema {
  /** zod 3's definition; `typeName` is `"ZodObject"` for an object schema. */
  readonly _def: {
    /** The zod 3 class name (`"ZodObject"`). */
    readonly typeName: string;
  };
  /** The parsed type (type-level only): what `execute` receives. */
  readonly _output: unknown;
  /** The input type (type-level only). */
  readonly _input: unknown;
  /** The object's fields. */
  readonly shape: object;
  /** Validates the model's arguments (zod 3's method). */
  safeParse(data: unknown): ReturnType<Zod3Schema["safeParse"]>;
}

/** The `parameters` {@link defineTool} accepts: a zod 4 or a zod 3 (3.25+) object schema. */
export type ZodObjectSchema = z4.$ZodObject | Zod3ObjectSchema;

/** The arguments `execute` receives for a schema: its output type (defaults and transforms applied). */
export type InferToolArgs<Schema extends ZodObjectSchema> = Schema extends { _zod: unknown }
  ? z4.output<Schema>
  : Schema extends Zod3ObjectSchema
    ? Schema["_output"]
    : never;

/** Options of {@link defineTool}. */
export interface DefineToolOptions<Schema extends ZodObjectSchema> {
  /** Unique tool name, `/^[A-Za-z0-9_-]{1,64}$/`. */
  name: string;
  /** What the model reads to decide when to call the tool. */
  description: string;
  /**
   * A zod object schema (`z.object({...})`, zod 3.25+ or 4): converted to JSON Schema for the model
   * and used to validate arguments.
   */
  parameters: Schema;
  /** Runs the tool with arguments parsed by the schema (defaults and transforms applied). */
  execute(args: InferToolArgs<Schema>, context: ToolContext): ToolReturn | Promise<ToolReturn>;
  /** See {@link Tool.loopBreaking}: a successful call of this tool ends the loop. @default false */
  loopBreaking?: boolean;
  /**
   * See {@link Tool.needsApproval}: `true`, or a predicate, makes the loop ask `approve` before a
   * call runs. The predicate receives the model's arguments as sent — *before* the schema parsed
   * them, so not typed by it. @default false
   */
  needsApproval?: Tool["needsApproval"];
}

/** A {@link Tool} made by {@link defineTool}: `execute` keeps the argument type inferred from the schema. */
export interface DefinedTool<Args extends Record<string, unknown>, Schema extends ZodObjectSchema = ZodObjectSchema>
  extends Tool {
  /** The zod schema the tool was defined with. */
  readonly schema: Schema;
  execute(args: Args, context: ToolContext): ToolResult | Promise<ToolResult>;
  parseArguments(args: Record<string, unknown>): ParseArgumentsResult;
}

function toToolResult(value: ToolReturn): ToolResult {
  return typeof value === "string" ? newToolResult(value) : value;
}

/**
 * Defines a tool from a zod object schema (zod 4, or zod 3.25+). The JSON Schema sent to the model
 * is made once — with zod 4's `toJSONSchema` (input side, so fields with defaults are optional), or
 * with `zod-to-json-schema` for a zod 3 schema; arguments are validated by zod before `execute`
 * runs, and `execute` receives the parsed, typed value.
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
export function defineTool<Schema extends ZodObjectSchema>(
  options: DefineToolOptions<Schema>,
): DefinedTool<InferToolArgs<Schema> & Record<string, unknown>, Schema> {
  if (!isPlainObject(options)) {
    throw optionError("defineTool", "options", "an object", options);
  }
  const { name, description, parameters: schema, execute, loopBreaking, needsApproval } = options;
  const major = zodMajor(schema, true);
  if (major === undefined) {
    const expected = "a zod object schema (z.object({...}), zod 3.25+ or 4)";
    throw optionError(`defineTool(${showValue(name)})`, "parameters", expected, schema);
  }
  if (typeof execute !== "function") {
    throw optionError(`defineTool(${showValue(name)})`, "execute", "a function", execute);
  }
  if (loopBreaking !== undefined && typeof loopBreaking !== "boolean") {
    throw optionError(`defineTool(${showValue(name)})`, "loopBreaking", "a boolean", loopBreaking);
  }
  if (needsApproval !== undefined && typeof needsApproval !== "boolean" && typeof needsApproval !== "function") {
    const expected = "a boolean or a function (args, context) => boolean";
    throw optionError(`defineTool(${showValue(name)})`, "needsApproval", expected, needsApproval);
  }
  let parameters: Record<string, unknown>;
  try {
    parameters = zodToJsonSchema(schema, major, true);
  } catch (error) {
    throw new TypeError(
      `defineTool(${showValue(name)}): the schema cannot be converted to JSON Schema: ${errorMessage(error)}`,
      { cause: error },
    );
  }

  type Args = InferToolArgs<Schema> & Record<string, unknown>;
  const parse = zodValidator(schema, major, parameters);
  const tool: DefinedTool<Args, Schema> = {
    name,
    description,
    parameters,
    schema,
    ...(loopBreaking === true ? { loopBreaking } : {}),
    ...(needsApproval === undefined || needsApproval === false ? {} : { needsApproval }),
    parseArguments: parse as (args: Record<string, unknown>) => ParseArgumentsResult,
    execute(args: Args, context: ToolContext) {
      const value = execute(args, context);
      return value instanceof Promise ? value.then(toToolResult) : toToolResult(value);
    },
  };
  const direct: DirectExecute = { method: tool.execute, execute: execute as DirectExecute["execute"] };
  Object.defineProperty(tool, DIRECT_EXECUTE, { value: direct });
  return tool;
}
