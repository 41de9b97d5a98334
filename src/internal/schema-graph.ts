import { boundText, isRecord } from "./describe.js";
import { withOwnProtoDependency, withOwnProtoProperty } from "./own-proto-schema.js";
import { META, type RefResolver, type Target } from "./ref-resolver.js";
import { type SchemaCost, SchemaLimitError } from "./schema-cost.js";

// ─── The graph of subschemas ────────────────────────────────────────────────────────────────────

/** How a keyword holds subschemas: one, a list, a map (by name) of them, or a list or one. */
const ONE = 0;
const LIST = 1;
const MAP = 2;
const LIST_OR_ONE = 3;

/**
 * Keywords with subschemas, in the order they are expanded: how each holds them, and whether they
 * apply to the value itself (else to a property, an item or a key of it). `dependencies` also holds
 * arrays of names.
 */
const SUBSCHEMA_KEYWORDS = (
  [
    [true, ONE, ["not", "if", "then", "else"]],
    [true, LIST, ["allOf", "anyOf", "oneOf"]],
    [true, MAP, ["dependentSchemas", "dependencies"]],
    [
      false,
      ONE,
      [
        "additionalProperties",
        "unevaluatedProperties",
        "propertyNames",
        "additionalItems",
        "contains",
        "unevaluatedItems",
      ],
    ],
    [false, MAP, ["properties", "patternProperties"]],
    [false, LIST_OR_ONE, ["items", "prefixItems"]],
  ] as const
).flatMap(([inPlace, shape, keywords]) => keywords.map((keyword) => [keyword, shape, inPlace] as const));

/** Keywords whose value is literal data, never a subschema. */
const DATA_KEYWORDS = new Set(["default", "enum", "const", "examples", "required"]);

/** Keywords whose arrays of property names Ajv checks name by name (no loop): each name counts. */
const NAME_LIST_MAPS = ["dependencies", "dependentRequired"] as const;
/** Keywords whose value is literal data validation compares values with. */
const LITERAL_KEYWORDS = ["enum", "const"] as const;

/**
 * Keywords Ajv generates code for: those with subschemas, names or literal data above, and these;
 * the rest (`description`, `title`, `default`, `examples`, `format` — not asserted —, vendor
 * keywords …) compile to nothing.
 */
const CHECKING_KEYWORDS = new Set<string>([
  ...SUBSCHEMA_KEYWORDS.map(([keyword]) => keyword),
  ...NAME_LIST_MAPS,
  ...LITERAL_KEYWORDS,
  "type",
  "nullable",
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
  "$ref",
  "$dynamicRef",
  "$recursiveRef",
  "$dynamicAnchor",
  "$recursiveAnchor",
]);

/** Compile units of a `false` subschema (measured: as much as `{ type: "string" }`). */
export const FALSE_UNITS = 2;
/** The graph's shared node for `true`, `false` and meta-schemas: one check, no keywords, no edges. */
export const LEAF = 0;
/** In {@link SchemaGraph.compiledRefs}: a reference to a meta-schema, and one to `false`. */
export const META_TARGET = -1;
export const FALSE_TARGET = -2;

/** An edge of the graph: to a subschema, or through a reference. */
export interface Edge {
  to: number;
  /** The edge follows a reference (`$ref`, `$dynamicRef`, `$recursiveRef`). */
  ref: boolean;
  /** It applies to the value itself, not to a part of it. */
  inPlace: boolean;
}

/** A subschema (an object under one base URI) of the graph. */
export interface GraphNode {
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

/** The refusal of a schema with more of `what` than `limit`, which the graph stopped counting at. */
function overLimit(limit: number, what: string): SchemaLimitError {
  return new SchemaLimitError(`it has more than ${limit} ${what}, at most ${limit}`);
}

/** The graph of a schema's subschemas, its references followed as Ajv does: built breadth first, bounded by the limits. */
export class SchemaGraph {
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
      throw overLimit(this.#limits.subschemas, "subschemas");
    }
    const index = this.nodes.length;
    bases.set(base, index);
    this.nodes.push({ schema, base, keywords: 0, units: 0, literals: 0, anchor: false, edges: [] });
    return index;
  }

  #edge(from: GraphNode, to: number, ref: boolean, inPlace: boolean): void {
    if (++this.#edges > this.#limits.subschemas) {
      throw overLimit(this.#limits.subschemas, "subschemas (its $refs followed)");
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
      throw overLimit(this.#limits.keywords, "keywords");
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

    for (const [keyword, shape, inPlace] of SUBSCHEMA_KEYWORDS) {
      if (!Object.hasOwn(schema, keyword)) continue;
      const value = schema[keyword];
      if (shape === MAP) {
        if (!isRecord(value)) continue;
        for (const key of Object.keys(value)) {
          if (keyword === "patternProperties") this.#patterns.add(key);
          this.#sub(node, value[key], inPlace);
        }
      } else if (Array.isArray(value) && shape !== ONE) for (const item of value) this.#sub(node, item, inPlace);
      else if (shape !== LIST) this.#sub(node, value, inPlace);
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
      throw overLimit(this.#limits.literals, "characters of enum and const values");
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
