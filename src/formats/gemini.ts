/**
 * Tool definitions in Gemini's format, without the SDK: `functionDeclarations` whose `parameters`
 * use the OpenAPI 3.0 subset Gemini accepts (its `Schema` type), converted from JSON Schema.
 * @module
 */

import { isPlainObject, showValue } from "../internal/describe.js";
import { resolveLocalRef } from "../internal/json-pointer.js";
import type { ToolDefinition } from "../provider.js";

/** A type of Gemini's `Schema`, upper-case as the official SDK sends it. */
export type GeminiSchemaType = "STRING" | "NUMBER" | "INTEGER" | "BOOLEAN" | "ARRAY" | "OBJECT";

/** The subset of OpenAPI 3.0 that Gemini's `FunctionDeclaration.parameters` accepts. */
export interface GeminiSchema {
  /** The value's type; absent for "any value". */
  type?: GeminiSchemaType;
  /** What the value means, for the model (constraints Gemini cannot express are appended here). */
  description?: string;
  /** Only `"enum"`/`"date-time"` for strings, `"int32"`/`"int64"` for integers, `"float"`/`"double"` for numbers. */
  format?: string;
  /** `true` when `null` is allowed too. */
  nullable?: boolean;
  /** String values only. */
  enum?: string[];
  /** An object's properties by name. */
  properties?: Record<string, GeminiSchema>;
  /** The names of an object's properties that must be present. */
  required?: string[];
  /** The schema of an array's items. */
  items?: GeminiSchema;
  /** The value matches at least one of these schemas. */
  anyOf?: GeminiSchema[];
  /** int64 counts are strings, as in the API's JSON (and the SDK's types). */
  minItems?: string;
  /** Most items of an array (int64 as a string). */
  maxItems?: string;
  /** Fewest characters of a string (int64 as a string). */
  minLength?: string;
  /** Most characters of a string (int64 as a string). */
  maxLength?: string;
  /** Fewest properties of an object (int64 as a string). */
  minProperties?: string;
  /** Most properties of an object (int64 as a string). */
  maxProperties?: string;
  /** Smallest allowed number (inclusive). */
  minimum?: number;
  /** Largest allowed number (inclusive). */
  maximum?: number;
  /** A regular expression a string must match. */
  pattern?: string;
}

/** One entry of Gemini's `tools: [{ functionDeclarations }]`. */
export interface GeminiFunctionDeclaration {
  /** The tool's name, as the model calls it. */
  name: string;
  /** What the tool does, for the model. */
  description: string;
  /** Absent for a tool without parameters (Gemini rejects an `OBJECT` with no properties there). */
  parameters?: GeminiSchema;
}

const TYPES: Readonly<Record<string, GeminiSchemaType>> = {
  string: "STRING",
  number: "NUMBER",
  integer: "INTEGER",
  boolean: "BOOLEAN",
  array: "ARRAY",
  object: "OBJECT",
};

// Gemini answers 400 ("only 'enum' and 'date-time' are supported for STRING type") for other formats.
const FORMATS: Readonly<Record<GeminiSchemaType, readonly string[]>> = {
  STRING: ["enum", "date-time"],
  INTEGER: ["int32", "int64"],
  NUMBER: ["float", "double"],
  BOOLEAN: [],
  ARRAY: [],
  OBJECT: [],
};

const COUNTS = ["minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties"] as const;

interface Context {
  root: Record<string, unknown>;
  /** `$ref`s being expanded on the current path: a repeat means a recursive schema. */
  expanding: Set<string>;
}

function typeOf(value: unknown): GeminiSchemaType | undefined {
  return typeof value === "string" && Object.hasOwn(TYPES, value) ? TYPES[value] : undefined;
}

/** The type of `enum`/`const` values when the schema names none (`undefined` when they are mixed). */
function typeOfValues(values: unknown[]): GeminiSchemaType | undefined {
  const present = values.filter((value) => value !== null);
  if (present.length === 0) return undefined;
  if (present.every((value) => typeof value === "string")) return "STRING";
  if (present.every((value) => typeof value === "boolean")) return "BOOLEAN";
  if (present.every((value) => Number.isInteger(value))) return "INTEGER";
  if (present.every((value) => typeof value === "number")) return "NUMBER";
  return undefined;
}

function isNullSchema(value: unknown): boolean {
  return isPlainObject(value) && value.type === "null";
}

/** Text appended to a description for constraints Gemini cannot express. */
function withNotes(description: string | undefined, notes: string[]): string | undefined {
  if (notes.length === 0) return description;
  const text = notes.join("; ");
  return description === undefined || description === "" ? text : `${description} (${text})`;
}

function convertNode(node: unknown, context: Context): GeminiSchema {
  if (!isPlainObject(node)) return {};

  if (typeof node.$ref === "string") {
    const ref = node.$ref;
    const target = resolveLocalRef(ref, context.root);
    const { $ref: _ref, ...siblings } = node;
    if (target === undefined || context.expanding.has(ref)) {
      // Gemini's `parameters` has no references: a recursive level becomes an untyped object.
      const cut: GeminiSchema = { type: "OBJECT" };
      const description = typeof siblings.description === "string" ? siblings.description : undefined;
      if (description !== undefined) cut.description = description;
      return cut;
    }
    context.expanding.add(ref);
    try {
      return convertNode(isPlainObject(target) ? { ...target, ...siblings } : siblings, context);
    } finally {
      context.expanding.delete(ref);
    }
  }

  if (Array.isArray(node.allOf) && node.allOf.length > 0) {
    const { allOf, ...rest } = node;
    return convertNode(mergeAllOf(rest, allOf), context);
  }

  const result: GeminiSchema = {};
  const notes: string[] = [];
  let description = typeof node.description === "string" ? node.description : undefined;

  // Nullability: `type: [T, "null"]`, or `anyOf`/`oneOf` with a `{ type: "null" }` branch.
  let types = Array.isArray(node.type) ? node.type.filter((t) => t !== "null") : [node.type];
  if (Array.isArray(node.type) && node.type.includes("null")) result.nullable = true;
  const unionKey = Array.isArray(node.anyOf) ? "anyOf" : Array.isArray(node.oneOf) ? "oneOf" : undefined;
  let branches = unionKey === undefined ? undefined : (node[unionKey] as unknown[]);
  if (branches?.some(isNullSchema)) {
    result.nullable = true;
    branches = branches.filter((branch) => !isNullSchema(branch));
  }

  if (branches !== undefined && branches.length > 0) {
    if (branches.length === 1) {
      // One branch left: it is the schema (its own description, if any, yields to the outer one).
      const inner = convertNode(branches[0], context);
      Object.assign(result, inner, result.nullable ? { nullable: true } : {});
      if (description === undefined) description = inner.description;
    } else {
      result.anyOf = branches.map((branch) => convertNode(branch, context));
    }
  } else if (types.length > 1) {
    // `type: ["string", "number"]` → one branch per type (Gemini has no type lists).
    result.anyOf = types.flatMap((t) => {
      const type = typeOf(t);
      if (type === undefined) return [];
      const { description: _description, default: _default, ...branch } = node;
      return [convertNode({ ...branch, type: t }, context)];
    });
    types = [];
  }

  if (result.anyOf === undefined) {
    let type = typeOf(types[0]) ?? result.type;
    if (type === undefined) {
      if (isPlainObject(node.properties)) type = "OBJECT";
      else if (node.items !== undefined || node.prefixItems !== undefined) type = "ARRAY";
      else type = typeOfValues(Array.isArray(node.enum) ? node.enum : node.const !== undefined ? [node.const] : []);
    }
    if (type !== undefined) result.type = type;
    addConstraints(node, result, notes, context);
  }

  if (node.default !== undefined) notes.push(`default: ${showValue(node.default)}`);
  const finalDescription = withNotes(description, notes);
  if (finalDescription === undefined) delete result.description;
  else result.description = finalDescription;
  return result;
}

function mergeAllOf(base: Record<string, unknown>, parts: unknown[]): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...base };
  const properties: Array<[string, unknown]> = isPlainObject(base.properties) ? Object.entries(base.properties) : [];
  const required = new Set(Array.isArray(base.required) ? base.required : []);
  for (const part of parts) {
    if (!isPlainObject(part)) continue;
    for (const [key, value] of Object.entries(part)) {
      if (key === "properties" && isPlainObject(value)) properties.push(...Object.entries(value));
      else if (key === "required" && Array.isArray(value)) for (const name of value) required.add(name);
      else if (!(key in merged)) merged[key] = value;
    }
  }
  if (properties.length > 0) merged.properties = Object.fromEntries(properties);
  if (required.size > 0) merged.required = [...required];
  return merged;
}

function addConstraints(node: Record<string, unknown>, result: GeminiSchema, notes: string[], context: Context): void {
  const type = result.type;

  const enumValues = Array.isArray(node.enum) ? node.enum : node.const !== undefined ? [node.const] : undefined;
  if (enumValues !== undefined) {
    const values = enumValues.filter((value) => value !== null);
    if (values.length > 0 && values.every((value) => typeof value === "string") && (type ?? "STRING") === "STRING") {
      result.enum = values as string[];
    } else if (values.length > 0) {
      // Gemini's enum takes strings only.
      notes.push(
        values.length === 1 ? `must be ${showValue(values[0])}` : `one of ${values.map(showValue).join(", ")}`,
      );
    }
    if (values.length < enumValues.length) result.nullable = true;
  }

  if (typeof node.format === "string" && node.format !== "") {
    if (type !== undefined && FORMATS[type].includes(node.format)) result.format = node.format;
    else notes.push(`format: ${node.format}`);
  }
  if (typeof node.pattern === "string") result.pattern = node.pattern;
  for (const key of COUNTS) {
    const value = node[key];
    if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) result[key] = String(value);
  }
  if (typeof node.minimum === "number" && Number.isFinite(node.minimum)) result.minimum = node.minimum;
  if (typeof node.maximum === "number" && Number.isFinite(node.maximum)) result.maximum = node.maximum;
  if (typeof node.exclusiveMinimum === "number") notes.push(`greater than ${node.exclusiveMinimum}`);
  if (typeof node.exclusiveMaximum === "number") notes.push(`less than ${node.exclusiveMaximum}`);

  if (isPlainObject(node.properties)) {
    const entries = Object.entries(node.properties).filter(([, value]) => value !== false);
    // Object.fromEntries defines own keys, so a property named "__proto__" stays a property.
    result.properties = Object.fromEntries(entries.map(([key, value]) => [key, convertNode(value, context)]));
    if (Array.isArray(node.required)) {
      const names = new Set(entries.map(([key]) => key));
      const required = node.required.filter((name): name is string => typeof name === "string" && names.has(name));
      if (required.length > 0) result.required = [...new Set(required)];
    }
  }

  if (type === "ARRAY") {
    const items = Array.isArray(node.prefixItems) ? node.prefixItems : node.items;
    if (Array.isArray(items)) {
      // Tuples: Gemini's `items` is one schema, so each position becomes a branch.
      const converted = items.map((item) => convertNode(item, context));
      if (converted.length === 1) result.items = converted[0] as GeminiSchema;
      else if (converted.length > 1) result.items = { anyOf: converted };
    } else if (items !== undefined) {
      result.items = convertNode(items, context);
    }
  }
}

/**
 * Converts a JSON Schema (as zod's `z.toJSONSchema` or a hand-written tool makes it) to the OpenAPI
 * 3.0 subset Gemini's `FunctionDeclaration.parameters` accepts: upper-case types; `$ref` expanded
 * inline (a recursive level becomes a plain `OBJECT`); `allOf` merged; `type: [T, "null"]` and
 * `anyOf`/`oneOf` with a null branch → `nullable`; `oneOf` → `anyOf`; `const` → a one-value `enum`.
 * Keywords Gemini rejects are dropped (`$schema`, `additionalProperties`, `title`, `examples`,
 * `not`, `if`, …); constraints the model should still know (`default`, non-string `enum` values,
 * unsupported `format`s, exclusive bounds) are appended to `description`.
 */
export function toGeminiSchema(schema: Record<string, unknown>): GeminiSchema {
  return convertNode(schema, { root: schema, expanding: new Set() });
}

function isEmptyObjectSchema(schema: GeminiSchema): boolean {
  return schema.type === "OBJECT" && (schema.properties === undefined || Object.keys(schema.properties).length === 0);
}

/**
 * Gemini's `functionDeclarations` for these definitions, in the same order. A tool without
 * parameters gets no `parameters` (Gemini rejects an `OBJECT` without properties there).
 * Returns new objects on every call: the official SDK rewrites declarations in place.
 *
 * @example
 * ```ts
 * const config = { tools: [{ functionDeclarations: toGeminiTools(registry.getDefinitions()) }] };
 * ```
 */
export function toGeminiTools(defs: readonly ToolDefinition[]): GeminiFunctionDeclaration[] {
  return defs.map(({ function: fn }) => {
    const declaration: GeminiFunctionDeclaration = { name: fn.name, description: fn.description };
    const parameters = toGeminiSchema(isPlainObject(fn.parameters) ? fn.parameters : {});
    if (!isEmptyObjectSchema(parameters) && Object.keys(parameters).length > 0) declaration.parameters = parameters;
    return declaration;
  });
}
