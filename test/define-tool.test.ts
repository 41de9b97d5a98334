import { describe, expect, it, vi } from "vitest";
import * as z from "zod";
import { z as z3 } from "zod3";
import {
  defineTool,
  errorResult,
  isToolExecutionError,
  isToolResult,
  newToolResult,
  type Tool,
  type ToolContext,
  ToolRegistry,
  userResult,
} from "../src/index.js";

function weatherTool(execute = vi.fn((args: { city: string; units: "c" | "f" }) => `${args.city}:${args.units}`)) {
  const tool = defineTool({
    name: "get_weather",
    description: "Current weather for a city",
    parameters: z.object({
      city: z.string().min(1).describe("City name"),
      units: z.enum(["c", "f"]).default("c"),
    }),
    execute,
  });
  return { tool, execute };
}

describe("defineTool", () => {
  it("makes a Tool whose parameters are the schema's JSON Schema (input side, without $schema)", () => {
    const { tool } = weatherTool();
    expect(tool.name).toBe("get_weather");
    expect(tool.description).toBe("Current weather for a city");
    expect(tool.parameters).toMatchInlineSnapshot(`
      {
        "properties": {
          "city": {
            "description": "City name",
            "minLength": 1,
            "type": "string",
          },
          "units": {
            "default": "c",
            "enum": [
              "c",
              "f",
            ],
            "type": "string",
          },
        },
        "required": [
          "city",
        ],
        "type": "object",
      }
    `);
  });

  it("keeps the zod schema on the tool", () => {
    const schema = z.object({ q: z.string() });
    const tool = defineTool({ name: "search", description: "d", parameters: schema, execute: () => "" });
    expect(tool.schema).toBe(schema);
  });

  it("parses arguments with zod before execute: defaults and transforms applied, unknown keys stripped", async () => {
    const execute = vi.fn((args: { text: string; count: number; limit: number }) => JSON.stringify(args));
    const tool = defineTool({
      name: "count",
      description: "d",
      parameters: z.object({
        text: z.string().transform((value) => value.toUpperCase()),
        count: z.string().transform((value) => value.length),
        limit: z.number().default(10),
      }),
      execute,
    });
    const registry = new ToolRegistry();
    registry.register(tool);
    const result = await registry.execute("count", { text: "abc", count: "hello", extra: true });
    expect(result.isError).toBe(false);
    expect(execute).toHaveBeenCalledTimes(1);
    expect(execute.mock.calls[0]?.[0]).toEqual({ text: "ABC", count: 5, limit: 10 });
  });

  it.each([
    ["a missing property", {}, "city: Invalid input: expected string, received undefined"],
    ["a wrong type", { city: 42 }, "city: Invalid input: expected string, received number"],
    ["an enum violation", { city: "Paris", units: "k" }, 'units: Invalid option: expected one of "c"|"f"'],
    ["a failed refinement", { city: "" }, "city: Too small: expected string to have >=1 characters"],
  ])("rejects %s naming the property and the problem; the tool does not run", async (_case, args, problem) => {
    const { tool, execute } = weatherTool();
    const registry = new ToolRegistry();
    registry.register(tool);
    const result = await registry.execute("get_weather", args);
    expect(execute).not.toHaveBeenCalled();
    expect(result.isError).toBe(true);
    expect(result.forLLM).toBe(`invalid arguments for tool "get_weather": ${problem}`);
    expect(isToolExecutionError(result.err)).toBe(true);
    expect(result.err).toMatchObject({ toolName: "get_weather", code: "invalid_arguments" });
  });

  it("reports nested properties by their path", async () => {
    const tool = defineTool({
      name: "nested",
      description: "d",
      parameters: z.object({ filter: z.object({ tags: z.array(z.string()) }) }),
      execute: () => "ok",
    });
    expect(tool.parseArguments({ filter: { tags: ["a", 1] } })).toMatchInlineSnapshot(`
      {
        "error": "filter.tags.1: Invalid input: expected string, received number",
        "success": false,
      }
    `);
  });

  it.each([
    ["a string", () => "sunny", newToolResult("sunny")],
    ["a promise of a string", async () => "sunny", newToolResult("sunny")],
    ["a ToolResult", () => userResult("sunny"), userResult("sunny")],
    ["a promise of a ToolResult", async () => errorResult("no data"), errorResult("no data")],
  ])("execute may return %s", async (_case, execute, expected) => {
    const tool = defineTool({ name: "t", description: "d", parameters: z.object({}), execute });
    const registry = new ToolRegistry();
    registry.register(tool);
    // The registry adds this call's metadata (issue 10); everything else is what the tool returned.
    const { metadata, ...result } = await registry.execute("t", {});
    expect(result).toEqual({ ...expected });
    expect(metadata?.toolName).toBe("t");
  });

  it("receives the call's context", async () => {
    const execute = vi.fn(
      (_args: Record<string, never>, context: Parameters<Tool["execute"]>[1]) =>
        `${context.channel}/${context.chatId}/${context.toolCallId}`,
    );
    const registry = new ToolRegistry();
    registry.register(defineTool({ name: "who", description: "d", parameters: z.object({}), execute }));
    const result = await registry.executeWithContext("who", {}, "telegram", "42", undefined, { toolCallId: "c1" });
    expect(result.forLLM).toBe("telegram/42/c1");
  });

  it("a throw inside execute becomes an error result through the registry", async () => {
    const tool = defineTool({
      name: "fails",
      description: "d",
      parameters: z.object({}),
      execute: () => {
        throw new Error("kaput");
      },
    });
    const registry = new ToolRegistry();
    registry.register(tool);
    const result = await registry.execute("fails", {});
    expect(result.forLLM).toBe('tool "fails" failed: kaput');
    expect(result.err?.cause).toEqual(new Error("kaput"));
  });

  it.each([
    ["null options", null, /defineTool: options must be an object, got null/],
    [
      "a plain JSON Schema as parameters",
      { name: "x", description: "d", parameters: { type: "object" }, execute: (): string => "" },
      /defineTool\("x"\): parameters must be a zod object schema \(z\.object\(\{\.\.\.\}\), zod 3\.25\+ or 4\), got \{"type":"object"/,
    ],
    [
      "a zod string as parameters",
      { name: "x", description: "d", parameters: z.string(), execute: (): string => "" },
      /parameters must be a zod object schema/,
    ],
    [
      "a zod 3 string as parameters",
      { name: "x", description: "d", parameters: z3.string(), execute: (): string => "" },
      /parameters must be a zod object schema/,
    ],
    [
      "a zod 3 refined object (a ZodEffects, not an object schema)",
      { name: "x", description: "d", parameters: z3.object({}).refine(() => true), execute: (): string => "" },
      /parameters must be a zod object schema/,
    ],
    [
      "a missing execute",
      { name: "x", description: "d", parameters: z.object({}) },
      /defineTool\("x"\): execute must be a function, got undefined/,
    ],
    [
      "a loopBreaking that is not a boolean",
      { name: "x", description: "d", parameters: z.object({}), execute: (): string => "", loopBreaking: "yes" },
      /defineTool\("x"\): loopBreaking must be a boolean, got "yes"/,
    ],
    [
      "a needsApproval that is neither a boolean nor a function",
      { name: "x", description: "d", parameters: z.object({}), execute: (): string => "", needsApproval: "always" },
      /defineTool\("x"\): needsApproval must be a boolean or a function \(args, context\) => boolean, got "always"/,
    ],
    [
      "a needsApproval of null",
      { name: "x", description: "d", parameters: z.object({}), execute: (): string => "", needsApproval: null },
      /needsApproval must be a boolean or a function .*, got null/,
    ],
    [
      "a schema that has no JSON Schema form",
      { name: "x", description: "d", parameters: z.object({ when: z.date() }), execute: (): string => "" },
      /defineTool\("x"\): the schema cannot be converted to JSON Schema/,
    ],
  ])("throws a TypeError for %s", (_case, options, message) => {
    expect(() => defineTool(options as never)).toThrow(TypeError);
    expect(() => defineTool(options as never)).toThrow(message);
  });
});

describe("defineTool passes needsApproval through (issue 12)", () => {
  const base = {
    name: "remove",
    description: "d",
    parameters: z.object({ path: z.string() }),
    execute: () => "removed",
  };
  const predicate = (args: Record<string, unknown>) => String(args.path).startsWith("/etc");

  it.each<[string, Tool["needsApproval"], boolean]>([
    ["true", true, true],
    ["a predicate", predicate, true],
    ["false (the same as absent)", false, false],
    ["absent", undefined, false],
  ])("needsApproval %s", (_case, needsApproval, kept) => {
    const tool = defineTool(needsApproval === undefined ? base : { ...base, needsApproval });
    expect("needsApproval" in tool).toBe(kept);
    if (kept) expect(tool.needsApproval).toBe(needsApproval);
  });

  it("in a loop: the defined tool waits for approve; the predicate sees the model's arguments before the schema parses them", async () => {
    const seen: unknown[] = [];
    const tool = defineTool({
      ...base,
      needsApproval: (args) => {
        seen.push(args);
        return predicate(args);
      },
    });
    const { runToolLoop } = await import("../src/index.js");
    const { ScriptedProvider, textResponse, toolCallResponse } = await import("../src/testing/index.js");
    const provider = new ScriptedProvider([
      toolCallResponse([
        { id: "etc", name: "remove", arguments: { path: "/etc/passwd", extra: 1 } },
        { id: "tmp", name: "remove", arguments: { path: "/tmp/x" } },
      ]),
      textResponse("done"),
    ]);
    const approve = vi.fn(() => ({ approved: false, reason: "no" }));
    const result = await runToolLoop({ provider, tools: [tool], maxIterations: 2, approve }, [
      { role: "user", content: "clean" },
    ]);
    expect(approve).toHaveBeenCalledTimes(1);
    expect(seen).toEqual([{ path: "/etc/passwd", extra: 1 }, { path: "/tmp/x" }]);
    expect(result.messages.filter((message) => message.role === "tool").map((message) => message.content)).toEqual([
      "denied by the user: no",
      "removed",
    ]);
  });
});

describe("defineTool with zod 3 (3.25+) and zod 4", () => {
  const majors = [
    {
      major: "zod 4",
      parameters: z.object({
        city: z.string().min(1).describe("City name"),
        units: z.enum(["c", "f"]).default("c"),
        tags: z.array(z.string()).optional(),
      }),
    },
    {
      major: "zod 3",
      parameters: z3.object({
        city: z3.string().min(1).describe("City name"),
        units: z3.enum(["c", "f"]).default("c"),
        tags: z3.array(z3.string()).optional(),
      }),
    },
  ] as const;

  function register(parameters: (typeof majors)[number]["parameters"]) {
    const execute = vi.fn((args: Record<string, unknown>) => JSON.stringify(args));
    const registry = new ToolRegistry();
    registry.register(defineTool({ name: "get_weather", description: "Weather", parameters, execute }));
    return { registry, execute };
  }

  it.each(majors)("$major: the model gets the schema's JSON Schema, input side, without $schema", ({ parameters }) => {
    const { registry } = register(parameters);
    const [definition] = registry.getDefinitions();
    expect(definition?.function.parameters).toMatchObject({
      type: "object",
      properties: {
        city: { type: "string", minLength: 1, description: "City name" },
        units: { type: "string", enum: ["c", "f"], default: "c" },
        tags: { type: "array", items: { type: "string" } },
      },
      required: ["city"],
    });
    expect(definition?.function.parameters).not.toHaveProperty("$schema");
  });

  it.each(majors)("$major: valid arguments reach execute parsed, with defaults", async ({ parameters }) => {
    const { registry, execute } = register(parameters);
    const result = await registry.execute("get_weather", { city: "Paris" });
    expect(result.isError).toBe(false);
    expect(execute.mock.calls[0]?.[0]).toEqual({ city: "Paris", units: "c" });
    expect(result.forLLM).toBe('{"city":"Paris","units":"c"}');
  });

  it("zod 4: invalid arguments tell the model each property and problem; the tool does not run", async () => {
    const { registry, execute } = register(majors[0].parameters);
    const result = await registry.execute("get_weather", { city: "", units: "k", tags: [1] });
    expect(execute).not.toHaveBeenCalled();
    expect(result.forLLM).toMatchInlineSnapshot(
      `"invalid arguments for tool "get_weather": city: Too small: expected string to have >=1 characters; units: Invalid option: expected one of "c"|"f"; tags.0: Invalid input: expected string, received number"`,
    );
  });

  it("zod 3: invalid arguments tell the model each property and problem in the same format", async () => {
    const { registry, execute } = register(majors[1].parameters);
    const result = await registry.execute("get_weather", { city: "", units: "k", tags: [1] });
    expect(execute).not.toHaveBeenCalled();
    expect(result.isError).toBe(true);
    expect(result.err).toMatchObject({ toolName: "get_weather", code: "invalid_arguments" });
    expect(result.forLLM).toMatchInlineSnapshot(
      `"invalid arguments for tool "get_weather": city: String must contain at least 1 character(s); units: Invalid enum value. Expected 'c' | 'f', received 'k'; tags.0: Expected string, received number"`,
    );
    expect((await registry.execute("get_weather", {})).forLLM).toBe(
      'invalid arguments for tool "get_weather": city: Required',
    );
  });

  it("zod 3: transforms apply and unknown keys are stripped, like zod 4", () => {
    const tool = defineTool({
      name: "t",
      description: "d",
      parameters: z3.object({ text: z3.string().transform((value) => value.toUpperCase()) }),
      execute: ({ text }) => text,
    });
    expect(tool.parseArguments({ text: "abc", extra: 1 })).toEqual({ success: true, data: { text: "ABC" } });
  });

  it("zod 3: a sub-schema used twice is written out twice; a recursive one becomes a $ref (nothing on the console)", () => {
    const point = z3.object({ x: z3.number() });
    type Node = { name: string; children: Node[] };
    const node: z3.ZodType<Node> = z3.lazy(() => z3.object({ name: z3.string(), children: z3.array(node) }));
    const tool = defineTool({
      name: "t",
      description: "d",
      parameters: z3.object({ from: point, to: point, tree: node }),
      execute: () => "",
    });
    const properties = tool.parameters.properties as Record<string, unknown>;
    expect(properties.to).toEqual(properties.from);
    expect(properties.from).toMatchObject({ type: "object", properties: { x: { type: "number" } } });
    expect(properties.tree).toMatchObject({
      type: "object",
      properties: { children: { type: "array", items: { $ref: "#/properties/tree" } } },
    });
  });

  it("zod 3: keeps the schema on the tool", () => {
    const schema = z3.object({ q: z3.string() });
    expect(defineTool({ name: "search", description: "d", parameters: schema, execute: () => "" }).schema).toBe(schema);
  });
});

// Moved from review-regressions.test.ts (findings of the independent review; each failed before its fix).
describe("a defined tool called directly (review regressions)", () => {
  it("a defined tool called directly returns a ToolResult for a string", async () => {
    const tool = defineTool({
      name: "hello",
      description: "says hello",
      parameters: z.object({ name: z.string() }),
      execute: ({ name }) => `hello ${name}`,
    });
    const context = {} as ToolContext;
    const direct = await tool.execute({ name: "Ada" }, context);
    expect(isToolResult(direct)).toBe(true);
    expect(direct.forLLM).toBe("hello Ada");
    const asyncTool = defineTool({
      name: "hello_async",
      description: "says hello later",
      parameters: z.object({}),
      execute: async () => "later",
    });
    expect(isToolResult(await asyncTool.execute({}, context))).toBe(true);
  });
});

describe("defineTool reads only the arguments' own properties", () => {
  // zod reads a declared property as `input[name]`: `{}` would answer `constructor` or `toString`
  // with Object.prototype's.
  const NAMES = ["constructor", "toString", "valueOf", "hasOwnProperty"] as const;
  const majors = [
    [
      "zod 4",
      (name: string) =>
        z.object({ [name]: z.string().optional(), nested: z.object({ [name]: z.string().optional() }).optional() }),
      (name: string) => z.object({ [name]: z.string() }),
    ],
    [
      "zod 3",
      (name: string) =>
        z3.object({ [name]: z3.string().optional(), nested: z3.object({ [name]: z3.string().optional() }).optional() }),
      (name: string) => z3.object({ [name]: z3.string() }),
    ],
  ] as const;

  describe.each(majors)("%s", (_major, optional, required) => {
    it.each(NAMES)("an optional %s: {} (also nested) is accepted", (name) => {
      const defined = defineTool({ name: "t", description: "t", parameters: optional(name), execute: () => "ok" });
      expect(defined.parseArguments({})).toEqual({ success: true, data: {} });
      expect(defined.parseArguments({ nested: {} })).toEqual({ success: true, data: { nested: {} } });
      expect(defined.parseArguments(JSON.parse(`{"${name}":"x"}`))).toEqual({ success: true, data: { [name]: "x" } });
    });

    it.each(NAMES)(
      "a required %s: {} is refused as missing (not as the prototype's function), sent it is accepted",
      (name) => {
        const defined = defineTool({ name: "t", description: "t", parameters: required(name), execute: () => "ok" });
        const missing = defined.parseArguments({});
        expect(missing.success).toBe(false);
        expect(missing.success ? "" : missing.error).toMatch(
          new RegExp(`^${name}: (Required|Invalid input: expected string, received undefined)$`),
        );
        expect(defined.parseArguments({ [name]: "x" })).toEqual({ success: true, data: { [name]: "x" } });
      },
    );
  });

  it("objects a tool receives through z.any() or z.record() keep their usual prototype", async () => {
    const execute = vi.fn((args: Record<string, unknown>) => {
      const meta = args.meta as { hasOwnProperty(key: string): boolean };
      return `${Object.hasOwn(meta, "a")} ${Object.getPrototypeOf(args.list) === Array.prototype}`;
    });
    const registry = new ToolRegistry();
    registry.register(
      defineTool({
        name: "keeps",
        description: "keeps",
        parameters: z.object({ constructor: z.string().optional(), meta: z.any(), list: z.array(z.unknown()) }),
        execute,
      }),
    );
    const args = JSON.parse('{"meta":{"a":{"b":[{"c":1}]},"__proto__":{"x":1}},"list":[{"d":2}]}');
    expect((await registry.execute("keeps", args)).forLLM).toBe("true true");
    const received = execute.mock.calls[0]?.[0] as Record<string, Record<string, unknown>>;
    expect(Object.getPrototypeOf(received.meta)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(received.meta?.a)).toBe(Object.prototype);
    // The model's "__proto__" key stays an own key, never a prototype.
    expect(Object.hasOwn(received.meta ?? {}, "__proto__")).toBe(true);
    expect((received.meta as { x?: unknown }).x).toBeUndefined();
    expect(Object.getPrototypeOf((received.list as unknown as unknown[])[0])).toBe(Object.prototype);
  });
});
