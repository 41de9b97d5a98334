import { isRecord } from "./describe.js";
import { isSchemaValue } from "./ref-resolver.js";

// ─── Keys named __proto__, which Ajv skips ──────────────────────────────────────────────────────
//
// Ajv never reads a key named `__proto__` of `properties` or `dependencies` (it would reach the
// prototype): the compiled copy of a schema holds such an entry in a form Ajv checks.

const twinned = new WeakSet<object>();

/**
 * Ajv skips a property named `__proto__` in `properties` (it would read the prototype): its
 * schema would never be checked, and with `additionalProperties: false` the property would be
 * refused. The same subschema under `patternProperties` for exactly that name applies to the
 * value's own `__proto__` key. Only ever called on the copy of the schema that is compiled.
 */
export function withOwnProtoProperty(schema: Record<string, unknown>): void {
  const { properties } = schema;
  if (!isRecord(properties) || !Object.hasOwn(properties, "__proto__") || !Object.hasOwn(schema, "properties")) return;
  // A subschema reached under two base URIs is expanded twice, and given its twin once.
  if (twinned.has(schema)) return;
  twinned.add(schema);
  const own = Object.getOwnPropertyDescriptor(properties, "__proto__")?.value as unknown;
  const existing = Object.hasOwn(schema, "patternProperties") ? schema.patternProperties : undefined;
  if (existing !== undefined && !isRecord(existing)) return; // invalid: Ajv refuses it
  const patterns: Record<string, unknown> = { ...existing };
  const key = "^__proto__$";
  patterns[key] = Object.hasOwn(patterns, key) ? { allOf: [patterns[key], own] } : own;
  schema.patternProperties = patterns;
}

/**
 * Ajv skips a `dependencies` entry keyed `__proto__` (draft-07's form; `dependentRequired` and
 * `dependentSchemas` check it): `{ dependencies: { __proto__: ["b"] } }` would accept
 * `{ "__proto__": 1 }`. The entry moves to `allOf` as the same condition — if the value has its
 * own `__proto__`, it must have the names (or match the schema). Only ever called on the copy of
 * the schema that is compiled.
 */
export function withOwnProtoDependency(schema: Record<string, unknown>): void {
  const { dependencies } = schema;
  if (!isRecord(dependencies) || !Object.hasOwn(dependencies, "__proto__") || !Object.hasOwn(schema, "dependencies")) {
    return;
  }
  const existing = Object.hasOwn(schema, "allOf") ? schema.allOf : [];
  if (!Array.isArray(existing)) return; // invalid: Ajv refuses it
  const dependency = Object.getOwnPropertyDescriptor(dependencies, "__proto__")?.value as unknown;
  const then = Array.isArray(dependency) ? { required: dependency } : dependency;
  if (!isSchemaValue(then)) return; // invalid: Ajv refuses it
  const rest: Record<string, unknown> = {};
  for (const key of Object.keys(dependencies)) if (key !== "__proto__") rest[key] = dependencies[key];
  schema.dependencies = rest;
  schema.allOf = [...existing, { if: { required: ["__proto__"] }, then }];
}
