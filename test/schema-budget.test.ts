import { describe, expect, it } from "vitest";
import { newToolResult, SchemaBudget, type Tool, ToolRegistry } from "../src/index.js";
import { SchemaLimitError } from "../src/internal/schema-cost.js";

function tool(name: string, parameters: Record<string, unknown>): Tool {
  return { name, description: `the ${name} tool`, parameters, execute: () => newToolResult("ran") };
}

/** A schema of `count` keywords (vendor keywords: they cost nothing to compile). */
function keywords(count: number): Record<string, unknown> {
  return { type: "object", ...Object.fromEntries(Array.from({ length: count - 1 }, (_, index) => [`k${index}`, 0])) };
}

function thrown(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a throw");
}

describe("SchemaBudget", () => {
  it.each([
    ["a share of 0", "plugins", 0, /SchemaBudget: share must be a number in \(0, 1\], got 0/],
    ["a share over 1", "plugins", 1.5, /share must be a number in \(0, 1\], got 1\.5/],
    ["a share of NaN", "plugins", Number.NaN, /share must be a number in \(0, 1\], got NaN/],
    ["an empty name", "", 0.5, /SchemaBudget: name must be a string of 1–200 characters, got ""/],
    ["a name too long", "n".repeat(201), 0.5, /name must be a string of 1–200 characters/],
  ])("refuses %s", (_, name, share, message) => {
    expect(() => new SchemaBudget(name, share)).toThrow(TypeError);
    expect(() => new SchemaBudget(name, share)).toThrow(message);
  });

  it("keeps the tools registered with it within their share of the registry's limits; the others are not", () => {
    const registry = new ToolRegistry();
    const plugins = new SchemaBudget("plugins", 0.1);
    // 0.1 of the registry's 500,000 keywords: two schemas of 20,000, not three.
    registry.register(tool("p1", keywords(20_000)), { schemaBudget: plugins });
    registry.registerHidden(tool("p2", keywords(20_000)), { schemaBudget: plugins });
    const error = thrown(() => registry.register(tool("p3", keywords(20_000)), { schemaBudget: plugins }));
    expect(error).toBeInstanceOf(SchemaLimitError);
    expect(error.message).toBe(
      'tool "p3": parameters is over the schema limits: with it, the schemas of plugins would have 60000 keywords (its $refs followed), at most 50000 (its share, 0.1, of the registry\'s; this one has 20000)',
    );
    expect(registry.has("p3")).toBe(false);
    // The application's own tools, and another budget's, count against the registry's total only.
    registry.register(tool("own", keywords(20_000)));
    registry.register(tool("other", keywords(20_000)), { schemaBudget: new SchemaBudget("other", 0.1) });
    // A tool removed or replaced (by one outside the budget) stops counting against it.
    registry.unregister("p1");
    registry.register(tool("p3", keywords(20_000)), { schemaBudget: plugins });
    registry.register(tool("p2", keywords(20_000)));
    registry.register(tool("p4", keywords(20_000)), { schemaBudget: plugins });
    // Each registry counts its own tools.
    new ToolRegistry().register(tool("p5", keywords(20_000)), { schemaBudget: plugins });
  });

  it.each([
    ["register", (registry: ToolRegistry, options: unknown) => registry.register(tool("t", {}), options as never)],
    [
      "registerHidden",
      (registry: ToolRegistry, options: unknown) => registry.registerHidden(tool("t", {}), options as never),
    ],
  ])("%s refuses a schemaBudget that is not a SchemaBudget, and options that are not an object", (where, run) => {
    const registry = new ToolRegistry();
    expect(() => run(registry, { schemaBudget: { name: "x", share: 1 } })).toThrow(
      `${where}: schemaBudget must be a SchemaBudget, got {"name":"x","share":1}`,
    );
    expect(() => run(registry, null)).toThrow(`${where}: options must be an object, got null`);
    expect(registry.count()).toBe(0);
  });
});
