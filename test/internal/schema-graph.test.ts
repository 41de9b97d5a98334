import { describe, expect, it } from "vitest";
import { RefResolver } from "../../src/internal/ref-resolver.js";
import { SCHEMA_LIMITS, SchemaLimitError } from "../../src/internal/schema-cost.js";
import { LEAF, SchemaGraph } from "../../src/internal/schema-graph.js";

const graphOf = (schema: Record<string, unknown>, limits = SCHEMA_LIMITS) =>
  new SchemaGraph(schema, new RefResolver(schema), limits);

describe("SchemaGraph: the subschemas of a schema, its references followed", () => {
  it("has a node per subschema (booleans share one leaf), an edge per reference, each target compiled once per URI", () => {
    const schema = {
      $defs: { d: { type: "string", pattern: "^a$" } },
      properties: { a: { $ref: "#/$defs/d" }, b: { $ref: "#/%24defs/d" }, c: true, e: { enum: [1, 2] } },
    };
    const graph = graphOf(schema);
    // leaf, root, a, b, d (once), e
    expect(graph.nodes).toHaveLength(6);
    expect(graph.nodes[1]?.edges.filter((edge) => edge.to === LEAF)).toHaveLength(1);
    expect(graph.compiledRefs.size).toBe(2);
    expect([...graph.patterns]).toEqual(["^a$"]);
    expect(graph.literals).toBe("[1,2]".length);
  });

  it("stops growing past the limits, saying which", () => {
    const wide = { properties: Object.fromEntries(Array.from({ length: 20 }, (_, index) => [`p${index}`, {}])) };
    expect(() => graphOf(wide, { ...SCHEMA_LIMITS, subschemas: 10 })).toThrow(SchemaLimitError);
    expect(() => graphOf(wide, { ...SCHEMA_LIMITS, subschemas: 10 })).toThrow("at most 10");
    expect(() => graphOf({ enum: ["x".repeat(100)] }, { ...SCHEMA_LIMITS, literals: 50 })).toThrow(
      "it has more than 50 characters of enum and const values, at most 50",
    );
  });

  it("refuses a reference it cannot resolve", () => {
    expect(() => graphOf({ $ref: "#/nowhere" })).toThrow(/can't resolve \$ref "#\/nowhere"/);
  });
});
