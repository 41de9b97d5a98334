import { describe, expect, it } from "vitest";
import * as z from "zod";
import { toAnthropicTools } from "../../src/formats/anthropic.js";
import { defineTool, type ToolDefinition, ToolRegistry } from "../../src/index.js";
import { readSample } from "../helpers/replay-server.js";

type Json = Record<string, unknown>;

const definition = (name: string, description: string, parameters: Json): ToolDefinition => ({
  type: "function",
  function: { name, description, parameters },
});

describe("toAnthropicTools", () => {
  it("gives exactly the recorded request's tool for the same definition", () => {
    const [tool] = readSample<{ tools: Json[] }>("anthropic-request-tools.json").tools as [Json];
    const converted = toAnthropicTools([
      definition(tool.name as string, tool.description as string, tool.input_schema as Json),
    ]);
    expect(converted).toEqual([tool]);
  });

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
    expect(toAnthropicTools(registry.getDefinitions())).toEqual([
      {
        name: "get_weather",
        description: "Weather for a city",
        input_schema: {
          type: "object",
          properties: { city: { type: "string" }, units: { type: "string", enum: ["c", "f"], default: "c" } },
          required: ["city"],
        },
      },
    ]);
  });

  it.each<[string, Json, Json]>([
    ["adds type object when the schema leaves it out", {}, { type: "object" }],
    [
      "keeps $schema and additionalProperties",
      { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object", additionalProperties: false },
      { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object", additionalProperties: false },
    ],
    [
      "keeps properties of a schema without type",
      { properties: { a: { type: "number" } } },
      { type: "object", properties: { a: { type: "number" } } },
    ],
  ])("%s", (_label, parameters, expected) => {
    const [tool] = toAnthropicTools([definition("t", "d", parameters)]);
    expect(tool?.input_schema).toEqual(expected);
  });

  it("leaves an empty description out, keeps the order, and does not touch the input", () => {
    const parameters = { properties: {} };
    const input = [definition("b", "", parameters), definition("a", "first", { type: "object" })];
    expect(toAnthropicTools(input)).toEqual([
      { name: "b", input_schema: { type: "object", properties: {} } },
      { name: "a", description: "first", input_schema: { type: "object" } },
    ]);
    expect(parameters).toEqual({ properties: {} });
  });

  it("returns an empty list for no definitions", () => {
    expect(toAnthropicTools([])).toEqual([]);
  });
});
