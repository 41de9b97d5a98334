// ─── What a schema costs ────────────────────────────────────────────────────────────────────────
//
// Validation is synchronous: once Ajv runs, no timeout or abort can stop it. And what it runs is
// the schema *expanded*: each `$ref` is followed where it stands, so 40 levels of
// `allOf: [{ $ref: next }, { $ref: next }]` — 3 KB of JSON — make about 2⁴² subschemas to check on
// the first call. Compiling costs too, in proportion to what Ajv compiles (each `$ref` target once
// per URI, as a function): measured on a busy 2-core machine, 25–65 µs of CPU per unit counted
// here, more for deep nesting, and 30–150 bytes kept alive per unit (200 per instruction of a
// pattern's program). So before a schema is compiled, its expanded size and what compiling it
// would cost are computed — in time linear in the schema, each subschema measured once — and a
// schema over the limits is refused at registration, saying why. At the limits, the most
// expensive schemas compile in 0.1–0.2 s of CPU.

/** What compiling a schema, and validating a value against it, costs, as the limits count it. */
export interface SchemaCost {
  /**
   * Subschemas validation may visit for one value, `$ref`s followed: the schema as Ajv expands
   * it. A recursive part counts once (how often it runs depends on the value: see
   * {@link SchemaAnalysis.recursionEntries}).
   */
  subschemas: number;
  /** Keywords of those subschemas (expanded likewise): the size of the code Ajv generates. */
  keywords: number;
  /** Distinct patterns: `pattern` values and `patternProperties` keys (each one a compiled RE2 program). */
  patterns: number;
  /**
   * Characters of literal data validation compares values with — the JSON text of `enum` and
   * `const` values — `$ref`s followed (each as often as validation may compare with it): an enum
   * of 18,000 numbers reached through 49 × 49 references made one validation compare 43 million
   * values. (`default` and `examples` are annotations: Ajv compiles nothing for them.)
   */
  literals: number;
  /**
   * What compiling costs, in units of roughly 0.05 ms of CPU: what Ajv compiles — the schema, and
   * each `$ref` target once per way the references write it — one unit per subschema and per
   * keyword that checks something (annotations such as `description` cost nothing; each name a
   * `dependencies` entry requires counts), each distinct pattern by the size of its program, and
   * literal data by its size (checking it against the meta-schema, copying it: once per schema).
   */
  compiled: number;
}

/** Most one schema may cost. */
export const SCHEMA_LIMITS: Readonly<SchemaCost> = Object.freeze({
  subschemas: 5_000,
  keywords: 25_000,
  patterns: 100,
  literals: 500_000,
  compiled: 2_500,
});

/** Most the schemas of one registry's tools may cost together (and so one MCP import). */
export const REGISTRY_SCHEMA_LIMITS: Readonly<SchemaCost> = Object.freeze({
  subschemas: 100_000,
  keywords: 500_000,
  patterns: 10_000,
  literals: 5_000_000,
  compiled: 100_000,
});

/** The cost of a tool whose schema is not compiled (an empty schema, or its own `parseArguments`). */
export const NO_COST: Readonly<SchemaCost> = Object.freeze({
  subschemas: 0,
  keywords: 0,
  patterns: 0,
  literals: 0,
  compiled: 0,
});

/**
 * Largest RE2 program one pattern may compile to, in instructions (estimated from the pattern):
 * a counted repetition multiplies what it repeats, so 1 KB of `(?:w0|w1|…){1,1000}` compiled to
 * 920,000 instructions — a second of CPU to compile, and as many steps per character to match.
 */
export const MAX_PATTERN_SIZE = 5_000;

/**
 * Most subschemas nested in one another (references aside) in one schema. Compiling costs more
 * than linearly with the nesting — per subschema, 100 levels of `items` took 30 µs, 250 levels
 * 120 µs, 400 levels 230 µs — and Ajv's recursion overflows the stack past about 700.
 */
export const MAX_NESTING = 64;

/**
 * Most subschemas one after another, references followed (a cycle counts all its subschemas):
 * Ajv compiles a reference's target from inside the function that refers to it, so a chain of
 * 240 definitions each referring to the next overflowed the stack, or not, depending on the state
 * of the JIT. Below it, compiling never comes near the stack's end.
 */
export const MAX_CHAIN = 256;

/** Each measure of a {@link SchemaCost}, as a refusal names it. */
export const MEASURES: ReadonlyArray<readonly [keyof SchemaCost, string]> = [
  ["subschemas", "subschemas (its $refs followed)"],
  ["patterns", "patterns"],
  ["keywords", "keywords (its $refs followed)"],
  ["literals", "characters of enum and const values (its $refs followed)"],
  ["compiled", "units of compiling (each subschema and checking keyword Ajv compiles, patterns by size)"],
];

/** A schema over a limit: a `TypeError` (what `register` throws), told apart from an invalid schema. */
export class SchemaLimitError extends TypeError {
  override readonly name = "SchemaLimitError";
}

/** Counts beyond this are shown as such: an exponential expansion has no exact size worth printing. */
export const SHOWN_COUNT = 1e15;

/** A count as a message shows it. */
export function countText(count: number): string {
  return count >= SHOWN_COUNT ? "more than 10^15" : String(count);
}

/** Throws a {@link SchemaLimitError} when `cost` is over `limits`, saying which measure and by how much. */
export function checkSchemaCost(cost: SchemaCost, limits: Readonly<SchemaCost> = SCHEMA_LIMITS): void {
  for (const [measure, what] of MEASURES) {
    if (cost[measure] > limits[measure]) {
      throw new SchemaLimitError(`it has ${countText(cost[measure])} ${what}, at most ${limits[measure]}`);
    }
  }
}

/**
 * Throws a {@link SchemaLimitError} when `whose` schemas (`"the registry's schemas"`), which already
 * cost `used` against `limits`, cannot take one more that costs `cost`; `share` tells, before the
 * cost, what part of the registry's limits `limits` are.
 */
export function checkTotalCost(
  used: SchemaCost,
  cost: SchemaCost,
  limits: Readonly<SchemaCost> = REGISTRY_SCHEMA_LIMITS,
  whose = "the registry's schemas",
  share = "",
): void {
  for (const [measure, what] of MEASURES) {
    const total = used[measure] + cost[measure];
    if (total > limits[measure]) {
      throw new SchemaLimitError(
        `with it, ${whose} would have ${total} ${what}, at most ${limits[measure]} (${share}this one has ${cost[measure]})`,
      );
    }
  }
}

/** Throws a {@link SchemaLimitError} when a registry whose schemas already cost `used` cannot take one more that costs `cost`. */
export function checkRegistryCost(used: SchemaCost, cost: SchemaCost): void {
  checkTotalCost(used, cost);
}

/** `a + sign × b`, measure by measure. */
export function addCost(a: SchemaCost, b: SchemaCost, sign = 1): SchemaCost {
  return {
    subschemas: a.subschemas + sign * b.subschemas,
    keywords: a.keywords + sign * b.keywords,
    patterns: a.patterns + sign * b.patterns,
    literals: a.literals + sign * b.literals,
    compiled: a.compiled + sign * b.compiled,
  };
}

/** `a - b`, measure by measure. */
export function subtractCost(a: SchemaCost, b: SchemaCost): SchemaCost {
  return addCost(a, b, -1);
}
