import { describe, expect, it } from "vitest";
import * as z from "zod";
import { defineTool } from "../../src/define-tool.js";
import { newToolResult, type Tool, ToolRegistry } from "../../src/index.js";
import { compileJsonSchema } from "../../src/internal/json-schema-validator.js";
import { REGISTRY_SCHEMA_LIMITS, SCHEMA_LIMITS, SchemaLimitError } from "../../src/internal/schema-cost.js";
import { analyseSchema } from "../../src/internal/schema-limits.js";
import { registerMcpTools } from "../../src/mcp/index.js";
import { captureLogger } from "../helpers/capture-logger.js";
import { startScriptedServer, toolList } from "../helpers/mcp-servers.js";

function tool(name: string, parameters: Record<string, unknown>): Tool {
  return { name, description: `the ${name} tool`, parameters, execute: () => newToolResult("ran") };
}

/** `analyseSchema` on a copy, as `compileJsonSchema` calls it. */
function measure(schema: Record<string, unknown>) {
  return analyseSchema(JSON.parse(JSON.stringify(schema)) as Record<string, unknown>);
}

function thrown(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a throw");
}

type RefStyle = "definitions" | "$defs" | "$id" | "$anchor" | "draft-07 #anchor" | "percent-encoded";

/**
 * `levels` definitions, each `allOf: [{ $ref: next }, { $ref: next }]`: 3 KB at 40 levels, 2⁴¹
 * subschemas once the references are followed. Written in several ways of referring, so that
 * none is a way around the bound.
 */
function fanOut(levels: number, style: RefStyle = "definitions"): Record<string, unknown> {
  const defs: Record<string, unknown> = {};
  const name = (level: number) => (style === "percent-encoded" ? `level ${level}` : `d${level}`);
  const ref = (level: number): string => {
    switch (style) {
      case "$defs":
        return `#/$defs/d${level}`;
      case "$id":
        return `level-${level}.json`;
      case "$anchor":
      case "draft-07 #anchor":
        return `#a${level}`;
      case "percent-encoded":
        return `#/definitions/level%20${level}`;
      default:
        return `#/definitions/d${level}`;
    }
  };
  const id = (level: number): Record<string, unknown> => {
    if (style === "$id") return { $id: `level-${level}.json` };
    if (style === "$anchor") return { $anchor: `a${level}` };
    if (style === "draft-07 #anchor") return { $id: `#a${level}` };
    return {};
  };
  for (let level = 0; level < levels; level++) {
    defs[name(level)] = { ...id(level), allOf: [{ $ref: ref(level + 1) }, { $ref: ref(level + 1) }] };
  }
  defs[name(levels)] = { ...id(levels), type: "object" };
  const schema: Record<string, unknown> = {
    type: "object",
    properties: { value: { $ref: ref(0) } },
    [style === "$defs" || style === "$anchor" ? "$defs" : "definitions"]: defs,
  };
  if (style === "$id") schema.$id = "https://example.com/root.json";
  if (style === "$anchor") schema.$schema = "https://json-schema.org/draft/2020-12/schema";
  return schema;
}

describe("the expanded size of a schema ($ref fan-out)", () => {
  it("counts each subschema as often as validation would visit it, references followed", () => {
    // root, `value` (its $ref), d0; each level: the allOf node, then two $ref nodes, each → the
    // next level. E(last) = 1, E(level) = 3 + 2 E(next): the root's is 2^(levels + 2) − 1.
    expect(measure(fanOut(0)).cost).toEqual({ subschemas: 3, keywords: 5, patterns: 0, literals: 0, compiled: 7 });
    expect(measure(fanOut(1)).cost.subschemas).toBe(7);
    expect(measure(fanOut(10)).cost.subschemas).toBe(2 ** 12 - 1);
    const reused = { type: "object", properties: { a: { $ref: "#/$defs/p" }, b: { $ref: "#/$defs/p" } } };
    const defs = { p: { type: "object", properties: { x: { type: "string" }, y: { type: "number" } } } };
    // root + 2 × ($ref node + p + x + y)
    expect(measure({ ...reused, $defs: defs }).cost.subschemas).toBe(1 + 2 * 4);
  });

  it("measures 500 levels of fan-out at once: the count is linear in the schema, never the expansion", () => {
    const error = thrown(() => measure(fanOut(500)));
    expect(error).toBeInstanceOf(SchemaLimitError);
    expect(error.message).toBe(
      `it has more than 10^15 subschemas (its $refs followed), at most ${SCHEMA_LIMITS.subschemas}`,
    );
  });

  it.each<RefStyle>(["definitions", "$defs", "$id", "$anchor", "draft-07 #anchor", "percent-encoded"])(
    "refuses 40 levels at registration, whatever the way of referring (%s), before Ajv compiles anything",
    (style) => {
      const registry = new ToolRegistry();
      const schema = fanOut(40, style);
      expect(JSON.stringify(schema).length).toBeLessThan(6_000);
      const error = thrown(() => registry.register(tool("fan_out", schema)));
      expect(error).toBeInstanceOf(TypeError);
      expect(error).toBeInstanceOf(SchemaLimitError);
      expect(error.message).toBe(
        `tool "fan_out": parameters is over the schema limits: it has ${2 ** 42 - 1} subschemas (its $refs followed), at most ${SCHEMA_LIMITS.subschemas}`,
      );
      expect(registry.has("fan_out")).toBe(false);
    },
  );

  it("the same schema at a depth Ajv handles (10 levels) registers and validates", async () => {
    for (const style of ["definitions", "$id", "$anchor", "draft-07 #anchor", "percent-encoded"] as const) {
      const registry = new ToolRegistry();
      registry.register(tool("small", fanOut(10, style)));
      expect((await registry.execute("small", { value: {} })).forLLM).toBe("ran");
      expect((await registry.execute("small", { value: 1 })).forLLM).toMatch(
        /^invalid arguments for tool "small": value/,
      );
    }
  });

  it("also bounds dynamic references ($dynamicRef to every subschema declaring the anchor)", () => {
    const defs: Record<string, unknown> = {};
    for (let level = 0; level < 30; level++) {
      // (In place, each $dynamicRef could also land on the function it is in: the same value, refused.)
      const next = { allOf: [{ $dynamicRef: `#a${level + 1}` }, { $dynamicRef: `#a${level + 1}` }] };
      defs[`d${level}`] = { $dynamicAnchor: `a${level}`, type: "object", properties: { next } };
    }
    defs.d30 = { $dynamicAnchor: "a30", type: "object" };
    const schema = {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: { value: { $ref: "#/$defs/d0" } },
      $defs: defs,
    };
    expect(() => new ToolRegistry().register(tool("dynamic", schema))).toThrow(
      /parameters is over the schema limits: it has (\d+|more than 10\^15) subschemas \(its \$refs followed\)/,
    );
  });

  it("reads $dynamicRef as Ajv runs it: a fragment without a declared anchor calls the function it is in", async () => {
    const schema2020 = (schema: Record<string, unknown>) => ({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      ...schema,
    });
    // `#/$defs/leaf` names no anchor: Ajv calls the schema's own function on the same value, twice
    // per level. Measured as the leaf, this registered, and 25 levels of {a: …} took 3 s to check.
    const doubling = schema2020({
      type: "object",
      properties: { a: { allOf: [{ $dynamicRef: "#/$defs/leaf" }, { $dynamicRef: "#/$defs/leaf" }] } },
      $defs: { leaf: { type: "string" } },
    });
    // The analysis sees the recursion (so validation counts it) before anything runs.
    expect(measure(doubling).recursionEntries).toHaveLength(1);
    const registry = new ToolRegistry();
    registry.register(tool("doubling", doubling));
    let value: Record<string, unknown> = {};
    for (let level = 0; level < 30; level++) value = { a: value };
    expect((await registry.execute("doubling", value)).forLLM).toMatch(
      /^invalid arguments for tool "doubling": \(root\): too deeply nested to check against the tool's recursive schema/,
    );
    expect((await registry.execute("doubling", { a: { a: {} } })).forLLM).toBe("ran");

    // In place, it is the same value again: endless (every call overflowed the stack).
    const endless = schema2020({ type: "object", allOf: [{ $dynamicRef: "#/$defs/x" }], $defs: { x: {} } });
    expect(() => new ToolRegistry().register(tool("endless", endless))).toThrow(
      'tool "endless": parameters is not a valid JSON Schema: $dynamicRef "#/$defs/x" leads back to the same value without descending into it: validation would never end',
    );

    // The usual recursive pattern, the anchor on the root: it was refused ("can't resolve").
    const tree = schema2020({
      $dynamicAnchor: "node",
      type: "object",
      properties: { name: { type: "string" }, children: { type: "array", items: { $dynamicRef: "#node" } } },
    });
    const trees = new ToolRegistry();
    trees.register(tool("tree", tree));
    expect((await trees.execute("tree", { name: "a", children: [{ name: "b", children: [] }] })).forLLM).toBe("ran");
    expect((await trees.execute("tree", { children: [{ name: 1 }] })).forLLM).toBe(
      'invalid arguments for tool "tree": children[0].name: must be string',
    );
  });

  it("refuses nested $dynamicAnchor declarations that Ajv would compile again at every level (16: 13 s)", () => {
    const nested = (depth: number) => {
      let node: Record<string, unknown> = { type: "string" };
      for (let level = 0; level < depth; level++) {
        node = { $dynamicAnchor: `a${level}`, type: "object", properties: { x: node } };
      }
      return { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object", properties: { v: node } };
    };
    // Each declaration is compiled where it stands and once more as a function: 2 × per level.
    expect(measure(nested(1)).cost.compiled).toBe(3 + 2 * (1 + 3 + 2));
    const error = thrown(() => new ToolRegistry().register(tool("anchors", nested(12))));
    expect(error).toBeInstanceOf(SchemaLimitError);
    expect(error.message).toMatch(
      /^tool "anchors": parameters is over the schema limits: it has \d+ units of compiling/,
    );
  });

  it.each([
    ["not and if", { a: { not: { $ref: "#/definitions/b" } }, b: { if: { $ref: "#/definitions/a" } } }],
    [
      "then and else",
      // JSON text: an object literal with a `then` key reads as a thenable.
      JSON.parse(
        '{"a":{"if":true,"then":{"$ref":"#/definitions/b"}},"b":{"if":false,"else":{"$ref":"#/definitions/a"}}}',
      ),
    ],
  ])("refuses references that come back to the same value through %s", (_case, definitions) => {
    const schema = { type: "object", definitions, properties: { x: { $ref: "#/definitions/a" } } };
    expect(() => new ToolRegistry().register(tool("loop", schema))).toThrow(
      /leads back to the same value without descending into it: validation would never end$/,
    );
  });

  it("resolves references as Ajv does: $id bases, anchors in resources, escapes, percent-encoding, tuple items", async () => {
    const schema = {
      $id: "https://example.com/root.json",
      type: "object",
      definitions: {
        a: {
          $id: "dir/a.json",
          definitions: { b: { $id: "b.json", type: "string", minLength: 2 }, c: { $id: "#C", type: "integer" } },
          type: "object",
          properties: { x: { $ref: "b.json" } },
        },
        "s/l~sh": { type: "boolean" },
        "sp ace": { type: "null" },
      },
      properties: {
        p: { $ref: "dir/a.json" },
        q: { $ref: "dir/b.json" },
        r: { $ref: "dir/a.json#/properties/x" },
        c: { $ref: "dir/a.json#C" },
        e: { $ref: "#/definitions/s~1l~0sh" },
        f: { $ref: "#/definitions/sp%20ace" },
        t: { type: "array", items: [{ type: "string" }, { type: "number" }] },
        u: { $ref: "#/properties/t/items/1" },
      },
    };
    const registry = new ToolRegistry();
    registry.register(tool("refs", schema));
    const ok = { p: { x: "ab" }, q: "cd", r: "ef", c: 1, e: true, f: null, t: ["a", 1], u: 2 };
    expect((await registry.execute("refs", ok)).forLLM).toBe("ran");
    const bad = { p: { x: "a" }, q: "c", r: "e", c: 1.5, e: 0, f: 0, u: "2" };
    expect((await registry.execute("refs", bad)).forLLM).toBe(
      'invalid arguments for tool "refs": p.x: must NOT have fewer than 2 characters; q: must NOT have fewer than 2 characters; r: must NOT have fewer than 2 characters; c: must be integer; e: must be boolean; f: must be null; u: must be number',
    );
  });

  it("counts a reference to a JSON Schema meta-schema as one known subschema", async () => {
    const schema = { type: "object", properties: { schema: { $ref: "http://json-schema.org/draft-07/schema#" } } };
    expect(measure(schema).cost.subschemas).toBe(3);
    const registry = new ToolRegistry();
    registry.register(tool("takes_schema", schema));
    expect((await registry.execute("takes_schema", { schema: { type: "string" } })).forLLM).toBe("ran");
    expect((await registry.execute("takes_schema", { schema: { type: 12 } })).isError).toBe(true);
  });

  it("refuses a reference it cannot follow (Ajv could not either: nothing is loaded from elsewhere)", () => {
    const schema = { type: "object", properties: { a: { $ref: "https://example.com/other.json" } } };
    expect(() => new ToolRegistry().register(tool("elsewhere", schema))).toThrow(
      `tool "elsewhere": parameters is not a valid JSON Schema: can't resolve $ref "https://example.com/other.json": it must point into the schema (or to a JSON Schema meta-schema)`,
    );
    // A pointer that walks into the prototype is no reference either.
    const proto = { type: "object", properties: { a: { $ref: "#/properties/constructor" } } };
    expect(() => new ToolRegistry().register(tool("proto", proto))).toThrow(/can't resolve \$ref/);
  });

  it.each([
    ["the root", { type: "object", allOf: [{ $ref: "#" }] }, "#"],
    [
      "two definitions",
      {
        type: "object",
        definitions: { a: { $ref: "#/definitions/b" }, b: { anyOf: [{ $ref: "#/definitions/a" }] } },
        properties: { x: { $ref: "#/definitions/a" } },
      },
      "#/definitions/",
    ],
    ["a dependency", { type: "object", dependencies: { a: { $ref: "#" } } }, "#"],
  ])(
    "refuses a reference back to the same value (%s): validation would recurse until the stack overflows",
    (_case, schema, ref) => {
      const error = thrown(() => new ToolRegistry().register(tool("loop", schema)));
      expect(error).toBeInstanceOf(TypeError);
      expect(error.message).toContain(`tool "loop": parameters is not a valid JSON Schema: $ref "${ref}`);
      expect(error.message).toMatch(
        /leads back to the same value without descending into it: validation would never end$/,
      );
    },
  );

  it("accepts recursion that descends into the value (a tree), counting the recursive part once", async () => {
    const tree = {
      type: "object",
      properties: { node: { $ref: "#/$defs/node" } },
      $defs: {
        node: {
          type: "object",
          properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#/$defs/node" } } },
          required: ["name"],
        },
      },
    };
    expect(measure(tree).cost.subschemas).toBe(7);
    const registry = new ToolRegistry();
    registry.register(tool("tree", tree));
    const leaf = { name: "leaf" };
    expect(
      (await registry.execute("tree", { node: { name: "a", children: [leaf, { name: "b", children: [leaf] }] } }))
        .forLLM,
    ).toBe("ran");
    expect((await registry.execute("tree", { node: { name: "a", children: [{ children: [] }] } })).forLLM).toBe(
      'invalid arguments for tool "tree": node.children[0].name: required property is missing',
    );
  });
});

describe("recursive schemas: the work the model's nesting causes is bounded", () => {
  /** A node whose `a` is checked against the node twice: the work doubles per level of nesting. */
  const doubling = {
    type: "object",
    properties: { a: { allOf: [{ $ref: "#" }, { $ref: "#" }] } },
  };
  function nested(levels: number): Record<string, unknown> {
    let value: Record<string, unknown> = {};
    for (let level = 0; level < levels; level++) value = { a: value };
    return value;
  }

  it("registers such a schema (its size is small) but refuses deep arguments instead of checking 2^levels nodes", async () => {
    expect(measure(doubling).recursionEntries).toHaveLength(1);
    const registry = new ToolRegistry();
    const doubler = { ...tool("doubling", doubling), execute: () => "ran" };
    registry.register(doubler);
    expect((await registry.execute("doubling", nested(5))).forLLM).toBe("ran");
    // 2^24 (16 million) entries without the bound: several seconds; with it, at most 10,000 + 4 per value.
    const result = await registry.execute("doubling", nested(24));
    expect(result.isError).toBe(true);
    expect(result.forLLM).toBe(
      'invalid arguments for tool "doubling": (root): too deeply nested to check against the tool\'s recursive schema (it would enter its recursive parts more than 10100 times): nest the arguments less deeply',
    );
  });

  it("a recursive union whose branches both recurse (a filter tree) validates realistic nesting", () => {
    const filter = {
      type: "object",
      properties: { filter: { $ref: "#/$defs/f" } },
      $defs: {
        f: {
          anyOf: [
            {
              type: "object",
              properties: { op: { const: "and" }, args: { type: "array", items: { $ref: "#/$defs/f" } } },
              required: ["op"],
            },
            {
              type: "object",
              properties: { op: { const: "or" }, args: { type: "array", items: { $ref: "#/$defs/f" } } },
              required: ["op"],
            },
            {
              type: "object",
              properties: { op: { const: "eq" }, field: { type: "string" } },
              required: ["op", "field"],
            },
          ],
        },
      },
    };
    const { validate } = compileJsonSchema(filter);
    let value: Record<string, unknown> = { op: "eq", field: "x" };
    for (let level = 0; level < 8; level++) value = { op: "or", args: [value, { op: "eq", field: "y" }] };
    expect(validate({ filter: value })).toEqual({ success: true, data: { filter: value } });
    const wrong = { filter: { op: "and", args: [{ op: "eq" }] } };
    expect(validate(wrong).success).toBe(false);
  });

  it("a linear recursive schema accepts a large value (the bound grows with the arguments)", () => {
    const list = {
      type: "object",
      properties: { head: { $ref: "#/$defs/cell" } },
      $defs: { cell: { type: "object", properties: { value: { type: "number" }, next: { $ref: "#/$defs/cell" } } } },
    };
    const { validate } = compileJsonSchema(list);
    let head: Record<string, unknown> = { value: 0 };
    for (let index = 1; index < 3_000; index++) head = { value: index, next: head };
    const items = Array.from({ length: 5_000 }, (_, index) => ({ value: index }));
    const json = {
      type: "object",
      properties: { doc: { $ref: "#/$defs/json" } },
      $defs: {
        json: {
          anyOf: [
            { type: ["string", "number", "boolean", "null"] },
            { type: "array", items: { $ref: "#/$defs/json" } },
            { type: "object", additionalProperties: { $ref: "#/$defs/json" } },
          ],
        },
      },
    };
    expect(validate({ head }).success).toBe(true);
    const doc = { items, meta: { nested: [[[{ a: [1, 2, { b: null }] }]]] } };
    expect(compileJsonSchema(json).validate({ doc }).success).toBe(true);
  });
});

describe("patterns and keywords per schema", () => {
  const withPatterns = (count: number, salt = "") => ({
    type: "object",
    properties: Object.fromEntries(
      Array.from({ length: count }, (_, index) => [`p${index}`, { type: "string", pattern: `^${salt}${index}$` }]),
    ),
  });

  it("counts distinct patterns (pattern values and patternProperties keys)", () => {
    expect(measure(withPatterns(100)).cost.patterns).toBe(100);
    const repeated = {
      type: "object",
      properties: { a: { pattern: "^x$" }, b: { pattern: "^x$" } },
      patternProperties: { "^x$": {}, "^y": {} },
    };
    expect(measure(repeated).cost.patterns).toBe(2);
  });

  it("refuses a schema of 2,300 patterns at registration, before any is compiled", () => {
    const error = thrown(() => new ToolRegistry().register(tool("patterns", withPatterns(2_300))));
    expect(error).toBeInstanceOf(SchemaLimitError);
    expect(error.message).toBe(
      `tool "patterns": parameters is over the schema limits: it has 2300 patterns, at most ${SCHEMA_LIMITS.patterns}`,
    );
  });

  it("refuses more subschemas or keywords than one schema may have, saying which", () => {
    const wide = {
      type: "object",
      properties: Object.fromEntries(Array.from({ length: 6_000 }, (_, i) => [`p${i}`, {}])),
    };
    expect(() => new ToolRegistry().register(tool("wide", wide))).toThrow(
      `tool "wide": parameters is over the schema limits: it has more than ${SCHEMA_LIMITS.subschemas} subschemas, at most ${SCHEMA_LIMITS.subschemas}`,
    );
    const keywords = Object.fromEntries(Array.from({ length: 30_000 }, (_, i) => [`x-vendor-${i}`, i]));
    expect(() => new ToolRegistry().register(tool("verbose", { type: "object", ...keywords }))).toThrow(
      `tool "verbose": parameters is over the schema limits: it has more than ${SCHEMA_LIMITS.keywords} keywords, at most ${SCHEMA_LIMITS.keywords}`,
    );
  });
});

describe("what compiling costs: units of compiling, nesting, chains of references, pattern programs", () => {
  const big = (count: number) => ({
    type: "object",
    properties: Object.fromEntries(
      Array.from({ length: count }, (_, index) => [`q${index}`, { type: "string", minLength: 1 }]),
    ),
  });

  it("counts each subschema and each keyword that checks something; annotations and vendor keywords are free", () => {
    const annotated = {
      type: "object",
      description: "d",
      properties: {
        a: { type: "string", description: "d", title: "t", examples: ["x"], default: "x", format: "email", "x-v": 1 },
        b: false,
        c: true,
      },
    };
    // root: itself, type, properties; a: itself, type; `false`: 2; `true`: nothing
    expect(measure(annotated).cost.compiled).toBe(3 + 2 + 2);
  });

  it("counts a $ref target once per way it is written (Ajv compiles one function per URI)", () => {
    const refs = (...written: string[]) => ({
      type: "object",
      properties: Object.fromEntries(written.map((ref, index) => [`p${index}`, { $ref: ref }])),
      $defs: { A: { type: "object", properties: { x: { type: "string" } } } },
    });
    // root 3; each property 2; A: 3 + x 2
    expect(measure(refs("#/$defs/A")).cost.compiled).toBe(3 + 2 + 5);
    expect(measure(refs("#/$defs/A", "#/$defs/A", "#/$defs/A")).cost.compiled).toBe(3 + 3 * 2 + 5);
    expect(measure(refs("#/$defs/A", "#/%24defs/A")).cost.compiled).toBe(3 + 2 * 2 + 2 * 5);
    // A reference to `true` compiles to nothing, to `false` to one check (it counted as a meta-schema's 100).
    const booleans = {
      type: "object",
      properties: { t: { $ref: "#/$defs/t" }, f: { $ref: "#/$defs/f" } },
      $defs: { t: true, f: false },
    };
    expect(measure(booleans).cost.compiled).toBe(3 + 2 + 2 + 0 + 2);
  });

  it("refuses a large definition referred to in 16 spellings: within the expanded size, but compiled 16 times", () => {
    // `$` is reserved in a URI: "%24" stays a different URI, and Ajv compiles one function for each.
    const spellings = Array.from(
      { length: 16 },
      (_, index) => `#/definitions/${[..."$$$$"].map((char, at) => ((index >> at) & 1 ? "%24" : char)).join("")}`,
    );
    const schema = {
      type: "object",
      properties: Object.fromEntries(spellings.map((ref, index) => [`p${index}`, { $ref: ref }])),
      definitions: { $$$$: big(300) },
    };
    const once = measure({ ...schema, properties: { p0: { $ref: spellings[0] } } }).cost;
    expect(once.compiled).toBe(3 + 2 + (3 + 300 * 3));
    // All 16: 16 × 301 subschemas to visit (under 5,000), 16 × 903 units to compile.
    const error = thrown(() => new ToolRegistry().register(tool("spelled", schema)));
    expect(error).toBeInstanceOf(SchemaLimitError);
    expect(error.message).toBe(
      `tool "spelled": parameters is over the schema limits: it has ${3 + 16 * 2 + 16 * 903} units of compiling (each subschema and checking keyword Ajv compiles, patterns by size), at most 2500`,
    );
  });

  it("counts each name a dependencies entry requires (Ajv writes a check for each): 3,000 names are refused", () => {
    const names = Array.from({ length: 10 }, (_, index) => `n${index}`);
    const schema = {
      type: "object",
      dependencies: Object.fromEntries(Array.from({ length: 300 }, (_, index) => [`p${index}`, names])),
    };
    expect(measure({ ...schema, dependencies: { a: names } }).cost.compiled).toBe(3 + 10);
    expect(() => new ToolRegistry().register(tool("deps", schema))).toThrow(
      /parameters is over the schema limits: it has 3003 units of compiling/,
    );
  });

  it("refuses a pattern whose program would be huge (a counted repetition multiplies it), before RE2 builds it", () => {
    // 1 KB: 920,000 instructions, a second to compile, as many steps per character matched.
    const words = Array.from({ length: 100 }, (_, index) => `w${index}`.padEnd(10, "z")).join("|");
    const pattern = `(?:${words}){1,1000}`;
    expect(pattern.length).toBeLessThan(1_200);
    const schema = { type: "object", properties: { a: { type: "string", pattern } } };
    const error = thrown(() => new ToolRegistry().register(tool("huge_pattern", schema)));
    expect(error).toBeInstanceOf(SchemaLimitError);
    expect(error.message).toMatch(
      /^tool "huge_pattern": parameters is over the schema limits: its pattern "\(\?:w0zz.* would compile to about 1103000 instructions, at most 5000 \(use fewer or smaller counted repetitions\)$/,
    );
    // Ordinary patterns are cheap: an e-mail address with counted lengths is about 700.
    const email = "^[a-zA-Z0-9._-]{1,64}@[a-zA-Z0-9.-]{1,255}\\.[a-zA-Z]{2,24}$";
    expect(measure({ type: "object", properties: { a: { type: "string", pattern: email } } }).cost.compiled).toBe(
      3 + 3 + 5 + Math.ceil(689 / 4),
    );
  });

  it(`refuses subschemas nested more than 64 deep (compiling them costs more than linearly), accepts 64`, () => {
    const nested = (depth: number) => {
      let node: Record<string, unknown> = { type: "string" };
      for (let level = 1; level < depth; level++) node = { type: "array", items: node };
      return { type: "object", properties: { a: node } };
    };
    expect(() => new ToolRegistry().register(tool("ok", nested(64)))).not.toThrow();
    expect(() => new ToolRegistry().register(tool("deep", nested(65)))).toThrow(
      'tool "deep": parameters is over the schema limits: it nests subschemas 65 deep (its $refs aside), at most 64',
    );
  });

  it("refuses a chain of 300 definitions each referring to the next, saying so (Ajv's recursion overflowed the stack)", () => {
    const chain = (length: number) => {
      const $defs: Record<string, unknown> = {};
      for (let index = 0; index < length; index++) {
        $defs[`d${index}`] =
          index + 1 < length
            ? { type: "object", properties: { next: { $ref: `#/$defs/d${index + 1}` } } }
            : { type: "string" };
      }
      return { type: "object", properties: { v: { $ref: "#/$defs/d0" } }, $defs };
    };
    const error = thrown(() => new ToolRegistry().register(tool("chain", chain(300))));
    expect(error).toBeInstanceOf(SchemaLimitError);
    expect(error.message).toBe(
      'tool "chain": parameters is over the schema limits: its $refs lead through 601 subschemas one after another, at most 256',
    );
    expect(() => new ToolRegistry().register(tool("short_chain", chain(100)))).not.toThrow();
  });

  it("accepts a large ordinary schema: 1,000 described properties, enums, nested objects", async () => {
    const properties: Record<string, unknown> = {};
    for (let index = 0; index < 1_000; index++) {
      properties[`field_${index}`] =
        index % 10 === 0
          ? { type: "string", description: `field ${index}`, enum: ["a", "b", "c", "d", "e", "f", "g", "h", "i"] }
          : { type: "string", description: `field ${index}` };
    }
    const schema = { type: "object", properties, required: ["field_0"] };
    expect(measure(schema).cost.compiled).toBeLessThanOrEqual(SCHEMA_LIMITS.compiled);
    const registry = new ToolRegistry();
    registry.register(tool("wide", schema));
    expect((await registry.execute("wide", { field_0: "a" })).forLLM).toBe("ran");
  });
});

describe("the compiled total per registry", () => {
  /** 100 patterns: the most one schema may have. Compiled once, then reused from the cache. */
  const heavy = {
    type: "object",
    properties: Object.fromEntries(
      Array.from({ length: 100 }, (_, index) => [`p${index}`, { type: "string", pattern: `^r${index}$` }]),
    ),
  };
  const perRegistry = REGISTRY_SCHEMA_LIMITS.patterns / 100;

  it("refuses the schema that would take the registry past its patterns, and counts replaced and removed tools out", () => {
    const registry = new ToolRegistry();
    for (let index = 0; index < perRegistry; index++) registry.register(tool(`t${index}`, heavy));
    const error = thrown(() => registry.register(tool("one_more", heavy)));
    expect(error).toBeInstanceOf(SchemaLimitError);
    expect(error.message).toBe(
      `tool "one_more": parameters is over the schema limits: with it, the registry's schemas would have ${REGISTRY_SCHEMA_LIMITS.patterns + 100} patterns, at most ${REGISTRY_SCHEMA_LIMITS.patterns} (this one has 100)`,
    );
    expect(registry.has("one_more")).toBe(false);
    // Registering a name again replaces its tool: its schema does not count twice.
    registry.register(tool("t0", heavy));
    // A tool with its own validator, or an empty schema, compiles nothing and costs nothing.
    registry.register(tool("free", { type: "object" }));
    registry.register(
      defineTool({
        name: "zod",
        description: "zod",
        parameters: z.object({ s: z.string().regex(/^a$/) }),
        execute: () => "ok",
      }),
    );
    // A removed tool frees its share; a clone holds the same tools, so the same total.
    expect(registry.unregister("t1")).toBe(true);
    registry.register(tool("one_more", heavy));
    expect(() => registry.clone().register(tool("another", heavy))).toThrow(
      /with it, the registry's schemas would have/,
    );
    // Each registry has its own total.
    new ToolRegistry().register(tool("another", heavy));
  });

  it("an MCP import skips the tools past the limits with a warning and imports the rest", async () => {
    const { logger, lines } = captureLogger();
    const server = await startScriptedServer({
      listTools: () =>
        toolList([
          { name: "fine", inputSchema: { type: "object", properties: { a: { type: "string" } } } },
          { name: "fan_out", inputSchema: fanOut(40) },
          { name: "patterns", inputSchema: withManyPatterns() },
        ]),
    });
    try {
      const registry = new ToolRegistry();
      const handle = await registerMcpTools(registry, server.client, { serverName: "m", logger });
      expect(handle.names).toEqual(["mcp_m_fine"]);
      const warnings = lines.filter((line) => line.msg === "MCP tool skipped: the registry refused it");
      expect(warnings.map((line) => line.mcpTool)).toEqual(["fan_out", "patterns"]);
      expect(warnings[0]?.reason).toMatch(/parameters is over the schema limits: it has \d+ subschemas/);
      expect(warnings[1]?.reason).toMatch(/it has 1000 patterns, at most 100$/);
      await handle.close();
    } finally {
      server.disconnect();
    }
  });

  function withManyPatterns(): Record<string, unknown> {
    return {
      type: "object",
      properties: Object.fromEntries(
        Array.from({ length: 1_000 }, (_, index) => [`p${index}`, { type: "string", pattern: `^q${index}$` }]),
      ),
    };
  }
});

describe("literal data: enum and const values, by their JSON size", () => {
  const ints = (count: number) => Array.from({ length: count }, (_, index) => index);

  it("counts the JSON text of enum and const values, references followed; default and examples are free", () => {
    const values = ["red", "green", "blue"];
    const { cost } = measure({
      type: "object",
      $defs: { colour: { enum: values } },
      properties: {
        a: { $ref: "#/$defs/colour" },
        b: { $ref: "#/$defs/colour" },
        c: { const: { x: [1, 2] }, default: "x".repeat(10_000), examples: ["y".repeat(10_000)] },
      },
    });
    const enumChars = JSON.stringify(values).length;
    expect(cost.literals).toBe(2 * enumChars + JSON.stringify({ x: [1, 2] }).length);
  });

  it("refuses an enum of 18,000 numbers reached through 49 × 49 references (99 KB; one validation took 4.6 s)", () => {
    const fan = (ref: string) => ({ allOf: Array.from({ length: 49 }, () => ({ $ref: ref })) });
    const schema = {
      type: "object",
      $defs: { e: { enum: ints(18_000) }, a: fan("#/$defs/e") },
      properties: { x: fan("#/$defs/a") },
    };
    expect(JSON.stringify(schema).length).toBeLessThan(100_000);
    const error = thrown(() => new ToolRegistry().register(tool("enums", schema)));
    expect(error).toBeInstanceOf(SchemaLimitError);
    expect(error.message).toBe(
      `tool "enums": parameters is over the schema limits: it has ${49 * 49 * JSON.stringify(ints(18_000)).length} characters of enum and const values (its $refs followed), at most ${SCHEMA_LIMITS.literals}`,
    );
  });

  it("refuses more literal data than one schema may have before following any reference, and accepts the same enum once", async () => {
    const values = Array.from({ length: 50_000 }, (_, index) => `value-${index}`);
    const error = thrown(() => measure({ type: "object", properties: { x: { enum: values } } }));
    expect(error).toBeInstanceOf(SchemaLimitError);
    expect(error.message).toBe(
      `it has more than ${SCHEMA_LIMITS.literals} characters of enum and const values, at most ${SCHEMA_LIMITS.literals}`,
    );
    const registry = new ToolRegistry();
    registry.register(tool("big_enum", { type: "object", properties: { x: { enum: ints(18_000) } } }));
    expect((await registry.execute("big_enum", { x: 17_999 })).forLLM).toBe("ran");
    expect((await registry.execute("big_enum", { x: "no" })).isError).toBe(true);
  });

  it("counts literal data in units of compiling (Ajv copies and checks it): one unit per 400 characters", () => {
    const small = measure({ type: "object", properties: { x: { enum: [1] } } }).cost.compiled;
    const values = ints(10_000);
    const large = measure({ type: "object", properties: { x: { enum: values } } }).cost.compiled;
    expect(large - small).toBe(Math.ceil(JSON.stringify(values).length / 400) - 1);
  });

  it("bounds the registry's total: 1,000 tools of an 82 KB enum each are refused past 5,000,000 characters", () => {
    const schema = { type: "object", properties: { x: { enum: ints(14_000) } } };
    const each = JSON.stringify(ints(14_000)).length;
    const registry = new ToolRegistry();
    let registered = 0;
    let error: Error | undefined;
    for (let index = 0; index < 1_000 && error === undefined; index++) {
      try {
        registry.register(tool(`t${index}`, schema));
        registered++;
      } catch (caught) {
        error = caught as Error;
      }
    }
    expect(registered).toBe(Math.floor(REGISTRY_SCHEMA_LIMITS.literals / each));
    expect(error).toBeInstanceOf(SchemaLimitError);
    expect(error?.message).toMatch(
      /with it, the registry's schemas would have \d+ characters of enum and const values \(its \$refs followed\), at most 5000000 \(this one has \d+\)$/,
    );
  });
});

describe("zod tools are validated by zod: the schema limits do not apply", () => {
  it("registers a zod tool whose JSON Schema is over a limit (Ajv never compiles it)", async () => {
    const shape = Object.fromEntries(
      Array.from({ length: 150 }, (_, index) => [
        `f${index}`,
        z
          .string()
          .regex(new RegExp(`^[a-z]+${index}$`))
          .optional(),
      ]),
    );
    const big = defineTool({ name: "big", description: "big", parameters: z.object(shape), execute: () => "ok" });
    const registry = new ToolRegistry();
    registry.register(big);
    expect(() => measure(big.parameters)).toThrow(`it has 150 patterns, at most ${SCHEMA_LIMITS.patterns}`);
    expect((await registry.execute("big", { f1: "abc1" })).forLLM).toBe("ok");
  });
});
