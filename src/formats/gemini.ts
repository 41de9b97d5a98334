/**
 * Tool definitions in Gemini's format, without the SDK: `functionDeclarations` whose `parameters`
 * use the OpenAPI 3.0 subset Gemini accepts (its `Schema` type), converted from JSON Schema.
 * @module
 */

import { isPlainObject, showValue } from "../internal/describe.js";
import { resolveLocalRef } from "../internal/json-pointer.js";
import type { ToolDefinition } from "../provider.js";
import {
  type Context,
  cutType,
  inputChars,
  MAX_DEPTH,
  MAX_ENUM_VALUES_SHOWN,
  OUTPUT_CHARS_MIN,
  OUTPUT_CHARS_PER_INPUT_CHAR,
  OVER_BOUND,
  ownChars,
  REF_DEPTHS,
  SHORTENED,
  shortened,
  spend,
  TOO_LARGE,
} from "./gemini-bound.js";
import { type GeminiFunctionDeclaration, type GeminiSchema, type GeminiSchemaType, typeOf } from "./gemini-schema.js";

export type { GeminiFunctionDeclaration, GeminiSchema, GeminiSchemaType } from "./gemini-schema.js";

// Gemini answers 400 ("only 'enum' and 'date-time' are supported for STRING type") for other formats.
const FORMATS: Readonly<Partial<Record<GeminiSchemaType, readonly string[]>>> = {
  STRING: ["enum", "date-time"],
  INTEGER: ["int32", "int64"],
  NUMBER: ["float", "double"],
};

const COUNTS = ["minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties"] as const;

/** A node's `enum` values, or its `const` as one; `undefined` when it has neither. */
function enumOf(node: Record<string, unknown>): unknown[] | undefined {
  return Array.isArray(node.enum) ? node.enum : node.const !== undefined ? [node.const] : undefined;
}

/** The type of `enum`/`const` values when the schema names none (`undefined` when they are mixed). */
function typeOfValues(values: unknown[] = []): GeminiSchemaType | undefined {
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

/** Keywords that apply to values of one type only (or two, for numbers). */
const TYPE_KEYWORDS = new Map<string, readonly GeminiSchemaType[]>(
  (
    [
      [["OBJECT"], ["properties", "required", "minProperties", "maxProperties"]],
      [["ARRAY"], ["items", "prefixItems", "minItems", "maxItems"]],
      [["STRING"], ["pattern", "minLength", "maxLength"]],
      [
        ["NUMBER", "INTEGER"],
        ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"],
      ],
    ] as const
  ).flatMap(([types, keywords]) => keywords.map((keyword) => [keyword, types] as const)),
);

/** `node` for the branch of a type list that takes `type`: without another type's keywords. */
function branchOf(node: Record<string, unknown>, type: GeminiSchemaType, name: unknown): Record<string, unknown> {
  const entries = Object.entries(node).filter(
    ([key]) =>
      key !== "description" && key !== "default" && key !== "type" && (TYPE_KEYWORDS.get(key)?.includes(type) ?? true),
  );
  // Object.fromEntries: a "__proto__" key stays a key.
  return Object.fromEntries([...entries, ["type", name]]);
}

/**
 * Converts `nodes` in order; the last attempt stops once the bound is spent (the result is shorter
 * then, and ends with a {@link shortened} schema saying so when `marked`).
 */
function convertEach(nodes: readonly unknown[], context: Context, marked = true): GeminiSchema[] {
  const converted: GeminiSchema[] = [];
  for (const node of nodes) {
    if (context.last && context.left <= 0) {
      if (marked) converted.push(shortened(undefined, context));
      break;
    }
    converted.push(convertNode(node, context));
  }
  return converted;
}

function convertNode(node: unknown, context: Context): GeminiSchema {
  if (!isPlainObject(node)) return {};
  if (context.depth >= MAX_DEPTH || !spend(context, 2)) return shortened(node, context);
  context.depth++;
  try {
    return convertObject(node, context);
  } finally {
    context.depth--;
  }
}

/** A node with a `$ref`: its target expanded with the node's other keywords, or cut (recursive, or past the bound). */
function convertRef(node: Record<string, unknown>, ref: string, context: Context): GeminiSchema {
  const target = resolveLocalRef(ref, context.root);
  const { $ref: _ref, ...siblings } = node;
  const recursive = target === undefined || context.expanding.has(ref);
  // `expanding` holds the references expanded on this path, one each.
  if (recursive || context.expanding.size >= context.maxRefs) {
    // Gemini's `parameters` has no references: a recursive level becomes a schema of its type
    // (an object when it names none); one cut to fit the bound says so.
    const cut: GeminiSchema = {};
    const type = cutType(target) ?? (recursive ? "OBJECT" : undefined);
    if (type !== undefined) cut.type = type;
    const description = typeof siblings.description === "string" ? siblings.description : undefined;
    const text = recursive ? description : withNotes(description, [SHORTENED]);
    if (text !== undefined) cut.description = text;
    spend(context, ownChars(cut));
    return cut;
  }
  context.expanding.add(ref);
  try {
    return convertNode(isPlainObject(target) ? { ...target, ...siblings } : siblings, context);
  } finally {
    context.expanding.delete(ref);
  }
}

function convertObject(node: Record<string, unknown>, context: Context): GeminiSchema {
  if (typeof node.$ref === "string") return convertRef(node, node.$ref, context);

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
      result.anyOf = convertEach(branches, context);
    }
  } else if (types.length > 1) {
    // `type: ["string", "object"]` → one branch per type (Gemini has no type lists), each with the
    // keywords of its own type: a string branch never carries the object's properties (each type
    // copying them all would multiply the schema by the number of types at every level).
    const typed = types.flatMap((t) => {
      const type = typeOf(t);
      return type === undefined ? [] : [branchOf(node, type, t)];
    });
    result.anyOf = convertEach(typed, context);
    types = [];
  }

  if (result.anyOf === undefined) {
    const type = typeOf(types[0]) ?? result.type ?? cutType(node) ?? typeOfValues(enumOf(node));
    if (type !== undefined) result.type = type;
    addConstraints(node, result, notes, context);
  }

  if (node.default !== undefined) notes.push(`default: ${show(node.default, context)}`);
  const finalDescription = withNotes(description, notes);
  if (finalDescription === undefined) delete result.description;
  else result.description = finalDescription;
  spend(context, ownChars(result));
  return result;
}

/** `showValue`, once per value in a conversion (a value reached through many references is read once). */
function show(value: unknown, context: Context): string {
  let text = context.shown.get(value);
  if (text === undefined) {
    text = showValue(value);
    context.shown.set(value, text);
  }
  return text;
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

  const enumValues = enumOf(node);
  if (enumValues !== undefined) {
    const values = enumValues.filter((value) => value !== null);
    if (values.length > 0 && values.every((value) => typeof value === "string") && (type ?? "STRING") === "STRING") {
      result.enum = values as string[];
    } else if (values.length > 0) {
      // Gemini's enum takes strings only.
      const shown = values.slice(0, MAX_ENUM_VALUES_SHOWN).map((value) => show(value, context));
      const more = values.length - shown.length;
      notes.push(
        values.length === 1
          ? `must be ${shown[0]}`
          : `one of ${shown.join(", ")}${more > 0 ? `, … and ${more} more` : ""}`,
      );
    }
    if (values.length < enumValues.length) result.nullable = true;
  }

  if (typeof node.format === "string" && node.format !== "") {
    if (type !== undefined && FORMATS[type]?.includes(node.format)) result.format = node.format;
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
    const all = Object.entries(node.properties).filter(([, value]) => value !== false);
    const converted = convertEach(
      all.map(([, value]) => value),
      context,
      false,
    );
    const entries = all.slice(0, converted.length);
    if (entries.length < all.length)
      notes.push(`${all.length - entries.length} more properties not shown: ${TOO_LARGE}`);
    // Object.fromEntries defines own keys, so a property named "__proto__" stays a property.
    result.properties = Object.fromEntries(entries.map(([key], index) => [key, converted[index] as GeminiSchema]));
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
      const converted = convertEach(items, context);
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
 * inline (a recursive level becomes a schema of the definition's type, `OBJECT` when it names
 * none, one level down); `allOf` merged; `type: [T, "null"]` and `anyOf`/`oneOf` with a null
 * branch → `nullable`; `type: [A, B]` → `anyOf`, each branch with its own type's keywords;
 * `oneOf` → `anyOf`; `const` → a one-value `enum`. Keywords Gemini rejects are dropped (`$schema`,
 * `additionalProperties`, `title`, `examples`, `not`, `if`, …); constraints the model should still
 * know (`default`, non-string `enum` values — the first 20 —, unsupported `format`s, exclusive
 * bounds) are appended to `description`.
 *
 * The result is bounded: at most 100,000 characters as JSON, or 4 times the schema's own size when
 * that is more (expanding references along every path can otherwise grow factorially). A schema
 * that would be larger is converted with fewer nested `$ref` expansions, then with none, and what
 * still does not fit is cut; a cut part is sent as a loose schema (its type, when it names one)
 * whose description says `not shown in full: the tool's schema is too large to send expanded`.
 * Nesting deeper than 100 levels is cut likewise. Never throws.
 */
export function toGeminiSchema(schema: Record<string, unknown>): GeminiSchema {
  const bound = Math.max(OUTPUT_CHARS_MIN, OUTPUT_CHARS_PER_INPUT_CHAR * inputChars(schema));
  const shown = new Map<unknown, string>();
  const attempt = (maxRefs: number, last: boolean): GeminiSchema =>
    convertNode(schema, { root: schema, expanding: new Set(), left: bound, maxRefs, depth: 0, last, shown });
  for (const maxRefs of REF_DEPTHS) {
    try {
      return attempt(maxRefs, false);
    } catch (error) {
      if (error !== OVER_BOUND) throw error;
    }
  }
  // No reference expanded, and whatever still does not fit cut.
  return attempt(0, true);
}

function isEmptyObjectSchema(schema: GeminiSchema): boolean {
  return schema.type === "OBJECT" && (schema.properties === undefined || Object.keys(schema.properties).length === 0);
}

/**
 * Gemini's `functionDeclarations` for these definitions, in the same order, each schema converted
 * by {@link toGeminiSchema} (so bounded in size: a cut part is looser, and the registry still
 * validates calls against the full schema). A tool without parameters gets no `parameters`
 * (Gemini rejects an `OBJECT` without properties there).
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
