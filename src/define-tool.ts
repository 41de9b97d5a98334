import { createRequire } from "node:module";
// `zod/v4/core` exists in zod 4 and in zod 3.25+ (which ships zod 4 beside zod 3), so this import
// works whichever major the user installed; it is the same module the user's zod 4 schemas use.
import type * as z4 from "zod/v4/core";
import { safeParse as safeParse4, toJSONSchema as toJSONSchema4 } from "zod/v4/core";
import { errorMessage, isPlainObject, showValue } from "./internal/describe.js";
import { optionError } from "./internal/options.js";
import { formatIssues } from "./internal/validation-messages.js";
import {
  DIRECT_EXECUTE,
  type DirectExecute,
  type ParseArgumentsResult,
  type Tool,
  type ToolContext,
  type ToolReturn,
} from "./tool.js";
import { newToolResult, type ToolResult } from "./tool-result.js";

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
  safeParse(data: unknown): Zod3SafeParseResult;
}

type Zod3SafeParseResult =
  | { success: true; data: unknown }
  | { success: false; error: { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }> } };

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

type Issue = { readonly path: ReadonlyArray<PropertyKey>; readonly message: string };

/** `"zod4"` or `"zod3"` for an object schema of that major, told apart by shape: zod 4 schemas have `_zod`. */
function zodObjectMajor(value: unknown): "zod4" | "zod3" | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { _zod: internals, _def: def } = value as {
    _zod?: { def?: { type?: unknown } };
    _def?: { typeName?: unknown };
  };
  if (internals !== undefined) return internals?.def?.type === "object" ? "zod4" : undefined;
  return def?.typeName === "ZodObject" && typeof (value as { safeParse?: unknown }).safeParse === "function"
    ? "zod3"
    : undefined;
}

// zod-to-json-schema (a CommonJS package) is loaded when the first zod 3 schema is seen, so that
// apps on zod 4 never load it. It must never see a zod 4 schema: it returns an empty schema for one.
const require = createRequire(import.meta.url);
type ZodToJsonSchemaModule = typeof import("zod-to-json-schema");
let zodToJsonSchemaModule: ZodToJsonSchemaModule | undefined;

function zod3ToJsonSchema(schema: Zod3ObjectSchema): Record<string, unknown> {
  zodToJsonSchemaModule ??= require("zod-to-json-schema") as ZodToJsonSchemaModule;
  const { zodToJsonSchema } = zodToJsonSchemaModule;
  const ignoreOverride: ZodToJsonSchemaModule["ignoreOverride"] = zodToJsonSchemaModule.ignoreOverride;
  return zodToJsonSchema(schema as never, {
    target: "jsonSchema7",
    // The input side, like zod 4's `io: "input"`: fields with defaults are optional.
    pipeStrategy: "input",
    effectStrategy: "input",
    // A sub-schema used twice is written out twice (models and provider formats read `$ref`
    // poorly); only a recursive one becomes a `$ref` to where it first appears. That is what zod 4
    // does, and it avoids the `console.warn` that zod-to-json-schema's "none" strategy prints.
    $refStrategy: "none",
    override: (_def, refs, seen, forceResolution) => {
      if (seen === undefined || forceResolution === true) return ignoreOverride;
      const recursive =
        seen.path.length < refs.currentPath.length &&
        seen.path.every((part, index) => refs.currentPath[index] === part);
      return recursive ? { $ref: seen.path.join("/") } : ignoreOverride;
    },
  }) as Record<string, unknown>;
}

function toJsonSchema(schema: ZodObjectSchema, major: "zod4" | "zod3"): Record<string, unknown> {
  const converted =
    major === "zod4"
      ? (toJSONSchema4(schema as z4.$ZodObject, { io: "input" }) as Record<string, unknown>)
      : zod3ToJsonSchema(schema as Zod3ObjectSchema);
  const { $schema: _dialect, ...jsonSchema } = converted;
  if (jsonSchema.type !== "object") {
    // Never send the model an empty schema that would accept anything.
    throw new Error(`expected an object schema, got ${JSON.stringify(jsonSchema).slice(0, 200)}`);
  }
  return jsonSchema;
}

function formatZodIssues(issues: readonly Issue[]): string {
  return formatIssues(
    issues.map((issue) => {
      const path = issue.path.map(String).join(".");
      return `${path === "" ? "(root)" : path}: ${issue.message}`;
    }),
  );
}

// zod reads a declared property as `input[name]`: for a property named like a member of
// Object.prototype (`constructor`, `toString`, `valueOf` …), `{}` would answer with the
// prototype's (an optional `constructor: z.string()` refused `{}`, a required `toString` passed
// without it). A tool that declares such a name parses a copy of the arguments whose objects have
// no prototype — only its own properties are there to read — and receives its objects back with
// the usual prototype. Other tools parse the arguments as they are (no copy).

const PROTOTYPE_NAMES: ReadonlySet<string> = new Set(Object.getOwnPropertyNames(Object.prototype));

/** `true` when a `properties` map anywhere in the (converted, JSON) schema declares a name Object.prototype has. */
function declaresPrototypeName(schema: Record<string, unknown>): boolean {
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const value = stack.pop();
    if (Array.isArray(value)) {
      stack.push(...value);
    } else if (isPlainObject(value)) {
      const { properties } = value;
      if (isPlainObject(properties) && Object.keys(properties).some((name) => PROTOTYPE_NAMES.has(name))) return true;
      for (const key of Object.keys(value)) stack.push(value[key]);
    }
  }
  return false;
}

/** A deep copy whose plain objects have no prototype (recorded in `made`); other values as they are. */
function withoutPrototypes(value: unknown, made: WeakSet<object>): unknown {
  if (Array.isArray(value)) return value.map((item) => withoutPrototypes(item, made));
  if (!isPlainObject(value)) return value;
  const copy = Object.create(null) as Record<string, unknown>;
  for (const key of Object.keys(value)) copy[key] = withoutPrototypes(value[key], made);
  made.add(copy);
  return copy;
}

/** zod's output with every object of `made` (passed through by `z.any()`, `z.unknown()` …) back to a plain `{}`. */
function withPrototypes(value: unknown, made: WeakSet<object>): unknown {
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) value[index] = withPrototypes(value[index], made);
    return value;
  }
  // Scalars and class instances (a zod transform's Date …) as they are.
  if (!isPlainObject(value)) return value;
  // A copy of ours becomes a fresh `{}`; zod's own (fresh) objects are fixed in place.
  const target: Record<string, unknown> = made.has(value) ? {} : value;
  for (const key of Object.keys(value)) {
    // defineProperty: an own "__proto__" key stays a key, never a prototype.
    const data = withPrototypes(value[key], made);
    Object.defineProperty(target, key, { value: data, enumerable: true, writable: true, configurable: true });
  }
  return target;
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
  const major = zodObjectMajor(schema);
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
    parameters = toJsonSchema(schema, major);
  } catch (error) {
    throw new TypeError(
      `defineTool(${showValue(name)}): the schema cannot be converted to JSON Schema: ${errorMessage(error)}`,
      { cause: error },
    );
  }

  type Args = InferToolArgs<Schema> & Record<string, unknown>;
  const safeParse = (args: unknown) =>
    major === "zod4" ? safeParse4(schema as z4.$ZodObject, args) : (schema as Zod3ObjectSchema).safeParse(args);
  const parse = declaresPrototypeName(parameters)
    ? (args: Record<string, unknown>) => {
        const made = new WeakSet<object>();
        const parsed = safeParse(withoutPrototypes(args, made));
        return parsed.success ? { success: true as const, data: withPrototypes(parsed.data, made) } : parsed;
      }
    : safeParse;
  const tool: DefinedTool<Args, Schema> = {
    name,
    description,
    parameters,
    schema,
    ...(loopBreaking === true ? { loopBreaking } : {}),
    ...(needsApproval === undefined || needsApproval === false ? {} : { needsApproval }),
    parseArguments(args) {
      const parsed = parse(args);
      return parsed.success
        ? { success: true, data: parsed.data as Record<string, unknown> }
        : { success: false, error: formatZodIssues(parsed.error.issues) };
    },
    execute(args: Args, context: ToolContext) {
      const value = execute(args, context);
      return value instanceof Promise ? value.then(toToolResult) : toToolResult(value);
    },
  };
  const direct: DirectExecute = { method: tool.execute, execute: execute as DirectExecute["execute"] };
  Object.defineProperty(tool, DIRECT_EXECUTE, { value: direct });
  return tool;
}
