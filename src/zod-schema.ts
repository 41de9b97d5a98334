// `zod/v4/core` exists in zod 4 and in zod 3.25+ (which ships zod 4 beside zod 3), so this import
// works whichever major the user installed; it is the same module the user's zod 4 schemas use.
import type * as z4 from "zod/v4/core";
import { safeParse as safeParse4, toJSONSchema as toJSONSchema4 } from "zod/v4/core";
import { isPlainObject } from "./internal/describe.js";
import { require } from "./internal/require.js";
import { formatIssues } from "./internal/validation-messages.js";

/**
 * A zod 3 (3.25+) schema (from `"zod"` 3 or `"zod/v3"`), described by its shape rather than by
 * zod 3's classes, so that a schema from any installed copy of zod 3 fits.
 */
export interface Zod3Schema {
  /** zod 3's definition; `typeName` is its class name (`"ZodObject"` …). */
  readonly _def: {
    /** The zod 3 class name (`"ZodObject"` …). */
    readonly typeName: string;
  };
  /** The parsed type (type-level only). */
  readonly _output: unknown;
  /** The input type (type-level only). */
  readonly _input: unknown;
  /** Validates a value (zod 3's method). */
  safeParse(data: unknown): Zod3SafeParseResult;
}

type Zod3SafeParseResult =
  | { success: true; data: unknown }
  | { success: false; error: { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }> } };

/** A zod 4 or a zod 3 (3.25+) schema of any type. */
export type ZodSchema = z4.$ZodType | Zod3Schema;

/** The parsed (output) type of a zod 4 or zod 3 schema; `unknown` for anything else. */
export type InferZod<Schema> = Schema extends { _zod: unknown }
  ? z4.output<Schema>
  : Schema extends Zod3Schema
    ? Schema["_output"]
    : unknown;

/** Which major a zod schema belongs to. @internal */
export type ZodMajor = "zod4" | "zod3";

/** A check of a value: its parsed value, or one line the model can act on. @internal */
export type ZodCheck = { success: true; data: unknown } | { success: false; error: string };

/**
 * `"zod4"` or `"zod3"` for a schema of that major (told apart by shape: zod 4 schemas have `_zod`),
 * with `objectOnly` only for an object schema; `undefined` otherwise. @internal
 */
export function zodMajor(value: unknown, objectOnly: boolean): ZodMajor | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { _zod: internals, _def: def } = value as {
    _zod?: { def?: { type?: unknown } };
    _def?: { typeName?: unknown };
  };
  if (internals !== undefined) {
    const type = internals?.def?.type;
    return (objectOnly ? type === "object" : typeof type === "string") ? "zod4" : undefined;
  }
  const typeName = def?.typeName;
  return (objectOnly ? typeName === "ZodObject" : typeof typeName === "string") &&
    typeof (value as { safeParse?: unknown }).safeParse === "function"
    ? "zod3"
    : undefined;
}

// zod-to-json-schema (a CommonJS package) is loaded when the first zod 3 schema is seen, so that
// apps on zod 4 never load it. It must never see a zod 4 schema: it returns an empty schema for one.
type ZodToJsonSchemaModule = typeof import("zod-to-json-schema");
let zodToJsonSchemaModule: ZodToJsonSchemaModule | undefined;

function zod3ToJsonSchema(schema: Zod3Schema): Record<string, unknown> {
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

/**
 * The JSON Schema of a zod schema (input side, without `$schema`): zod 4's `toJSONSchema`, or
 * `zod-to-json-schema` for zod 3. With `objectOnly`, throws unless it is an object schema. @internal
 */
export function zodToJsonSchema(schema: ZodSchema, major: ZodMajor, objectOnly: boolean): Record<string, unknown> {
  const converted =
    major === "zod4"
      ? (toJSONSchema4(schema as z4.$ZodType, { io: "input" }) as Record<string, unknown>)
      : zod3ToJsonSchema(schema as Zod3Schema);
  const { $schema: _dialect, ...jsonSchema } = converted;
  if (objectOnly && jsonSchema.type !== "object") {
    // Never send the model an empty schema that would accept anything.
    throw new Error(`expected an object schema, got ${JSON.stringify(jsonSchema).slice(0, 200)}`);
  }
  return jsonSchema;
}

type Issue = { readonly path: ReadonlyArray<PropertyKey>; readonly message: string };

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
// without it). A schema that declares such a name parses a copy of the value whose objects have
// no prototype — only its own properties are there to read — and gives its objects back with the
// usual prototype. Other schemas parse the value as it is (no copy).

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

/**
 * The validator of a zod schema (`jsonSchema`: its conversion): zod's `safeParse`, its issues
 * made into one bounded line (see `formatIssues`). @internal
 */
export function zodValidator(
  schema: ZodSchema,
  major: ZodMajor,
  jsonSchema: Record<string, unknown>,
): (value: unknown) => ZodCheck {
  const safeParse = (value: unknown) =>
    major === "zod4" ? safeParse4(schema as z4.$ZodType, value) : (schema as Zod3Schema).safeParse(value);
  const parse = declaresPrototypeName(jsonSchema)
    ? (value: unknown) => {
        const made = new WeakSet<object>();
        const parsed = safeParse(withoutPrototypes(value, made));
        return parsed.success ? { success: true as const, data: withPrototypes(parsed.data, made) } : parsed;
      }
    : safeParse;
  return (value) => {
    const parsed = parse(value);
    return parsed.success
      ? { success: true, data: parsed.data }
      : { success: false, error: formatZodIssues(parsed.error.issues) };
  };
}
