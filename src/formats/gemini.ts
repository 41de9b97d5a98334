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

// ─── A bound on what one conversion produces ────────────────────────────────────────────────────
//
// Gemini's schema has no references, so every `$ref` is expanded where it stands. A recursive
// reference is cut where it repeats on the path, but schemas whose definitions refer to each other
// still expand along every path that visits them in a new order: a 2 KB schema of 8 definitions
// that all refer to each other made 2.4 MB in 1.2 s, growing factorially beyond (a tool imported
// from an MCP server passes the registry's limits with it: validation checks a cycle once per
// level of the value, not once per path). So a conversion counts the characters it produces, as
// JSON, and stops at OUTPUT_CHARS_MIN or OUTPUT_CHARS_PER_INPUT_CHAR × the schema's own size,
// whichever is more. A schema that does not fit is converted again with fewer nested `$ref`
// expansions on one path (REF_DEPTHS), each attempt stopped at the bound too; the last one cuts
// whatever still does not fit. What is cut is sent as a loose schema saying so: the model sees
// less detail there, and the tool still checks its arguments against its full schema.

/** Characters (as JSON) any schema may take once converted. */
const OUTPUT_CHARS_MIN = 100_000;
/** Characters a schema may take once converted, per character of the schema itself. */
const OUTPUT_CHARS_PER_INPUT_CHAR = 4;
/** Most nested `$ref` expansions on one path, tried in turn until the conversion fits; then none. */
const REF_DEPTHS = [Number.POSITIVE_INFINITY, 4, 3, 2, 1] as const;
/** Deepest nesting converted (Gemini's schemas are trees; a deeper part is cut). */
const MAX_DEPTH = 100;
/** Values of a non-string `enum` listed in a description. */
const MAX_ENUM_VALUES_SHOWN = 20;
/** Why a part is cut to keep the conversion within its bound. */
const TOO_LARGE = "the tool's schema is too large to send expanded";
/** The description of a part cut to keep the conversion within its bound. */
const SHORTENED = `not shown in full: ${TOO_LARGE}`;

/** Thrown (and caught) when an attempt is over the bound. */
const OVER_BOUND = Symbol("over the output bound");

interface Context {
  root: Record<string, unknown>;
  /** `$ref`s being expanded on the current path: a repeat means a recursive schema. */
  expanding: Set<string>;
  /** Characters this conversion may still produce. */
  left: number;
  /** Most nested `$ref` expansions on one path in this attempt. */
  maxRefs: number;
  /** Nesting of the current node. */
  depth: number;
  /** The last attempt: it cuts what does not fit rather than give up. */
  last: boolean;
  /** `showValue` of a value already shown (a value reached through many references is read once). */
  shown: Map<unknown, string>;
}

/** Takes `chars` from the bound: `false` (or, in an attempt that may fail, a throw) once it is spent. */
function spend(context: Context, chars: number): boolean {
  context.left -= chars;
  if (context.left >= 0) return true;
  if (!context.last) throw OVER_BOUND;
  return false;
}

/** Characters of one converted node as JSON, its subschemas excepted (they count themselves). */
function ownChars(schema: GeminiSchema): number {
  let chars = 2;
  for (const [key, value] of Object.entries(schema)) {
    chars += key.length + 4;
    if (typeof value === "string") chars += value.length;
    else if (typeof value === "number") chars += 24;
    else if (Array.isArray(value)) for (const item of value) chars += typeof item === "string" ? item.length + 3 : 1;
    else if (key === "properties" && isPlainObject(value))
      for (const name of Object.keys(value)) chars += name.length + 4;
  }
  return chars;
}

/** The type a part cut from the conversion is sent with, when its schema names one plainly. */
function cutType(node: unknown): GeminiSchemaType | undefined {
  if (!isPlainObject(node)) return undefined;
  const type = typeOf(node.type);
  if (type !== undefined) return type;
  if (isPlainObject(node.properties)) return "OBJECT";
  return node.items !== undefined || node.prefixItems !== undefined ? "ARRAY" : undefined;
}

/** What is sent for a part cut to keep the conversion within its bound. */
function shortened(node: unknown, context: Context): GeminiSchema {
  const cut: GeminiSchema = {};
  const type = cutType(node);
  if (type !== undefined) cut.type = type;
  cut.description = SHORTENED;
  context.left -= ownChars(cut);
  return cut;
}

/** Input characters, roughly as JSON, each object counted once (a shared or cyclic object too). */
function inputChars(schema: unknown): number {
  let chars = 0;
  const seen = new Set<object>();
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === "string") chars += value.length + 2;
    else if (typeof value !== "object" || value === null) chars += 4;
    else if (!seen.has(value)) {
      seen.add(value);
      chars += 2;
      if (Array.isArray(value)) for (const item of value) stack.push(item);
      else {
        for (const key of Object.keys(value)) {
          chars += key.length + 3;
          stack.push((value as Record<string, unknown>)[key]);
        }
      }
    }
  }
  return chars;
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

/** Keywords that apply to values of one type only (or two, for numbers). */
const TYPE_KEYWORDS: Readonly<Record<string, readonly GeminiSchemaType[]>> = {
  properties: ["OBJECT"],
  required: ["OBJECT"],
  minProperties: ["OBJECT"],
  maxProperties: ["OBJECT"],
  items: ["ARRAY"],
  prefixItems: ["ARRAY"],
  minItems: ["ARRAY"],
  maxItems: ["ARRAY"],
  pattern: ["STRING"],
  minLength: ["STRING"],
  maxLength: ["STRING"],
  minimum: ["NUMBER", "INTEGER"],
  maximum: ["NUMBER", "INTEGER"],
  exclusiveMinimum: ["NUMBER", "INTEGER"],
  exclusiveMaximum: ["NUMBER", "INTEGER"],
};

/** `node` for the branch of a type list that takes `type`: without another type's keywords. */
function branchOf(node: Record<string, unknown>, type: GeminiSchemaType, name: unknown): Record<string, unknown> {
  const entries = Object.entries(node).filter(
    ([key]) =>
      key !== "description" &&
      key !== "default" &&
      key !== "type" &&
      (!Object.hasOwn(TYPE_KEYWORDS, key) || (TYPE_KEYWORDS[key] as readonly GeminiSchemaType[]).includes(type)),
  );
  // Object.fromEntries: a "__proto__" key stays a key.
  return Object.fromEntries([...entries, ["type", name]]);
}

/** Converts `nodes` in order; the last attempt stops once the bound is spent (the result is shorter then). */
function convertEach(nodes: readonly unknown[], context: Context): GeminiSchema[] {
  const converted: GeminiSchema[] = [];
  for (const node of nodes) {
    if (context.last && context.left <= 0) break;
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

function convertObject(node: Record<string, unknown>, context: Context): GeminiSchema {
  if (typeof node.$ref === "string") {
    const ref = node.$ref;
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
      if (result.anyOf.length < branches.length) result.anyOf.push(shortened(undefined, context));
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
    if (result.anyOf.length < typed.length) result.anyOf.push(shortened(undefined, context));
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

  const enumValues = Array.isArray(node.enum) ? node.enum : node.const !== undefined ? [node.const] : undefined;
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
    const all = Object.entries(node.properties).filter(([, value]) => value !== false);
    const converted = convertEach(
      all.map(([, value]) => value),
      context,
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
      if (converted.length < items.length) converted.push(shortened(undefined, context));
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
