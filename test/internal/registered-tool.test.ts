import { describe, expect, it, vi } from "vitest";
import { newToolResult, type ParseArgumentsResult, type Tool, toolToSchema } from "../../src/index.js";
import { prepareTool } from "../../src/internal/registered-tool.js";

function tool(overrides: Record<string, unknown> = {}): Tool {
  return {
    name: "read",
    description: "reads a path",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    execute: () => newToolResult("ok"),
    ...overrides,
  } as Tool;
}

describe("prepareTool", () => {
  it("keeps the tool, builds its definition once (frozen) and has no logger yet", () => {
    const original = tool();
    const entry = prepareTool(original);
    expect(entry.tool).toBe(original);
    expect(entry.definition).toEqual(toolToSchema(original));
    expect(Object.isFrozen(entry.definition)).toBe(true);
    expect(entry.logger).toBeUndefined();
  });

  it("compiles the schema: validate accepts valid arguments and explains invalid ones", () => {
    const { validate } = prepareTool(tool());
    expect(validate({ path: "a.txt" })).toEqual({ success: true, data: { path: "a.txt" } });
    const invalid = validate({ path: 1 });
    expect(invalid.success).toBe(false);
    expect(invalid.success === false && invalid.error).toMatch(/path/);
    expect(validate({}).success).toBe(false);
  });

  it("reads parameters only then: replacing them on the tool later changes neither definition nor validation", () => {
    const original = tool();
    const entry = prepareTool(original);
    (original as { parameters: unknown }).parameters = { type: "object", properties: { other: { type: "number" } } };
    expect(entry.definition.function.parameters).toEqual({
      type: "object",
      properties: { path: { type: "string" } },
      required: ["path"],
    });
    expect(entry.validate({}).success).toBe(false);
  });

  it("uses a tool's own parseArguments instead of the schema, called as a method of the tool", () => {
    const seen: unknown[] = [];
    const own = {
      ...tool(),
      prefix: "parsed:",
      parseArguments(this: { prefix: string }, args: Record<string, unknown>): ParseArgumentsResult {
        seen.push(this);
        return { success: true, data: { value: `${this.prefix}${String(args.path)}` } };
      },
    };
    const { validate } = prepareTool(own);
    // The schema would refuse a number; the tool's own parser decides instead.
    expect(validate({ path: 1 })).toEqual({ success: true, data: { value: "parsed:1" } });
    expect(seen).toEqual([own]);
    // A detached call still sees the tool as `this`.
    const detached = validate;
    detached({ path: "x" });
    expect(seen[1]).toBe(own);
  });

  it("does not compile the schema of a tool with its own parseArguments", () => {
    const parseArguments = vi.fn(() => ({ success: true as const, data: {} }));
    const invalidSchema = { type: "object", properties: { a: { type: "text" } } };
    expect(() => prepareTool(tool({ parameters: invalidSchema, parseArguments }))).not.toThrow();
    expect(() => prepareTool(tool({ parameters: invalidSchema }))).toThrow(TypeError);
  });

  it("an invalid JSON Schema is a TypeError naming the tool, with the compiler's error as cause", () => {
    let thrown: unknown;
    try {
      prepareTool(tool({ name: "bad_schema", parameters: { type: "object", properties: { a: { type: "text" } } } }));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(TypeError);
    expect((thrown as TypeError).message).toMatch(/^tool "bad_schema": parameters is not a valid JSON Schema: \S/);
    expect((thrown as TypeError).cause).toBeInstanceOf(Error);
  });

  it.each([{}, { type: "object" }, { properties: {} }])(
    "accepts parameters %j (type may be left out)",
    (parameters) => {
      expect(prepareTool(tool({ parameters })).validate({}).success).toBe(true);
    },
  );

  it.each([
    ["null", null, "register: tool must be an object, got null"],
    ["a string", "read", 'register: tool must be an object, got "read"'],
    ["a function", () => {}, "register: tool must be an object, got function"],
  ])("a tool that is %s is the option TypeError of register", (_case, value, message) => {
    expect(() => prepareTool(value as unknown as Tool)).toThrow(new TypeError(message));
  });

  it.each([
    ["an empty name", { name: "" }, 'register: tool.name must be a string matching /^[A-Za-z0-9_-]{1,64}$/, got ""'],
    ["a 65-character name", { name: "n".repeat(65) }, `got "${"n".repeat(65)}"`],
    ["a name with a slash", { name: "a/b" }, 'got "a/b"'],
    ["a name that is not a string", { name: 7 }, "tool.name must be a string matching /^[A-Za-z0-9_-]{1,64}$/, got 7"],
    ["a missing description", { description: undefined }, 'tool "read": description must be a string, got undefined'],
    ["an execute that is no function", { execute: "run" }, 'tool "read": execute must be a function, got "run"'],
    ["array parameters", { parameters: [] }, 'tool "read": parameters must be a JSON Schema object, got []'],
    [
      "a class instance as parameters",
      { parameters: new Date(0) },
      "parameters must be a JSON Schema object, got Date",
    ],
    [
      "a parameters type other than object",
      { parameters: { type: "array" } },
      'parameters.type must be "object", got "array"',
    ],
  ])("%s is a TypeError saying what was expected and echoing the value", (_case, overrides, message) => {
    const prepare = () => prepareTool(tool(overrides));
    expect(prepare).toThrow(TypeError);
    expect(prepare).toThrow(message);
  });

  it("checks the name before anything else of the tool", () => {
    expect(() => prepareTool(tool({ name: "", description: 1, parameters: null }))).toThrow(/tool\.name must be/);
  });
});

describe("prepareTool: schema limits", () => {
  it("a schema over the limits is a SchemaLimitError (a TypeError) naming the tool, with the measure as cause", () => {
    const patterns = Object.fromEntries(
      Array.from({ length: 101 }, (_, index) => [`p${index}`, { pattern: `^${index}$` }]),
    );
    const error = (() => {
      try {
        prepareTool(tool({ name: "many", parameters: { type: "object", properties: patterns } }));
      } catch (thrown) {
        return thrown as Error;
      }
      throw new Error("expected prepareTool to throw");
    })();
    expect(error).toBeInstanceOf(TypeError);
    expect(error.name).toBe("SchemaLimitError");
    expect(error.message).toBe('tool "many": parameters is over the schema limits: it has 101 patterns, at most 100');
    expect((error.cause as Error).message).toBe("it has 101 patterns, at most 100");
  });

  it("records what the schema cost; a tool with its own parseArguments costs nothing", () => {
    expect(prepareTool(tool()).cost).toEqual({ subschemas: 2, keywords: 4, patterns: 0, literals: 0, compiled: 6 });
    const own = prepareTool(tool({ parseArguments: () => ({ success: true as const, data: {} }) }));
    expect(own.cost).toBeUndefined();
  });
});
