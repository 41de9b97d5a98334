// Import circles among the files of src/ (docs/architecture.md: no import circle in src/), for
// scripts/check-imports.mjs, which collects the imports between the files of src/ as it checks
// their directions; test/scripts/import-circles.test.ts runs it on graphs of its own.

/** @typedef {{ from: string, to: string, line: number, typeOnly: boolean }} ImportEdge */
/** @typedef {import("./structure-baseline.mjs").Violation} Violation */

const edgeKey = (edge) => `${edge.from}\0${edge.to}`;

/**
 * The strongly connected components of more than one file in a graph of files.
 * @param {Map<string, Map<string, ImportEdge>>} graph file → the file it imports → the edge
 * @returns {string[][]} each component's files, sorted
 */
function circularComponents(graph) {
  const order = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const components = [];
  // Tarjan's algorithm; the recursion is as deep as the longest chain of imports in src/.
  const connect = (node) => {
    order.set(node, order.size);
    low.set(node, order.get(node));
    stack.push(node);
    onStack.add(node);
    for (const next of [...(graph.get(node)?.keys() ?? [])].sort()) {
      if (!order.has(next)) {
        connect(next);
        low.set(node, Math.min(low.get(node), low.get(next)));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node), order.get(next)));
    }
    if (low.get(node) !== order.get(node)) return;
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) components.push(component.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!order.has(node)) connect(node);
  return components.sort((a, b) => a[0].localeCompare(b[0]));
}

/** The fewest edges from `start` to `goal` inside `members` (breadth first, files in sorted order). */
function shortestPath(graph, members, start, goal) {
  const via = new Map([[start, undefined]]);
  const queue = [start];
  for (let index = 0; index < queue.length && !via.has(goal); index++) {
    const node = queue[index];
    for (const [next, edge] of [...graph.get(node).entries()].sort(([a], [b]) => a.localeCompare(b))) {
      if (!members.has(next) || via.has(next)) continue;
      via.set(next, edge);
      queue.push(next);
    }
  }
  const path = [];
  for (let node = goal; node !== start; node = via.get(node).from) path.unshift(via.get(node));
  return path;
}

/**
 * The import circles among `edges`: in each strongly connected component of more than one file,
 * circles that together pass through every edge inside it — for each edge not yet shown, the
 * shortest way back to where it started — each a violation at its first edge. A type-only edge
 * creates no circle at run time but still ties the files' floors together: it counts, and is named.
 * Every circle of a component carries the same baseline record: the component's files.
 * @param {ImportEdge[]} edges
 * @returns {Violation[]}
 */
export function importCircles(edges) {
  /** @type {Map<string, Map<string, ImportEdge>>} one edge per pair of files: a value import if any is */
  const graph = new Map();
  for (const edge of edges) {
    if (edge.from === edge.to) continue;
    if (!graph.has(edge.from)) graph.set(edge.from, new Map());
    const known = graph.get(edge.from).get(edge.to);
    if (known === undefined || (known.typeOnly && !edge.typeOnly)) graph.get(edge.from).set(edge.to, edge);
  }
  const violations = [];
  for (const component of circularComponents(graph)) {
    const members = new Set(component);
    const inside = component.flatMap((from) =>
      [...graph.get(from).values()].filter((edge) => members.has(edge.to)).sort((a, b) => a.to.localeCompare(b.to)),
    );
    const shown = new Set();
    for (const edge of inside) {
      if (shown.has(edgeKey(edge))) continue;
      const circle = [edge, ...shortestPath(graph, members, edge.to, edge.from)];
      for (const step of circle) shown.add(edgeKey(step));
      const route = [edge.from, ...circle.map((step) => step.to)].join(" → ");
      const lines = circle.map((step) => `${step.from}:${step.line}${step.typeOnly ? " type-only" : ""}`).join(", ");
      violations.push({
        file: edge.from,
        line: edge.line,
        rule: "import-circle",
        message: `${route} (imports at ${lines}); one circle among ${component.length} files that import each other (${component.join(", ")}): no import circle in src/ — move what they share down a floor`,
        baseline: { rule: "import-circle", files: component },
      });
    }
  }
  return violations;
}
