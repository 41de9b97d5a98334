import { describe, expect, it } from "vitest";
import * as z from "zod";
import { toOllamaTools } from "../../src/formats/ollama.js";
import { defineTool, type ToolDefinition, ToolRegistry } from "../../src/index.js";
import { readSample } from "../helpers/replay-server.js";

type Json = Record<string, unknown>;

const definition = (name: string, description: string, parameters: Json): ToolDefinition => ({
  type: "function",
  function: { name, description, parameters },
});

describe("toOllamaTools", () => {
  it.each(["ollama-chat-request-tools.json", "ollama-chat-parallel-request-tools.json"])(
    "gives exactly the tools of the recorded request %s for the same definitions",
    (file) => {
      const { tools } = readSample<{ tools: { function: { name: string; description: string; parameters: Json } }[] }>(
        file,
      );
      const definitions = tools.map(({ function: fn }) => definition(fn.name, fn.description, fn.parameters));
      expect(toOllamaTools(definitions)).toEqual(tools);
    },
  );

  it("converts a zod tool's definition from the registry", () => {
    const registry = new ToolRegistry();
    registry.register(
      defineTool({
        name: "get_weather",
        description: "Weather for a city",
        parameters: z.object({ city: z.string(), units: z.enum(["c", "f"]).default("c") }),
        execute: () => "sunny",
      }),
    );
    expect(toOllamaTools(registry.getDefinitions())).toEqual([
      {
        type: "function",
        function: {
          name: "get_weather",
          description: "Weather for a city",
          parameters: {
            type: "object",
            properties: { city: { type: "string" }, units: { type: "string", enum: ["c", "f"], default: "c" } },
            required: ["city"],
          },
        },
      },
    ]);
  });

  it.each<[string, Json, Json]>([
    [
      "passes a schema as is",
      { type: "object", properties: { a: { type: "string" } }, additionalProperties: false, required: ["a"] },
      { type: "object", properties: { a: { type: "string" } }, additionalProperties: false, required: ["a"] },
    ],
    [
      "drops $schema",
      { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object", properties: {} },
      { type: "object", properties: {} },
    ],
    ["completes an empty schema with type and properties", {}, { type: "object", properties: {} }],
    [
      "adds type to a schema that leaves it out",
      { properties: { n: { type: "number" } } },
      { type: "object", properties: { n: { type: "number" } } },
    ],
    [
      "adds empty properties to a schema that has none",
      { type: "object", $defs: { id: { type: "string" } } },
      { type: "object", properties: {}, $defs: { id: { type: "string" } } },
    ],
    [
      "keeps keywords the server may not know (it ignores them)",
      { type: "object", properties: {}, oneOf: [{ required: ["a"] }], "x-extra": 1 },
      { type: "object", properties: {}, oneOf: [{ required: ["a"] }], "x-extra": 1 },
    ],
  ])("%s", (_case, parameters, expected) => {
    expect(toOllamaTools([definition("t", "d", parameters)])).toEqual([
      { type: "function", function: { name: "t", description: "d", parameters: expected } },
    ]);
  });

  it.each([
    ["undefined", undefined],
    ["null", null],
    ["an array", []],
  ])("parameters that are %s become the empty object schema", (_case, parameters) => {
    const [tool] = toOllamaTools([definition("t", "d", parameters as unknown as Json)]);
    expect(tool?.function.parameters).toEqual({ type: "object", properties: {} });
  });

  it("keeps the order (no sorting), names and descriptions, an empty description included", () => {
    const tools = toOllamaTools([definition("b", "", {}), definition("a", "first", {}), definition("c", "third", {})]);
    expect(tools.map(({ function: fn }) => [fn.name, fn.description])).toEqual([
      ["b", ""],
      ["a", "first"],
      ["c", "third"],
    ]);
  });

  it("returns an empty list for no definitions", () => {
    expect(toOllamaTools([])).toEqual([]);
  });

  it("returns new objects: changing the result leaves frozen definitions and their schemas alone", () => {
    const parameters = Object.freeze({ $schema: "x", type: "object", properties: {} });
    const definitions = Object.freeze([Object.freeze(definition("t", "d", parameters))]);
    const [tool] = toOllamaTools(definitions);
    expect(tool).not.toBe(definitions[0]);
    expect(tool?.function).not.toBe(definitions[0]?.function);
    expect(tool?.function.parameters).not.toBe(parameters);
    (tool as { function: { parameters: Json; name: string } }).function.parameters.extra = true;
    (tool as { function: { name: string } }).function.name = "renamed";
    expect(definitions[0]?.function).toEqual({ name: "t", description: "d", parameters });
    expect(parameters).toEqual({ $schema: "x", type: "object", properties: {} });
  });

  it('is what registry.getDefinitions("ollama") returns', () => {
    const registry = new ToolRegistry();
    for (const name of ["b", "a"]) {
      registry.register({
        name,
        description: name,
        parameters: { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object" },
        execute: () => "ok",
      });
    }
    expect(registry.getDefinitions("ollama")).toEqual(toOllamaTools(registry.getDefinitions()));
  });
});
