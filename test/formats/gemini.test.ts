import fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { type GeminiSchema, toGeminiSchema, toGeminiTools } from "../../src/formats/gemini.js";
import { defineTool, type ToolDefinition, ToolRegistry } from "../../src/index.js";

type Json = Record<string, unknown>;

const ALLOWED_KEYS = new Set([
  "type",
  "description",
  "format",
  "nullable",
  "enum",
  "properties",
  "required",
  "items",
  "anyOf",
  "minItems",
  "maxItems",
  "minLength",
  "maxLength",
  "minProperties",
  "maxProperties",
  "minimum",
  "maximum",
  "pattern",
]);
const TYPES = new Set(["STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT"]);

/** Every key Gemini's Schema does not know, anywhere in a converted schema (property names excepted). */
function unsupported(schema: unknown, path = "$"): string[] {
  if (typeof schema !== "object" || schema === null) return [`${path} is not an object`];
  const problems: string[] = [];
  for (const [key, value] of Object.entries(schema)) {
    if (!ALLOWED_KEYS.has(key)) problems.push(`${path}.${key}`);
    if (key === "type" && !TYPES.has(value as string)) problems.push(`${path}.type = ${String(value)}`);
    if (key === "type" && "anyOf" in schema) problems.push(`${path} has both type and anyOf`);
    if (key === "enum" && !(value as unknown[]).every((item) => typeof item === "string")) {
      problems.push(`${path}.enum has non-strings`);
    }
    if (key === "items") problems.push(...unsupported(value, `${path}.items`));
    if (key === "anyOf")
      for (const [index, item] of (value as unknown[]).entries()) {
        problems.push(...unsupported(item, `${path}.anyOf[${index}]`));
      }
    if (key === "properties") {
      for (const [name, property] of Object.entries(value as Json))
        problems.push(...unsupported(property, `${path}.${name}`));
    }
  }
  return problems;
}

describe("toGeminiSchema", () => {
  it("converts a zod schema to Gemini's subset", () => {
    const tool = defineTool({
      name: "book",
      description: "Book a table",
      parameters: z.object({
        website: z.url().describe("Contact page"),
        guests: z.number().int().min(1).max(12),
        seating: z.enum(["inside", "terrace"]).default("inside"),
        note: z.string().max(200).nullable(),
        tags: z.array(z.string()).min(1).optional(),
        party: z.object({ name: z.string(), vip: z.boolean() }).strict(),
        code: z.literal("A1"),
      }),
      execute: () => "ok",
    });

    const schema = toGeminiSchema(tool.parameters);

    expect(unsupported(schema)).toEqual([]);
    expect(schema).toMatchInlineSnapshot(`
      {
        "properties": {
          "code": {
            "enum": [
              "A1",
            ],
            "type": "STRING",
          },
          "guests": {
            "maximum": 12,
            "minimum": 1,
            "type": "INTEGER",
          },
          "note": {
            "maxLength": "200",
            "nullable": true,
            "type": "STRING",
          },
          "party": {
            "properties": {
              "name": {
                "type": "STRING",
              },
              "vip": {
                "type": "BOOLEAN",
              },
            },
            "required": [
              "name",
              "vip",
            ],
            "type": "OBJECT",
          },
          "seating": {
            "description": "default: "inside"",
            "enum": [
              "inside",
              "terrace",
            ],
            "type": "STRING",
          },
          "tags": {
            "items": {
              "type": "STRING",
            },
            "minItems": "1",
            "type": "ARRAY",
          },
          "website": {
            "description": "Contact page (format: uri)",
            "type": "STRING",
          },
        },
        "required": [
          "website",
          "guests",
          "note",
          "party",
          "code",
        ],
        "type": "OBJECT",
      }
    `);
  });

  it.each<[string, Json, Json]>([
    [
      "drops keywords Gemini rejects",
      {
        $schema: "http://json-schema.org/draft-07/schema#",
        $id: "x",
        $comment: "c",
        title: "T",
        type: "object",
        additionalProperties: false,
        examples: [{}],
        properties: { a: { type: "string", title: "A", not: { const: "" }, deprecated: true } },
      },
      { type: "OBJECT", properties: { a: { type: "STRING" } } },
    ],
    ["type with null", { type: ["string", "null"] }, { type: "STRING", nullable: true }],
    [
      "anyOf with a null branch",
      { description: "d", anyOf: [{ type: "integer" }, { type: "null" }] },
      { type: "INTEGER", nullable: true, description: "d" },
    ],
    [
      "anyOf of two types",
      { anyOf: [{ type: "string" }, { type: "number" }] },
      { anyOf: [{ type: "STRING" }, { type: "NUMBER" }] },
    ],
    [
      "oneOf, as anyOf",
      { oneOf: [{ type: "string" }, { type: "boolean" }, { type: "null" }] },
      { nullable: true, anyOf: [{ type: "STRING" }, { type: "BOOLEAN" }] },
    ],
    [
      "a type list",
      { type: ["string", "integer"], description: "id" },
      { description: "id", anyOf: [{ type: "STRING" }, { type: "INTEGER" }] },
    ],
    ["a string const", { const: "on" }, { type: "STRING", enum: ["on"] }],
    ["a number const", { const: 3 }, { type: "INTEGER", description: "must be 3" }],
    [
      "a numeric enum",
      { type: "integer", enum: [1, 2, 3], description: "Level" },
      { type: "INTEGER", description: "Level (one of 1, 2, 3)" },
    ],
    ["an enum with null", { enum: ["a", null] }, { type: "STRING", enum: ["a"], nullable: true }],
    ["an unsupported string format", { type: "string", format: "uri" }, { type: "STRING", description: "format: uri" }],
    ["date-time", { type: "string", format: "date-time" }, { type: "STRING", format: "date-time" }],
    ["int64", { type: "integer", format: "int64" }, { type: "INTEGER", format: "int64" }],
    [
      "exclusive bounds and a default",
      { type: "number", exclusiveMinimum: 0, exclusiveMaximum: 1, default: 0.5 },
      { type: "NUMBER", description: "greater than 0; less than 1; default: 0.5" },
    ],
    [
      "counts, as strings",
      { type: "string", minLength: 1, maxLength: 5, pattern: "^a" },
      { type: "STRING", minLength: "1", maxLength: "5", pattern: "^a" },
    ],
    [
      "object size bounds, and required names that exist",
      { type: "object", properties: { a: { type: "string" } }, required: ["a", "ghost", "a"], minProperties: 1 },
      { type: "OBJECT", properties: { a: { type: "STRING" } }, required: ["a"], minProperties: "1" },
    ],
    [
      "a property whose schema is false",
      { type: "object", properties: { a: { type: "string" }, b: false }, required: ["a", "b"] },
      { type: "OBJECT", properties: { a: { type: "STRING" } }, required: ["a"] },
    ],
    [
      "a $ref into $defs",
      {
        type: "object",
        properties: { home: { $ref: "#/$defs/Address", description: "Home" } },
        $defs: { Address: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
      },
      {
        type: "OBJECT",
        properties: {
          home: { type: "OBJECT", description: "Home", properties: { city: { type: "STRING" } }, required: ["city"] },
        },
      },
    ],
    [
      "a recursive $ref (cut to an OBJECT one level down)",
      {
        type: "object",
        properties: { root: { $ref: "#/definitions/Node" } },
        definitions: {
          Node: { type: "object", properties: { name: { type: "string" }, child: { $ref: "#/definitions/Node" } } },
        },
      },
      {
        type: "OBJECT",
        properties: {
          root: { type: "OBJECT", properties: { name: { type: "STRING" }, child: { type: "OBJECT" } } },
        },
      },
    ],
    [
      "an unresolvable $ref",
      { type: "object", properties: { a: { $ref: "https://example.com/s.json" } } },
      { type: "OBJECT", properties: { a: { type: "OBJECT" } } },
    ],
    [
      "allOf, merged",
      {
        allOf: [
          { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
          { properties: { b: { type: "number" } }, required: ["b"] },
        ],
      },
      { type: "OBJECT", properties: { a: { type: "STRING" }, b: { type: "NUMBER" } }, required: ["a", "b"] },
    ],
    [
      "a tuple",
      { type: "array", prefixItems: [{ type: "string" }, { type: "number" }] },
      { type: "ARRAY", items: { anyOf: [{ type: "STRING" }, { type: "NUMBER" }] } },
    ],
    ["types inferred from keywords", { items: { type: "string" } }, { type: "ARRAY", items: { type: "STRING" } }],
    ["an untyped schema", { description: "anything" }, { description: "anything" }],
  ])("%s", (_case, input, expected) => {
    const output = toGeminiSchema(input);
    expect(output).toEqual(expected);
    expect(unsupported(output)).toEqual([]);
  });

  it("expands any local $ref, not only $defs (#/properties/a)", () => {
    const schema = { type: "object", properties: { a: { type: "string" }, b: { $ref: "#/properties/a" } } };
    expect(toGeminiSchema(schema)).toMatchObject({ properties: { b: { type: "STRING" } } });
  });

  it("keeps model-facing property names such as __proto__ as plain properties", () => {
    const output = toGeminiSchema(
      JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"},"constructor":{"type":"number"}}}'),
    );
    expect(Object.keys(output.properties ?? {})).toEqual(["__proto__", "constructor"]);
    expect(JSON.parse(JSON.stringify(output))).toEqual({
      type: "OBJECT",
      properties: JSON.parse('{"__proto__":{"type":"STRING"},"constructor":{"type":"NUMBER"}}'),
    });
  });

  it("never throws and emits only Gemini's keywords, whatever the input", () => {
    // Depth-bounded: a schema node whose subschemas are nodes one level shallower.
    const nodeOf = (depth: number): fc.Arbitrary<Json> => {
      const child = depth === 0 ? fc.constant<Json>({ type: "string" }) : nodeOf(depth - 1);
      return fc.record(
        {
          type: fc.oneof(
            fc.constantFrom("string", "number", "integer", "boolean", "array", "object", "null", "bogus"),
            fc.array(fc.constantFrom("string", "number", "null"), { maxLength: 3 }),
          ),
          description: fc.string(),
          properties: fc.dictionary(fc.string(), child, { maxKeys: 3 }),
          required: fc.array(fc.string(), { maxLength: 3 }),
          items: child,
          anyOf: fc.array(child, { maxLength: 3 }),
          enum: fc.array(fc.oneof(fc.string(), fc.integer(), fc.constant(null)), { maxLength: 3 }),
          format: fc.constantFrom("email", "date-time", "int32"),
          additionalProperties: fc.boolean(),
          $ref: fc.constantFrom("#/$defs/A", "#/nope"),
          default: fc.jsonValue({ maxDepth: 2 }),
          minLength: fc.integer(),
        },
        { requiredKeys: [] },
      );
    };
    const schema = { node: nodeOf(3) };
    fc.assert(
      fc.property(schema.node, (node) => {
        const root = { ...node, $defs: { A: node } };
        expect(unsupported(toGeminiSchema(root))).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });
});

/** `count` definitions, each an object whose properties refer to every other one: 2 KB at 8. */
function everyDefinitionReferringToEveryOther(count: number): Json {
  const $defs: Json = {};
  for (let index = 0; index < count; index++) {
    const properties: Json = {};
    for (let other = 0; other < count; other++) {
      if (other !== index) properties[`to${other}`] = { $ref: `#/$defs/d${other}` };
    }
    $defs[`d${index}`] = { type: "object", description: `node ${index}`, properties };
  }
  return { type: "object", properties: { root: { $ref: "#/$defs/d0" }, name: { type: "string" } }, $defs };
}

/** Subschemas in a converted schema (each node of the tree once). */
function countNodes(schema: unknown): number {
  if (typeof schema !== "object" || schema === null) return 0;
  const node = schema as GeminiSchema;
  let count = 1;
  for (const property of Object.values(node.properties ?? {})) count += countNodes(property);
  for (const branch of node.anyOf ?? []) count += countNodes(branch);
  return count + countNodes(node.items);
}

describe("toGeminiSchema: a bound on what a conversion produces", () => {
  it("converts definitions that all refer to each other (2 KB) into a bounded schema, not megabytes", () => {
    const schema = everyDefinitionReferringToEveryOther(8);
    expect(JSON.stringify(schema).length).toBeLessThan(2_500);
    // Every path visiting the definitions in a new order used to be expanded: 2.4 MB at 8.
    const output = toGeminiSchema(schema);
    const text = JSON.stringify(output);
    expect(text.length).toBeLessThanOrEqual(100_000);
    expect(unsupported(output)).toEqual([]);
    // The top of the schema is all there; what is cut says so, and keeps its type.
    expect(output.properties?.name).toEqual({ type: "STRING" });
    expect(output.properties?.root).toMatchObject({ type: "OBJECT", description: "node 0" });
    expect(Object.keys(output.properties?.root?.properties ?? {})).toHaveLength(7);
    expect(text).toContain(
      `"type":"OBJECT","description":"not shown in full: the tool's schema is too large to send expanded"`,
    );
    // And as the definitions grow (run only once the bound holds at 8: without it, 12 never ends).
    for (const count of [12, 24]) {
      const larger = everyDefinitionReferringToEveryOther(count);
      const converted = JSON.stringify(toGeminiSchema(larger));
      expect(converted.length).toBeLessThanOrEqual(Math.max(100_000, 4 * JSON.stringify(larger).length));
      expect(JSON.parse(converted).properties.root.type).toBe("OBJECT");
    }
  });

  it("gives a type list's branches only their own type's keywords (a string branch has no properties)", () => {
    expect(
      toGeminiSchema({
        type: ["object", "string", "null"],
        properties: { a: { type: "integer", minimum: 1 } },
        required: ["a"],
        minLength: 2,
      }),
    ).toEqual({
      nullable: true,
      anyOf: [
        { type: "OBJECT", properties: { a: { type: "INTEGER", minimum: 1 } }, required: ["a"] },
        { type: "STRING", minLength: "2" },
      ],
    });
    // Every type copying the properties multiplied the schema by the number of types per level:
    // 0.5 KB nested 6 deep made 3 MB.
    let node: Json = { type: "string" };
    for (let level = 0; level < 6; level++) {
      node = { type: ["object", "string", "number", "integer", "boolean", "array"], properties: { a: node } };
    }
    expect(JSON.stringify(node).length).toBeLessThan(600);
    const output = toGeminiSchema(node);
    // Per level: the union and its six branches, then the innermost string.
    expect(countNodes(output)).toBe(6 * 7 + 1);
    expect(unsupported(output)).toEqual([]);
  });

  it("cuts a schema object that contains itself (no $ref, an object cycle) instead of overflowing the stack", () => {
    const node: Json = { type: "object", properties: {} };
    (node.properties as Json).self = node;
    const output = toGeminiSchema(node);
    expect(JSON.stringify(output).length).toBeLessThanOrEqual(100_000);
    expect(JSON.stringify(output)).toContain("not shown in full");
  });

  it("lists at most 20 of a numeric enum's values in the description, however many there are", () => {
    const values = Array.from({ length: 1_000 }, (_, index) => index * 7);
    const { description } = toGeminiSchema({ type: "integer", enum: values });
    expect(description).toBe(`one of ${values.slice(0, 20).join(", ")}, … and 980 more`);
  });

  it("keeps its recursive cut typed as the definition says (a recursive list stays an ARRAY)", () => {
    const schema = {
      type: "object",
      properties: { list: { $ref: "#/$defs/List" } },
      $defs: { List: { type: "array", items: { $ref: "#/$defs/List" } } },
    };
    expect(toGeminiSchema(schema)).toEqual({
      type: "OBJECT",
      properties: { list: { type: "ARRAY", items: { type: "ARRAY" } } },
    });
  });

  it("converts a large ordinary schema in full: shared definitions expanded everywhere, nothing cut", () => {
    // A generated schema of 60 fields, each an Address, Person or a list of them; a recursive Node.
    const $defs: Json = {
      Address: {
        type: "object",
        properties: {
          street: { type: "string" },
          city: { type: "string" },
          zip: { type: "string", pattern: "^\\d{5}$" },
        },
        required: ["city"],
      },
      Person: {
        type: "object",
        properties: { name: { type: "string" }, home: { $ref: "#/$defs/Address" }, work: { $ref: "#/$defs/Address" } },
      },
      Node: {
        type: "object",
        properties: { label: { type: "string" }, children: { type: "array", items: { $ref: "#/$defs/Node" } } },
      },
    };
    const kinds = ["Address", "Person", "Node"];
    const properties = Object.fromEntries(
      Array.from({ length: 60 }, (_, index) => [
        `field${index}`,
        index % 2 === 0
          ? { $ref: `#/$defs/${kinds[index % 3]}`, description: `field ${index}` }
          : { type: "array", items: { $ref: `#/$defs/${kinds[index % 3]}` } },
      ]),
    );
    const output = toGeminiSchema({ type: "object", properties, $defs });
    expect(JSON.stringify(output)).not.toContain("not shown");
    expect(output.properties?.field1?.items?.properties?.home?.properties?.zip).toEqual({
      type: "STRING",
      pattern: "^\\d{5}$",
    });
    // The recursive reference is cut one level down, as always.
    expect(output.properties?.field2?.properties?.children?.items).toEqual({ type: "OBJECT" });
  });

  it("registry: a hostile MCP-style tool passes the schema limits; its Gemini definition is bounded, the others are its schema, and the full schema still validates", async () => {
    const schema = everyDefinitionReferringToEveryOther(8);
    const registry = new ToolRegistry();
    registry.register({ name: "graph", description: "d", parameters: schema, execute: () => "ran" });
    const [gemini] = registry.getDefinitions("gemini");
    expect(JSON.stringify(gemini).length).toBeLessThanOrEqual(100_500);
    expect(JSON.stringify(registry.getDefinitions("anthropic")[0]?.input_schema)).toBe(JSON.stringify(schema));
    // Deep in the value, past what Gemini was shown: still checked against the full schema.
    const deep = { root: { to1: { to2: { to3: { to4: { to5: { to6: 7 } } } } } } };
    expect((await registry.execute("graph", deep)).forLLM).toMatch(
      /^invalid arguments for tool "graph": root\.to1\.to2\.to3\.to4\.to5\.to6: must be object/,
    );
  });
});

describe("toGeminiTools", () => {
  const definition = (name: string, parameters: Json): ToolDefinition =>
    Object.freeze({ type: "function", function: Object.freeze({ name, description: `the ${name} tool`, parameters }) });

  it("leaves out parameters for a tool that takes none, and keeps the order", () => {
    expect(
      toGeminiTools([
        definition("zeta", { type: "object", properties: {} }),
        definition("alpha", { type: "object", properties: { q: { type: "string" } }, required: ["q"] }),
        definition("empty", {}),
      ]),
    ).toEqual([
      { name: "zeta", description: "the zeta tool" },
      {
        name: "alpha",
        description: "the alpha tool",
        parameters: { type: "OBJECT", properties: { q: { type: "STRING" } }, required: ["q"] },
      },
      { name: "empty", description: "the empty tool" },
    ]);
  });

  it("returns new objects on every call (the SDK rewrites declarations in place)", () => {
    const definitions = [definition("a", { type: "object", properties: { q: { type: "string" } } })];
    const first = toGeminiTools(definitions);
    (first[0] as { parameters: unknown }).parameters = { type: "STRING" };
    expect(toGeminiTools(definitions)[0]?.parameters).toEqual({
      type: "OBJECT",
      properties: { q: { type: "STRING" } },
    });
  });
});
