import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type DefinitionFormat, defineTool, newToolResult, type Tool, ToolRegistry } from "../src/index.js";
import { CACHED_DEFINITIONS } from "../src/registry-symbols.js";

const cachedDefinitions = (registry: ToolRegistry) => registry[CACHED_DEFINITIONS]();

const plainTool = (name: string): Tool => ({
  name,
  description: `the ${name} tool`,
  parameters: {
    type: "object",
    properties: { path: { type: "string", description: "a path" } },
    required: ["path"],
    additionalProperties: false,
  },
  execute: () => newToolResult("ok"),
});

function registryOf(...names: string[]): ToolRegistry {
  const registry = new ToolRegistry();
  for (const name of names) registry.register(plainTool(name));
  registry.register(
    defineTool({
      name: "b_zod",
      description: "zod tool",
      parameters: z.object({ city: z.string(), days: z.number().int().optional() }),
      execute: () => "ok",
    }),
  );
  return registry;
}

const FORMATS: DefinitionFormat[] = ["openai", "openai-responses", "anthropic", "ollama", "gemini"];

function nameOf(definition: unknown): string {
  const record = definition as { name?: string; function?: { name: string } };
  return record.name ?? record.function?.name ?? "";
}

describe("registry.getDefinitions(format)", () => {
  it("without a format is the openai format and toProviderDefs", () => {
    const registry = registryOf("read_file");
    expect(registry.getDefinitions()).toEqual(registry.getDefinitions("openai"));
    expect(registry.toProviderDefs()).toEqual(registry.getDefinitions());
  });

  it.each(FORMATS)("%s: sorted by name", (format) => {
    const registry = registryOf("zeta", "alpha", "Mid");
    expect(registry.getDefinitions(format).map(nameOf)).toEqual(["Mid", "alpha", "b_zod", "zeta"]);
  });

  it("the loop's definitions are built once and cached until the registry changes", () => {
    const registry = registryOf("alpha");
    const cached = cachedDefinitions(registry);
    expect(cachedDefinitions(registry)).toBe(cached);
    expect(Object.isFrozen(cached)).toBe(true);
    registry.register(plainTool("omega"));
    expect(cachedDefinitions(registry)).not.toBe(cached);
  });

  it.each(FORMATS)("%s: callers get a deep copy; changing it never reaches the cache", (format) => {
    const registry = registryOf("alpha");
    const first = registry.getDefinitions(format);
    expect(registry.getDefinitions(format)).toEqual(first);
    const before = JSON.stringify(cachedDefinitions(registry));
    const element = first[0] as unknown as Record<string, unknown>;
    for (const key of Object.keys(element)) element[key] = "changed"; // as an SDK rewriting in place
    first.push(first[0] as never);
    expect(registry.getDefinitions(format)).toHaveLength(2);
    expect(JSON.stringify(registry.getDefinitions(format))).not.toContain("changed");
    expect(JSON.stringify(cachedDefinitions(registry))).toBe(before);
    registry.register(plainTool("omega"));
    const second = registry.getDefinitions(format);
    expect(second.map(nameOf)).toContain("omega");
    registry.unregister("omega");
    expect(registry.getDefinitions(format).map(nameOf)).not.toContain("omega");
  });

  it("gives each API its own shape", () => {
    const registry = registryOf("read_file");
    expect(registry.getDefinitions("openai")[1]).toMatchInlineSnapshot(`
      {
        "function": {
          "description": "the read_file tool",
          "name": "read_file",
          "parameters": {
            "additionalProperties": false,
            "properties": {
              "path": {
                "description": "a path",
                "type": "string",
              },
            },
            "required": [
              "path",
            ],
            "type": "object",
          },
        },
        "type": "function",
      }
    `);
    expect(registry.getDefinitions("openai-responses")[1]).toEqual({
      type: "function",
      name: "read_file",
      description: "the read_file tool",
      parameters: registry.getDefinitions()[1]?.function.parameters,
      strict: false,
    });
    expect(registry.getDefinitions("anthropic")[1]).toEqual({
      name: "read_file",
      description: "the read_file tool",
      input_schema: registry.getDefinitions()[1]?.function.parameters,
    });
    expect(registry.getDefinitions("ollama")[1]).toEqual({
      type: "function",
      function: { name: "read_file", description: "the read_file tool", parameters: expect.any(Object) },
    });
    const gemini = registry.getDefinitions("gemini")[1] as unknown as Record<string, unknown>;
    expect(gemini.name).toBe("read_file");
    expect(JSON.stringify(gemini)).not.toContain("additionalProperties");
  });

  it.each([["openai-chat"], ["OPENAI"], ["__proto__"], ["toString"], [""]])(
    "rejects the unknown format %j with a TypeError naming the formats",
    (format) => {
      const registry = registryOf("read_file");
      expect(() => registry.getDefinitions(format as DefinitionFormat)).toThrow(
        /format must be one of "openai", "openai-responses", "anthropic", "ollama", "gemini", got/,
      );
    },
  );
});
