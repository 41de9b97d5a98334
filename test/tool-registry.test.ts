import { inspect } from "node:util";
import { describe, expect, it, vi } from "vitest";
import {
  createToolSearchTools,
  errorResult,
  isToolExecutionError,
  type Logger,
  newToolResult,
  TOOL_SEARCH_TOOL_NAMES,
  type Tool,
  type ToolContext,
  ToolRegistry,
  type ToolRegistryOptions,
} from "../src/index.js";
import { CACHED_DEFINITIONS } from "../src/registry-symbols.js";
import { captureLogger } from "./helpers/capture-logger.js";

/** Runs one call of a tool that records its `context.logger`; returns what it saw. */
async function loggerSeenByTool(registry: ToolRegistry): Promise<unknown[]> {
  const seen: unknown[] = [];
  registry.register({
    name: "t",
    description: "records its logger",
    parameters: {},
    execute: (_args, context) => {
      seen.push(context.logger);
      return "ok";
    },
  });
  await registry.execute("t", {});
  return seen;
}

function makeTool(name: string, overrides: Partial<Tool> = {}): Tool & { execute: ReturnType<typeof vi.fn> } {
  return {
    name,
    description: `the ${name} tool`,
    parameters: { type: "object", properties: {} },
    execute: vi.fn((args: Record<string, unknown>) => newToolResult(`${name}:${JSON.stringify(args)}`)),
    ...overrides,
  } as Tool & { execute: ReturnType<typeof vi.fn> };
}

describe("registration and introspection", () => {
  it("registers, looks up, lists sorted, counts, summarises and unregisters", () => {
    const registry = new ToolRegistry();
    const zeta = makeTool("zeta");
    const alpha = makeTool("alpha");
    registry.register(zeta);
    registry.register(alpha);

    expect(registry.get("alpha")).toBe(alpha);
    expect(registry.get("missing")).toBeUndefined();
    expect(registry.has("zeta")).toBe(true);
    expect(registry.has("missing")).toBe(false);
    expect(registry.list()).toEqual(["alpha", "zeta"]);
    expect(registry.count()).toBe(2);
    expect(registry.getSummaries()).toMatchInlineSnapshot(`
      [
        "- \`alpha\` - the alpha tool",
        "- \`zeta\` - the zeta tool",
      ]
    `);

    expect(registry.unregister("zeta")).toBe(true);
    expect(registry.unregister("zeta")).toBe(false);
    expect(registry.list()).toEqual(["alpha"]);
    expect(registry.count()).toBe(1);
    expect(registry.has("zeta")).toBe(false);
  });

  it("list() returns a copy", () => {
    const registry = new ToolRegistry();
    registry.register(makeTool("a"));
    registry.list().push("b");
    expect(registry.list()).toEqual(["a"]);
  });

  it("offers definitions sorted by name, updated when tools change", () => {
    const registry = new ToolRegistry();
    registry.register(makeTool("b"));
    registry.register(makeTool("a"));
    const names = () => registry.toProviderDefs().map((definition) => definition.function.name);
    expect(names()).toEqual(["a", "b"]);
    expect(registry.toProviderDefs()[0]).toEqual({
      type: "function",
      function: { name: "a", description: "the a tool", parameters: { type: "object", properties: {} } },
    });
    registry.register(makeTool("c"));
    registry.unregister("a");
    expect(names()).toEqual(["b", "c"]);
  });

  it("replacing a tool of the same name warns through the injected logger", () => {
    const { logger, lines } = captureLogger("info");
    const registry = new ToolRegistry({ logger });
    const first = makeTool("dup");
    const second = makeTool("dup");
    registry.register(first);
    expect(lines).toEqual([]);
    registry.register(second);
    expect(registry.get("dup")).toBe(second);
    expect(registry.count()).toBe(1);
    expect(lines).toEqual([
      expect.objectContaining({ level: 40, tool: "dup", msg: "tool replaced by a new registration" }),
    ]);
  });

  it.each([
    ["an empty name", { name: "" }, 'register: tool.name must be a string matching /^[A-Za-z0-9_-]{1,64}$/, got ""'],
    ["a name with a space", { name: "read file" }, 'got "read file"'],
    ["a name with a dot", { name: "fs.read" }, 'got "fs.read"'],
    ["a non-ASCII name", { name: "météo" }, 'got "météo"'],
    ["a 65-character name", { name: "a".repeat(65) }, `got "${"a".repeat(65)}"`],
    ["a numeric name", { name: 42 }, "got 42"],
    ["a missing name", { name: undefined }, "got undefined"],
    ["null parameters", { parameters: null }, 'tool "t": parameters must be a JSON Schema object, got null'],
    ["array parameters", { parameters: [] }, 'tool "t": parameters must be a JSON Schema object, got []'],
    ["string parameters", { parameters: "{}" }, 'tool "t": parameters must be a JSON Schema object, got "{}"'],
    ["missing parameters", { parameters: undefined }, "parameters must be a JSON Schema object, got undefined"],
    ['type "array"', { parameters: { type: "array" } }, 'tool "t": parameters.type must be "object", got "array"'],
    ['type "string"', { parameters: { type: "string" } }, 'parameters.type must be "object", got "string"'],
    [
      "a type list",
      { parameters: { type: ["object", "null"] } },
      'parameters.type must be "object", got ["object","null"]',
    ],
    ["type null", { parameters: { type: null } }, 'parameters.type must be "object", got null'],
    [
      "an invalid JSON Schema",
      { parameters: { type: "object", properties: { a: { type: "text" } } } },
      'tool "t": parameters is not a valid JSON Schema',
    ],
    ["a non-string description", { description: 1 }, 'tool "t": description must be a string, got 1'],
    ["a missing execute", { execute: undefined }, 'tool "t": execute must be a function, got undefined'],
  ])("register() throws a TypeError for %s, echoing the value", (_case, overrides, message) => {
    const registry = new ToolRegistry();
    const tool = makeTool("t", overrides as Partial<Tool>);
    expect(() => registry.register(tool)).toThrow(TypeError);
    expect(() => registry.register(tool)).toThrow(message);
    expect(registry.count()).toBe(0);
  });

  it.each([null, undefined, "tool"])("register(%s) throws a TypeError", (value) => {
    expect(() => new ToolRegistry().register(value as unknown as Tool)).toThrow(TypeError);
  });

  it.each(["a", "A-b_9", "x".repeat(64), "__proto__", "constructor"])("accepts the name %j", (name) => {
    const registry = new ToolRegistry();
    registry.register(makeTool(name));
    expect(registry.has(name)).toBe(true);
  });

  it("rejects options that are not an object", () => {
    expect(() => new ToolRegistry(null as never)).toThrow("ToolRegistry: options must be an object, got null");
  });
});

describe("dispatch", () => {
  it("runs the tool with its arguments", async () => {
    const registry = new ToolRegistry();
    const tool = makeTool("echo");
    registry.register(tool);
    const result = await registry.execute("echo", { text: "hi" });
    expect(result.forLLM).toBe('echo:{"text":"hi"}');
    expect(tool.execute).toHaveBeenCalledTimes(1);
  });

  it("an unknown tool is an error result listing the available tools, with err set", async () => {
    const registry = new ToolRegistry();
    registry.register(makeTool("read_file"));
    registry.register(makeTool("list_dir"));
    const result = await registry.execute("x", {});
    expect(result.isError).toBe(true);
    expect(result.forLLM).toMatchInlineSnapshot(`"tool "x" not found. Available tools: list_dir, read_file."`);
    expect(isToolExecutionError(result.err)).toBe(true);
    expect(result.err).toMatchObject({ toolName: "x", code: "tool_not_found", message: result.forLLM });
  });

  it("says so when no tool is registered, and cuts a long list", async () => {
    expect((await new ToolRegistry().execute("x", {})).forLLM).toMatchInlineSnapshot(
      `"tool "x" not found. No tools are available."`,
    );
    const registry = new ToolRegistry();
    for (let index = 0; index < 25; index++) registry.register(makeTool(`t${String(index).padStart(2, "0")}`));
    expect((await registry.execute("x", {})).forLLM).toMatchInlineSnapshot(
      `"tool "x" not found. Available tools: t00, t01, t02, t03, t04, t05, t06, t07, t08, t09, t10, t11, t12, t13, t14, t15, t16, t17, t18, t19 and 5 more."`,
    );
  });

  it.each(["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "prototype"])(
    "%j is never a tool unless registered",
    async (name) => {
      const registry = new ToolRegistry();
      registry.register(makeTool("real"));
      expect(registry.has(name)).toBe(false);
      expect(registry.get(name)).toBeUndefined();
      const result = await registry.execute(name, {});
      expect(result.isError).toBe(true);
      expect(result.forLLM).toBe(`tool ${JSON.stringify(name)} not found. Available tools: real.`);
      expect(result.err).toMatchObject({ code: "tool_not_found" });
      expect(registry.unregister(name)).toBe(false);
      expect(registry.list()).toEqual(["real"]);
    },
  );

  it("a tool named like an Object.prototype member works like any other", async () => {
    const registry = new ToolRegistry();
    const tool = makeTool("toString");
    registry.register(tool);
    expect((await registry.execute("toString", {})).forLLM).toBe("toString:{}");
    expect((await registry.execute("constructor", {})).isError).toBe(true);
  });

  it.each([
    ["a number", 42],
    ["undefined", undefined],
    ["an object", { name: "real" }],
  ])("a name that is %s is not found, without throwing", async (_case, name) => {
    const registry = new ToolRegistry();
    registry.register(makeTool("real"));
    const result = await registry.execute(name as unknown as string, {});
    expect(result.err).toMatchObject({ code: "tool_not_found" });
  });
});

describe("argument validation of plain JSON-Schema tools (Ajv)", () => {
  const parameters = {
    type: "object",
    properties: {
      path: { type: "string", description: "Path to the file to read" },
      limit: { type: "integer", minimum: 1 },
      mode: { type: "string", enum: ["text", "binary"] },
      options: {
        type: "object",
        properties: { encoding: { type: "string" }, tags: { type: "array", items: { type: "string" } } },
        additionalProperties: false,
      },
    },
    required: ["path"],
  };

  it.each([
    ["a missing required property", {}, "path: required property is missing"],
    ["a wrong type", { path: 42 }, "path: must be string"],
    ["an integer that is a float", { path: "a", limit: 1.5 }, "limit: must be integer"],
    ["a minimum violation", { path: "a", limit: 0 }, "limit: must be >= 1"],
    ["an enum violation", { path: "a", mode: "hex" }, 'mode: must be one of "text", "binary"'],
    [
      "an unknown nested property",
      { path: "a", options: { colour: "red" } },
      "options.colour: unknown property is not allowed",
    ],
    ["a wrong array item", { path: "a", options: { tags: ["x", 3] } }, "options.tags[1]: must be string"],
    [
      "several problems",
      { limit: "ten", mode: 1 },
      'path: required property is missing; limit: must be integer; mode: must be string; mode: must be one of "text", "binary"',
    ],
  ])("rejects %s naming the property and the problem; the tool does not run", async (_case, args, problem) => {
    const registry = new ToolRegistry();
    const tool = makeTool("read_file", { parameters });
    registry.register(tool);
    const result = await registry.execute("read_file", args);
    expect(tool.execute).not.toHaveBeenCalled();
    expect(result.isError).toBe(true);
    expect(result.err).toMatchObject({ toolName: "read_file", code: "invalid_arguments", message: result.forLLM });
    expect(result.forLLM).toBe(`invalid arguments for tool "read_file": ${problem}`);
  });

  it("accepts valid arguments and passes them unchanged", async () => {
    const registry = new ToolRegistry();
    const tool = makeTool("read_file", { parameters });
    registry.register(tool);
    const args = { path: "/tmp/a", limit: 3, mode: "text", options: { tags: ["x"] }, extra: true };
    const result = await registry.execute("read_file", args);
    expect(result.isError).toBe(false);
    expect(tool.execute.mock.calls[0]?.[0]).toEqual(args);
  });

  it("follows the schema's draft: 2020-12 prefixItems are checked", async () => {
    const registry = new ToolRegistry();
    const tool = makeTool("point", {
      parameters: {
        $schema: "https://json-schema.org/draft/2020-12/schema",
        type: "object",
        properties: { at: { type: "array", prefixItems: [{ type: "number" }, { type: "number" }] } },
      },
    });
    registry.register(tool);
    expect((await registry.execute("point", { at: [1, "2"] })).forLLM).toMatchInlineSnapshot(
      `"invalid arguments for tool "point": at[1]: must be number"`,
    );
    expect((await registry.execute("point", { at: [1, 2] })).isError).toBe(false);
  });

  it("treats format as an annotation (standard JSON Schema since 2019-09)", async () => {
    const registry = new ToolRegistry();
    registry.register(
      makeTool("mail", { parameters: { type: "object", properties: { to: { type: "string", format: "email" } } } }),
    );
    expect((await registry.execute("mail", { to: "not an address" })).isError).toBe(false);
  });

  it.each([
    ["an empty schema", {}],
    ['{ type: "object" }', { type: "object" }],
    ["no properties", { type: "object", properties: {} }],
    ["only a description", { type: "object", description: "anything" }],
  ])("%s accepts any arguments", async (_case, schema) => {
    const registry = new ToolRegistry();
    const tool = makeTool("any", { parameters: schema });
    registry.register(tool);
    const args = { a: 1, nested: { b: [true, null] } };
    const result = await registry.execute("any", args);
    expect(result.isError).toBe(false);
    expect(tool.execute.mock.calls[0]?.[0]).toEqual(args);
  });

  it.each([
    ["an array", [1, 2], "array"],
    ["null", null, "null"],
    ["a string", "{}", "string"],
    ["a Date", new Date(0), "Date"],
    ["a Map", new Map([["a", 1]]), "Map"],
    ["an instance of a user class (D12)", new (class Query {})(), "Query"],
  ])("arguments that are %s are rejected before the tool runs, naming what they are", async (_case, args, type) => {
    const registry = new ToolRegistry();
    const tool = makeTool("any", { parameters: {} });
    registry.register(tool);
    const result = await registry.execute("any", args as unknown as Record<string, unknown>);
    expect(tool.execute).not.toHaveBeenCalled();
    expect(result.forLLM).toBe(`invalid arguments for tool "any": (root): expected a JSON object, got ${type}`);
  });

  it.each([
    ["options that are null", [undefined, null], "executeWithContext: options must be an object, got null"],
    [
      "a signal that is not an AbortSignal",
      [undefined, { signal: "stop" }],
      'executeWithContext: signal must be an AbortSignal, got "stop"',
    ],
    [
      "metadata that is not strings",
      [undefined, { metadata: { user: 7 } }],
      'executeWithContext: metadata["user"] must be a string, got 7',
    ],
    [
      "a toolCallId that is not a string",
      [undefined, { toolCallId: 7 }],
      "executeWithContext: toolCallId must be a string, got 7",
    ],
    ["a callback that is not a function", ["cb", {}], 'executeWithContext: asyncCallback must be a function, got "cb"'],
  ])("%s is a TypeError echoing the value, before anything runs", (_case, [callback, options], message) => {
    const registry = new ToolRegistry();
    const tool = makeTool("t");
    registry.register(tool);
    expect(() => registry.executeWithContext("t", {}, "", "", callback as never, options as never)).toThrow(
      new TypeError(message),
    );
    expect(tool.execute).not.toHaveBeenCalled();
  });

  it("a parseArguments hook's message is bounded too", async () => {
    const registry = new ToolRegistry();
    registry.register(makeTool("own", { parseArguments: () => ({ success: false, error: "z".repeat(50_000) }) }));
    const result = await registry.execute("own", {});
    expect(result.forLLM.length).toBeLessThanOrEqual(1_100);
    expect(result.forLLM).toMatch(/ … \[\d+ more characters cut\]$/);
  });

  it("a parseArguments hook replaces JSON Schema validation and may transform", async () => {
    const registry = new ToolRegistry();
    const tool = makeTool("custom", {
      parameters: { type: "object", properties: { n: { type: "string" } }, required: ["n"] },
      parseArguments: (args) =>
        typeof args.n === "number"
          ? { success: true, data: { n: args.n * 2 } }
          : { success: false, error: "n: want a number" },
    });
    registry.register(tool);
    expect((await registry.execute("custom", { n: 21 })).forLLM).toBe('custom:{"n":42}');
    expect((await registry.execute("custom", { n: "x" })).forLLM).toBe(
      'invalid arguments for tool "custom": n: want a number',
    );
  });

  it("a parseArguments hook that throws is an invalid-arguments result", async () => {
    const registry = new ToolRegistry();
    const tool = makeTool("custom", {
      parseArguments: () => {
        throw new Error("parser crashed");
      },
    });
    registry.register(tool);
    const result = await registry.execute("custom", {});
    expect(result.forLLM).toBe('invalid arguments for tool "custom": parser crashed');
    expect(tool.execute).not.toHaveBeenCalled();
  });
});

describe("logging", () => {
  it("logs start (debug), completion (debug) and failure (warn) with tool, toolCallId and durationMs", async () => {
    const { logger, lines } = captureLogger("debug");
    const registry = new ToolRegistry({ logger });
    registry.register(makeTool("ok"));
    registry.register(
      makeTool("bad", {
        execute: () => {
          throw new Error("kaput");
        },
      }),
    );
    await registry.execute("ok", { secret: "s3cret" }, { toolCallId: "c1" });
    await registry.execute("bad", {}, { toolCallId: "c2" });

    const calls = lines.map(({ level, msg, tool, toolCallId }) => ({ level, msg, tool, toolCallId }));
    expect(calls).toEqual([
      { level: 20, msg: "tool call started", tool: "ok", toolCallId: "c1" },
      { level: 20, msg: "tool call completed", tool: "ok", toolCallId: "c1" },
      { level: 20, msg: "tool call started", tool: "bad", toolCallId: "c2" },
      { level: 40, msg: "tool call failed", tool: "bad", toolCallId: "c2" },
    ]);
    for (const line of [lines[1], lines[3]]) expect(line?.durationMs).toEqual(expect.any(Number));
    expect(lines[3]).toMatchObject({ error: 'tool "bad" failed: kaput', err: { type: "ToolExecutionError" } });
    // Arguments and results may hold personal data: not logged unless asked for.
    expect(JSON.stringify(lines)).not.toContain("s3cret");
    expect(lines[1]).not.toHaveProperty("result");
  });

  it("logs a call rejected by validation as a failure", async () => {
    const { logger, lines } = captureLogger("info");
    const registry = new ToolRegistry({ logger });
    registry.register(makeTool("strict", { parameters: { type: "object", required: ["a"] } }));
    await registry.execute("strict", {});
    expect(lines).toEqual([
      expect.objectContaining({ level: 40, msg: "tool call failed", tool: "strict", durationMs: expect.any(Number) }),
    ]);
  });

  it("logs an unknown tool like every failed call: warn, tool call failed, same fields", async () => {
    const { logger, lines } = captureLogger("info");
    await new ToolRegistry({ logger }).execute("ghost", {}, { toolCallId: "c7" });
    expect(lines).toEqual([
      expect.objectContaining({
        level: 40,
        msg: "tool call failed",
        tool: "ghost",
        toolCallId: "c7",
        durationMs: 0,
        err: expect.objectContaining({ type: "ToolExecutionError", code: "tool_not_found" }),
        error: 'tool "ghost" not found. No tools are available.',
      }),
    ]);
  });

  it("a thrown object is never serialised into the log or the model's message, and stays err.cause (D05)", async () => {
    const thrown = { request: { headers: { authorization: "Bearer sk-SECRET-123" } }, status: 401 };
    const { logger, lines } = captureLogger("debug");
    const registry = new ToolRegistry({ logger });
    registry.register(makeTool("api", { execute: () => Promise.reject(thrown) }));
    const result = await registry.execute("api", {});
    expect(result.forLLM).toBe('tool "api" failed: threw a non-Error value: object');
    expect(result.err?.cause).toBe(thrown);
    expect(JSON.stringify(lines)).not.toContain("SECRET");
    expect(lines.at(-1)).toMatchObject({ msg: "tool call failed", error: result.forLLM });

    // A console-like logger prints whatever it is given (causes included): the logged err has no such cause.
    const warnings: unknown[][] = [];
    const consoleLike = { debug() {}, info() {}, error() {}, warn: (...args: unknown[]) => void warnings.push(args) };
    const plain = new ToolRegistry({ logger: consoleLike });
    plain.register(makeTool("api", { execute: () => Promise.reject(thrown) }));
    await plain.execute("api", {});
    expect(inspect(warnings, { depth: Number.POSITIVE_INFINITY, showHidden: true })).not.toContain("SECRET");
  });

  it.each([
    [
      "a class instance without a message",
      () => Promise.reject(new (class Weird {})()),
      "threw a non-Error value: Weird",
    ],
    [
      "a null-prototype object with a cycle",
      () => {
        const value = Object.create(null) as Record<string, unknown>;
        value.self = value;
        throw value;
      },
      "threw a non-Error value: object",
    ],
    ["a huge string", () => Promise.reject("x".repeat(100_000)), "more characters cut]"],
    ["an Error with a huge message", () => Promise.reject(new Error("y".repeat(100_000))), "more characters cut]"],
  ])(
    "a tool that throws %s gets a bounded error result; execute never rejects (D05, D11, D03)",
    async (_case, execute, expected) => {
      const { logger, lines } = captureLogger("warn");
      const registry = new ToolRegistry({ logger });
      registry.register(makeTool("t", { execute: execute as Tool["execute"] }));
      const result = await registry.execute("t", {});
      expect(result.isError).toBe(true);
      expect(result.forLLM).toContain(expected);
      expect(result.forLLM.length).toBeLessThanOrEqual(4_100);
      expect(lines).toHaveLength(1);
    },
  );

  it("logs arguments and results only with logPayloads", async () => {
    const { logger, lines } = captureLogger("debug");
    const registry = new ToolRegistry({ logger, logPayloads: true });
    registry.register(makeTool("ok"));
    await registry.execute("ok", { q: "s3cret" });
    expect(lines[0]).toMatchObject({ msg: "tool call started", args: { q: "s3cret" } });
    expect(lines[1]).toMatchObject({ msg: "tool call completed", result: 'ok:{"q":"s3cret"}' });
  });

  it("marks async results in the completion log (debug; nothing at info)", async () => {
    const { logger, lines } = captureLogger("debug");
    const registry = new ToolRegistry({ logger });
    registry.register(makeTool("bg2", { execute: () => Object.assign(newToolResult("started"), { async: true }) }));
    await registry.execute("bg2", {});
    expect(lines[1]).toMatchObject({ level: 20, msg: "tool call started async work", tool: "bg2", async: true });
    const atInfo = captureLogger("info");
    const quiet = new ToolRegistry({ logger: atInfo.logger });
    quiet.register(makeTool("bg2", { execute: () => Object.assign(newToolResult("started"), { async: true }) }));
    await quiet.execute("bg2", {});
    expect(atInfo.lines).toEqual([]);
  });

  it("gives tools a child logger bound to the tool (one per tool; the call id is context.toolCallId)", async () => {
    const { logger, lines } = captureLogger("info");
    const registry = new ToolRegistry({ logger });
    registry.register(
      makeTool("chatty", {
        execute: (_args: Record<string, unknown>, context: ToolContext) => {
          context.logger.info({ step: 1 }, "working");
          return newToolResult("done");
        },
      }),
    );
    await registry.execute("chatty", {}, { toolCallId: "c9" });
    expect(lines[0]).toMatchObject({ msg: "working", step: 1, tool: "chatty" });
  });

  it("console works as a logger: every execute resolves, failures reach console.warn", async () => {
    // test/setup.ts spies on the console and fails on output: keep it quiet here, then clear.
    for (const method of ["debug", "info", "warn"] as const) vi.mocked(console[method]).mockImplementation(() => {});
    const registry = new ToolRegistry({ logger: console });
    registry.register(makeTool("ok"));
    registry.register(makeTool("bad", { execute: () => errorResult("no") }));
    await expect(registry.execute("ok", {})).resolves.toMatchObject({ forLLM: "ok:{}" });
    await expect(registry.execute("bad", {})).resolves.toMatchObject({ isError: true });
    await expect(registry.execute("ghost", {})).resolves.toMatchObject({ isError: true });
    expect(vi.mocked(console.debug)).toHaveBeenCalledWith(
      expect.objectContaining({ tool: "ok" }),
      "tool call completed",
    );
    expect(vi.mocked(console.info)).not.toHaveBeenCalled();
    expect(vi.mocked(console.warn)).toHaveBeenCalledTimes(2);
    vi.mocked(console.info).mockClear();
    vi.mocked(console.warn).mockClear();
    vi.mocked(console.debug).mockClear();
  });

  it("a logger without isLevelEnabled and child: every level is on, tools get the logger itself", async () => {
    const lines: string[] = [];
    const record = (level: string) => (_fields: object, message?: string) => void lines.push(`${level} ${message}`);
    const minimal = { debug: record("debug"), info: record("info"), warn: record("warn"), error: record("error") };
    const seen = await loggerSeenByTool(new ToolRegistry({ logger: minimal }));
    expect(lines).toEqual(["debug tool call started", "debug tool call completed"]);
    expect(seen[0]).toBe(minimal);
  });

  it("isLevelEnabled and child are used when present", async () => {
    const child = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    const logger = {
      debug: vi.fn(),
      info: vi.fn(),
      warn: vi.fn(),
      error: vi.fn(),
      // A level that is on gets its lines, one that is off none (a logger whose info is off, debug on).
      isLevelEnabled: vi.fn((level: string) => level !== "info"),
      child: vi.fn(() => child),
    };
    const seen = await loggerSeenByTool(new ToolRegistry({ logger }));
    expect(logger.isLevelEnabled).toHaveBeenCalledWith("debug");
    expect(logger.debug.mock.calls.map(([, message]) => message)).toEqual(["tool call started", "tool call completed"]);
    expect(logger.info).not.toHaveBeenCalled();
    expect(logger.child).toHaveBeenCalledWith({ tool: "t" });
    expect(seen[0]).toEqual(expect.objectContaining({ info: expect.any(Function) }));
    (seen[0] as typeof child).info({}, "from the tool");
    expect(child.info).toHaveBeenCalledWith({}, "from the tool");
  });

  it.each([
    [
      "a string",
      "debug",
      'ToolRegistry: logger must be an object with debug, info, warn and error methods (pino, console …), got "debug"',
    ],
    [
      "null",
      null,
      "ToolRegistry: logger must be an object with debug, info, warn and error methods (pino, console …), got null",
    ],
    [
      "an object without info and error",
      { debug() {}, warn() {} },
      "ToolRegistry: logger must be an object with debug, info, warn and error methods (missing: info(), error()), got {}",
    ],
  ])("a logger that is %s is a TypeError at construction naming what is missing", (_case, logger, message) => {
    expect(() => new ToolRegistry({ logger: logger as never })).toThrow(new TypeError(message));
  });

  it("a logger that throws never makes execute reject", async () => {
    const throwing = {
      debug: () => {
        throw new Error("disk full");
      },
      info: () => {
        throw new Error("disk full");
      },
      warn: () => {
        throw new Error("disk full");
      },
      error: () => {
        throw new Error("disk full");
      },
    };
    const registry = new ToolRegistry({ logger: throwing });
    registry.register(makeTool("ok"));
    registry.register(makeTool("bad", { execute: () => errorResult("no") }));
    await expect(registry.execute("ok", {})).resolves.toMatchObject({ forLLM: "ok:{}" });
    await expect(registry.execute("bad", {})).resolves.toMatchObject({ forLLM: "no" });
    await expect(registry.execute("ghost", {})).resolves.toMatchObject({ isError: true });
  });

  it.each([
    [
      "parseArguments returns undefined",
      { parseArguments: () => undefined },
      "the tool's validator returned undefined",
    ],
    [
      "parseArguments returns data that is not an object",
      { parseArguments: () => ({ success: true, data: [1] }) },
      "the tool's validator returned data that is array",
    ],
    [
      "execute returns a ToolResult whose forLLM is not a string",
      { execute: () => Object.assign(newToolResult(""), { forLLM: { rows: 3 } }) },
      "returned an invalid result: forLLM must be a string, got object",
    ],
    [
      "execute throws a revoked Proxy",
      {
        execute: () => {
          const { proxy, revoke } = Proxy.revocable({}, {});
          revoke();
          throw proxy;
        },
      },
      'tool "t" failed: threw',
    ],
    [
      "execute returns an error result whose err.message throws",
      {
        execute: () =>
          errorResult("visible").withError({
            get message(): string {
              throw new Error("boom");
            },
          } as Error),
      },
      "visible",
    ],
  ])("%s: execute still resolves with an error result, also while logging", async (_case, overrides, text) => {
    const { logger } = captureLogger("debug");
    const registry = new ToolRegistry({ logger });
    registry.register(makeTool("t", overrides as Partial<Tool>));
    const result = await registry.execute("t", {});
    expect(result.isError).toBe(true);
    expect(result.forLLM).toContain(text);
  });

  it("a logger whose child() throws: tools run and log through the logger itself", async () => {
    const info = vi.fn();
    const logger = {
      debug() {},
      info,
      warn() {},
      error() {},
      child: () => {
        throw new Error("child broken");
      },
    };
    const [seen] = (await loggerSeenByTool(new ToolRegistry({ logger }))) as Logger[];
    seen?.info({ step: 1 }, "from the tool");
    expect(info).toHaveBeenLastCalledWith({ step: 1 }, "from the tool");
  });

  it("replacing a tool with a logger that throws still replaces it", () => {
    const fail = () => {
      throw new Error("disk full");
    };
    const registry = new ToolRegistry({ logger: { debug: fail, info: fail, warn: fail, error: fail } });
    registry.register(makeTool("t"));
    const second = makeTool("t");
    expect(() => registry.register(second)).not.toThrow();
    expect(registry.get("t")).toBe(second);
  });

  it("a console-like logger never gets what a tool attached to its error: own properties, causes (D05)", async () => {
    const printed: string[] = [];
    const consoleLike = {
      debug() {},
      info() {},
      error() {},
      warn: (...args: unknown[]) =>
        void printed.push(inspect(args, { depth: Number.POSITIVE_INFINITY, showHidden: true })),
    };
    const registry = new ToolRegistry({ logger: consoleLike });
    const axiosLike = Object.assign(new Error("Request failed with status code 401"), {
      code: "ERR_BAD_REQUEST",
      config: { headers: { authorization: "Bearer SECRET-1" } },
    });
    registry.register(makeTool("thrown", { execute: () => Promise.reject(axiosLike) }));
    registry.register(
      makeTool("caused", {
        execute: () => Promise.reject(new Error("x", { cause: { headers: { authorization: "Bearer SECRET-2" } } })),
      }),
    );
    registry.register(makeTool("returned", { execute: () => errorResult("no").withError(axiosLike) }));
    for (const name of ["thrown", "caused", "returned"]) await registry.execute(name, {});
    expect(printed).toHaveLength(3);
    expect(printed.join("\n")).not.toContain("SECRET");
    expect(printed[0]).toContain("Request failed with status code 401");
    expect(printed[0]).toContain("ERR_BAD_REQUEST"); // code and status are kept
  });

  it("model-sent names and ids are cut in log lines, as in messages", async () => {
    const { logger, lines } = captureLogger("warn");
    await new ToolRegistry({ logger }).execute("x".repeat(1_000_000), {}, { toolCallId: "y".repeat(1_000_000) });
    expect(JSON.stringify(lines).length).toBeLessThan(2_000);
  });

  it.each([false, true])(
    "a model-sent 1 MB call id is cut in every line of a call that runs, at debug (logPayloads %s)",
    async (logPayloads) => {
      const { logger, lines } = captureLogger("debug");
      const registry = new ToolRegistry({ logger, logPayloads });
      registry.register(makeTool("ok"));
      registry.register(makeTool("bad", { execute: () => errorResult("no") }));
      for (const name of ["ok", "bad"]) await registry.execute(name, {}, { toolCallId: "y".repeat(1_000_000) });
      expect(lines.map(({ msg }) => msg)).toEqual([
        "tool call started",
        "tool call completed",
        "tool call started",
        "tool call failed",
      ]);
      for (const line of lines) expect(JSON.stringify(line).length).toBeLessThan(2_000);
    },
  );

  it("is silent by default", async () => {
    const registry = new ToolRegistry();
    registry.register(makeTool("bad", { execute: () => errorResult("no") }));
    registry.register(makeTool("bad", { execute: () => errorResult("no") }));
    await registry.execute("bad", {});
    await registry.execute("ghost", {});
    // test/setup.ts fails the test on any console output.
  });
});

// Moved from review-regressions.test.ts (findings of the independent review; each failed before its fix).
describe("schemas at registration (review regressions)", () => {
  it("a 2019-09 schema with tuple items registers and validates", async () => {
    const registry = new ToolRegistry();
    registry.register({
      name: "pair",
      description: "a pair",
      parameters: {
        $schema: "https://json-schema.org/draft/2019-09/schema",
        type: "object",
        properties: {
          pair: { type: "array", items: [{ type: "string" }, { type: "number" }], additionalItems: false },
        },
        required: ["pair"],
      },
      execute: () => newToolResult("ok"),
    });
    expect((await registry.execute("pair", { pair: ["a", 1] })).isError).toBe(false);
    expect((await registry.execute("pair", { pair: ["a", 1, 2] })).forLLM).toMatch(/invalid arguments for tool "pair"/);
  });

  it("two different schemas with the same $id can both be registered", () => {
    const registry = new ToolRegistry();
    const schema = (type: string) => ({
      $id: "https://example.com/args.json",
      type: "object",
      properties: { value: { type } },
    });
    registry.register({ name: "a", description: "a", parameters: schema("string"), execute: () => newToolResult("") });
    expect(() =>
      registry.register({
        name: "b",
        description: "b",
        parameters: schema("number"),
        execute: () => newToolResult(""),
      }),
    ).not.toThrow();
  });
});

describe("registration options (Forge's duplicate error, seed 003's Register error; issue 10)", () => {
  const make = (name: string, answer = name): Tool => ({
    name,
    description: name,
    parameters: { type: "object" },
    execute: () => answer,
  });

  it("replaces by default (picoclaw)", async () => {
    const registry = new ToolRegistry();
    registry.register(make("echo", "first"));
    registry.register(make("echo", "second"));
    expect((await registry.execute("echo", {})).forLLM).toBe("second");
  });

  it('onDuplicate: "throw" refuses a taken name with a TypeError naming the tool, and keeps the first', async () => {
    const registry = new ToolRegistry({ onDuplicate: "throw" });
    registry.register(make("echo", "first"));
    expect(() => registry.register(make("echo", "second"))).toThrowErrorMatchingInlineSnapshot(
      `[TypeError: register: a tool named "echo" is already registered]`,
    );
    expect((await registry.execute("echo", {})).forLLM).toBe("first");
    registry.unregister("echo");
    registry.register(make("echo", "again"));
    expect((await registry.execute("echo", {})).forLLM).toBe("again");
  });

  it("a locked tool cannot be replaced (whatever onDuplicate says) nor unregistered", async () => {
    const registry = new ToolRegistry();
    registry.register(make("core", "locked one"), { locked: true });
    expect(() => registry.register(make("core", "impostor"))).toThrowErrorMatchingInlineSnapshot(
      `[TypeError: register: tool "core" is locked and cannot be overridden]`,
    );
    expect(() => registry.register(make("core", "impostor"), { locked: true })).toThrow(TypeError);
    expect(registry.unregister("core")).toBe(false);
    expect(registry.has("core")).toBe(true);
    expect((await registry.execute("core", {})).forLLM).toBe("locked one");
    expect(registry.unregister("not-there")).toBe(false);
  });

  it("hostile names are matched exactly and cut in messages", () => {
    const registry = new ToolRegistry({ onDuplicate: "throw" });
    registry.register(make("__proto__"), { locked: true });
    registry.register(make("constructor"));
    expect(registry.list()).toEqual(["__proto__", "constructor"]);
    expect(() => registry.register(make("__proto__"))).toThrow(/"__proto__" is locked/);
    const long = "x".repeat(64);
    registry.register(make(long));
    let message = "";
    try {
      registry.register(make(long));
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain("already registered");
  });

  it("wrong option values are TypeErrors that echo them", () => {
    expect(() => new ToolRegistry({ onDuplicate: "ignore" as "throw" })).toThrowErrorMatchingInlineSnapshot(
      `[TypeError: ToolRegistry: onDuplicate must be "replace" or "throw", got "ignore"]`,
    );
    expect(() =>
      new ToolRegistry().register(make("a"), { locked: "yes" as unknown as boolean }),
    ).toThrowErrorMatchingInlineSnapshot(`[TypeError: register: locked must be a boolean, got "yes"]`);
    expect(() => new ToolRegistry().register(make("a"), null as unknown as { locked: boolean })).toThrow(TypeError);
  });
});

describe("clone (a snapshot, for spawn; issue 11)", () => {
  const make = (name: string, overrides: Partial<Tool> = {}): Tool => ({
    name,
    description: name,
    parameters: { type: "object" },
    execute: () => name,
    ...overrides,
  });

  it("copies tools, locks, loop-breaking names and options; later changes on either side stay there", async () => {
    const registry = new ToolRegistry({ onDuplicate: "throw" });
    registry.register(make("a"), { locked: true });
    registry.register(make("stop", { loopBreaking: true }));
    const copy = registry.clone();
    registry.register(make("later"));
    copy.register(make("own"));
    expect(registry.list()).toEqual(["a", "later", "stop"]);
    expect(copy.list()).toEqual(["a", "own", "stop"]);
    expect(copy.get("a")).toBe(registry.get("a"));
    expect(copy.unregister("a")).toBe(false);
    expect(() => copy.register(make("own"))).toThrow(/already registered/);
    expect((await copy.execute("later", {})).err?.message).toMatch(/not found/);
    expect((await copy.execute("a", {})).forLLM).toBe("a");
    expect(copy.getDefinitions().map((definition) => definition.function.name)).toEqual(["a", "own", "stop"]);
    expect(copy.unregister("stop")).toBe(true);
    expect(registry.has("stop")).toBe(true);
  });
});

describe("a tool whose name is a getter (review regression)", () => {
  it("is registered, listed and offered under the name that was checked, read once", async () => {
    let reads = 0;
    const tool = {
      get name() {
        reads++;
        return reads === 1 ? "checked" : "__proto__ bad name!";
      },
      description: "changes its name",
      parameters: { type: "object" },
      execute: () => "ran",
    } as Tool;
    const registry = new ToolRegistry();
    registry.register(tool);
    expect(registry.list()).toEqual(["checked"]);
    expect(registry.getDefinitions().map((definition) => definition.function.name)).toEqual(["checked"]);
    expect((await registry.execute("checked", {})).forLLM).toBe("ran");
  });
});

describe("hidden tools and search (issue 13)", () => {
  const FORMATS = ["openai", "openai-responses", "anthropic", "ollama", "gemini"] as const;
  const make = (name: string, description = `the ${name} tool`): Tool => ({
    name,
    description,
    parameters: { type: "object" },
    execute: () => `${name} ran`,
  });
  const definedNames = (registry: ToolRegistry) => registry.getDefinitions().map(({ function: f }) => f.name);
  const cached = (registry: ToolRegistry) => registry[CACHED_DEFINITIONS]();

  /** A registry with visible `read_file` and hidden `secret_tool`. */
  function withHidden(options: ToolRegistryOptions = {}) {
    const registry = new ToolRegistry(options);
    registry.register(make("read_file"));
    registry.registerHidden(make("secret_tool", "does secret things"));
    return registry;
  }

  it("a hidden tool is absent from definitions (every format), summaries and get, but counted and listed", () => {
    const registry = withHidden();
    for (const format of FORMATS) {
      const text = JSON.stringify(registry.getDefinitions(format));
      expect(text, format).toContain("read_file");
      expect(text, format).not.toContain("secret");
    }
    expect(JSON.stringify(cached(registry))).not.toContain("secret");
    expect(registry.toProviderDefs().map(({ function: f }) => f.name)).toEqual(["read_file"]);
    expect(registry.getSummaries()).toEqual(["- `read_file` - the read_file tool"]);
    expect(registry.get("secret_tool")).toBeUndefined();
    expect(registry.has("secret_tool")).toBe(true);
    expect(registry.count()).toBe(2);
    expect(registry.list()).toEqual(["read_file", "secret_tool"]);
  });

  it('executing a hidden tool is "not found", and no not-found message names a hidden tool', async () => {
    const registry = withHidden();
    registry.registerHidden(make("another_secret"));
    const result = await registry.execute("secret_tool", {});
    expect(result.isError).toBe(true);
    expect(result.forLLM).toMatchInlineSnapshot(`"tool "secret_tool" not found. Available tools: read_file."`);
    const unknown = await registry.execute("nope", {});
    expect(unknown.forLLM).toMatchInlineSnapshot(`"tool "nope" not found. Available tools: read_file."`);
    expect(unknown.forLLM).not.toMatch(/secret/);
    const batch = await registry.executeBatch([{ id: "1", name: "secret_tool", parameters: {} }]);
    expect(batch.results["1"]?.forLLM).toBe(result.forLLM);
    expect((await registry.executeAsync({ name: "secret_tool", parameters: {} }).result).forLLM).toBe(result.forLLM);
  });

  it("a registry whose tools are all hidden offers none and lists none as available", async () => {
    const registry = new ToolRegistry();
    registry.registerHidden(make("secret_tool"));
    expect(registry.getDefinitions()).toEqual([]);
    expect(registry.getSummaries()).toEqual([]);
    expect((await registry.execute("x", {})).forLLM).toMatch(/No tools are available\./);
  });

  it("promoteTools makes a hidden tool visible and callable; ttl counts tickTTL calls; ttl 0 hides it again", async () => {
    const registry = withHidden();
    registry.promoteTools(["secret_tool"], 2);
    expect(definedNames(registry)).toEqual(["read_file", "secret_tool"]);
    expect(registry.getSummaries()).toContain("- `secret_tool` - does secret things");
    expect(registry.get("secret_tool")?.name).toBe("secret_tool");
    expect((await registry.execute("secret_tool", {})).forLLM).toBe("secret_tool ran");
    registry.tickTTL();
    expect(definedNames(registry)).toEqual(["read_file", "secret_tool"]);
    registry.tickTTL();
    expect(definedNames(registry)).toEqual(["read_file"]);
    expect((await registry.execute("secret_tool", {})).err?.message).toMatch(/not found/);
    registry.tickTTL();
    expect(definedNames(registry)).toEqual(["read_file"]);

    registry.promoteTools(["secret_tool"], 5);
    expect(definedNames(registry)).toContain("secret_tool");
    registry.promoteTools(["secret_tool"], 0);
    expect(definedNames(registry)).toEqual(["read_file"]);
  });

  it.each([1, 3])("with ttl %i a promoted tool stays visible for exactly that many ticks", (ttl) => {
    const registry = withHidden();
    registry.promoteTools(["secret_tool"], ttl);
    const visible: boolean[] = [];
    for (let tick = 0; tick < ttl + 2; tick++) {
      visible.push(definedNames(registry).includes("secret_tool"));
      registry.tickTTL();
    }
    expect(visible).toEqual([...Array<boolean>(ttl).fill(true), false, false]);
  });

  it("promoteTools ignores names that are not hidden tools (visible, unknown, hostile)", async () => {
    const registry = withHidden();
    const before = cached(registry);
    registry.promoteTools(["read_file", "unknown", "__proto__", "constructor"], 3);
    expect(cached(registry)).toBe(before);
    expect(definedNames(registry)).toEqual(["read_file"]);
    expect(registry.list()).toEqual(["read_file", "secret_tool"]);
    // A visible tool is never hidden by ticking.
    for (let tick = 0; tick < 5; tick++) registry.tickTTL();
    expect((await registry.execute("read_file", {})).forLLM).toBe("read_file ran");
  });

  it.each([
    ["names not an array", "secret_tool", 1, 'promoteTools: names must be an array of strings, got "secret_tool"'],
    ["a name that is not a string", ["a", 1], 1, 'promoteTools: names must be an array of strings, got ["a",1]'],
    [
      "a sparse array",
      Object.assign([], { 1: "a" }),
      1,
      'promoteTools: names must be an array of strings, got [null,"a"]',
    ],
    ["a negative ttl", ["a"], -1, "promoteTools: ttl must be an integer ≥ 0, got -1"],
    ["a fractional ttl", ["a"], 1.5, "promoteTools: ttl must be an integer ≥ 0, got 1.5"],
    ["an infinite ttl", ["a"], Number.POSITIVE_INFINITY, "promoteTools: ttl must be an integer ≥ 0, got Infinity"],
    ["a string ttl", ["a"], "2", 'promoteTools: ttl must be an integer ≥ 0, got "2"'],
  ])("promoteTools throws a TypeError for %s", (_, names, ttl, message) => {
    const registry = withHidden();
    expect(() => registry.promoteTools(names as string[], ttl as number)).toThrow(new TypeError(message));
  });

  it("registerHidden over a visible name hides it; register over a hidden name makes it visible", async () => {
    const registry = new ToolRegistry();
    registry.register(make("tool_a"));
    registry.registerHidden(make("tool_a", "now hidden"));
    expect(definedNames(registry)).toEqual([]);
    expect(registry.count()).toBe(1);
    expect(registry.searchRegex("tool_a", 5)).toEqual([{ name: "tool_a", description: "now hidden" }]);
    registry.register(make("tool_a", "visible again"));
    expect(definedNames(registry)).toEqual(["tool_a"]);
    expect(registry.searchRegex("tool_a", 5)).toEqual([]);
    expect((await registry.execute("tool_a", {})).forLLM).toBe("tool_a ran");
    // Re-registering a promoted hidden tool hides it again.
    registry.registerHidden(make("tool_a"));
    registry.promoteTools(["tool_a"], 3);
    registry.registerHidden(make("tool_a"));
    expect(definedNames(registry)).toEqual([]);
  });

  it("unregister removes a hidden tool from the count, the list and the searches", () => {
    const registry = withHidden();
    expect(registry.searchBM25("secret", 5)).toHaveLength(1);
    expect(registry.unregister("secret_tool")).toBe(true);
    expect(registry.has("secret_tool")).toBe(false);
    expect(registry.count()).toBe(1);
    expect(registry.list()).toEqual(["read_file"]);
    expect(registry.searchRegex("secret", 5)).toEqual([]);
    expect(registry.searchBM25("secret", 5)).toEqual([]);
    // Promoting it now does nothing; registering it again visibly is allowed.
    registry.promoteTools(["secret_tool"], 1);
    registry.register(make("secret_tool"));
    expect(definedNames(registry)).toEqual(["read_file", "secret_tool"]);
  });

  it('locked tools and onDuplicate: "throw" apply to registerHidden', () => {
    const locked = new ToolRegistry();
    locked.register(make("core"), { locked: true });
    expect(() => locked.registerHidden(make("core"))).toThrowErrorMatchingInlineSnapshot(
      `[TypeError: register: tool "core" is locked and cannot be overridden]`,
    );
    expect(definedNames(locked)).toEqual(["core"]);
    const strict = new ToolRegistry({ onDuplicate: "throw" });
    strict.registerHidden(make("secret_tool"));
    expect(() => strict.registerHidden(make("secret_tool"))).toThrow(/already registered/);
    expect(() => strict.register(make("secret_tool"))).toThrow(/already registered/);
    expect(definedNames(strict)).toEqual([]);
    expect(() => strict.registerHidden({ ...make("bad name!") })).toThrow(TypeError);
  });

  it("clone keeps hidden tools and promotions; later promotions and ticks stay on their side", async () => {
    const registry = withHidden();
    registry.registerHidden(make("other_secret"));
    registry.promoteTools(["other_secret"], 2);
    const copy = registry.clone();
    expect(definedNames(copy)).toEqual(["other_secret", "read_file"]);
    expect(copy.list()).toEqual(registry.list());
    expect((await copy.execute("secret_tool", {})).err?.message).toMatch(/not found/);
    copy.promoteTools(["secret_tool"], 1);
    expect(definedNames(copy)).toEqual(["other_secret", "read_file", "secret_tool"]);
    expect(definedNames(registry)).toEqual(["other_secret", "read_file"]);
    copy.tickTTL();
    copy.tickTTL();
    expect(definedNames(copy)).toEqual(["read_file"]);
    expect(definedNames(registry)).toEqual(["other_secret", "read_file"]);
    expect(copy.searchBM25("secret", 5).map(({ name }) => name)).toEqual(["secret_tool", "other_secret"]);
  });

  it("keeps the cached definitions when visibility does not change, and rebuilds them when it does", () => {
    const registry = withHidden();
    registry.registerHidden(make("long_lived"));
    const start = cached(registry);
    registry.promoteTools(["long_lived"], 5);
    const promoted = cached(registry);
    expect(promoted).not.toBe(start);
    expect(promoted.map(({ function: f }) => f.name)).toEqual(["long_lived", "read_file"]);
    // Promoting an already-promoted tool again, a tick that expires nothing, an ignored name.
    registry.promoteTools(["long_lived"], 3);
    expect(cached(registry)).toBe(promoted);
    registry.tickTTL();
    expect(cached(registry)).toBe(promoted);
    registry.promoteTools(["read_file", "unknown"], 3);
    expect(cached(registry)).toBe(promoted);
    // ttl 0 (or the last tick) hides it: rebuilt.
    registry.promoteTools(["long_lived"], 0);
    expect(cached(registry)).not.toBe(promoted);
    expect(cached(registry).map(({ function: f }) => f.name)).toEqual(["read_file"]);
    registry.promoteTools(["secret_tool"], 1);
    const again = cached(registry);
    registry.tickTTL();
    expect(cached(registry)).not.toBe(again);
  });

  describe("setAllowlist", () => {
    it("null allows every name, [] none; names are compared lower-cased and trimmed", () => {
      const registry = new ToolRegistry();
      registry.setAllowlist([]);
      registry.register(make("anything"));
      registry.registerHidden(make("hidden_any"));
      expect(registry.count()).toBe(0);
      registry.setAllowlist(["  Read_File ", "SECRET_TOOL"]);
      registry.register(make("read_file"));
      registry.registerHidden(make("secret_tool"));
      registry.register(make("write_file"));
      expect(registry.list()).toEqual(["read_file", "secret_tool"]);
      registry.setAllowlist(null);
      registry.register(make("write_file"));
      expect(registry.list()).toEqual(["read_file", "secret_tool", "write_file"]);
    });

    it("compares a mixed-case tool name lower-cased", () => {
      const registry = new ToolRegistry();
      registry.setAllowlist(["readfile"]);
      registry.register(make("ReadFile"));
      expect(registry.list()).toEqual(["ReadFile"]);
    });

    it("applies to later registrations only: tools already registered stay", async () => {
      const registry = withHidden();
      registry.setAllowlist([]);
      expect(registry.list()).toEqual(["read_file", "secret_tool"]);
      expect((await registry.execute("read_file", {})).forLLM).toBe("read_file ran");
      // Replacing a registered tool is a registration: skipped, the old one stays.
      registry.register(make("read_file", "replacement"));
      expect(registry.getSummaries()).toEqual(["- `read_file` - the read_file tool"]);
    });

    it("logs a skipped registration at debug, naming the tool", () => {
      const { logger, lines } = captureLogger();
      const registry = new ToolRegistry({ logger });
      registry.setAllowlist(["read_file"]);
      registry.register(make("write_file"));
      registry.registerHidden(make("secret_tool"));
      expect(lines.map(({ level, msg, tool }) => ({ level, msg, tool }))).toEqual([
        { level: 20, msg: "tool not registered: not in the allowlist", tool: "write_file" },
        { level: 20, msg: "tool not registered: not in the allowlist", tool: "secret_tool" },
      ]);
    });

    it.each([1, 2, 3])(
      "checks the name that is registered: a getter answering the allowed name %i times cannot slip past it",
      (honestReads) => {
        const registry = new ToolRegistry();
        registry.setAllowlist(["allowed"]);
        let reads = 0;
        const shifty = {
          get name() {
            reads++;
            return reads <= honestReads ? "allowed" : "forbidden";
          },
          description: "changes its name",
          parameters: { type: "object" },
          execute: () => "ran",
        } as Tool;
        registry.register(shifty);
        expect(registry.list()).not.toContain("forbidden");
        expect(definedNames(registry)).not.toContain("forbidden");
      },
    );

    it("always allows the two discovery tools", () => {
      const registry = new ToolRegistry();
      registry.setAllowlist([]);
      for (const tool of createToolSearchTools(registry)) registry.register(tool);
      expect(registry.list()).toEqual([...TOOL_SEARCH_TOOL_NAMES].sort());
    });

    it("is copied by clone, and changing it on one side does not reach the other", () => {
      const registry = new ToolRegistry();
      registry.setAllowlist(["a"]);
      const copy = registry.clone();
      copy.register(make("b"));
      expect(copy.count()).toBe(0);
      registry.setAllowlist(null);
      copy.register(make("b"));
      expect(copy.count()).toBe(0);
      registry.register(make("b"));
      expect(registry.list()).toEqual(["b"]);
    });

    it.each([
      ["undefined", undefined, "setAllowlist: names must be an array of strings or null, got undefined"],
      ["a string", "read_file", 'setAllowlist: names must be an array of strings or null, got "read_file"'],
      ["a non-string name", ["a", null], 'setAllowlist: names must be an array of strings or null, got ["a",null]'],
      [
        "a sparse array",
        Object.assign([], { 1: "a" }),
        'setAllowlist: names must be an array of strings or null, got [null,"a"]',
      ],
      ["a Set", new Set(["a"]), "setAllowlist: names must be an array of strings or null, got Set"],
    ])("throws a TypeError for %s", (_, names, message) => {
      const registry = new ToolRegistry();
      expect(() => registry.setAllowlist(names as string[])).toThrow(new TypeError(message));
    });
  });

  describe("searchRegex and searchBM25", () => {
    function catalogue() {
      const registry = new ToolRegistry();
      registry.register(make("visible_file_tool", "a visible file tool"));
      registry.registerHidden(make("mcp_fs_read_file", "Read a file from disk"));
      registry.registerHidden(make("mcp_fs_list_directory", "List a directory's entries"));
      registry.registerHidden(make("mcp_mail_send", "Send an email, maybe with a file attached"));
      return registry;
    }

    it("search only hidden tools (promoted or not), name matches first, then by name", () => {
      const registry = catalogue();
      registry.promoteTools(["mcp_mail_send"], 3);
      expect(registry.searchRegex("FILE", 10)).toEqual([
        { name: "mcp_fs_read_file", description: "Read a file from disk" },
        { name: "mcp_mail_send", description: "Send an email, maybe with a file attached" },
      ]);
      expect(registry.searchBM25("read file", 10).map(({ name }) => name)).toEqual([
        "mcp_fs_read_file",
        "mcp_mail_send",
      ]);
      expect(registry.searchBM25("directory", 10).map(({ name }) => name)).toEqual(["mcp_fs_list_directory"]);
      expect(registry.searchRegex("file", 0)).toEqual([]);
      expect(registry.searchBM25("file", 0)).toEqual([]);
    });

    it("return fresh objects the caller may change", () => {
      const registry = catalogue();
      const [first] = registry.searchBM25("directory", 1);
      if (first === undefined) throw new Error("no match");
      first.name = "changed";
      expect(registry.searchBM25("directory", 1)[0]?.name).toBe("mcp_fs_list_directory");
    });

    it("the BM25 index follows hidden tools as they come and go", () => {
      const registry = catalogue();
      expect(registry.searchBM25("weather", 5)).toEqual([]);
      registry.registerHidden(make("weather_now", "Current weather"));
      expect(registry.searchBM25("weather", 5).map(({ name }) => name)).toEqual(["weather_now"]);
      registry.registerHidden(make("weather_now", "Forecast for tomorrow"));
      expect(registry.searchBM25("forecast", 5).map(({ name }) => name)).toEqual(["weather_now"]);
      expect(registry.searchBM25("current", 5)).toEqual([]);
      registry.register(make("weather_now", "Current weather"));
      expect(registry.searchBM25("weather", 5)).toEqual([]);
      registry.registerHidden(make("weather_now"));
      expect(registry.unregister("weather_now")).toBe(true);
      expect(registry.searchBM25("weather", 5)).toEqual([]);
    });

    it("an invalid pattern is a TypeError saying why", () => {
      expect(() => catalogue().searchRegex("(", 5)).toThrowErrorMatchingInlineSnapshot(
        `[TypeError: searchRegex: pattern "(" is not a valid regular expression: Invalid regular expression: /(/iu: Unterminated group]`,
      );
      expect(() => catalogue().searchRegex("a(?=b)", 5)).toThrow(/cannot run on toolloop's linear-time engine/);
    });
  });

  it("__proto__ and constructor work as hidden tool names and pollute nothing", async () => {
    const registry = new ToolRegistry();
    registry.registerHidden(make("__proto__", "proto tool"));
    registry.registerHidden(make("constructor", "constructor tool"));
    registry.register(make("visible"));
    expect(registry.list()).toEqual(["__proto__", "constructor", "visible"]);
    expect(definedNames(registry)).toEqual(["visible"]);
    expect(registry.get("__proto__")).toBeUndefined();
    expect(registry.get("constructor")).toBeUndefined();
    expect((await registry.execute("constructor", {})).err?.message).toMatch(/not found/);
    expect(registry.searchBM25("proto", 5).map(({ name }) => name)).toEqual(["__proto__"]);
    expect(registry.searchRegex("constructor", 5).map(({ name }) => name)).toEqual(["constructor"]);
    registry.promoteTools(["__proto__", "constructor"], 1);
    expect(definedNames(registry)).toEqual(["__proto__", "constructor", "visible"]);
    expect((await registry.execute("__proto__", {})).forLLM).toBe("__proto__ ran");
    expect(({} as Record<string, unknown>).ttl).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty("promotion");
    registry.tickTTL();
    expect(definedNames(registry)).toEqual(["visible"]);
  });
});
