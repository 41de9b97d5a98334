import type { Ajv, Options, ValidateFunction } from "ajv";
import type { Ajv2019 } from "ajv/dist/2019.js";
import type { Ajv2020 } from "ajv/dist/2020.js";
import type { ParseArgumentsResult } from "../tool.js";
import { isRecord } from "./describe.js";
import {
  endPatternWork,
  linearRegExp,
  MAX_PATTERN_WORK,
  PATTERN_WORK_EXCEEDED,
  startPatternWork,
} from "./linear-regexp.js";
import { require } from "./require.js";
import { addCost, MEASURES, NO_COST, type SchemaCost, SchemaLimitError, subtractCost } from "./schema-cost.js";
import { analyseSchema, type SchemaAnalysis } from "./schema-limits.js";
import { withLinearUniqueItems } from "./unique-items.js";
import { formatAjvErrors } from "./validation-messages.js";

// Ajv (a CommonJS package) is loaded on the first JSON Schema compilation, not at import: it is
// the largest part of toolloop's start-up, and apps whose tools all use zod never need it.
type AjvClass = new (options: Options) => AnyAjv;
function loadAjv(dialect: Dialect): AjvClass {
  if (dialect === "2020-12") return (require("ajv/dist/2020.js") as { Ajv2020: AjvClass }).Ajv2020;
  if (dialect === "2019-09") return (require("ajv/dist/2019.js") as { Ajv2019: AjvClass }).Ajv2019;
  return (require("ajv") as { Ajv: AjvClass }).Ajv;
}

type AnyAjv = Ajv | Ajv2019 | Ajv2020;
type Dialect = "draft-07" | "2019-09" | "2020-12";

// ─── Ajv instances and validators ───────────────────────────────────────────────────────────────

// Formats are annotations in standard JSON Schema (2019-09 onward), so they are not asserted;
// `strict: false` accepts the vendor keywords tool schemas often carry; Ajv never logs.
// `ownProperties`: a property is present when it is the value's own — `{}` has no `constructor`
// or `toString` property, whatever its prototype says.
// What compiling costs (CPU, measured): `inlineRefs: false` compiles each `$ref` target once, as a
// function its references call, rather than its code again at every reference (500 references to
// one definition: 510 ms → 20–90 ms); `code.optimize: false` skips a pass over the generated code
// that cost about as much as generating it (5,000 properties: 920 → 430–500 ms); `required` and
// `enum` are checked in a loop from 8 names or values on, not in code written out per name (20
// lists of 199 required names: 190 ms). None of these changes what validation accepts or the
// errors it reports; what compiling still costs is bounded by the schema limits.
const OPTIONS = {
  allErrors: true,
  strict: false,
  validateFormats: false,
  ownProperties: true,
  logger: false,
  inlineRefs: false,
  loopRequired: 8,
  loopEnum: 8,
  code: { regExp: linearRegExp, optimize: false },
} as const satisfies Options;

// A validator Ajv makes keeps its whole instance alive (the instance is its `self`, the scope of
// every pattern and function the instance ever compiled is its `scope`), so a shared instance would
// make one small tool keep thousands of other schemas' programs alive. Each schema is compiled by
// an instance of its own (about a millisecond, a few KB), which holds what that schema needs and
// nothing else; schemas are checked against their meta-schema by one long-lived instance per
// dialect, which compiles nothing else.
const metaValidators = new Map<Dialect, AnyAjv>();

function checkAgainstMetaSchema(dialect: Dialect, schema: Record<string, unknown>): void {
  let ajv = metaValidators.get(dialect);
  if (ajv === undefined) {
    // Linear uniqueItems here too: the meta-schemas ask it of `enum` (draft-07) and of name lists,
    // and Ajv's pairwise check took 25 s for an enum of 100,000 values.
    ajv = withLinearUniqueItems(new (loadAjv(dialect))(OPTIONS));
    metaValidators.set(dialect, ajv);
  }
  // Ajv's own check and message, as when it validates the schema it is asked to compile.
  if (ajv.validateSchema(schema) !== true) throw new Error(`schema is invalid: ${ajv.errorsText(ajv.errors)}`);
}

function dialectOf(schema: Record<string, unknown>): Dialect {
  const uri = typeof schema.$schema === "string" ? schema.$schema : "";
  if (uri.includes("2020-12")) return "2020-12";
  if (uri.includes("2019-09")) return "2019-09";
  return "draft-07";
}

// ─── Recursive schemas: a bound on the work ─────────────────────────────────────────────────────
//
// A recursive schema is checked once per level of the value's nesting — or twice, or more: with
// `allOf: [{ $ref: "#/$defs/node" }, { $ref: "#/$defs/node" }]` inside the node (or, with every
// error reported, any union whose branches both recurse), the work doubles per level, and 30
// levels of 250 bytes hold the event loop for minutes. How a value nests is the model's choice,
// so no bound at registration can cover it: the subschemas a cycle of references enters carry a
// keyword that counts each entry, and validation stops once the count is past
// RECURSION_BASE + RECURSION_PER_VALUE × the number of values in the arguments (a linear schema
// enters its recursion about once per value).

/** The keyword the analysis marks recursion entries with (in the compiled copy of the schema only). */
const RECURSION_KEYWORD = "toolloop:recursion";
/** Entries into recursive subschemas any arguments may make. */
const RECURSION_BASE = 10_000;
/** More entries allowed per value (object, array or scalar) in the arguments. */
const RECURSION_PER_VALUE = 4;

/** Entries left in the current validation: `Infinity` outside one (validation never nests). */
let recursionLeft = Number.POSITIVE_INFINITY;
const RECURSION_EXCEEDED = Symbol("recursion budget exceeded");

function countRecursion(): boolean {
  if (--recursionLeft < 0) throw RECURSION_EXCEEDED;
  return true;
}

function withRecursionCounter(ajv: AnyAjv): AnyAjv {
  ajv.addKeyword({ keyword: RECURSION_KEYWORD, schemaType: "boolean", errors: false, validate: countRecursion });
  return ajv;
}

/** Values in the arguments (each object, array and scalar once; a shared object once). */
function countValues(args: unknown): number {
  let count = 0;
  const seen = new Set<object>();
  const stack: unknown[] = [args];
  while (stack.length > 0) {
    const value = stack.pop();
    count++;
    if (typeof value !== "object" || value === null || seen.has(value)) continue;
    seen.add(value);
    if (Array.isArray(value)) for (const item of value) stack.push(item);
    else for (const key of Object.keys(value)) stack.push((value as Record<string, unknown>)[key]);
  }
  return count;
}

function compile(schema: Record<string, unknown>): ValidateFunction {
  const dialect = dialectOf(schema);
  // The schema is toolloop's own copy: `$schema` (which chose the dialect) goes, so that Ajv does
  // not look for a meta-schema it may not have.
  delete schema.$schema;
  try {
    checkAgainstMetaSchema(dialect, schema);
    const ajv = new (loadAjv(dialect))({ ...OPTIONS, validateSchema: false });
    return withRecursionCounter(withLinearUniqueItems(ajv)).compile(schema);
  } catch (error) {
    // Ajv compiles each reference's target from inside the function that refers to it: a chain of
    // a few hundred definitions, each referring to the next, overflows the stack (nesting alone is
    // bounded before). A limit of this engine, said as one.
    if (error instanceof RangeError && /call stack/i.test(error.message)) {
      throw new SchemaLimitError("its $refs lead through too many subschemas one after another to compile", {
        cause: error,
      });
    }
    throw error;
  }
}

function isEmptySchema(schema: Record<string, unknown>): boolean {
  for (const key in schema) {
    if (key !== "type" && key !== "$schema" && key !== "description" && key !== "title") return false;
  }
  return true;
}

type ArgumentsValidator = (args: Record<string, unknown>) => ParseArgumentsResult;

/** A compiled schema: its argument validator, and what it cost (counted against a registry's limits). */
export interface CompiledSchema {
  /** Validates (never transforms) a call's arguments. */
  validate: ArgumentsValidator;
  /** What compiling it cost; {@link NO_COST} for a schema that accepts any object. */
  cost: SchemaCost;
}

// A schema registered again (a registry per request, the same tool in several registries) reuses
// its validator, found by object or, bounded, by its JSON text: at most MAX_CACHED_TEXTS validators
// and CACHED_COST of compiled schemas (what a validator keeps alive grows with what it cost).
const byObject = new WeakMap<object, CompiledSchema>();
const byText = new Map<string, CompiledSchema>();
const MAX_CACHED_TEXTS = 500;
const CACHED_COST: Readonly<SchemaCost> = {
  subschemas: 50_000,
  keywords: 250_000,
  patterns: 1_000,
  literals: 2_500_000,
  compiled: 50_000,
};
let cachedCost: SchemaCost = NO_COST;

function cacheByText(text: string, compiled: CompiledSchema): void {
  byText.set(text, compiled);
  cachedCost = addCost(cachedCost, compiled.cost);
  while (byText.size > MAX_CACHED_TEXTS || MEASURES.some(([measure]) => cachedCost[measure] > CACHED_COST[measure])) {
    const [oldest, evicted] = byText.entries().next().value as [string, CompiledSchema];
    byText.delete(oldest);
    cachedCost = subtractCost(cachedCost, evicted.cost);
  }
}

const ACCEPT_ANY: CompiledSchema = {
  validate: (args: Record<string, unknown>): ParseArgumentsResult => ({ success: true, data: args }),
  cost: NO_COST,
};

/**
 * The validator of a compiled schema; one with recursive parts counts its entries into them, and
 * one with patterns the steps of matching, each stopping past its bound with an answer the model
 * can act on.
 */
function argumentsValidator(validate: ValidateFunction, recursive: boolean, patterns: boolean): ArgumentsValidator {
  const check = (args: Record<string, unknown>): ParseArgumentsResult => {
    if (validate(args)) return { success: true, data: args };
    return { success: false, error: formatAjvErrors(validate.errors ?? []) };
  };
  if (!recursive && !patterns) return check;
  return (args) => {
    const allowed = recursive ? RECURSION_BASE + RECURSION_PER_VALUE * countValues(args) : Number.POSITIVE_INFINITY;
    recursionLeft = allowed;
    if (patterns) startPatternWork();
    try {
      return check(args);
    } catch (error) {
      if (error === RECURSION_EXCEEDED) {
        return {
          success: false,
          error: `(root): too deeply nested to check against the tool's recursive schema (it would enter its recursive parts more than ${allowed} times): nest the arguments less deeply`,
        };
      }
      if (error === PATTERN_WORK_EXCEEDED) {
        return {
          success: false,
          error: `(root): the strings are too long to check against the tool's patterns (more than ${MAX_PATTERN_WORK} steps of matching): send shorter strings`,
        };
      }
      throw error;
    } finally {
      recursionLeft = Number.POSITIVE_INFINITY;
      endPatternWork();
    }
  };
}

/** Compiles toolloop's own copy of a schema, measured by `analysis`. */
function build(copy: Record<string, unknown>, analysis: SchemaAnalysis): CompiledSchema {
  for (const entry of analysis.recursionEntries) entry[RECURSION_KEYWORD] = true;
  const validate = compile(copy);
  const recursive = analysis.recursionEntries.length > 0;
  return { validate: argumentsValidator(validate, recursive, analysis.cost.patterns > 0), cost: analysis.cost };
}

/**
 * Compiles a tool's JSON Schema once into an argument validator with standard semantics, after
 * measuring it: a schema over the per-schema limits (`SCHEMA_LIMITS`: subschemas, keywords and
 * enum/const characters with its `$ref`s followed, patterns, units of compiling), or one `admit`
 * refuses by throwing (a registry's total, an import's budget), is refused before Ajv sees it.
 * Throws (at registration) a `SchemaLimitError` (a `TypeError`) for a schema over a limit; an
 * `Error` when the schema itself is invalid, refers where Ajv could not follow, or holds a pattern
 * that cannot run on the linear-time engine every pattern runs on (a backreference, lookahead or
 * lookbehind). Validators are cached per schema object and, bounded, per JSON text.
 */
export function compileJsonSchema(
  schema: Record<string, unknown>,
  admit: (cost: SchemaCost) => void = () => {},
): CompiledSchema {
  let compiled = byObject.get(schema);
  if (compiled === undefined) {
    if (isEmptySchema(schema)) {
      compiled = ACCEPT_ANY;
    } else {
      const text = JSON.stringify(schema);
      compiled = byText.get(text);
      if (compiled === undefined) {
        // Compiled from a copy made of its JSON text: what is measured, what is compiled and what
        // the model is sent are the same schema (a getter cannot show the measure one schema and
        // Ajv another), and toolloop may mark it up.
        const copy = JSON.parse(text) as unknown;
        if (!isRecord(copy)) throw new Error("the schema has no JSON object form");
        const analysis = analyseSchema(copy);
        admit(analysis.cost);
        compiled = build(copy, analysis);
        cacheByText(text, compiled);
      }
    }
    byObject.set(schema, compiled);
  }
  admit(compiled.cost);
  return compiled;
}

/** {@link compileJsonSchema}'s validator, for a schema outside any registry. */
export function compileJsonSchemaValidator(schema: Record<string, unknown>): ArgumentsValidator {
  return compileJsonSchema(schema).validate;
}
