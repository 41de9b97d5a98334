/**
 * OpenAI tool formats without the SDK: Chat Completions and Responses tool definitions, the
 * strict-mode schema conversion, and the removal of the nulls strict mode makes the model send.
 * @module
 */

import { isPlainObject, isRecord } from "../internal/describe.js";
import { resolveLocalRef } from "../internal/json-pointer.js";
import type { ToolDefinition } from "../provider.js";

type JsonObject = Record<string, unknown>;

const ANNOTATIONS = new Set(["title", "description", "default", "examples", "deprecated", "$comment"]);

/** Options of the OpenAI tool-definition converters. */
export interface OpenAIToolFormatOptions {
  /**
   * Make every schema strict-compatible ({@link toOpenAIStrictSchema}) and mark the tool `strict: true`.
   * @default false
   */
  strict?: boolean;
}

/** A Chat Completions function tool: `{ type: "function", function: { name, description, parameters, strict? } }`. */
export interface OpenAIChatFunctionTool {
  /** Always `"function"`. */
  type: "function";
  /** The function the model may call. */
  function: {
    /** The tool's name, as the model calls it. */
    name: string;
    /** What the tool does, for the model. */
    description: string;
    /** The JSON Schema of the tool's arguments. */
    parameters: Record<string, unknown>;
    /** Present (`true`) only in strict mode; Chat Completions treats an omitted `strict` as `false`. */
    strict?: boolean;
  };
}

/** A Responses API function tool: flat `{ type: "function", name, description, parameters, strict }`. */
export interface OpenAIResponsesFunctionTool {
  /** Always `"function"`. */
  type: "function";
  /** The tool's name, as the model calls it. */
  name: string;
  /** What the tool does, for the model. */
  description: string;
  /** The JSON Schema of the tool's arguments (strict-compatible when `strict` is `true`). */
  parameters: Record<string, unknown>;
  /** Always sent: the Responses API treats an omitted `strict` as `true`. */
  strict: boolean;
}

function hasType(schema: JsonObject, type: string): boolean {
  return schema.type === type || (Array.isArray(schema.type) && schema.type.includes(type));
}

/** An object schema whose `properties` strict mode must close: `type` object or no `type` at all. */
function isPropertiesObject(schema: JsonObject): schema is JsonObject & { properties: JsonObject } {
  return isRecord(schema.properties) && (schema.type === undefined || hasType(schema, "object"));
}

/**
 * What {@link acceptsNull} found for each schema object in one conversion: a schema many
 * references lead to is read once (read again for each, 1,000 properties referring to a chain of
 * 1,000 definitions took over a second).
 */
type NullAnswers = Map<object, boolean>;

/**
 * Longest chain of `$ref`s and branches {@link acceptsNull} follows; past it a schema counts as
 * accepting `null` — the safe answer: the property is not made nullable, and a `null` is not removed.
 */
const MAX_NULL_CHECK_DEPTH = 64;

/**
 * `true` when `schema` accepts `null` as far as its `type`, `enum`, `const`, `$ref`, `anyOf`,
 * `oneOf` and `allOf` tell; an unconstrained schema (`{}`, `true`) accepts it.
 */
function acceptsNull(schema: unknown, root: unknown, answers: NullAnswers, depth = 0): boolean {
  if (schema === false) return false;
  if (!isRecord(schema)) return true;
  const known = answers.get(schema);
  if (known !== undefined) return known;
  if (depth >= MAX_NULL_CHECK_DEPTH) return true;
  // A reference back to a schema being read (a cycle no validator accepts either) reads as `true`.
  answers.set(schema, true);
  const answer = readsNull(schema, root, answers, depth + 1);
  answers.set(schema, answer);
  return answer;
}

function readsNull(schema: JsonObject, root: unknown, answers: NullAnswers, depth: number): boolean {
  if ("type" in schema && !hasType(schema, "null")) return false;
  if (Array.isArray(schema.enum) && !schema.enum.includes(null)) return false;
  if ("const" in schema && schema.const !== null) return false;
  if (typeof schema.$ref === "string") {
    const target = resolveLocalRef(schema.$ref, root);
    if (target !== undefined && !acceptsNull(target, root, answers, depth)) return false;
  }
  for (const key of ["anyOf", "oneOf"] as const) {
    const branches = schema[key];
    if (Array.isArray(branches) && !branches.some((branch) => acceptsNull(branch, root, answers, depth))) return false;
  }
  const { allOf } = schema;
  if (Array.isArray(allOf) && !allOf.every((branch) => acceptsNull(branch, root, answers, depth))) return false;
  // Strict mode reads a typeless schema with properties as an object.
  if (!("type" in schema) && isRecord(schema.properties)) return false;
  return true;
}

/** Makes an (already converted) schema also accept `null`. */
function makeNullable(schema: unknown): unknown {
  if (!isRecord(schema)) return { anyOf: [schema, { type: "null" }] };
  const simpleType = !("enum" in schema) && !("const" in schema) && !("anyOf" in schema) && !("$ref" in schema);
  if (simpleType && typeof schema.type === "string") return { ...schema, type: [schema.type, "null"] };
  if (simpleType && Array.isArray(schema.type)) return { ...schema, type: [...schema.type, "null"] };
  if (Array.isArray(schema.anyOf) && Object.keys(schema).every((key) => key === "anyOf" || key === "description")) {
    return { ...schema, anyOf: [...schema.anyOf, { type: "null" }] };
  }
  const { description, ...rest } = schema;
  return description === undefined
    ? { anyOf: [rest, { type: "null" }] }
    : { description, anyOf: [rest, { type: "null" }] };
}

function strictNode(node: unknown, root: unknown, answers: NullAnswers): unknown {
  if (!isRecord(node)) return node;
  const schema: JsonObject = { ...node };

  if (isPropertiesObject(schema)) {
    const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
    // Object.fromEntries defines own keys, so a property named "__proto__" stays a property.
    const properties: JsonObject = Object.fromEntries(
      Object.entries(schema.properties).map(([key, original]) => {
        const converted = strictNode(original, root, answers);
        return [key, required.has(key) || acceptsNull(original, root, answers) ? converted : makeNullable(converted)];
      }),
    );
    schema.properties = properties;
    schema.required = Object.keys(properties);
    schema.additionalProperties = false;
  } else if (hasType(schema, "object") && schema.properties === undefined) {
    // An object without declared properties: strict mode only accepts it closed and empty.
    // A record (`additionalProperties: {schema}`) cannot be made strict; it is left for the API to reject.
    if (schema.additionalProperties === undefined || schema.additionalProperties === true) {
      schema.properties = {};
      schema.required = [];
      schema.additionalProperties = false;
    }
  }
  if (isRecord(schema.additionalProperties))
    schema.additionalProperties = strictNode(schema.additionalProperties, root, answers);

  if (Array.isArray(schema.items)) schema.items = schema.items.map((item) => strictNode(item, root, answers));
  else if (isRecord(schema.items)) schema.items = strictNode(schema.items, root, answers);

  // Strict mode supports `anyOf` only; zod emits `oneOf` for discriminated unions, whose
  // branches exclude each other anyway.
  const branches = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (branches !== undefined) {
    const anyOf = branches.map((branch) => strictNode(branch, root, answers));
    delete schema.oneOf;
    schema.anyOf = anyOf;
  }
  if (Array.isArray(schema.allOf)) {
    const allOf = schema.allOf.map((branch) => strictNode(branch, root, answers));
    const [only] = allOf;
    const annotationsOnly = Object.keys(schema).every((key) => key === "allOf" || ANNOTATIONS.has(key));
    if (allOf.length === 1 && isRecord(only) && annotationsOnly) {
      const { allOf: _merged, ...annotations } = schema;
      return { ...only, ...annotations };
    }
    schema.allOf = allOf;
  }
  for (const key of ["$defs", "definitions"] as const) {
    const definitions = schema[key];
    if (isRecord(definitions)) {
      schema[key] = Object.fromEntries(
        Object.entries(definitions).map(([name, definition]) => [name, strictNode(definition, root, answers)]),
      );
    }
  }
  // A `null` default says nothing once every property is required.
  if (schema.default === null) delete schema.default;
  return schema;
}

/**
 * Converts a tool's JSON Schema to what OpenAI's strict mode accepts, without changing what a
 * valid call means: every object lists all its properties in `required` and gets
 * `additionalProperties: false`; a property that was optional and did not accept `null` becomes
 * nullable (`type: [T, "null"]`, or `anyOf: [T, {type: "null"}]`), so the model sends `null`
 * for "absent" — {@link stripNullsForOptional} turns those back into absent keys. Applies to
 * nested objects, array items, `anyOf`/`oneOf` branches (`oneOf` becomes `anyOf`), single
 * `allOf` and `$defs`/`definitions`. The input is not mutated.
 *
 * Not convertible, left for the API to reject: records (`additionalProperties: {…}` without
 * properties), tuples, and keywords strict mode does not support.
 *
 * @example
 * ```ts
 * toOpenAIStrictSchema({ type: "object", properties: { city: { type: "string" }, unit: { type: "string" } }, required: ["city"] });
 * // { type: "object", properties: { city: { type: "string" }, unit: { type: ["string", "null"] } },
 * //   required: ["city", "unit"], additionalProperties: false }
 * ```
 */
export function toOpenAIStrictSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const root: JsonObject = isRecord(schema) ? schema : {};
  const converted = strictNode(root.type === undefined ? { ...root, type: "object" } : root, root, new Map());
  return converted as Record<string, unknown>;
}

/** The branch of an `anyOf`/`oneOf` that `value` belongs to, when exactly one fits its kind and `const` keys. */
function pickBranch(branches: unknown[], value: unknown, root: unknown): unknown {
  const fits = branches.filter((branch) => {
    const schema = isRecord(branch) && typeof branch.$ref === "string" ? resolveLocalRef(branch.$ref, root) : branch;
    if (!isRecord(schema)) return false;
    if (Array.isArray(value)) return hasType(schema, "array");
    if (!isRecord(value) || !(hasType(schema, "object") || isPropertiesObject(schema))) return false;
    const properties = isRecord(schema.properties) ? schema.properties : {};
    return Object.entries(properties).every(
      ([key, property]) =>
        !(isRecord(property) && "const" in property) || (Object.hasOwn(value, key) && value[key] === property.const),
    );
  });
  return fits.length === 1 ? fits[0] : undefined;
}

function stripNode(value: unknown, schema: unknown, root: unknown, depth: number, answers: NullAnswers): unknown {
  if (depth > 64 || !isRecord(schema) || value === null || typeof value !== "object") return value;
  if (typeof schema.$ref === "string") {
    const target = resolveLocalRef(schema.$ref, root);
    if (target !== undefined) return stripNode(value, target, root, depth + 1, answers);
  }
  const branches = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (branches !== undefined && !isRecord(schema.properties) && schema.items === undefined) {
    const branch = pickBranch(branches, value, root);
    return branch === undefined ? value : stripNode(value, branch, root, depth + 1, answers);
  }
  if (Array.isArray(value)) {
    const { items } = schema;
    if (Array.isArray(items))
      return value.map((item, index) => stripNode(item, items[index], root, depth + 1, answers));
    return isRecord(items) ? value.map((item) => stripNode(item, items, root, depth + 1, answers)) : value;
  }
  if (!isPlainObject(value) || !isPropertiesObject(schema)) return value;
  const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
  const entries: Array<[string, unknown]> = [];
  for (const [key, item] of Object.entries(value)) {
    const property = Object.hasOwn(schema.properties, key) ? schema.properties[key] : undefined;
    if (property === undefined) {
      entries.push([key, item]);
    } else if (item === null && !required.has(key) && !acceptsNull(property, root, answers)) {
      // the null strict mode made the model send for an optional field: the tool sees it absent
    } else {
      entries.push([key, stripNode(item, property, root, depth + 1, answers)]);
    }
  }
  // The keys are the model's: `result[key] = …` would make a "__proto__" key the copy's prototype.
  // Object.fromEntries defines each as an own data property instead.
  return Object.fromEntries(entries);
}

/**
 * Removes the `null`s a strict-mode model sends for properties that were optional in the tool's
 * original schema and do not accept `null` there, at any depth (nested objects, array items,
 * `$ref`s, and the `anyOf`/`oneOf` branch the value unambiguously belongs to). A `null` the
 * original schema allows is kept. Returns a new object; `args` is not mutated. Every key is copied
 * as an own data property, so a model-sent `"__proto__"` key stays data and never becomes a prototype.
 *
 * @param args the parsed arguments of a call made against {@link toOpenAIStrictSchema}`(originalSchema)`
 * @param originalSchema the tool's schema before the strict conversion
 */
export function stripNullsForOptional(
  args: Record<string, unknown>,
  originalSchema: Record<string, unknown>,
): Record<string, unknown> {
  const result = stripNode(args, originalSchema, originalSchema, 0, new Map());
  return isRecord(result) ? result : args;
}

/**
 * Tool definitions in the Chat Completions shape. Without `strict` the definitions are copied
 * unchanged; with it, each `parameters` goes through {@link toOpenAIStrictSchema} and the function
 * gets `strict: true`.
 */
export function toOpenAIChatTools(
  definitions: readonly ToolDefinition[],
  options: OpenAIToolFormatOptions = {},
): OpenAIChatFunctionTool[] {
  const strict = options.strict === true;
  return definitions.map(({ function: { name, description, parameters } }) => ({
    type: "function",
    function: strict
      ? { name, description, parameters: toOpenAIStrictSchema(parameters), strict: true }
      : { name, description, parameters },
  }));
}

/**
 * The definitions in the Responses API shape with their `parameters` as given and `strict: false`:
 * what `registry.getDefinitions("openai-responses")` returns. Apart from {@link toOpenAIResponsesTools}
 * so that the core entry, which never converts for strict mode, carries none of that conversion.
 */
export function toOpenAIResponsesToolsAsGiven(definitions: readonly ToolDefinition[]): OpenAIResponsesFunctionTool[] {
  return definitions.map(({ function: { name, description, parameters } }) => ({
    type: "function",
    name,
    description,
    parameters,
    strict: false,
  }));
}

/**
 * Tool definitions in the Responses API shape (flat, no nested `function`). `strict` is always
 * sent — `false` unless strict mode is on, because the API treats an omitted `strict` as `true`;
 * with strict mode each `parameters` goes through {@link toOpenAIStrictSchema}.
 *
 * @example
 * ```ts
 * toOpenAIResponsesTools(registry.getDefinitions());
 * // [{ type: "function", name: "get_weather", description: "…", parameters: {…}, strict: false }]
 * ```
 */
export function toOpenAIResponsesTools(
  definitions: readonly ToolDefinition[],
  options: OpenAIToolFormatOptions = {},
): OpenAIResponsesFunctionTool[] {
  const tools = toOpenAIResponsesToolsAsGiven(definitions);
  if (options.strict === true) {
    for (const tool of tools) {
      tool.parameters = toOpenAIStrictSchema(tool.parameters);
      tool.strict = true;
    }
  }
  return tools;
}
