import { Ajv2020 } from "ajv/dist/2020.js";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import {
  stripNullsForOptional,
  toOpenAIChatTools,
  toOpenAIResponsesTools,
  toOpenAIResponsesToolsAsGiven,
  toOpenAIStrictSchema,
} from "../../src/formats/openai.js";
import { defineTool, type ToolDefinition } from "../../src/index.js";
import { readSample } from "../helpers/replay-server.js";

type Json = Record<string, unknown>;

const ajv = new Ajv2020({ strict: false, allErrors: true });
const accepts = (schema: Json, value: unknown) => ajv.compile(schema)(value);

/** Walks every object schema and reports those strict mode would reject. */
function strictProblems(schema: unknown, path = "#"): string[] {
  if (typeof schema !== "object" || schema === null) return [];
  if (Array.isArray(schema)) return schema.flatMap((item, index) => strictProblems(item, `${path}/${index}`));
  const node = schema as Json;
  const problems: string[] = [];
  if (typeof node.properties === "object" && node.properties !== null) {
    const keys = Object.keys(node.properties);
    if (node.additionalProperties !== false) problems.push(`${path}: additionalProperties is not false`);
    if (JSON.stringify(node.required) !== JSON.stringify(keys)) problems.push(`${path}: required != all properties`);
  }
  if ("oneOf" in node) problems.push(`${path}: oneOf`);
  for (const [key, value] of Object.entries(node)) {
    if (key !== "enum" && key !== "const" && key !== "default")
      problems.push(...strictProblems(value, `${path}/${key}`));
  }
  return problems;
}

const weatherSchema: Json = {
  type: "object",
  properties: {
    city: { type: "string", description: "City name" },
    unit: { type: "string", enum: ["c", "f"], description: "Unit" },
    days: { type: "integer" },
  },
  required: ["city"],
};

describe("toOpenAIStrictSchema", () => {
  it("gives exactly the parameters of the official strict request when every property is required", () => {
    const sample = readSample<{ tools: Array<{ function: { parameters: Json } }> }>(
      "openai-chat-request-tools-strict.json",
    );
    const tool = defineTool({
      name: "get_weather",
      description: "",
      parameters: z.object({ city: z.string(), state: z.string() }),
      execute: () => "",
    });
    expect(toOpenAIStrictSchema(tool.parameters)).toEqual(sample.tools[0]?.function.parameters);
  });

  it("makes optional properties required and nullable, keeping descriptions on the outside", () => {
    expect(toOpenAIStrictSchema(weatherSchema)).toEqual({
      type: "object",
      properties: {
        city: { type: "string", description: "City name" },
        unit: { description: "Unit", anyOf: [{ type: "string", enum: ["c", "f"] }, { type: "null" }] },
        days: { type: ["integer", "null"] },
      },
      required: ["city", "unit", "days"],
      additionalProperties: false,
    });
  });

  it.each<[string, Json, Json]>([
    [
      "an object without properties (a no-argument tool)",
      { type: "object" },
      { type: "object", properties: {}, required: [], additionalProperties: false },
    ],
    ["an empty schema", {}, { type: "object", properties: {}, required: [], additionalProperties: false }],
    [
      "an optional property that already accepts null stays as it is",
      { type: "object", properties: { a: { type: ["string", "null"] } } },
      { type: "object", properties: { a: { type: ["string", "null"] } }, required: ["a"], additionalProperties: false },
    ],
    [
      "a union type gains null",
      { type: "object", properties: { a: { type: ["string", "number"] } } },
      {
        type: "object",
        properties: { a: { type: ["string", "number", "null"] } },
        required: ["a"],
        additionalProperties: false,
      },
    ],
    [
      "an optional const is wrapped",
      { type: "object", properties: { a: { const: "x" } } },
      {
        type: "object",
        properties: { a: { anyOf: [{ const: "x" }, { type: "null" }] } },
        required: ["a"],
        additionalProperties: false,
      },
    ],
    [
      "an optional anyOf gains a null branch",
      { type: "object", properties: { a: { anyOf: [{ type: "string" }, { type: "number" }] } } },
      {
        type: "object",
        properties: { a: { anyOf: [{ type: "string" }, { type: "number" }, { type: "null" }] } },
        required: ["a"],
        additionalProperties: false,
      },
    ],
    [
      "a null default is dropped",
      { type: "object", properties: { a: { type: ["string", "null"], default: null } }, required: ["a"] },
      { type: "object", properties: { a: { type: ["string", "null"] } }, required: ["a"], additionalProperties: false },
    ],
    [
      "a single allOf with annotations is merged",
      {
        type: "object",
        properties: { a: { description: "d", allOf: [{ type: "object", properties: { b: { type: "string" } } }] } },
        required: ["a"],
      },
      {
        type: "object",
        properties: {
          a: {
            type: "object",
            description: "d",
            properties: { b: { type: ["string", "null"] } },
            required: ["b"],
            additionalProperties: false,
          },
        },
        required: ["a"],
        additionalProperties: false,
      },
    ],
    [
      "a record is left for the API to judge",
      {
        type: "object",
        properties: { r: { type: "object", additionalProperties: { type: "number" } } },
        required: ["r"],
      },
      {
        type: "object",
        properties: { r: { type: "object", additionalProperties: { type: "number" } } },
        required: ["r"],
        additionalProperties: false,
      },
    ],
  ])("%s", (_name, input, expected) => {
    expect(toOpenAIStrictSchema(input)).toEqual(expected);
  });

  it("converts nested objects, array items, $defs and discriminated unions (zod), and leaves the input alone", () => {
    const TreeNode: z.ZodType<{ name: string; children?: unknown[] | undefined }> = z.object({
      name: z.string(),
      get children() {
        return z.array(TreeNode).optional();
      },
    });
    const tool = defineTool({
      name: "plan",
      description: "",
      parameters: z.object({
        trip: z.object({ from: z.string(), via: z.string().optional() }),
        stops: z.array(z.object({ city: z.string(), nights: z.number().int().optional() })).optional(),
        mode: z
          .discriminatedUnion("kind", [
            z.object({ kind: z.literal("train"), seat: z.string().optional() }),
            z.object({ kind: z.literal("car") }),
          ])
          .optional(),
        tree: TreeNode.optional(),
        note: z.string().nullish(),
      }),
      execute: () => "",
    });
    const before = structuredClone(tool.parameters);
    const strict = toOpenAIStrictSchema(tool.parameters);
    expect(tool.parameters).toEqual(before);
    expect(strictProblems(strict)).toEqual([]);
    expect(strict).toMatchInlineSnapshot(`
      {
        "$defs": {
          "__schema0": {
            "additionalProperties": false,
            "properties": {
              "children": {
                "items": {
                  "$ref": "#/$defs/__schema0",
                },
                "type": [
                  "array",
                  "null",
                ],
              },
              "name": {
                "type": "string",
              },
            },
            "required": [
              "name",
              "children",
            ],
            "type": "object",
          },
        },
        "additionalProperties": false,
        "properties": {
          "mode": {
            "anyOf": [
              {
                "additionalProperties": false,
                "properties": {
                  "kind": {
                    "const": "train",
                    "type": "string",
                  },
                  "seat": {
                    "type": [
                      "string",
                      "null",
                    ],
                  },
                },
                "required": [
                  "kind",
                  "seat",
                ],
                "type": "object",
              },
              {
                "additionalProperties": false,
                "properties": {
                  "kind": {
                    "const": "car",
                    "type": "string",
                  },
                },
                "required": [
                  "kind",
                ],
                "type": "object",
              },
              {
                "type": "null",
              },
            ],
          },
          "note": {
            "type": [
              "string",
              "null",
            ],
          },
          "stops": {
            "items": {
              "additionalProperties": false,
              "properties": {
                "city": {
                  "type": "string",
                },
                "nights": {
                  "maximum": 9007199254740991,
                  "minimum": -9007199254740991,
                  "type": [
                    "integer",
                    "null",
                  ],
                },
              },
              "required": [
                "city",
                "nights",
              ],
              "type": "object",
            },
            "type": [
              "array",
              "null",
            ],
          },
          "tree": {
            "anyOf": [
              {
                "$ref": "#/$defs/__schema0",
              },
              {
                "type": "null",
              },
            ],
          },
          "trip": {
            "additionalProperties": false,
            "properties": {
              "from": {
                "type": "string",
              },
              "via": {
                "type": [
                  "string",
                  "null",
                ],
              },
            },
            "required": [
              "from",
              "via",
            ],
            "type": "object",
          },
        },
        "required": [
          "trip",
          "stops",
          "mode",
          "tree",
          "note",
        ],
        "type": "object",
      }
    `);
  });
});

describe("the null check behind strict mode: each schema read once", () => {
  it("makes an optional property nullable when two of its branches refer to the same definition", () => {
    // The check marked a schema as seen and answered `true` ("accepts null") the second time it
    // was reached: the property stayed non-nullable, and a `null` for it was kept.
    const schema = {
      type: "object",
      properties: { when: { anyOf: [{ $ref: "#/$defs/Day" }, { $ref: "#/$defs/Day" }] }, x: { type: "string" } },
      required: ["x"],
      $defs: { Day: { type: "string" } },
    };
    const strict = toOpenAIStrictSchema(schema);
    expect((strict.properties as Json).when).toEqual({
      anyOf: [{ $ref: "#/$defs/Day" }, { $ref: "#/$defs/Day" }, { type: "null" }],
    });
    expect(accepts(strict, { when: null, x: "a" })).toBe(true);
    expect(stripNullsForOptional({ when: null, x: "a" }, schema)).toEqual({ x: "a" });
  });

  /** `properties` optional properties, each referring to the head of a chain of `length` definitions. */
  function chain(properties: number, length: number, reads: { count: number }): Json {
    const $defs: Json = {};
    for (let index = 0; index < length; index++) {
      const allOf = index + 1 < length ? [{ $ref: `#/$defs/d${index + 1}` }] : [{ type: "string" }];
      // Counts how often the check (and the conversion's copy) reads each definition.
      $defs[`d${index}`] = Object.defineProperty({}, "allOf", {
        enumerable: true,
        get: () => {
          reads.count++;
          return allOf;
        },
      });
    }
    const names = Array.from({ length: properties }, (_, index) => [`p${index}`, { $ref: "#/$defs/d0" }]);
    return { type: "object", properties: Object.fromEntries(names), $defs };
  }

  it("reads each definition a bounded number of times however many properties refer to it (not properties × chain)", () => {
    const reads = { count: 0 };
    const strict = toOpenAIStrictSchema(chain(2_000, 30, reads));
    // Was 2,000 × 30 × 2 reads: each property followed the whole chain.
    expect(reads.count).toBeLessThanOrEqual(30 * 4);
    expect((strict.properties as Json).p1999).toEqual({ anyOf: [{ $ref: "#/$defs/d0" }, { type: "null" }] });

    const stripReads = { count: 0 };
    const schema = chain(2_000, 30, stripReads);
    const args = Object.fromEntries(Array.from({ length: 2_000 }, (_, index) => [`p${index}`, null]));
    expect(stripNullsForOptional(args, schema)).toEqual({});
    expect(stripReads.count).toBeLessThanOrEqual(30 * 2);
  });

  it("follows a chain of references 64 deep at most, then leaves the property as it is (no stack overflow)", () => {
    const schema = chain(1, 20_000, { count: 0 });
    const strict = toOpenAIStrictSchema(schema);
    // Past the depth the answer is "accepts null": the property is not made nullable.
    expect((strict.properties as Json).p0).toEqual({ $ref: "#/$defs/d0" });
    expect(stripNullsForOptional({ p0: null }, schema)).toEqual({ p0: null });
  });
});

describe("stripNullsForOptional", () => {
  it.each<[string, Json, Json, Json]>([
    [
      "an optional field sent as null is removed",
      weatherSchema,
      { city: "Paris", unit: null, days: null },
      { city: "Paris" },
    ],
    [
      "values that are not null stay",
      weatherSchema,
      { city: "Paris", unit: "c", days: 3 },
      { city: "Paris", unit: "c", days: 3 },
    ],
    [
      "a required field sent as null stays (validation reports it)",
      weatherSchema,
      { city: null, unit: null },
      { city: null },
    ],
    [
      "a null the original schema accepts stays",
      { type: "object", properties: { a: { type: ["string", "null"] }, b: { anyOf: [{ type: "null" }] } } },
      { a: null, b: null },
      { a: null, b: null },
    ],
    [
      "unknown keys pass through (validation decides)",
      weatherSchema,
      { city: "Paris", extra: null },
      { city: "Paris", extra: null },
    ],
    [
      "nested objects and array items",
      {
        type: "object",
        properties: {
          trip: {
            type: "object",
            properties: { from: { type: "string" }, via: { type: "string" } },
            required: ["from"],
          },
          stops: {
            type: "array",
            items: { type: "object", properties: { city: { type: "string" }, n: { type: "integer" } } },
          },
        },
        required: ["trip", "stops"],
      },
      {
        trip: { from: "A", via: null },
        stops: [
          { city: "B", n: null },
          { city: null, n: 2 },
        ],
      },
      { trip: { from: "A" }, stops: [{ city: "B" }, { n: 2 }] },
    ],
    [
      "through a local $ref (recursively)",
      {
        type: "object",
        properties: { tree: { $ref: "#/$defs/node" } },
        $defs: {
          node: {
            type: "object",
            properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#/$defs/node" } } },
            required: ["name"],
          },
        },
      },
      { tree: { name: "a", children: [{ name: "b", children: null }] } },
      { tree: { name: "a", children: [{ name: "b" }] } },
    ],
    [
      "into the branch of a discriminated union the value belongs to",
      {
        type: "object",
        properties: {
          mode: {
            oneOf: [
              {
                type: "object",
                properties: { kind: { const: "train" }, seat: { type: "string" } },
                required: ["kind"],
              },
              {
                type: "object",
                properties: { kind: { const: "car" }, seat: { type: ["string", "null"] } },
                required: ["kind"],
              },
            ],
          },
        },
      },
      { mode: { kind: "train", seat: null } },
      { mode: { kind: "train" } },
    ],
    [
      "not into an ambiguous union",
      {
        type: "object",
        properties: {
          v: {
            anyOf: [
              { type: "object", properties: { a: { type: "string" } } },
              { type: "object", properties: { b: {} } },
            ],
          },
        },
        required: ["v"],
      },
      { v: { a: null } },
      { v: { a: null } },
    ],
  ])("%s", (_name, schema, args, expected) => {
    const before = structuredClone(args);
    expect(stripNullsForOptional(args, schema)).toEqual(expected);
    expect(args).toEqual(before);
  });

  it("undoes the strict conversion: a value with nulls for absent fields comes back to the original (property)", () => {
    const tool = defineTool({
      name: "t",
      description: "",
      parameters: z.object({
        city: z.string(),
        unit: z.enum(["c", "f"]).optional(),
        note: z.string().nullable().optional(),
        stops: z.array(z.object({ name: z.string(), nights: z.number().optional() })).optional(),
      }),
      execute: () => "",
    });
    const original = tool.parameters;
    const strict = toOpenAIStrictSchema(original);
    const stop = fc.record(
      { name: fc.string(), nights: fc.double({ noNaN: true, noDefaultInfinity: true }) },
      { requiredKeys: ["name"] },
    );
    const value = fc.record(
      {
        city: fc.string(),
        unit: fc.constantFrom("c", "f"),
        note: fc.option(fc.string(), { nil: null }),
        stops: fc.array(stop, { maxLength: 3 }),
      },
      { requiredKeys: ["city"] },
    );
    fc.assert(
      fc.property(value, (args) => {
        // what a strict-mode model sends for `args`: every key present, null for the absent ones
        const fill = (object: Json, keys: string[]) =>
          Object.fromEntries(keys.map((key) => [key, key in object ? object[key] : null]));
        const sent = fill(args, ["city", "unit", "note", "stops"]);
        if (Array.isArray(sent.stops)) sent.stops = sent.stops.map((item: Json) => fill(item, ["name", "nights"]));
        expect(accepts(strict, sent)).toBe(true);
        const stripped = stripNullsForOptional(sent, original);
        const expected = { ...args };
        if (!("note" in args)) expected.note = null;
        expect(stripped).toEqual(expected);
        expect(tool.parseArguments(stripped).success).toBe(true);
      }),
    );
  });
});

describe("stripNullsForOptional with keys that name prototypes (D02)", () => {
  /** Every object in `value` is a plain `{}` or array, its keys own data properties, at any depth. */
  function expectPlainJson(value: unknown, path = "result"): void {
    if (typeof value !== "object" || value === null) return;
    expect(Object.getPrototypeOf(value), path).toBe(Array.isArray(value) ? Array.prototype : Object.prototype);
    for (const key of Object.keys(value)) {
      const descriptor = Object.getOwnPropertyDescriptor(value, key);
      expect(descriptor !== undefined && "value" in descriptor, `${path}.${key} is data`).toBe(true);
      expectPlainJson(descriptor?.value, `${path}.${key}`);
    }
  }

  // Schemas and values are JSON text: in an object literal, `__proto__:` would set the prototype itself.
  const node = '{"type":"object","properties":{"a":{"type":"string"},"next":{"$ref":"#/$defs/node"}}}';
  it.each<[string, string, string, string]>([
    ["at the top level, not in the schema", '{"__proto__":{"polluted":1},"a":"x"}', node, ""],
    [
      "in a nested object the schema describes",
      '{"next":{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":2}},"a":null}}',
      `{"$defs":{"node":${node}},"$ref":"#/$defs/node"}`,
      '{"next":{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":2}}}}',
    ],
    [
      "in objects inside arrays (and arrays of arrays)",
      '{"list":[{"__proto__":{"polluted":1},"a":null}],"grid":[[{"prototype":{"polluted":2},"__proto__":[]}]]}',
      '{"type":"object","properties":{"list":{"type":"array","items":{"type":"object","properties":{"a":{"type":"string"}}}},"grid":{"type":"array","items":{"type":"array","items":{"type":"object","properties":{"a":{"type":"string"}}}}}}}',
      '{"list":[{"__proto__":{"polluted":1}}],"grid":[[{"prototype":{"polluted":2},"__proto__":[]}]]}',
    ],
    [
      "in the union branch the value belongs to",
      '{"v":{"kind":"k","__proto__":{"kind":"k"},"a":null}}',
      '{"type":"object","properties":{"v":{"anyOf":[{"type":"object","properties":{"kind":{"const":"k"},"a":{"type":"string"}}},{"type":"array"}]}}}',
      '{"v":{"kind":"k","__proto__":{"kind":"k"}}}',
    ],
    [
      "when the schema itself has a property named __proto__",
      '{"__proto__":{"a":null,"__proto__":{"polluted":1}}}',
      `{"type":"object","properties":{"__proto__":${node}}}`,
      '{"__proto__":{"__proto__":{"polluted":1}}}',
    ],
  ])("%s: they stay own data properties", (_name, sent, schema, expected) => {
    const result = stripNullsForOptional(JSON.parse(sent) as Json, JSON.parse(schema) as Json);
    expectPlainJson(result);
    expect(JSON.stringify(result)).toBe(expected === "" ? sent : expected);
    expect(({} as Json).polluted).toBeUndefined();
  });

  it("keeps any JSON made of prototype-named keys intact and plain (property)", () => {
    const keys = fc.constantFrom("__proto__", "constructor", "prototype", "a");
    // JSON text built from entries, so that no object literal or assignment touches the keys.
    const { json } = fc.letrec((tie) => ({
      json: fc.oneof(
        { depthSize: "small" },
        fc.constantFrom("null", "1", '"s"'),
        fc.array(tie("json") as fc.Arbitrary<string>, { maxLength: 3 }).map((items) => `[${items.join(",")}]`),
        fc
          .uniqueArray(fc.tuple(keys, tie("json") as fc.Arbitrary<string>), { selector: ([key]) => key, maxLength: 4 })
          .map((entries) => `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(",")}}`),
      ),
    }));
    // Every key is described (recursively) and accepts null, so nothing is stripped.
    const schema = JSON.parse(
      '{"$defs":{"n":{"anyOf":[{"type":"object","properties":{"__proto__":{"$ref":"#/$defs/n"},"constructor":{"$ref":"#/$defs/n"},"prototype":{"$ref":"#/$defs/n"},"a":{"$ref":"#/$defs/n"}}},{"type":"array","items":{"$ref":"#/$defs/n"}},{"type":["null","number","string"]}]}},"$ref":"#/$defs/n"}',
    ) as Json;
    fc.assert(
      fc.property(json, (text) => {
        const sent = JSON.parse(`{"a":${text}}`) as Json;
        const result = stripNullsForOptional(sent, schema);
        expectPlainJson(result);
        expect(JSON.stringify(result)).toBe(JSON.stringify(sent));
        expect(({} as Json).polluted).toBeUndefined();
      }),
    );
  });
});

const definition = (name: string, description: string, parameters: Json): ToolDefinition => ({
  type: "function",
  function: { name, description, parameters },
});
const definitions: readonly ToolDefinition[] = Object.freeze([
  definition("a_tool", "A", weatherSchema),
  definition("b_tool", "B", { type: "object", properties: {} }),
]);

describe("toOpenAIResponsesTools", () => {
  it("sends flat function tools with strict: false explicitly when strict mode is off", () => {
    const before = structuredClone(definitions);
    expect(toOpenAIResponsesTools(definitions)).toEqual([
      { type: "function", name: "a_tool", description: "A", parameters: weatherSchema, strict: false },
      {
        type: "function",
        name: "b_tool",
        description: "B",
        parameters: { type: "object", properties: {} },
        strict: false,
      },
    ]);
    expect(definitions).toEqual(before);
  });

  it("matches the documented tool shape of the Responses samples in strict mode", () => {
    const sample = readSample<{ tools: Json[] }>("openai-responses-request-tools.pydantic-ai.json");
    const capital = definition("get_capital", "", {
      type: "object",
      properties: { country: { type: "string" } },
      required: ["country"],
    });
    const [tool] = toOpenAIResponsesTools([capital], { strict: true });
    expect({ ...tool, description: null }).toEqual(sample.tools[0]);
  });

  it("converts every schema in strict mode", () => {
    const tools = toOpenAIResponsesTools(definitions, { strict: true });
    expect(tools.map((tool) => [tool.name, tool.strict, strictProblems(tool.parameters)])).toEqual([
      ["a_tool", true, []],
      ["b_tool", true, []],
    ]);
    expect(tools[0]?.parameters).toEqual(toOpenAIStrictSchema(weatherSchema));
    expect(Object.keys(tools[0] ?? {})).toEqual(["type", "name", "description", "parameters", "strict"]);
  });
});

describe('toOpenAIResponsesToolsAsGiven (registry.getDefinitions("openai-responses"))', () => {
  it("is toOpenAIResponsesTools without strict mode, key for key, the schemas not copied", () => {
    const tools = toOpenAIResponsesToolsAsGiven(definitions);
    expect(tools).toStrictEqual(toOpenAIResponsesTools(definitions));
    expect(Object.keys(tools[0] ?? {})).toEqual(["type", "name", "description", "parameters", "strict"]);
    expect(tools[0]?.parameters).toBe(definitions[0]?.function.parameters);
  });
});

describe("toOpenAIChatTools", () => {
  it("copies the definitions unchanged (no strict key) when strict mode is off", () => {
    expect(toOpenAIChatTools(definitions)).toEqual(definitions);
    expect(toOpenAIChatTools(definitions)[0]?.function).not.toHaveProperty("strict");
  });

  it("marks each function strict and converts its schema in strict mode", () => {
    const [first] = toOpenAIChatTools(definitions, { strict: true });
    expect(first).toEqual({
      type: "function",
      function: { name: "a_tool", description: "A", parameters: toOpenAIStrictSchema(weatherSchema), strict: true },
    });
  });
});
