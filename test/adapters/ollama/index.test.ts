// `toolloop/ollama` re-exports `toOllamaTools` from src/formats/ollama.ts: these tests belong in
// test/formats/ollama.test.ts (beside the other formats' tests), outside this folder's owner.
import { describe, expect, it } from "vitest";
import { toOllamaTools } from "../../../src/adapters/ollama/index.js";
import type { ToolDefinition } from "../../../src/index.js";

type Json = Record<string, unknown>;

describe("toOllamaTools", () => {
  const definition = (parameters: Json): ToolDefinition => ({
    type: "function",
    function: { name: "t", description: "d", parameters },
  });

  it.each([
    [
      "a schema as is",
      { type: "object", properties: { a: { type: "string" } } },
      { type: "object", properties: { a: { type: "string" } } },
    ],
    [
      "without $schema",
      { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object", properties: {} },
      { type: "object", properties: {} },
    ],
    ["an empty schema completed", {}, { type: "object", properties: {} }],
  ])("converts %s", (_case, parameters, expected) => {
    expect(toOllamaTools([definition(parameters)])).toEqual([
      { type: "function", function: { name: "t", description: "d", parameters: expected } },
    ]);
  });

  it("returns copies: changing the result leaves the definitions alone", () => {
    const definitions = [Object.freeze(definition({ type: "object", properties: {} }))];
    const [tool] = toOllamaTools(definitions);
    (tool as { function: { parameters: Json } }).function.parameters.extra = true;
    expect(definitions[0]?.function.parameters).toEqual({ type: "object", properties: {} });
  });
});
