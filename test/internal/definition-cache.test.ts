import { describe, expect, it } from "vitest";
import { convertDefinitions, type DefinitionFormat } from "../../src/definition-format.js";
import { newToolResult, type Tool, type ToolDefinition } from "../../src/index.js";
import { DefinitionCache } from "../../src/internal/definition-cache.js";
import { HiddenTools } from "../../src/internal/hidden-tools.js";
import { prepareTool, type RegisteredTool } from "../../src/internal/registered-tool.js";

const FORMATS: DefinitionFormat[] = ["openai", "openai-responses", "anthropic", "ollama", "gemini"];

function tool(name: string): Tool {
  return {
    name,
    description: `the ${name} tool`,
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    execute: () => newToolResult("ok"),
  };
}

/** A map of prepared tools, as the registry holds it, and a cache over it. */
function cacheOf(...names: string[]) {
  const tools = new Map<string, RegisteredTool>();
  for (const name of names) tools.set(name, prepareTool(tool(name)));
  return { tools, cache: new DefinitionCache<DefinitionFormat>(tools, new HiddenTools(), convertDefinitions) };
}

function nameOf(definition: unknown): string {
  const record = definition as { name?: string; function?: { name: string } };
  return record.name ?? record.function?.name ?? "";
}

describe("DefinitionCache.names", () => {
  it("is the tools' names sorted by code unit, frozen, and the same array until invalidated", () => {
    const { cache } = cacheOf("zeta", "alpha", "Mid", "_x");
    const names = cache.names();
    expect(names).toEqual(["Mid", "_x", "alpha", "zeta"]);
    expect(Object.isFrozen(names)).toBe(true);
    expect(cache.names()).toBe(names);
  });

  it("is an empty frozen array for no tools", () => {
    const { cache } = cacheOf();
    expect(cache.names()).toEqual([]);
    expect(Object.isFrozen(cache.names())).toBe(true);
    expect(cache.definitions("openai")).toEqual([]);
  });
});

describe("DefinitionCache.definitions", () => {
  it("openai: each tool's own frozen definition, in name order, in one frozen array", () => {
    const { tools, cache } = cacheOf("b", "a");
    const definitions = cache.definitions("openai") as readonly ToolDefinition[];
    expect(Object.isFrozen(definitions)).toBe(true);
    expect(definitions).toHaveLength(2);
    expect(definitions[0]).toBe(tools.get("a")?.definition);
    expect(definitions[1]).toBe(tools.get("b")?.definition);
  });

  it.each(FORMATS)("%s: one frozen array in name order, returned again until invalidate()", (format) => {
    const { cache } = cacheOf("zeta", "alpha");
    const first = cache.definitions(format);
    expect(Object.isFrozen(first)).toBe(true);
    expect(first.map(nameOf)).toEqual(["alpha", "zeta"]);
    expect(cache.definitions(format)).toBe(first);
    // Reading other formats in between keeps it.
    for (const other of FORMATS) cache.definitions(other);
    expect(cache.definitions(format)).toBe(first);
  });

  it("converts from the openai definitions: each format has its own array of its own shape", () => {
    const { tools, cache } = cacheOf("read");
    const parameters = tools.get("read")?.definition.function.parameters;
    const arrays = FORMATS.map((format) => cache.definitions(format));
    expect(new Set(arrays).size).toBe(FORMATS.length);
    expect(cache.definitions("anthropic")).toEqual([
      { name: "read", description: "the read tool", input_schema: parameters },
    ]);
    expect(cache.definitions("openai-responses")).toEqual([
      { type: "function", name: "read", description: "the read tool", parameters, strict: false },
    ]);
  });

  it.each([["openai-chat"], ["OPENAI"], ["__proto__"], ["toString"], [""]])(
    "the unknown format %j is the option TypeError of getDefinitions, every time",
    (format) => {
      const { cache } = cacheOf("read");
      const read = () => cache.definitions(format as DefinitionFormat);
      const message = `getDefinitions: format must be one of "openai", "openai-responses", "anthropic", "ollama", "gemini", got ${JSON.stringify(format)}`;
      expect(read).toThrow(TypeError);
      expect(read).toThrow(message);
    },
  );
});

describe("DefinitionCache.invalidate", () => {
  it("keeps serving what it built while the map changes; invalidate() rebuilds names and every format", () => {
    const { tools, cache } = cacheOf("beta");
    const names = cache.names();
    const built = new Map(FORMATS.map((format) => [format, cache.definitions(format)]));

    tools.set("alpha", prepareTool(tool("alpha")));
    // The registry invalidates on every change; until then the cache holds what it built.
    expect(cache.names()).toBe(names);
    for (const format of FORMATS) expect(cache.definitions(format)).toBe(built.get(format));

    cache.invalidate();
    expect(cache.names()).not.toBe(names);
    expect(cache.names()).toEqual(["alpha", "beta"]);
    expect(Object.isFrozen(cache.names())).toBe(true);
    for (const format of FORMATS) {
      const rebuilt = cache.definitions(format);
      expect(rebuilt).not.toBe(built.get(format));
      expect(rebuilt.map(nameOf)).toEqual(["alpha", "beta"]);
      expect(Object.isFrozen(rebuilt)).toBe(true);
      expect(cache.definitions(format)).toBe(rebuilt);
    }
  });

  it("after a removal and invalidate(), the removed tool is in no format", () => {
    const { tools, cache } = cacheOf("a", "b");
    for (const format of FORMATS) cache.definitions(format);
    tools.delete("a");
    cache.invalidate();
    expect(cache.names()).toEqual(["b"]);
    for (const format of FORMATS) expect(cache.definitions(format).map(nameOf)).toEqual(["b"]);
  });
});
