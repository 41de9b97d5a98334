import { createRequire } from "node:module";
import type * as AjvResolve from "ajv/dist/compile/resolve.js";
import type { UriResolver } from "ajv/dist/types/index.js";
import { boundText, isRecord } from "./describe.js";
import { unescapePointerSegment } from "./json-pointer.js";
import { patternSize } from "./pattern-size.js";

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
const SHOWN_COUNT = 1e15;

function countText(count: number): string {
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
 * Throws a {@link SchemaLimitError} when a registry whose schemas already cost `used` cannot take
 * one more that costs `cost`.
 */
export function checkRegistryCost(used: SchemaCost, cost: SchemaCost): void {
  for (const [measure, what] of MEASURES) {
    const total = used[measure] + cost[measure];
    if (total > REGISTRY_SCHEMA_LIMITS[measure]) {
      throw new SchemaLimitError(
        `with it, the registry's schemas would have ${total} ${what}, at most ${REGISTRY_SCHEMA_LIMITS[measure]} (this one has ${cost[measure]})`,
      );
    }
  }
}

/** `a - b`, measure by measure. */
export function subtractCost(a: SchemaCost, b: SchemaCost): SchemaCost {
  return {
    subschemas: a.subschemas - b.subschemas,
    keywords: a.keywords - b.keywords,
    patterns: a.patterns - b.patterns,
    literals: a.literals - b.literals,
    compiled: a.compiled - b.compiled,
  };
}

/** `a + b`, measure by measure. */
export function addCost(a: SchemaCost, b: SchemaCost): SchemaCost {
  return {
    subschemas: a.subschemas + b.subschemas,
    keywords: a.keywords + b.keywords,
    patterns: a.patterns + b.patterns,
    literals: a.literals + b.literals,
    compiled: a.compiled + b.compiled,
  };
}

// ─── Resolving $ref as Ajv does ─────────────────────────────────────────────────────────────────
//
// The bound is only as good as the resolution: a `$ref` followed to another target than Ajv's
// would measure another schema. So references are resolved with Ajv's own functions (its URI
// resolver, its collection of `$id`s and anchors) in the order Ajv's `resolveRef` tries them; a
// reference that cannot be followed that way is refused, never counted as free.

const require = createRequire(import.meta.url);

interface AjvHelpers {
  resolve: typeof AjvResolve;
  uri: UriResolver;
}
let helpers: AjvHelpers | undefined;

function ajvHelpers(): AjvHelpers {
  helpers ??= {
    resolve: require("ajv/dist/compile/resolve.js") as typeof AjvResolve,
    uri: (require("ajv/dist/runtime/uri.js") as { default: UriResolver }).default,
  };
  return helpers;
}

/** Ajv's meta-schemas, which every Ajv instance holds: a `$ref` to one is a known, fixed-size schema. */
const META_SCHEMA = /^https?:\/\/json-schema\.org\//;
/** Path segments after which Ajv does not let an `$id` change the base URI (a map of names, not a schema). */
const PREVENT_SCOPE_CHANGE = new Set(["properties", "patternProperties", "enum", "dependencies", "definitions"]);
/** Most `$id` redirections followed for one reference (Ajv follows them without a bound). */
const MAX_REDIRECTIONS = 64;

type SchemaValue = Record<string, unknown> | boolean;
interface Target {
  schema: SchemaValue;
  /** The base URI the target's own references resolve against. */
  base: string;
}
/** A reference to a meta-schema. */
const META = Symbol("meta-schema");

class RefResolver {
  readonly #root: Record<string, unknown>;
  readonly rootBase: string;
  readonly #helpers: AjvHelpers;
  /** Absolute `$id`s and anchors of the document → the URI of what they name (Ajv's `this.refs`). */
  #ids: Record<string, unknown> | undefined;
  /** Anchors of a document without a base URI (Ajv's `localRefs`). */
  #local: Record<string, unknown> = {};

  constructor(root: Record<string, unknown>) {
    this.#root = root;
    this.#helpers = ajvHelpers();
    this.rootBase = this.#helpers.resolve.normalizeId(typeof root.$id === "string" ? root.$id : "");
  }

  /** The document's `$id`s and anchors, collected on the first reference (a schema without one never pays for it). */
  #collectIds(): Record<string, unknown> {
    if (this.#ids !== undefined) return this.#ids;
    // Ajv's own collection (it throws, as Ajv would, for an ambiguous one); `this` is what it
    // reads of an Ajv instance.
    const ids: Record<string, unknown> = {};
    const collect = this.#helpers.resolve.getSchemaRefs as unknown as (
      this: { opts: { schemaId: string; uriResolver: UriResolver }; refs: Record<string, unknown> },
      schema: unknown,
      baseId: string,
    ) => Record<string, unknown>;
    const options = { schemaId: "$id", uriResolver: this.#helpers.uri };
    this.#local = collect.call({ opts: options, refs: ids }, this.#root, this.rootBase);
    this.#ids = ids;
    return ids;
  }

  /** The base URI inside a subschema reached from `base` (its `$id` applies, as in Ajv's `updateContext`). */
  enter(base: string, schema: Record<string, unknown>): string {
    const id = schema.$id;
    return typeof id === "string" && id !== "" ? this.#helpers.resolve.resolveUrl(this.#helpers.uri, base, id) : base;
  }

  /**
   * The URI Ajv compiles the target of `$ref: ref` at `base` under: one function per URI, so a
   * target written two ways is compiled twice. `null` for the document's root itself (Ajv calls
   * the function it is compiling) and for what Ajv cannot resolve (`resolve` refuses it).
   */
  key(base: string, ref: string): string | null {
    if ((ref === "#" || ref === "#/") && base === this.rootBase) return null;
    try {
      return this.#helpers.resolve.resolveUrl(this.#helpers.uri, base, ref);
    } catch {
      return null;
    }
  }

  /** What `$ref: ref` at base URI `base` names: a subschema, a meta-schema, or `undefined` when Ajv could not resolve it either. */
  resolve(base: string, ref: string): Target | typeof META | undefined {
    const { resolve, uri } = this.#helpers;
    // Ajv's ref keyword: "#" at the root's base is the root itself.
    if ((ref === "#" || ref === "#/") && base === this.rootBase) return { schema: this.#root, base };
    this.#collectIds();
    let target: string;
    try {
      target = resolve.resolveUrl(uri, base, ref);
    } catch {
      return undefined;
    }
    const found = this.#follow(target);
    if (found !== undefined) return found;
    const local = this.#local[target];
    return isSchemaValue(local) ? { schema: local, base } : undefined;
  }

  /** Ajv's `resolve`: `$id` redirections, then the root, a meta-schema, or a JSON Pointer. */
  #follow(uri: string): Target | typeof META | undefined {
    const ids = this.#collectIds();
    let target = uri;
    for (let hops = 0; typeof ids[target] === "string"; hops++) {
      if (hops >= MAX_REDIRECTIONS) return undefined;
      target = ids[target] as string;
    }
    if (target === this.rootBase && target !== "" && !target.startsWith("#")) {
      return { schema: this.#root, base: this.rootBase };
    }
    return this.#resolveSchema(target, 0);
  }

  /** Ajv's `resolveSchema`. */
  #resolveSchema(ref: string, depth: number): Target | typeof META | undefined {
    if (depth >= MAX_REDIRECTIONS) return undefined;
    const { resolve, uri } = this.#helpers;
    const parsed = uri.parse(ref);
    const refPath = resolve._getFullPath(uri, parsed);
    if (Object.keys(this.#root).length > 0 && refPath === resolve.getFullPath(uri, this.rootBase, undefined)) {
      return this.#pointer(parsed.fragment, { schema: this.#root, base: this.rootBase });
    }
    const id = resolve.normalizeId(refPath);
    const redirect = this.#collectIds()[id];
    if (typeof redirect === "string") {
      const resource = this.#resolveSchema(redirect, depth + 1);
      if (resource === undefined || resource === META || typeof resource.schema !== "object") return resource;
      return this.#pointer(parsed.fragment, resource);
    }
    return META_SCHEMA.test(id) ? META : undefined;
  }

  /** Ajv's `getJsonPointer`: the subschema at a fragment's pointer, own properties only. */
  #pointer(fragment: string | undefined, from: Target): Target | undefined {
    if (fragment?.[0] !== "/") return undefined;
    let { schema, base } = from;
    for (const part of fragment.slice(1).split("/")) {
      let key: string;
      try {
        key = unescapePointerSegment(decodeURIComponent(part));
      } catch {
        return undefined; // a malformed %-escape
      }
      let next: unknown;
      if (Array.isArray(schema) && /^(0|[1-9]\d*)$/.test(key)) next = schema[Number(key)];
      else if (isRecord(schema) && Object.hasOwn(schema, key)) next = schema[key];
      else return undefined;
      schema = next as SchemaValue;
      if (isRecord(schema) && typeof schema.$id === "string" && !PREVENT_SCOPE_CHANGE.has(part)) {
        base = this.#helpers.resolve.resolveUrl(this.#helpers.uri, base, schema.$id);
      }
    }
    return isSchemaValue(schema) ? { schema, base } : undefined;
  }
}

function isSchemaValue(value: unknown): value is SchemaValue {
  return typeof value === "boolean" || isRecord(value);
}

// ─── The graph of subschemas ────────────────────────────────────────────────────────────────────

/** Keywords whose subschema applies to the value itself. */
const IN_PLACE_SINGLE = ["not", "if", "then", "else"] as const;
const IN_PLACE_LIST = ["allOf", "anyOf", "oneOf"] as const;
/** Maps of subschemas applied to the value itself (`dependencies` also holds arrays of names). */
const IN_PLACE_MAP = ["dependentSchemas", "dependencies"] as const;
/** Keywords whose subschema applies to a property, an item or a key of the value. */
const NESTED_SINGLE = [
  "additionalProperties",
  "unevaluatedProperties",
  "propertyNames",
  "additionalItems",
  "contains",
  "unevaluatedItems",
] as const;
const NESTED_MAP = ["properties", "patternProperties"] as const;
const NESTED_LIST_OR_SINGLE = ["items", "prefixItems"] as const;

/** Keywords whose value is literal data, never a subschema. */
const DATA_KEYWORDS = new Set(["default", "enum", "const", "examples", "required"]);

/**
 * Keywords Ajv generates code for; the rest (`description`, `title`, `default`, `examples`,
 * `format` — not asserted —, vendor keywords …) compile to nothing.
 */
const CHECKING_KEYWORDS = new Set([
  "type",
  "nullable",
  "enum",
  "const",
  "multipleOf",
  "maximum",
  "exclusiveMaximum",
  "minimum",
  "exclusiveMinimum",
  "maxLength",
  "minLength",
  "pattern",
  "maxItems",
  "minItems",
  "uniqueItems",
  "maxContains",
  "minContains",
  "maxProperties",
  "minProperties",
  "required",
  "dependentRequired",
  "dependencies",
  "dependentSchemas",
  "$ref",
  "$dynamicRef",
  "$recursiveRef",
  "$dynamicAnchor",
  "$recursiveAnchor",
  "not",
  "if",
  "then",
  "else",
  "allOf",
  "anyOf",
  "oneOf",
  "items",
  "prefixItems",
  "additionalItems",
  "contains",
  "properties",
  "patternProperties",
  "additionalProperties",
  "propertyNames",
  "unevaluatedItems",
  "unevaluatedProperties",
]);
/** Keywords whose arrays of property names Ajv checks name by name (no loop): each name counts. */
const NAME_LIST_MAPS = ["dependencies", "dependentRequired"] as const;

/** Compile units of a `false` subschema (measured: as much as `{ type: "string" }`). */
const FALSE_UNITS = 2;
/** Compile units of a reference to a meta-schema: Ajv compiles the meta-schema (a few ms). */
const META_SCHEMA_UNITS = 100;
/** Compile units of a pattern besides its program (checking it, translating it, RE2's parse). */
const PATTERN_UNITS = 5;
/** Instructions of a pattern's program per compile unit. */
const PATTERN_INSTRUCTIONS_PER_UNIT = 4;
/** Characters of literal data per compile unit (measured: 100,000 values, 1.2 MB, compiled in 140 ms). */
const LITERAL_CHARS_PER_UNIT = 400;
/** Keywords whose value is literal data validation compares values with. */
const LITERAL_KEYWORDS = ["enum", "const"] as const;

/** The graph's shared node for `true`, `false` and meta-schemas: one check, no keywords, no edges. */
const LEAF = 0;
/** In {@link SchemaGraph.compiledRefs}: a reference to a meta-schema, and one to `false`. */
const META_TARGET = -1;
const FALSE_TARGET = -2;

interface Edge {
  to: number;
  /** The edge follows a reference (`$ref`, `$dynamicRef`, `$recursiveRef`). */
  ref: boolean;
  /** It applies to the value itself, not to a part of it. */
  inPlace: boolean;
}

interface GraphNode {
  schema: Record<string, unknown> | undefined;
  base: string;
  keywords: number;
  /** Compile units of the node itself: one, and one per checking keyword (or name it checks). */
  units: number;
  /** Characters of its own `enum` and `const` values, as JSON. */
  literals: number;
  /**
   * It declares `$dynamicAnchor` (or `$recursiveAnchor: true`): Ajv compiles it as a function of
   * its own each time it compiles it inside another one.
   */
  anchor: boolean;
  edges: Edge[];
  /** The reference this node holds, for messages: `$ref "…"`. */
  ref?: string;
}

/** What {@link analyseSchema} found. */
export interface SchemaAnalysis {
  cost: SchemaCost;
  /**
   * Subschemas (objects of the analysed schema) that a cycle of references enters. How often a
   * recursive schema is checked depends on the value — `allOf: [{ $ref: "#/$defs/node" }, …]`
   * inside the node doubles the work per level of nesting — so validation counts its entries into
   * these and stops past a bound proportional to the arguments' size.
   */
  recursionEntries: Record<string, unknown>[];
}

class SchemaGraph {
  readonly nodes: GraphNode[] = [
    { schema: undefined, base: "", keywords: 0, units: 1, literals: 0, anchor: false, edges: [] },
  ];
  /**
   * What Ajv compiles besides the root, by the URI it compiles it under: a node (LEAF for `true`),
   * or {@link META_TARGET} or {@link FALSE_TARGET}.
   */
  readonly compiledRefs = new Map<string, number>();
  readonly #byObject = new Map<object, Map<string, number>>();
  readonly #resolver: RefResolver;
  readonly #patterns = new Set<string>();
  readonly #limits: Readonly<SchemaCost>;
  #edges = 0;
  #keywords = 0;
  /** Characters of literal data in the schema, each value once (what compiling it copies and checks). */
  literals = 0;
  readonly #literalsCounted = new Set<object>();
  /** `$dynamicAnchor` name → the subschemas that declare it; `$recursiveAnchor: true` under "". */
  #dynamicAnchors: Map<string, Target[]> | undefined;
  /** Nodes holding a `$dynamicRef` or `$recursiveRef`. */
  readonly #dynamicRefs: number[] = [];

  constructor(root: Record<string, unknown>, resolver: RefResolver, limits: Readonly<SchemaCost>) {
    this.#resolver = resolver;
    this.#limits = limits;
    this.#node({ schema: root, base: resolver.rootBase });
    // Breadth first over an explicit list: a deep schema does not deepen the stack.
    for (let index = 1; index < this.nodes.length; index++) this.#expand(index);
    this.#dynamicFallbacks();
  }

  get patterns(): ReadonlySet<string> {
    return this.#patterns;
  }

  #node(target: Target): number {
    const { schema, base } = target;
    if (typeof schema === "boolean") return LEAF;
    let bases = this.#byObject.get(schema);
    const known = bases?.get(base);
    if (known !== undefined) return known;
    if (bases === undefined) {
      bases = new Map();
      this.#byObject.set(schema, bases);
    }
    // The expansion counts every subschema and every reference at least once: past the limit in
    // either, the schema is over it, and the graph stops growing (so does the work of measuring).
    if (this.nodes.length > this.#limits.subschemas) {
      throw new SchemaLimitError(
        `it has more than ${this.#limits.subschemas} subschemas, at most ${this.#limits.subschemas}`,
      );
    }
    const index = this.nodes.length;
    bases.set(base, index);
    this.nodes.push({ schema, base, keywords: 0, units: 0, literals: 0, anchor: false, edges: [] });
    return index;
  }

  #edge(from: GraphNode, to: number, ref: boolean, inPlace: boolean): void {
    if (++this.#edges > this.#limits.subschemas) {
      throw new SchemaLimitError(
        `it has more than ${this.#limits.subschemas} subschemas (its $refs followed), at most ${this.#limits.subschemas}`,
      );
    }
    from.edges.push({ to, ref, inPlace });
  }

  #sub(from: GraphNode, value: unknown, inPlace: boolean): void {
    if (typeof value === "boolean") {
      this.#edge(from, LEAF, false, inPlace);
      // `false` compiles to a check and its error (as much as a typed subschema); `true` to nothing.
      if (!value) from.units += FALSE_UNITS;
    } else if (isRecord(value)) {
      this.#edge(from, this.#node({ schema: value, base: this.#resolver.enter(from.base, value) }), false, inPlace);
    }
  }

  /**
   * Edges to what a reference may land on. Each target is also compiled: once per URI (`key`),
   * or — a dynamic candidate (`undefined`), which Ajv reaches through its resource — once per node.
   */
  #reference(
    from: GraphNode,
    label: string,
    targets: ReadonlyArray<readonly [key: string | null | undefined, target: Target | typeof META]>,
  ): void {
    from.ref ??= label;
    for (const [key, target] of targets) {
      const to = target === META ? LEAF : this.#node(target);
      this.#edge(from, to, true, true);
      const compiled = target === META ? META_TARGET : target.schema === false ? FALSE_TARGET : to;
      if (key !== null) this.compiledRefs.set(key ?? ` node ${to}`, compiled);
    }
  }

  #resolve(from: GraphNode, keyword: string, ref: string): Target | typeof META {
    const target = this.#resolver.resolve(from.base, ref);
    if (target === undefined) {
      throw new Error(
        `can't resolve ${keyword} ${JSON.stringify(boundText(ref, 200))}: it must point into the schema (or to a JSON Schema meta-schema)`,
      );
    }
    return target;
  }

  #expand(index: number): void {
    const node = this.nodes[index] as GraphNode;
    const schema = node.schema as Record<string, unknown>;
    withOwnProtoProperty(schema);
    withOwnProtoDependency(schema);
    const keys = Object.keys(schema);
    node.keywords = keys.length;
    node.units = 1;
    node.anchor = typeof schema.$dynamicAnchor === "string" || schema.$recursiveAnchor === true;
    for (const key of keys) if (CHECKING_KEYWORDS.has(key)) node.units++;
    for (const keyword of NAME_LIST_MAPS) {
      const map = Object.hasOwn(schema, keyword) ? schema[keyword] : undefined;
      if (!isRecord(map)) continue;
      for (const key of Object.keys(map)) {
        const names = map[key];
        if (Array.isArray(names)) node.units += names.length;
      }
    }
    this.#keywords += keys.length;
    if (this.#keywords > this.#limits.keywords) {
      throw new SchemaLimitError(
        `it has more than ${this.#limits.keywords} keywords, at most ${this.#limits.keywords}`,
      );
    }
    if (typeof schema.pattern === "string") this.#patterns.add(schema.pattern);
    this.#countLiterals(node, schema);

    if (typeof schema.$ref === "string") {
      const ref = schema.$ref;
      const label = `$ref ${JSON.stringify(boundText(ref, 200))}`;
      this.#reference(node, label, [[this.#resolver.key(node.base, ref), this.#resolve(node, "$ref", ref)]]);
    }
    // Ajv never resolves a dynamic reference where it points: `$dynamicRef: "#name"` (and
    // `$recursiveRef: "#"`, name "") calls, at run time, the last subschema entered that declares
    // `$dynamicAnchor: name` (`$recursiveAnchor: true`), or else the function it is compiled in —
    // whatever its fragment says (`#/$defs/x` names no anchor: always that function). Counted as
    // all of them: the declarations here, the functions once the graph is complete.
    for (const keyword of ["$dynamicRef", "$recursiveRef"] as const) {
      const ref = Object.hasOwn(schema, keyword) ? schema[keyword] : undefined;
      if (typeof ref !== "string" || !ref.startsWith("#")) continue; // Ajv refuses it when compiling
      const declared = this.#anchors().get(ref.slice(1)) ?? [];
      const label = `${keyword} ${JSON.stringify(boundText(ref, 200))}`;
      this.#reference(
        node,
        label,
        // Compiled where they stand (see GraphNode.anchor), not once more for the reference.
        declared.map((target) => [null, target] as const),
      );
      this.#dynamicRefs.push(index);
    }

    for (const keyword of IN_PLACE_SINGLE) if (Object.hasOwn(schema, keyword)) this.#sub(node, schema[keyword], true);
    for (const keyword of IN_PLACE_LIST) {
      const list = schema[keyword];
      if (Array.isArray(list) && Object.hasOwn(schema, keyword)) for (const item of list) this.#sub(node, item, true);
    }
    for (const keyword of IN_PLACE_MAP) {
      const map = schema[keyword];
      if (isRecord(map) && Object.hasOwn(schema, keyword)) {
        for (const key of Object.keys(map)) this.#sub(node, map[key], true);
      }
    }
    for (const keyword of NESTED_SINGLE) if (Object.hasOwn(schema, keyword)) this.#sub(node, schema[keyword], false);
    for (const keyword of NESTED_MAP) {
      const map = schema[keyword];
      if (!isRecord(map) || !Object.hasOwn(schema, keyword)) continue;
      for (const key of Object.keys(map)) {
        if (keyword === "patternProperties") this.#patterns.add(key);
        this.#sub(node, map[key], false);
      }
    }
    for (const keyword of NESTED_LIST_OR_SINGLE) {
      if (!Object.hasOwn(schema, keyword)) continue;
      const value = schema[keyword];
      if (Array.isArray(value)) for (const item of value) this.#sub(node, item, false);
      else this.#sub(node, value, false);
    }
  }

  /** Counts the node's literal data; past the limit in it (each value once), the schema is over it. */
  #countLiterals(node: GraphNode, schema: Record<string, unknown>): void {
    for (const keyword of LITERAL_KEYWORDS) {
      // The schema is a copy made from JSON text: each value has a JSON text of its own.
      if (Object.hasOwn(schema, keyword)) node.literals += (JSON.stringify(schema[keyword]) as string).length;
    }
    // A subschema reached under two base URIs is one object: its data is copied and checked once.
    if (!this.#literalsCounted.has(schema)) {
      this.#literalsCounted.add(schema);
      this.literals += node.literals;
    }
    if (this.literals > this.#limits.literals) {
      throw new SchemaLimitError(
        `it has more than ${this.#limits.literals} characters of enum and const values, at most ${this.#limits.literals}`,
      );
    }
  }

  /**
   * A dynamic reference's other landing: the function it is compiled in — the schema's, or that of
   * any reference target or anchor declaration it is nested in (Ajv compiles it in each of them).
   * An edge to each, applying to the value itself: one back to the same value without descending
   * is refused as endless, one that descends is recursion, counted at run time.
   */
  #dynamicFallbacks(): void {
    if (this.#dynamicRefs.length === 0) return;
    const functions = new Set<number>([1, ...[...this.compiledRefs.values()].filter((to) => to > LEAF)]);
    this.nodes.forEach((node, index) => {
      if (node.anchor) functions.add(index);
    });
    const parents: number[][] = this.nodes.map(() => []);
    this.nodes.forEach((node, from) => {
      for (const edge of node.edges) if (!edge.ref && edge.to !== LEAF) (parents[edge.to] as number[]).push(from);
    });
    for (const index of this.#dynamicRefs) {
      const node = this.nodes[index] as GraphNode;
      const seen = new Set<number>([index]);
      const stack = [index];
      for (let at = stack.pop(); at !== undefined; at = stack.pop()) {
        if (functions.has(at)) this.#edge(node, at, true, true);
        for (const parent of parents[at] as number[]) {
          if (!seen.has(parent)) {
            seen.add(parent);
            stack.push(parent);
          }
        }
      }
    }
  }

  /** The subschemas declaring each `$dynamicAnchor` (by name) or `$recursiveAnchor: true` (""), found once. */
  #anchors(): Map<string, Target[]> {
    if (this.#dynamicAnchors !== undefined) return this.#dynamicAnchors;
    const anchors = new Map<string, Target[]>();
    const add = (key: string, target: Target) => {
      const list = anchors.get(key);
      if (list === undefined) anchors.set(key, [target]);
      else list.push(target);
    };
    // Every object of the document but literal data (more candidates only make the count larger).
    const root = this.nodes[1]?.schema as Record<string, unknown>;
    const stack: Target[] = [{ schema: root, base: this.#resolver.rootBase }];
    const seen = new Set<object>();
    for (let target = stack.pop(); target !== undefined; target = stack.pop()) {
      const schema = target.schema as Record<string, unknown>;
      if (seen.has(schema)) continue;
      seen.add(schema);
      if (typeof schema.$dynamicAnchor === "string") add(schema.$dynamicAnchor, target);
      if (schema.$recursiveAnchor === true) add("", target);
      for (const key of Object.keys(schema)) {
        if (DATA_KEYWORDS.has(key)) continue;
        const value = schema[key];
        for (const child of Array.isArray(value) ? value : [value]) {
          if (isRecord(child)) stack.push({ schema: child, base: this.#resolver.enter(target.base, child) });
        }
      }
    }
    this.#dynamicAnchors = anchors;
    return anchors;
  }
}

const twinned = new WeakSet<object>();

/**
 * Ajv skips a property named `__proto__` in `properties` (it would read the prototype): its
 * schema would never be checked, and with `additionalProperties: false` the property would be
 * refused. The same subschema under `patternProperties` for exactly that name applies to the
 * value's own `__proto__` key. Only ever called on the copy of the schema that is compiled.
 */
function withOwnProtoProperty(schema: Record<string, unknown>): void {
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
function withOwnProtoDependency(schema: Record<string, unknown>): void {
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

// ─── Measuring ─────────────────────────────────────────────────────────────────────────────────

/** Strongly connected components (Tarjan's, with an explicit stack), emitted sinks first. */
function components(nodes: readonly GraphNode[]): { of: Int32Array; order: number[][] } {
  const count = nodes.length;
  const index = new Int32Array(count).fill(-1);
  const low = new Int32Array(count);
  const of = new Int32Array(count).fill(-1);
  const onStack = new Uint8Array(count);
  const stack: number[] = [];
  const order: number[][] = [];
  let next = 0;
  const work: Array<[node: number, edge: number]> = [];
  for (let start = 0; start < count; start++) {
    if (index[start] !== -1) continue;
    work.push([start, 0]);
    while (work.length > 0) {
      const frame = work[work.length - 1] as [number, number];
      const [node, edge] = frame;
      if (edge === 0 && index[node] === -1) {
        index[node] = low[node] = next++;
        stack.push(node);
        onStack[node] = 1;
      }
      const edges = (nodes[node] as GraphNode).edges;
      if (edge < edges.length) {
        frame[1]++;
        const to = (edges[edge] as Edge).to;
        if (index[to] === -1) work.push([to, 0]);
        else if (onStack[to] === 1) low[node] = Math.min(low[node] as number, index[to] as number);
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent !== undefined) low[parent[0]] = Math.min(low[parent[0]] as number, low[node] as number);
      if (low[node] === index[node]) {
        const component: number[] = [];
        let member: number;
        do {
          member = stack.pop() as number;
          onStack[member] = 0;
          of[member] = order.length;
          component.push(member);
        } while (member !== node);
        order.push(component);
      }
    }
  }
  return { of, order };
}

/**
 * Compile units of each node compiled as a function (`body`: it and its subschemas, references not
 * followed) and compiled inside another function (`inline`: the same, twice for an anchor
 * declaration, which Ajv compiles once more as a function of its own — so nested declarations
 * double at each level: 16 levels took 13 s to compile); and how deep subschemas nest. Subschemas
 * nest as a tree (the schema is a JSON copy), so this is one pass.
 */
function inlineUnits(nodes: readonly GraphNode[]): { body: Float64Array; inline: Float64Array; nesting: Int32Array } {
  const body = new Float64Array(nodes.length);
  const inline = new Float64Array(nodes.length).fill(-1);
  const nesting = new Int32Array(nodes.length);
  // A boolean subschema counts in the node it is in (see FALSE_UNITS).
  inline[LEAF] = 0;
  const work: Array<[node: number, edge: number]> = [];
  for (let start = 1; start < nodes.length; start++) {
    if ((inline[start] as number) >= 0) continue;
    work.push([start, 0]);
    while (work.length > 0) {
      const frame = work[work.length - 1] as [number, number];
      const node = nodes[frame[0]] as GraphNode;
      if (frame[1] < node.edges.length) {
        const edge = node.edges[frame[1]++] as Edge;
        if (!edge.ref && (inline[edge.to] as number) < 0) work.push([edge.to, 0]);
        continue;
      }
      work.pop();
      let units = node.units;
      let depth = 0;
      for (const edge of node.edges) {
        if (edge.ref) continue;
        units += inline[edge.to] as number;
        depth = Math.max(depth, (nesting[edge.to] as number) + 1);
      }
      body[frame[0]] = Math.min(units, SHOWN_COUNT);
      inline[frame[0]] = Math.min(node.anchor ? 2 * units : units, SHOWN_COUNT);
      nesting[frame[0]] = depth;
    }
  }
  return { body, inline, nesting };
}

/**
 * Compile units of a schema: the root's function, each reference target's (once per URI it is
 * compiled under), each distinct pattern by its program's size. Throws a {@link SchemaLimitError}
 * for subschemas nested deeper than {@link MAX_NESTING}, or a pattern whose program would be
 * larger than {@link MAX_PATTERN_SIZE}.
 */
function compileUnits(graph: SchemaGraph): number {
  const { body, nesting } = inlineUnits(graph.nodes);
  const deepest = nesting.reduce((most, depth) => Math.max(most, depth), 0);
  if (deepest > MAX_NESTING) {
    throw new SchemaLimitError(`it nests subschemas ${deepest} deep (its $refs aside), at most ${MAX_NESTING}`);
  }
  // A function's own anchor declaration calls that function: it is compiled once.
  let units = body[1] as number;
  for (const to of graph.compiledRefs.values()) {
    units += to === META_TARGET ? META_SCHEMA_UNITS : to === FALSE_TARGET ? FALSE_UNITS : (body[to] as number);
  }
  units += Math.ceil(graph.literals / LITERAL_CHARS_PER_UNIT);
  for (const pattern of graph.patterns) {
    const size = patternSize(pattern);
    if (size > MAX_PATTERN_SIZE) {
      throw new SchemaLimitError(
        `its pattern ${JSON.stringify(boundText(pattern, 200))} would compile to about ${countText(size)} instructions, at most ${MAX_PATTERN_SIZE} (use fewer or smaller counted repetitions)`,
      );
    }
    units += PATTERN_UNITS + Math.ceil(size / PATTERN_INSTRUCTIONS_PER_UNIT);
  }
  return Math.min(units, SHOWN_COUNT);
}

/** A reference that leads back to the same value without descending into it: validation would recurse forever. */
function checkNoInPlaceCycle(nodes: readonly GraphNode[]): void {
  const indegree = new Int32Array(nodes.length);
  for (const node of nodes) {
    for (const edge of node.edges) if (edge.inPlace) indegree[edge.to] = (indegree[edge.to] as number) + 1;
  }
  const ready: number[] = [];
  for (let node = 0; node < nodes.length; node++) if (indegree[node] === 0) ready.push(node);
  let done = 0;
  for (let node = ready.pop(); node !== undefined; node = ready.pop()) {
    done++;
    for (const edge of (nodes[node] as GraphNode).edges) {
      if (!edge.inPlace) continue;
      const left = (indegree[edge.to] as number) - 1;
      indegree[edge.to] = left;
      if (left === 0) ready.push(edge.to);
    }
  }
  if (done === nodes.length) return;
  // Every node left has a predecessor left: walking back through them must come round a cycle.
  const predecessor = new Int32Array(nodes.length).fill(-1);
  nodes.forEach((node, from) => {
    if (indegree[from] === 0) return;
    for (const edge of node.edges) if (edge.inPlace && (indegree[edge.to] as number) > 0) predecessor[edge.to] = from;
  });
  let at = indegree.findIndex((count) => count > 0);
  const path = new Map<number, number>();
  while (!path.has(at)) {
    path.set(at, path.size);
    at = predecessor[at] as number;
  }
  const cycle = [...path.keys()].slice(path.get(at));
  const looping = cycle.map((node) => nodes[node] as GraphNode).find((node) => node.ref !== undefined);
  throw new Error(
    `${looping?.ref ?? "$ref"} leads back to the same value without descending into it: validation would never end`,
  );
}

/**
 * Measures what compiling `schema` and validating against it cost, following its `$ref`s as Ajv
 * does, in time linear in the schema. Throws a {@link SchemaLimitError} as soon as the schema is
 * over `limits`; throws an `Error` for a reference Ajv could not resolve either, or one that
 * leads back to the same value (validation would never end).
 *
 * `schema` must be the copy that will be compiled: a declared `__proto__` property is given a
 * `patternProperties` twin in it (see `withOwnProtoProperty`), and `recursionEntries` are its objects.
 */
export function analyseSchema(
  schema: Record<string, unknown>,
  limits: Readonly<SchemaCost> = SCHEMA_LIMITS,
): SchemaAnalysis {
  const graph = new SchemaGraph(schema, new RefResolver(schema), limits);
  const { nodes } = graph;
  checkNoInPlaceCycle(nodes);
  const { of, order } = components(nodes);
  // Sinks first: every component's successors are measured before it. A component with a cycle
  // counts as one unrolling: entered once, then each of its references among its own subschemas
  // once more (a strongly connected component of n subschemas has at least n such edges); what it
  // refers to outside counts in full.
  const subschemas = new Float64Array(order.length);
  const keywords = new Float64Array(order.length);
  const literals = new Float64Array(order.length);
  // The longest chain of subschemas from each component on (the component's own all counted).
  const chain = new Float64Array(order.length);
  const recursionEntries: Record<string, unknown>[] = [];
  for (let component = 0; component < order.length; component++) {
    const members = order[component] as number[];
    let visits = 1;
    let words = 0;
    let data = 0;
    let after = 0;
    let cyclic = false;
    for (const member of members) {
      const node = nodes[member] as GraphNode;
      words += node.keywords;
      data += node.literals;
      for (const edge of node.edges) {
        const target = of[edge.to] as number;
        if (target === component) {
          cyclic = true;
          visits += 1;
        } else {
          visits += subschemas[target] as number;
          words += keywords[target] as number;
          data += literals[target] as number;
          after = Math.max(after, chain[target] as number);
        }
      }
    }
    subschemas[component] = Math.min(visits, SHOWN_COUNT);
    keywords[component] = Math.min(words, SHOWN_COUNT);
    literals[component] = Math.min(data, SHOWN_COUNT);
    chain[component] = members.length + after;
    if (!cyclic) continue;
    for (const member of members) {
      for (const edge of (nodes[member] as GraphNode).edges) {
        const target = nodes[edge.to] as GraphNode;
        if (edge.ref && of[edge.to] === component && target.schema !== undefined) recursionEntries.push(target.schema);
      }
    }
  }
  const root = of[1] as number;
  const expanded: SchemaCost = {
    subschemas: subschemas[root] as number,
    keywords: keywords[root] as number,
    patterns: graph.patterns.size,
    literals: literals[root] as number,
    compiled: 0,
  };
  // What validation would visit first (an exponential fan-out is best told as such), then what
  // compiling would go through.
  checkSchemaCost(expanded, limits);
  if ((chain[root] as number) > MAX_CHAIN) {
    throw new SchemaLimitError(
      `its $refs lead through ${chain[root]} subschemas one after another, at most ${MAX_CHAIN}`,
    );
  }
  const cost: SchemaCost = { ...expanded, compiled: compileUnits(graph) };
  checkSchemaCost(cost, limits);
  return { cost, recursionEntries: [...new Set(recursionEntries)] };
}
