import { createRequire } from "node:module";
import type { Ajv, ErrorObject, Options, ValidateFunction } from "ajv";
import type { Ajv2019 } from "ajv/dist/2019.js";
import type { Ajv2020 } from "ajv/dist/2020.js";
import type { RE2JS } from "re2js";
import type { ParseArgumentsResult } from "../tool.js";
import { boundText, cutName, isRecord, jsonText, MAX_VALIDATION_MESSAGE_CHARS } from "./describe.js";
import { unescapePointerSegment } from "./json-pointer.js";
import { patternSize } from "./pattern-size.js";
import { testWithSmallDfa } from "./re2-dfa.js";
import { addCost, MAX_PATTERN_SIZE, NO_COST, type SchemaCost, SchemaLimitError, subtractCost } from "./schema-cost.js";
import { analyseSchema, type SchemaAnalysis } from "./schema-limits.js";

// Ajv (a CommonJS package) is loaded on the first JSON Schema compilation, not at import: it is
// the largest part of toolloop's start-up, and apps whose tools all use zod never need it.
// re2js likewise, on the first schema `pattern`.
const require = createRequire(import.meta.url);
type AjvClass = new (options: Options) => AnyAjv;
function loadAjv(dialect: Dialect): AjvClass {
  if (dialect === "2020-12") return (require("ajv/dist/2020.js") as { Ajv2020: AjvClass }).Ajv2020;
  if (dialect === "2019-09") return (require("ajv/dist/2019.js") as { Ajv2019: AjvClass }).Ajv2019;
  return (require("ajv") as { Ajv: AjvClass }).Ajv;
}
function loadRe2(): typeof RE2JS {
  return (require("re2js") as { RE2JS: typeof RE2JS }).RE2JS;
}

const MAX_REPORTED_ISSUES = 8;
/** Longest single issue: one long issue must not crowd the others out of the message. */
const MAX_ISSUE_CHARS = 400;
/** How many of an enum's allowed values a message lists. */
const MAX_ENUM_VALUES_SHOWN = 10;
/** Longest property name (often the model's own) or allowed value echoed in a message. */
const MAX_ENUM_VALUE_CHARS = 40;
/** Longest schema pattern quoted in a registration error. */
const MAX_PATTERN_CHARS = 200;

type AnyAjv = Ajv | Ajv2019 | Ajv2020;
type Dialect = "draft-07" | "2019-09" | "2020-12";

// ─── Schema patterns on a linear-time engine ────────────────────────────────────────────────────
//
// A backtracking engine (V8's RegExp) takes exponential time on patterns such as `^(a+)+$`, and
// validation is synchronous: no timeout or abort can interrupt it. So every pattern Ajv compiles
// (`pattern`, `patternProperties` keys, `propertyNames` patterns) runs on re2js, a pure-JS RE2
// whose matching is linear in the input. A pattern must first be a valid ECMA-262 (`u` mode)
// regular expression, as JSON Schema says; it is then translated where RE2's syntax or meaning
// differs, so that it accepts exactly what V8 would.

/** JS `\s` (WhiteSpace and LineTerminator, ECMA-262), as code point ranges; RE2's `\s` is ASCII only. */
const WHITE_SPACE: ReadonlyArray<readonly [number, number]> = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];
const MAX_CODE_POINT = 0x10ffff;

function rangesText(ranges: ReadonlyArray<readonly [number, number]>): string {
  const hex = (code: number) => `\\x{${code.toString(16)}}`;
  return ranges.map(([from, to]) => (from === to ? hex(from) : `${hex(from)}-${hex(to)}`)).join("");
}

function complement(ranges: ReadonlyArray<readonly [number, number]>): Array<[number, number]> {
  const result: Array<[number, number]> = [];
  let next = 0;
  for (const [from, to] of ranges) {
    if (from > next) result.push([next, from - 1]);
    next = to + 1;
  }
  if (next <= MAX_CODE_POINT) result.push([next, MAX_CODE_POINT]);
  return result;
}

/** Class bodies (without brackets), usable inside a class too, where `[^…]` cannot nest. */
const SPACE_CLASS_BODY = rangesText(WHITE_SPACE);
const NON_SPACE_CLASS_BODY = rangesText(complement(WHITE_SPACE));
/** JS `.` without the `s` flag: anything but a line terminator; RE2's `.` only excludes `\n`. */
const JS_DOT = "[^\\n\\r\\x{2028}\\x{2029}]";
/** JS `[^]` and `[]`, which RE2 reads as an unclosed class. */
const ANY_CHARACTER = `[\\x{0}-\\x{${MAX_CODE_POINT.toString(16)}}]`;
const NO_CHARACTER = `[^\\x{0}-\\x{${MAX_CODE_POINT.toString(16)}}]`;
/** RE2's inline flag groups, `(?i)` or `(?i-s:`, which V8 (before modifiers) does not know. */
const INLINE_FLAGS = /^\(\?([imsU]*)(?:-([imsU]*))?([:)])/;

interface TranslatedPattern {
  /** The pattern in RE2 syntax, with JS meaning. */
  re2: string;
  /** The pattern with RE2's inline flag groups made neutral, to check it as a JS (`u`) pattern. */
  js: string;
  /** Why RE2 cannot run it (a backreference, lookaround), if it cannot. */
  unsupported?: string;
}

function hexEscape(code: number): string {
  return `\\x{${code.toString(16)}}`;
}

/** Reads a `\uXXXX` (a surrogate pair of them as one code point) or `\u{X…}` escape at `index`. */
function readUnicodeEscape(pattern: string, index: number): { code: number; length: number } | undefined {
  const braced = /^\\u\{([0-9a-fA-F]{1,6})\}/.exec(pattern.slice(index, index + 10));
  if (braced?.[1] !== undefined) return { code: Number.parseInt(braced[1], 16), length: braced[0].length };
  const pair = /^\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})/.exec(pattern.slice(index, index + 12));
  if (pair?.[1] !== undefined && pair[2] !== undefined) {
    const high = Number.parseInt(pair[1], 16);
    const low = Number.parseInt(pair[2], 16);
    return { code: (high - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000, length: 12 };
  }
  const single = /^\\u([0-9a-fA-F]{4})/.exec(pattern.slice(index, index + 6));
  if (single?.[1] !== undefined) return { code: Number.parseInt(single[1], 16), length: 6 };
  return undefined;
}

/**
 * Translates a JSON Schema (ECMA-262, `u` mode) pattern into RE2 syntax with the same meaning:
 * `\u` escapes, JS's Unicode `\s`/`\S` and `.`, `[` inside a class (a POSIX class in RE2),
 * `[\b]`, `\cX`, `[]`, `[^]`, `\p{Script=X}`. Everything else is the same in both syntaxes.
 */
function translatePattern(pattern: string): TranslatedPattern {
  const re2: string[] = [];
  const js: string[] = [];
  const dots: number[] = [];
  let dotAll = false;
  let unsupported: string | undefined;
  let inClass = false;
  const both = (text: string) => {
    re2.push(text);
    js.push(text);
  };
  let index = 0;
  while (index < pattern.length) {
    const char = pattern[index] as string;
    if (char === "\\") {
      const next = pattern[index + 1];
      if (next === undefined) {
        both(char);
        index++;
        continue;
      }
      const escaped = `\\${next}`;
      if (next === "u") {
        const unicode = readUnicodeEscape(pattern, index);
        if (unicode !== undefined) {
          re2.push(hexEscape(unicode.code));
          js.push(pattern.slice(index, index + unicode.length));
          index += unicode.length;
          continue;
        }
      } else if (next === "s" || next === "S") {
        const body = next === "s" ? SPACE_CLASS_BODY : NON_SPACE_CLASS_BODY;
        re2.push(inClass ? body : `[${body}]`);
        js.push(escaped);
        index += 2;
        continue;
      } else if (next === "b" && inClass) {
        re2.push(hexEscape(0x08));
        js.push(escaped);
        index += 2;
        continue;
      } else if (next === "c" && /^[A-Za-z]$/.test(pattern[index + 2] ?? "")) {
        re2.push(hexEscape((pattern.charCodeAt(index + 2) as number) % 32));
        js.push(pattern.slice(index, index + 3));
        index += 3;
        continue;
      } else if ((next === "p" || next === "P") && pattern[index + 2] === "{") {
        const end = pattern.indexOf("}", index);
        if (end !== -1) {
          const property = pattern.slice(index + 3, end);
          re2.push(`\\${next}{${property.replace(/^(?:Script|sc)=/, "")}}`);
          js.push(pattern.slice(index, end + 1));
          index = end + 1;
          continue;
        }
      } else if (!inClass && /^[1-9]$/.test(next)) {
        unsupported ??= `a backreference (${escaped})`;
      } else if (!inClass && next === "k") {
        unsupported ??= `a backreference (${escaped}<…>)`;
      }
      // Any other escape (a code point, so an astral one stays whole) means the same in both.
      const length = 1 + ((pattern.codePointAt(index + 1) as number) > 0xffff ? 2 : 1);
      both(pattern.slice(index, index + length));
      index += length;
      continue;
    }
    if (inClass) {
      if (char === "]") inClass = false;
      re2.push(char === "[" ? "\\[" : char);
      js.push(char);
      index++;
      continue;
    }
    if (char === "[") {
      if (pattern.startsWith("[]", index) || pattern.startsWith("[^]", index)) {
        const negated = pattern[index + 1] === "^";
        re2.push(negated ? ANY_CHARACTER : NO_CHARACTER);
        js.push(negated ? "[^]" : "[]");
        index += negated ? 3 : 2;
        continue;
      }
      inClass = true;
      both(char);
      index++;
      continue;
    }
    if (char === ".") {
      dots.push(re2.length);
      re2.push(".");
      js.push(".");
      index++;
      continue;
    }
    if (char === "(" && pattern[index + 1] === "?") {
      const lookaround = /^\(\?(?:=|!|<=|<!)/.exec(pattern.slice(index, index + 4));
      if (lookaround !== null) {
        const kind = lookaround[0].includes("<") ? "lookbehind" : "lookahead";
        unsupported ??= `a ${kind} (${lookaround[0]}…)`;
      }
      const flags = INLINE_FLAGS.exec(pattern.slice(index, index + 16));
      if (flags !== null && (flags[1] !== "" || flags[2] !== undefined)) {
        if (flags[1]?.includes("s")) dotAll = true;
        re2.push(flags[0]);
        js.push(flags[3] === ":" ? "(?:" : "");
        index += flags[0].length;
        continue;
      }
    }
    both(char);
    index++;
  }
  // `(?s)` makes `.` match line terminators, which JS's class form of `.` would never do: with
  // RE2's flags in play, `.` keeps RE2's meaning (a `.` outside `(?s)` then also matches `\r`).
  if (!dotAll) for (const at of dots) re2[at] = JS_DOT;
  const result: TranslatedPattern = { re2: re2.join(""), js: js.join("") };
  if (unsupported !== undefined) result.unsupported = unsupported;
  return result;
}

function patternError(pattern: string, reason: string): Error {
  return new Error(`pattern ${JSON.stringify(boundText(pattern, MAX_PATTERN_CHARS))} ${reason}`);
}

const LINEAR_ENGINE = "toolloop's linear-time engine (RE2, which has no backreferences, lookahead or lookbehind)";

/** A compiled pattern as Ajv uses it: `test` (a search, as JSON Schema's `pattern` means). */
export interface LinearRegExp {
  test(text: string): boolean;
  toString(): string;
}

// Compiled patterns are shared (the same pattern in many schemas is compiled once), in a cache
// bounded in entries and in instructions: a program keeps about 200 bytes per instruction alive
// (measured), and one pattern may have up to MAX_PATTERN_SIZE of them.
const compiledPatterns = new Map<string, { regExp: LinearRegExp; size: number }>();
const MAX_CACHED_PATTERNS = 500;
const MAX_CACHED_INSTRUCTIONS = 100_000;
let cachedInstructions = 0;

// ─── Matching: a bound on the work per validation ───────────────────────────────────────────────
//
// Matching is linear in the text, but RE2 may take a step per instruction of the program for each
// character: a 10,000-character argument against `(a|b|c|d|e){1,1000}$` took 0.7 s, 100,000
// characters 8 s. A validation counts program size × characters for each string it matches and,
// past MAX_PATTERN_WORK, stops and answers that the arguments are too long to check.

/** Steps of matching (instructions × characters) one validation may take: about 0.1 s. */
const MAX_PATTERN_WORK = 5_000_000;
/** Steps left in the current validation: `Infinity` outside one (the tool search bounds its own). */
let patternWorkLeft = Number.POSITIVE_INFINITY;
const PATTERN_WORK_EXCEEDED = Symbol("pattern work exceeded");

/**
 * Ajv's `code.regExp` engine: compiles a schema pattern for re2js, so that matching takes time
 * linear in the input whatever the pattern. Throws (at registration) for a pattern that is not a
 * valid JS regular expression or that RE2 cannot run, naming the pattern and saying why. The flag
 * `i` makes it case-insensitive; other flags only shape the JS check. Cached, with little DFA kept.
 */
export function linearRegExp(pattern: string, flags: string): LinearRegExp {
  // Ajv dedupes compiled patterns by `toString()`: it must name the pattern (and it is never the
  // text of a native RegExp, so the two can never be mixed up).
  const key = `re2:${flags}:${pattern}`;
  const cached = compiledPatterns.get(key);
  if (cached !== undefined) return cached.regExp;
  const re2 = compileLinearPattern(pattern, flags, MAX_PATTERN_SIZE);
  const steps = re2.programSize();
  const test = testWithSmallDfa(re2);
  const compiled: LinearRegExp = {
    test: (text) => {
      patternWorkLeft -= steps * (text.length + 1);
      if (patternWorkLeft < 0) throw PATTERN_WORK_EXCEEDED;
      return test(text);
    },
    toString: () => key,
  };
  compiledPatterns.set(key, { regExp: compiled, size: steps });
  cachedInstructions += steps;
  while (compiledPatterns.size > MAX_CACHED_PATTERNS || cachedInstructions > MAX_CACHED_INSTRUCTIONS) {
    const [oldest, evicted] = compiledPatterns.entries().next().value as [string, { size: number }];
    compiledPatterns.delete(oldest);
    cachedInstructions -= evicted.size;
  }
  return compiled;
}

/**
 * {@link linearRegExp}'s compilation, uncached: the tool search's patterns are forgotten after
 * their search. A pattern whose program is estimated over `maxSize` instructions is refused before
 * RE2 builds it.
 */
export function compileLinearPattern(pattern: string, flags: string, maxSize = Number.POSITIVE_INFINITY): RE2JS {
  const translated = translatePattern(pattern);
  try {
    new RegExp(translated.js, flags);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw patternError(pattern, `is not a valid regular expression: ${reason}`);
  }
  if (translated.unsupported !== undefined) {
    throw patternError(pattern, `cannot run on ${LINEAR_ENGINE}: it has ${translated.unsupported}`);
  }
  // Before RE2 builds it: a counted repetition multiplies the program (1 KB made 920,000 instructions).
  const size = patternSize(pattern);
  if (size > maxSize) {
    throw patternError(
      pattern,
      `is too large for ${LINEAR_ENGINE}: it would compile to about ${size} instructions, at most ${maxSize} (use fewer or smaller counted repetitions)`,
    );
  }
  let re2: RE2JS;
  try {
    re2 = loadRe2().compile(flags.includes("i") ? `(?i)${translated.re2}` : translated.re2);
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).replace(/^error parsing regexp: /, "");
    const hint = /\\[pP]/.test(reason)
      ? " (RE2 knows short category names such as \\p{L} and scripts such as \\p{Greek})"
      : "";
    throw patternError(pattern, `cannot run on ${LINEAR_ENGINE}: ${reason}${hint}`);
  }
  return re2;
}
// Ajv writes `code` into standalone validation code only, which toolloop never generates.
linearRegExp.code = "toolloopLinearRegExp";

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

// ─── uniqueItems in linear time ─────────────────────────────────────────────────────────────────
//
// Ajv compares an array's non-scalar items pair by pair: O(n²) deep comparisons, synchronous, so
// 20,000 small objects from the model block the event loop for seconds (`maxItems` does not help
// with `allErrors`). The keyword is replaced by one pass that keys each item by a canonical JSON
// text (object keys sorted, as JSON Schema equality ignores their order).

/** JSON text with object keys sorted: equal for equal JSON values, whatever their key order. @internal */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

type UniqueItemsValidator = ((schema: unknown, data: unknown[]) => boolean) & { errors?: Partial<ErrorObject>[] };

const uniqueItems: UniqueItemsValidator = (schema, data) => {
  uniqueItems.errors = [];
  if (schema !== true) return true;
  const seen = new Map<string, number>();
  for (let index = 0; index < data.length; index++) {
    const key = canonicalJson(data[index]);
    const first = seen.get(key);
    if (first !== undefined) {
      uniqueItems.errors = [
        {
          keyword: "uniqueItems",
          message: `must NOT have duplicate items (items ## ${first} and ${index} are identical)`,
          params: { i: index, j: first },
        },
      ];
      return false;
    }
    seen.set(key, index);
  }
  return true;
};

function withLinearUniqueItems(ajv: AnyAjv): AnyAjv {
  ajv.removeKeyword("uniqueItems");
  ajv.addKeyword({ keyword: "uniqueItems", type: "array", schemaType: "boolean", errors: true, validate: uniqueItems });
  return ajv;
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
  while (
    byText.size > MAX_CACHED_TEXTS ||
    cachedCost.subschemas > CACHED_COST.subschemas ||
    cachedCost.keywords > CACHED_COST.keywords ||
    cachedCost.patterns > CACHED_COST.patterns ||
    cachedCost.literals > CACHED_COST.literals ||
    cachedCost.compiled > CACHED_COST.compiled
  ) {
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
    if (patterns) patternWorkLeft = MAX_PATTERN_WORK;
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
      patternWorkLeft = Number.POSITIVE_INFINITY;
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

// ─── Messages ───────────────────────────────────────────────────────────────────────────────────

function showAllowedValue(value: unknown): string {
  const text = typeof value === "string" ? value : (jsonText(value) ?? String(value));
  const cut = text.length > MAX_ENUM_VALUE_CHARS ? `${text.slice(0, MAX_ENUM_VALUE_CHARS)}…` : text;
  return typeof value === "string" ? JSON.stringify(cut) : cut;
}

function pointerToPath(pointer: string): string {
  if (pointer === "") return "";
  return pointer
    .slice(1)
    .split("/")
    .map((segment) => cutName(unescapePointerSegment(segment)))
    .reduce((path, segment) => {
      if (/^\d+$/.test(segment)) return `${path}[${segment}]`;
      return path === "" ? segment : `${path}.${segment}`;
    }, "");
}

function joinPath(path: string, property: string): string {
  return path === "" ? property : `${path}.${property}`;
}

function formatAjvError(error: ErrorObject): string {
  const path = pointerToPath(error.instancePath);
  const params = error.params as Record<string, unknown>;
  if (error.keyword === "required") {
    return `${joinPath(path, cutName(String(params.missingProperty)))}: required property is missing`;
  }
  if (error.keyword === "additionalProperties") {
    return `${joinPath(path, cutName(String(params.additionalProperty)))}: unknown property is not allowed`;
  }
  const where =
    error.propertyName === undefined
      ? path || "(root)"
      : `${path || "(root)"}: property name ${JSON.stringify(cutName(error.propertyName))}`;
  if (error.keyword === "enum" && Array.isArray(params.allowedValues)) {
    const allowed = params.allowedValues;
    const shown = allowed.slice(0, MAX_ENUM_VALUES_SHOWN).map(showAllowedValue).join(", ");
    const more = allowed.length - MAX_ENUM_VALUES_SHOWN;
    return `${where}: must be one of ${shown}${more > 0 ? `, … and ${more} more` : ""}`;
  }
  return `${where}: ${error.message ?? error.keyword}`;
}

/**
 * The line a model reads: at most {@link MAX_REPORTED_ISSUES} issues, each bounded, then how many
 * more there were; at most `MAX_VALIDATION_MESSAGE_CHARS` in all, with a marker saying how much
 * was cut.
 */
function issueLine(shown: readonly string[], total: number): string {
  const text = shown.map((issue) => boundText(issue, MAX_ISSUE_CHARS)).join("; ");
  const hidden = total - shown.length;
  const suffix = hidden > 0 ? `; … and ${hidden} more` : "";
  return `${boundText(text, MAX_VALIDATION_MESSAGE_CHARS - suffix.length)}${suffix}`;
}

/**
 * Turns validation issues (JSON Schema's or zod's) into one line a model can act on, naming each
 * property: the first 8 issues, then how many more there were. Each issue and the whole line are
 * bounded (at most 1,000 characters), with a marker saying how many characters were cut.
 */
export function formatIssues(issues: readonly string[]): string {
  return issueLine(issues.slice(0, MAX_REPORTED_ISSUES), issues.length);
}

function formatAjvErrors(errors: readonly ErrorObject[]): string {
  // `propertyNames` adds a vaguer error ("property name must be valid") after the specific ones.
  const relevant = errors.filter((error) => error.keyword !== "propertyNames");
  const issues = (relevant.length > 0 ? relevant : errors).slice(0, MAX_REPORTED_ISSUES).map(formatAjvError);
  return issueLine(issues, relevant.length > 0 ? relevant.length : errors.length);
}
