import { boundText } from "./describe.js";
import { patternSize } from "./pattern-size.js";
import { RefResolver } from "./ref-resolver.js";
import {
  checkSchemaCost,
  countText,
  MAX_CHAIN,
  MAX_NESTING,
  MAX_PATTERN_SIZE,
  SCHEMA_LIMITS,
  type SchemaCost,
  SchemaLimitError,
  SHOWN_COUNT,
} from "./schema-cost.js";
import {
  type Edge,
  FALSE_TARGET,
  FALSE_UNITS,
  type GraphNode,
  LEAF,
  META_TARGET,
  SchemaGraph,
} from "./schema-graph.js";

/** Compile units of a reference to a meta-schema: Ajv compiles the meta-schema (a few ms). */
const META_SCHEMA_UNITS = 100;
/** Compile units of a pattern besides its program (checking it, translating it, RE2's parse). */
const PATTERN_UNITS = 5;
/** Instructions of a pattern's program per compile unit. */
const PATTERN_INSTRUCTIONS_PER_UNIT = 4;
/** Characters of literal data per compile unit (measured: 100,000 values, 1.2 MB, compiled in 140 ms). */
const LITERAL_CHARS_PER_UNIT = 400;

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
