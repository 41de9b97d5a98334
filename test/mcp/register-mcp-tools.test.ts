import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { contentText } from "../../src/content-part.js";
import { isToolExecutionError } from "../../src/errors.js";
import { type RegisteredMcpTools, registerMcpTools } from "../../src/mcp/index.js";
import type { Message } from "../../src/provider.js";
import { runToolLoop } from "../../src/run-tool-loop.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing/index.js";
import { ToolRegistry } from "../../src/tool-registry.js";
import type { ToolResult } from "../../src/tool-result.js";
import { captureLogger } from "../helpers/capture-logger.js";
import {
  type ScriptedServer,
  type StdioServer,
  startEverythingServer,
  startFilesystemServer,
  startRawStdioServer,
  startScriptedServer,
  toolList,
} from "../helpers/mcp-servers.js";
import { TINY_IMAGES } from "../helpers/tiny-images.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function scripted(
  handlers: Parameters<typeof startScriptedServer>[0],
  ...rest: [Parameters<typeof startScriptedServer>[1]?]
): Promise<ScriptedServer> {
  const server = await startScriptedServer(handlers, ...rest);
  cleanups.push(() => server.client.close());
  return server;
}

async function imported(
  registry: ToolRegistry,
  server: { client: ScriptedServer["client"] },
  options: Parameters<typeof registerMcpTools>[2],
): Promise<RegisteredMcpTools> {
  const handle = await registerMcpTools(registry, server.client, options);
  cleanups.push(() => handle.close());
  return handle;
}

function code(result: ToolResult): string | undefined {
  return isToolExecutionError(result.err) ? result.err.code : undefined;
}

const ADD = {
  name: "add",
  description: "Adds two numbers",
  inputSchema: {
    type: "object",
    properties: { a: { type: "number" }, b: { type: "number" } },
    required: ["a", "b"],
    additionalProperties: false,
  },
};

/** A scripted server whose `add` answers the sum, and whose tool list the test may change. */
async function adder(tools: Array<Record<string, unknown>> = [ADD]) {
  const list = { tools };
  const server = await scripted({
    listTools: () => toolList(list.tools),
    callTool: (params) => {
      const args = params?.arguments as { a: number; b: number };
      return { result: { content: [{ type: "text", text: String(args.a + args.b) }] } };
    },
  });
  return { server, list };
}

describe("registerMcpTools: options", () => {
  it.each([
    ["no serverName", {}, /serverName must be a non-empty string, got undefined/],
    ["an empty serverName", { serverName: "" }, /serverName must be a non-empty string, got ""/],
    ["hidden not a boolean", { serverName: "s", hidden: "yes" }, /hidden must be a boolean, got "yes"/],
    ["timeoutMs 0", { serverName: "s", timeoutMs: 0 }, /timeoutMs must be a number of milliseconds > 0/],
    ["timeoutMs NaN", { serverName: "s", timeoutMs: Number.NaN }, /timeoutMs must be a number of milliseconds > 0/],
    ["a logger without methods", { serverName: "s", logger: {} }, /logger must be an object with debug/],
  ])("%s is a TypeError echoing it", async (_, options, message) => {
    const { server } = await adder();
    const registry = new ToolRegistry();
    await expect(registerMcpTools(registry, server.client, options as never)).rejects.toThrow(TypeError);
    await expect(registerMcpTools(registry, server.client, options as never)).rejects.toThrow(message);
    expect(registry.count()).toBe(0);
    expect(server.requests.filter((request) => request.method === "tools/list")).toHaveLength(0);
  });

  it.each([
    ["a registry", {}, "registry"],
    ["a client", "client", "client"],
  ])("something that is not %s is a TypeError", async (_, bad, option) => {
    const { server } = await adder();
    const args =
      option === "registry"
        ? [bad, server.client, { serverName: "s" }]
        : [new ToolRegistry(), bad, { serverName: "s" }];
    await expect((registerMcpTools as (...a: unknown[]) => Promise<unknown>)(...args)).rejects.toThrow(
      new RegExp(`registerMcpTools: ${option} must be`),
    );
  });
});

describe("registerMcpTools: a scripted server", () => {
  it("registers mcp_<server>_<tool> with [MCP:<server>] descriptions and the server's inputSchema", async () => {
    const { server } = await adder([ADD, { name: "Get.Time", inputSchema: { type: "object" } }]);
    const registry = new ToolRegistry();
    const handle = await imported(registry, server, { serverName: "Math Server" });
    expect(handle.names).toEqual(["mcp_math_server_add", "mcp_math_server_get_time"]);
    expect(registry.getDefinitions().map(({ function: f }) => f)).toMatchInlineSnapshot(`
      [
        {
          "description": "[MCP:Math Server] Adds two numbers",
          "name": "mcp_math_server_add",
          "parameters": {
            "additionalProperties": false,
            "properties": {
              "a": {
                "type": "number",
              },
              "b": {
                "type": "number",
              },
            },
            "required": [
              "a",
              "b",
            ],
            "type": "object",
          },
        },
        {
          "description": "[MCP:Math Server] Get.Time",
          "name": "mcp_math_server_get_time",
          "parameters": {
            "type": "object",
          },
        },
      ]
    `);
    const result = await registry.execute("mcp_math_server_add", { a: 2, b: 3 });
    expect(result.forLLM).toBe("5");
    expect(result.isError).toBe(false);
    expect(server.requests.at(-1)?.params).toMatchObject({ name: "add", arguments: { a: 2, b: 3 } });
  });

  it("validates arguments against the server's schema before anything reaches the server", async () => {
    const { server } = await adder();
    const registry = new ToolRegistry();
    await imported(registry, server, { serverName: "m" });
    const result = await registry.execute("mcp_m_add", { a: "2", c: 1 });
    expect(result.isError).toBe(true);
    expect(code(result)).toBe("invalid_arguments");
    expect(result.forLLM).toMatchInlineSnapshot(
      `"invalid arguments for tool "mcp_m_add": b: required property is missing; c: unknown property is not allowed; a: must be number"`,
    );
    expect(server.requests.some((request) => request.method === "tools/call")).toBe(false);
  });

  it("makes isError: true an error result with the server's text", async () => {
    const server = await scripted({
      listTools: () => toolList([{ name: "fail" }]),
      callTool: () => ({ result: { isError: true, content: [{ type: "text", text: "disk full" }] } }),
    });
    const registry = new ToolRegistry();
    await imported(registry, server, { serverName: "s" });
    const result = await registry.execute("mcp_s_fail", {});
    expect(result).toMatchObject({ isError: true, forLLM: "disk full" });
    expect(code(result)).toBe("tool_failed");
  });

  it("makes a JSON-RPC error an error result naming the server", async () => {
    const server = await scripted({
      listTools: () => toolList([{ name: "t" }]),
      callTool: () => ({ error: { code: -32602, message: "Unknown tool: t" } }),
    });
    const registry = new ToolRegistry();
    await imported(registry, server, { serverName: "srv" });
    const result = await registry.execute("mcp_srv_t", {});
    expect(result.isError).toBe(true);
    expect(result.forLLM).toMatchInlineSnapshot(
      `"MCP server "srv" failed to run tool "t": MCP error -32602: Unknown tool: t"`,
    );
  });

  it("passes the call's signal: an abort cancels the request and answers at once", async () => {
    const server = await scripted({ listTools: () => toolList([{ name: "slow" }]), callTool: () => "never" });
    const registry = new ToolRegistry();
    await imported(registry, server, { serverName: "s" });
    const controller = new AbortController();
    const pending = registry.execute("mcp_s_slow", {}, { signal: controller.signal });
    await vi.waitFor(() => expect(server.requests.at(-1)?.method).toBe("tools/call"));
    controller.abort(new Error("user stopped"));
    const result = await pending;
    expect(result.isError).toBe(true);
    expect(code(result)).toBe("aborted");
    await vi.waitFor(() =>
      expect(server.notifications).toContainEqual(expect.objectContaining({ method: "notifications/cancelled" })),
    );
  });

  it("turns a server that does not answer within timeoutMs into a timeout error result naming it", async () => {
    const server = await scripted({ listTools: () => toolList([{ name: "slow" }]), callTool: () => "never" });
    const registry = new ToolRegistry();
    await imported(registry, server, { serverName: "s", timeoutMs: 50 });
    // No wall-clock bound: the timeout is 50 ms, the SDK's default 60 s, the test's own limit the safety net.
    const result = await registry.execute("mcp_s_slow", {});
    expect(code(result)).toBe("timeout");
    expect(result.forLLM).toMatchInlineSnapshot(`"MCP server "s" did not answer tool "slow" within 50 ms"`);
    await vi.waitFor(() =>
      expect(server.notifications).toContainEqual(expect.objectContaining({ method: "notifications/cancelled" })),
    );
  });

  it("passes the loop's signal: aborting the run cancels the MCP request", async () => {
    const server = await scripted({ listTools: () => toolList([{ name: "slow" }]), callTool: () => "never" });
    const registry = new ToolRegistry();
    await imported(registry, server, { serverName: "s" });
    const controller = new AbortController();
    const provider = new ScriptedProvider([toolCallResponse({ id: "c1", name: "mcp_s_slow", arguments: {} })]);
    const run = runToolLoop({ provider, tools: registry, maxIterations: 2 }, [{ role: "user", content: "go" }], {
      signal: controller.signal,
    });
    await vi.waitFor(() => expect(server.requests.at(-1)?.method).toBe("tools/call"));
    controller.abort();
    await expect(run).rejects.toMatchObject({ code: "aborted" });
    await vi.waitFor(() =>
      expect(server.notifications).toContainEqual(expect.objectContaining({ method: "notifications/cancelled" })),
    );
  });

  // The SDK's own timer never fires first (its -32001 would look like a server's): timeoutMs is ours.
  it("gives the SDK the longest timeout setTimeout honours, whatever timeoutMs is", async () => {
    const { server } = await adder();
    const registry = new ToolRegistry();
    await imported(registry, server, { serverName: "m", timeoutMs: 1_000 });
    const request = vi.spyOn(server.client, "request");
    await registry.execute("mcp_m_add", { a: 1, b: 1 });
    expect(request.mock.calls[0]?.[2]).toMatchObject({ timeout: 2_147_483_647 });
  });

  it("never compiles the server's outputSchema: an invalid one fails no listing, and listings keep no validator", async () => {
    const getValidator = vi.fn(() => () => ({ valid: true, data: undefined, errorMessage: undefined }));
    const tools = [{ name: "ok" }, { name: "odd", outputSchema: { type: "object", properties: { x: { type: 12 } } } }];
    const plain = await scripted({ listTools: () => toolList(tools) });
    expect((await imported(new ToolRegistry(), plain, { serverName: "s" })).names).toEqual(["mcp_s_odd", "mcp_s_ok"]);

    let listings = 0;
    const server = await scripted(
      {
        listTools: () => {
          listings++;
          return toolList([{ name: "t", outputSchema: { type: "object" } }]);
        },
      },
      { jsonSchemaValidator: { getValidator } as never },
    );
    await imported(new ToolRegistry(), server, { serverName: "s" });
    server.toolsChanged();
    await vi.waitFor(() => expect(listings).toBe(2));
    expect(getValidator).not.toHaveBeenCalled();
  });

  // 34 characters: minutes of backtracking on Ajv's engine (27 take seconds; each one more doubles
  // it): far past the generous bound below, which a busy machine cannot reach with the fix.
  it("never runs the server's outputSchema: a backtracking pattern cannot hold the event loop", async () => {
    const server = await scripted({
      listTools: () => ({
        result: {
          tools: [
            {
              name: "t",
              inputSchema: { type: "object" },
              outputSchema: { type: "object", properties: { x: { type: "string", pattern: "^(a+)+$" } } },
            },
          ],
        },
      }),
      callTool: () => ({
        result: { content: [{ type: "text", text: "done" }], structuredContent: { x: `${"a".repeat(34)}!` } },
      }),
    });
    const registry = new ToolRegistry();
    await imported(registry, server, { serverName: "s" });
    const started = performance.now();
    const result = await registry.execute("mcp_s_t", {});
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(result).toMatchObject({ isError: false, forLLM: "done" });
  });

  it("answers a call the closing server never answered, and a call after it closed, with error results naming it", async () => {
    const server = await scripted({ listTools: () => toolList([{ name: "slow" }]), callTool: () => "never" });
    const registry = new ToolRegistry();
    await imported(registry, server, { serverName: "gone" });
    const pending = registry.execute("mcp_gone_slow", {});
    await vi.waitFor(() => expect(server.requests.at(-1)?.method).toBe("tools/call"));
    server.disconnect();
    const during = await pending;
    expect(during.isError).toBe(true);
    expect(during.forLLM).toMatchInlineSnapshot(
      `"MCP server "gone" failed to run tool "slow": MCP error -32000: Connection closed"`,
    );
    const after = await registry.execute("mcp_gone_slow", {});
    expect(after.isError).toBe(true);
    expect(after.forLLM).toMatch(/^MCP server "gone" failed to run tool "slow": .*Not connected/);
  });

  it("rejects, naming the server, when the first listing fails, and registers nothing", async () => {
    const server = await scripted({ listTools: () => ({ error: { code: -32603, message: "boom" } }) });
    const registry = new ToolRegistry();
    await expect(registerMcpTools(registry, server.client, { serverName: "s" })).rejects.toThrow(
      'registerMcpTools: MCP server "s" did not list its tools: MCP error -32603: boom',
    );
    expect(registry.count()).toBe(0);
    // No handler left behind.
    const handlers = Reflect.get(server.client, "_notificationHandlers") as Map<string, unknown>;
    expect(handlers.has("notifications/tools/list_changed")).toBe(false);
  });

  it("rejects, naming the server, when it does not answer the first tools/list within timeoutMs", async () => {
    const server = await scripted({ listTools: () => "never" });
    const registry = new ToolRegistry();
    await expect(registerMcpTools(registry, server.client, { serverName: "s", timeoutMs: 50 })).rejects.toThrow(
      'registerMcpTools: MCP server "s" did not list its tools: the listing took longer than 50 ms (timeoutMs)',
    );
    expect(registry.count()).toBe(0);
  });

  it("reports a server's error -32001 to tools/list as the server's, not as the listing's timeout", async () => {
    const server = await scripted({ listTools: () => ({ error: { code: -32001, message: "Request timed out" } }) });
    await expect(registerMcpTools(new ToolRegistry(), server.client, { serverName: "s" })).rejects.toThrow(
      'registerMcpTools: MCP server "s" did not list its tools: MCP error -32001: Request timed out',
    );
  });

  it("rejects, naming the server, when the server goes away during the first listing", async () => {
    const server = await scripted({ listTools: () => "never" });
    const registry = new ToolRegistry();
    const importing = registerMcpTools(registry, server.client, { serverName: "s" });
    await vi.waitFor(() => expect(server.requests.at(-1)?.method).toBe("tools/list"));
    server.disconnect();
    await expect(importing).rejects.toThrow('registerMcpTools: MCP server "s" did not list its tools: ');
    expect(registry.count()).toBe(0);
  });

  it("keeps the tools, with a warning, when the server goes away during a refresh; calls answer error results", async () => {
    const { logger, lines } = captureLogger();
    let listings = 0;
    const server = await scripted({ listTools: () => (++listings === 1 ? toolList([{ name: "a" }]) : "never") });
    const registry = new ToolRegistry();
    const handle = await imported(registry, server, { serverName: "s", logger });
    server.toolsChanged();
    await vi.waitFor(() => expect(listings).toBe(2));
    server.disconnect();
    await vi.waitFor(() => expect(lines.map((line) => line.msg)).toEqual([expect.stringMatching(/not refreshed/)]));
    expect(lines[0]?.reason).toMatch(/Connection closed/);
    expect(handle.names).toEqual(["mcp_s_a"]);
    const result = await registry.execute("mcp_s_a", {});
    expect(result.isError).toBe(true);
    expect(result.forLLM).toMatch(/^MCP server "s" failed to run tool "a": .*Not connected/);
  });

  it("names a tool apart from a tool of the registry that holds its name (never replaces it)", async () => {
    const { server } = await adder();
    const registry = new ToolRegistry();
    const own = { name: "mcp_m_add", description: "mine", parameters: { type: "object" }, execute: () => "mine" };
    registry.register(own);
    const handle = await imported(registry, server, { serverName: "m" });
    expect(handle.names).toEqual([expect.stringMatching(/^mcp_m_add_[0-9a-f]{8}$/)]);
    expect(registry.get("mcp_m_add")).toBe(own);
    await handle.close();
    expect(registry.list()).toEqual(["mcp_m_add"]);
  });

  it("imports two servers whose names sanitise alike side by side", async () => {
    const first = await adder();
    const second = await adder();
    const registry = new ToolRegistry({ onDuplicate: "throw" });
    const a = await imported(registry, first.server, { serverName: "a.b" });
    const b = await imported(registry, second.server, { serverName: "a_b" });
    expect(a.names).toEqual(["mcp_a_b_add"]);
    expect(b.names).toEqual([expect.stringMatching(/^mcp_a_b_add_[0-9a-f]{8}$/)]);
    expect(registry.get("mcp_a_b_add")?.description).toBe("[MCP:a.b] Adds two numbers");
  });

  it("skips a tool whose schema the registry refuses, with a warning, and imports the others", async () => {
    const { logger, lines } = captureLogger();
    const { server } = await adder([
      ADD,
      { name: "backref", inputSchema: { type: "object", properties: { x: { type: "string", pattern: "(a)\\1" } } } },
      { name: "bad_schema", inputSchema: { type: "object", properties: { x: { type: 12 } } } },
    ]);
    const registry = new ToolRegistry();
    const handle = await imported(registry, server, { serverName: "m", logger });
    expect(handle.names).toEqual(["mcp_m_add"]);
    const warnings = lines.filter((line) => line.level === 40);
    expect(warnings.map(({ msg, mcpTool, tool }) => ({ msg, mcpTool, tool }))).toEqual([
      { msg: "MCP tool skipped: the registry refused it", mcpTool: "backref", tool: "mcp_m_backref" },
      { msg: "MCP tool skipped: the registry refused it", mcpTool: "bad_schema", tool: "mcp_m_bad_schema" },
    ]);
    expect(warnings[0]?.reason).toMatch(/backreference/);
  });

  it("is silent without a logger (the default) and logs nothing through the console", async () => {
    const { server } = await adder([
      ADD,
      { name: "bad", inputSchema: { type: "object", properties: { x: { type: 1 } } } },
    ]);
    const handle = await imported(new ToolRegistry(), server, { serverName: "m" });
    expect(handle.names).toEqual(["mcp_m_add"]);
  });
});

describe("registerMcpTools: a hostile server", () => {
  it("cuts huge descriptions to 4,000 characters (they go out with every request)", async () => {
    const { server } = await adder([{ ...ADD, description: "d".repeat(1_000_000) }]);
    const registry = new ToolRegistry();
    await imported(registry, server, { serverName: "m" });
    const description = registry.get("mcp_m_add")?.description ?? "";
    expect(description.length).toBeLessThanOrEqual("[MCP:m] ".length + 4_000);
    expect(description).toMatch(/^\[MCP:m\] d+ … \[\d+ more characters cut\]$/);
  });

  it("skips a schema over 100,000 characters of JSON", async () => {
    const { logger, lines } = captureLogger();
    const properties = Object.fromEntries(
      Array.from({ length: 5_000 }, (_, i) => [`p${i}`, { type: "string", description: "x".repeat(20) }]),
    );
    const { server } = await adder([ADD, { name: "huge", inputSchema: { type: "object", properties } }]);
    const handle = await imported(new ToolRegistry(), server, { serverName: "m", logger });
    expect(handle.names).toEqual(["mcp_m_add"]);
    expect(lines.find((line) => line.mcpTool === "huge")?.reason).toMatch(/characters of JSON \(at most 100000\)/);
  });

  it("reads at most 1,000 tools, and says so", async () => {
    const { logger, lines } = captureLogger();
    const tools = Array.from({ length: 5_000 }, (_, index) => ({ name: `t${index}` }));
    const { server } = await adder(tools);
    const registry = new ToolRegistry();
    const handle = await imported(registry, server, { serverName: "m", logger });
    expect(handle.names).toHaveLength(1_000);
    expect(registry.count()).toBe(1_000);
    expect(lines.some((line) => /MCP tool list cut/.test(line.msg))).toBe(true);
  });

  // Work, not wall-clock time: the import yields at least every 50 tools (and every 20 ms), so the
  // event loop gets a turn between bounded slices of schema compilations, however loaded the machine.
  it("never blocks the event loop for long while compiling hundreds of schemas: at most 50 per turn", async () => {
    const tools = Array.from({ length: 300 }, (_, i) => ({
      name: `t${i}`,
      inputSchema: { type: "object", properties: { p: { type: "string", pattern: `^a${i}b$`, maxLength: i + 1 } } },
    }));
    const { server } = await adder(tools);
    const registry = new ToolRegistry();
    let probing = true;
    let last = 0;
    let most = 0;
    let turns = 0;
    const probe = () => {
      const count = registry.count();
      most = Math.max(most, count - last);
      last = count;
      turns++;
      if (probing) setImmediate(probe);
    };
    setImmediate(probe);
    try {
      const handle = await imported(registry, server, { serverName: "m" });
      expect(handle.names).toHaveLength(300);
    } finally {
      probing = false;
    }
    await new Promise((resolve) => setImmediate(resolve)); // the probe's turn after the last slice
    expect(registry.count()).toBe(300);
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(50);
    expect(turns).toBeGreaterThanOrEqual(300 / 50);
  });

  it("never replaces a tool registered under one of its names while it yields", async () => {
    const { logger, lines } = captureLogger();
    const tools = Array.from({ length: 300 }, (_, i) => ({
      name: `t${i}`,
      inputSchema: { type: "object", properties: { p: { type: "string", pattern: `^a${i}$` }, q: { maxLength: i } } },
    }));
    const { server } = await adder(tools);
    const registry = new ToolRegistry();
    const importing = registerMcpTools(registry, server.client, { serverName: "m", logger });
    await vi.waitFor(() => expect(registry.count()).toBeGreaterThan(0), { interval: 1, timeout: 30_000 });
    const own = { name: "mcp_m_t299", description: "mine", parameters: {}, execute: () => "mine" };
    registry.register(own);
    const handle = await importing;
    cleanups.push(() => handle.close());
    expect(registry.get("mcp_m_t299")).toBe(own);
    expect(handle.names).toHaveLength(299);
    expect(lines.find((line) => line.tool === "mcp_m_t299")?.msg).toBe("MCP tool skipped: name taken meanwhile");
  });

  it("reads at most 100 pages of a server that hands out cursors forever", async () => {
    let page = 0;
    const server = await scripted({
      listTools: () => ({
        result: { tools: [{ name: `t${page}`, inputSchema: { type: "object" } }], nextCursor: `c${++page}` },
      }),
    });
    const { logger, lines } = captureLogger();
    const handle = await imported(new ToolRegistry(), server, { serverName: "m", logger });
    expect(page).toBe(100);
    expect(handle.names).toHaveLength(100);
    expect(lines.some((line) => /MCP tool list cut/.test(line.msg))).toBe(true);
  });

  it("bounds the whole listing by timeoutMs, not each page: a server answering every page just in time is cut off", async () => {
    let page = 0;
    const server = await scripted({
      listTools: async () => {
        await new Promise((resolve) => setTimeout(resolve, 40));
        return { result: { tools: [{ name: `t${page}`, inputSchema: { type: "object" } }], nextCursor: `c${++page}` } };
      },
    });
    const registry = new ToolRegistry();
    await expect(registerMcpTools(registry, server.client, { serverName: "slow", timeoutMs: 150 })).rejects.toThrow(
      /^registerMcpTools: MCP server "slow" did not list its tools: /,
    );
    // Per page, 40 ms each would have read all 100 pages.
    expect(page).toBeLessThan(10);
    expect(registry.count()).toBe(0);
  });

  it("follows cursors to the end of a paginated list", async () => {
    const server = await scripted({
      listTools: (params) =>
        params?.cursor === "2"
          ? toolList([{ name: "b" }])
          : { result: { tools: [{ name: "a", inputSchema: { type: "object" } }], nextCursor: "2" } },
    });
    const handle = await imported(new ToolRegistry(), server, { serverName: "p" });
    expect(handle.names).toEqual(["mcp_p_a", "mcp_p_b"]);
  });

  it("imports a tool listed twice once, and skips a tool without a name", async () => {
    const { logger, lines } = captureLogger();
    const { server } = await adder([ADD, { ...ADD, description: "again" }, { name: "" }]);
    const registry = new ToolRegistry();
    const handle = await imported(registry, server, { serverName: "m", logger });
    expect(handle.names).toEqual(["mcp_m_add"]);
    expect(registry.get("mcp_m_add")?.description).toBe("[MCP:m] Adds two numbers");
    expect(lines.map((line) => line.msg)).toEqual(["MCP tool skipped: listed twice", "MCP tool skipped"]);
  });

  it("takes __proto__ keys in names and schemas as plain data (no prototype is set)", async () => {
    const server = await scripted({
      listTools: () => ({
        rawResult:
          '{"tools":[{"name":"__proto__","description":"p","inputSchema":{"type":"object","__proto__":{"polluted":true},' +
          '"properties":{"__proto__":{"type":"object","properties":{"polluted":{"type":"boolean"}}},"x":{"type":"string"}}}}]}',
      }),
      callTool: (params) => ({ result: { content: [{ type: "text", text: JSON.stringify(params?.arguments) }] } }),
    });
    const registry = new ToolRegistry();
    const handle = await imported(registry, server, { serverName: "s" });
    expect(handle.names).toEqual(["mcp_s___proto__"]);
    const parameters = registry.get("mcp_s___proto__")?.parameters as Record<string, unknown>;
    expect(Object.getPrototypeOf(parameters)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const result = await registry.execute("mcp_s___proto__", JSON.parse('{"x":"1","__proto__":{"polluted":true}}'));
    expect(result.forLLM).toBe('{"x":"1","__proto__":{"polluted":true}}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("registerMcpTools: list_changed", () => {
  it("adds, removes and changes tools when the server says its list changed", async () => {
    const { server, list } = await adder([ADD, { name: "old" }]);
    const registry = new ToolRegistry();
    const handle = await imported(registry, server, { serverName: "m" });
    expect(handle.names).toEqual(["mcp_m_add", "mcp_m_old"]);
    const before = registry.get("mcp_m_add");

    list.tools = [{ ...ADD, description: "Adds two numbers, now better" }, { name: "new" }];
    server.toolsChanged();
    await vi.waitFor(() => expect(handle.names).toEqual(["mcp_m_add", "mcp_m_new"]));
    expect(registry.list()).toEqual(["mcp_m_add", "mcp_m_new"]);
    expect(registry.get("mcp_m_add")).not.toBe(before);
    expect(registry.get("mcp_m_add")?.description).toBe("[MCP:m] Adds two numbers, now better");
    expect((await registry.execute("mcp_m_add", { a: 1, b: 2 })).forLLM).toBe("3");
  });

  it("registers a tool again when only its inputSchema changed", async () => {
    const { server, list } = await adder([ADD]);
    const registry = new ToolRegistry();
    await imported(registry, server, { serverName: "m" });
    const before = registry.get("mcp_m_add");
    const inputSchema = { ...ADD.inputSchema, required: ["a"] };
    list.tools = [{ ...ADD, inputSchema }];
    server.toolsChanged();
    await vi.waitFor(() => expect(registry.get("mcp_m_add")).not.toBe(before));
    expect(registry.get("mcp_m_add")?.parameters).toEqual(inputSchema);
  });

  it("lists again after a list_changed that arrived during the first listing", async () => {
    let release: () => void = () => {};
    let listings = 0;
    const server = await scripted({
      listTools: async () => {
        if (++listings === 1) {
          await new Promise<void>((resolve) => (release = resolve));
          return toolList([{ name: "early" }]);
        }
        return toolList([{ name: "early" }, { name: "late" }]);
      },
    });
    const registry = new ToolRegistry();
    const importing = registerMcpTools(registry, server.client, { serverName: "s" });
    await vi.waitFor(() => expect(listings).toBe(1));
    server.toolsChanged();
    await new Promise((resolve) => setTimeout(resolve, 20)); // the notification is handled
    release();
    const handle = await importing;
    cleanups.push(() => handle.close());
    await vi.waitFor(() => expect(handle.names).toEqual(["mcp_s_early", "mcp_s_late"]));
    expect(listings).toBe(2);
  });

  it("names only the tools the registry's allowlist let in", async () => {
    const { server } = await adder([ADD, { name: "other" }]);
    const registry = new ToolRegistry();
    registry.setAllowlist(["mcp_m_add"]);
    const handle = await imported(registry, server, { serverName: "m" });
    expect(handle.names).toEqual(["mcp_m_add"]);
    expect(registry.list()).toEqual(["mcp_m_add"]);
  });

  it("two imports from one client: when one closes, the other still follows the server", async () => {
    const { server, list } = await adder([ADD]);
    const first = new ToolRegistry();
    const second = new ToolRegistry();
    const closing = await registerMcpTools(first, server.client, { serverName: "one" });
    const staying = await imported(second, server, { serverName: "two", hidden: true });
    await closing.close();
    list.tools = [ADD, { name: "more" }];
    server.toolsChanged();
    await vi.waitFor(() => expect(staying.names).toEqual(["mcp_two_add", "mcp_two_more"]));
    expect(second.count()).toBe(2);
    expect(first.list()).toEqual([]);
    await staying.close();
    const handlers = Reflect.get(server.client, "_notificationHandlers") as Map<string, unknown>;
    expect(handlers.has("notifications/tools/list_changed")).toBe(false);
  });

  it("leaves no listener behind per listing or page (no MaxListenersExceededWarning on a long-lived import)", async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => void warnings.push(warning.message);
    process.on("warning", onWarning);
    cleanups.push(() => void process.off("warning", onWarning));
    let listings = 0;
    const server = await scripted({
      listTools: (params) => {
        const page = Number(params?.cursor ?? 0);
        if (page === 0) listings++;
        const tools = [{ name: `t${page}`, inputSchema: { type: "object" } }];
        return { result: page < 14 ? { tools, nextCursor: String(page + 1) } : { tools } };
      },
    });
    const handle = await imported(new ToolRegistry(), server, { serverName: "s" });
    for (let index = 0; index < 12; index++) {
      const before = listings;
      server.toolsChanged();
      await vi.waitFor(() => expect(listings).toBe(before + 1));
    }
    await vi.waitFor(() => expect(handle.names).toHaveLength(15));
    await new Promise((resolve) => setTimeout(resolve, 20)); // a warning is emitted on the next tick
    expect(warnings).toEqual([]);
  });

  it("renames a tool whose name a tool listed later needs (read.file, then read_file): each name runs its own tool", async () => {
    const list = { tools: [{ name: "read.file" }] as Array<Record<string, unknown>> };
    const server = await scripted({
      listTools: () => toolList(list.tools),
      callTool: (params) => ({ result: { content: [{ type: "text", text: String(params?.name) }] } }),
    });
    const registry = new ToolRegistry();
    const handle = await imported(registry, server, { serverName: "s" });
    expect(handle.names).toEqual(["mcp_s_read_file"]);
    list.tools = [{ name: "read.file" }, { name: "read_file" }];
    server.toolsChanged();
    await vi.waitFor(() => expect(handle.names).toHaveLength(2));
    const [plain, suffixed] = handle.names;
    expect(plain).toBe("mcp_s_read_file");
    expect(suffixed).toMatch(/^mcp_s_read_file_[0-9a-f]{8}$/);
    expect((await registry.execute(plain as string, {})).forLLM).toBe("read_file");
    expect((await registry.execute(suffixed as string, {})).forLLM).toBe("read.file");
  });

  /**
   * Calls `name` in the middle of the next refresh, deterministically: the refresh's first
   * registration lasts past a slice (so the refresh yields to the event loop before its next
   * one) and issues the call, which looks the tool up while the refresh has done part of its work.
   */
  function callDuringRefresh(registry: ToolRegistry, name: string): Promise<ToolResult[]> {
    const register = registry.register.bind(registry);
    const calls: Array<Promise<ToolResult>> = [];
    let registered = 0;
    const registerCalled = new Promise<void>((resolve) => {
      vi.spyOn(registry, "register").mockImplementation((tool, options) => {
        register(tool, options);
        if (++registered > 1) return;
        const until = performance.now() + 30; // longer than a slice (20 ms): the refresh yields next
        while (performance.now() < until) {}
        calls.push(registry.execute(name, {}));
        resolve();
      });
    });
    return registerCalled.then(() => Promise.all(calls));
  }

  it("swaps a changed tool in one step: a call during the refresh is answered by the old or new version, never 'not found'", async () => {
    let version = 1;
    const server = await scripted({
      listTools: () =>
        toolList([
          { name: "a", description: `a v${version}` },
          { name: "b", description: `b v${version}` },
        ]),
      callTool: (params) => ({ result: { content: [{ type: "text", text: `${params?.name} answered` }] } }),
    });
    const registry = new ToolRegistry();
    await imported(registry, server, { serverName: "s" });
    const before = registry.get("mcp_s_b");
    const during = callDuringRefresh(registry, "mcp_s_b");
    version = 2;
    server.toolsChanged();
    const [result] = await during;
    expect(result).toMatchObject({ isError: false, forLLM: "b answered" });
    await vi.waitFor(() => expect(registry.get("mcp_s_b")?.description).toBe("[MCP:s] b v2"));
    expect(registry.get("mcp_s_b")).not.toBe(before);
    expect(registry.get("mcp_s_a")?.description).toBe("[MCP:s] a v2");
  });

  it("hands a name over to the tool that takes it in one step (read.file renamed for read_file): never 'not found'", async () => {
    const list = { tools: [{ name: "read.file" }] as Array<Record<string, unknown>> };
    const server = await scripted({
      listTools: () => toolList(list.tools),
      callTool: (params) => ({ result: { content: [{ type: "text", text: String(params?.name) }] } }),
    });
    const registry = new ToolRegistry();
    const handle = await imported(registry, server, { serverName: "s" });
    const during = callDuringRefresh(registry, "mcp_s_read_file");
    list.tools = [{ name: "a_new" }, { name: "read.file" }, { name: "read_file" }];
    server.toolsChanged();
    const [result] = await during;
    expect(result?.isError).toBe(false);
    expect(["read.file", "read_file"]).toContain(result?.forLLM);
    // Not "three names" alone: the renamed read.file takes its new name before read_file takes the
    // old one, and on a busy machine the refresh may pause between the two (a slice ends).
    await vi.waitFor(async () => expect((await registry.execute("mcp_s_read_file", {})).forLLM).toBe("read_file"));
    expect(handle.names).toHaveLength(3);
  });

  it("unregisters a changed tool the registry now refuses, with a warning, and keeps the others", async () => {
    const { logger, lines } = captureLogger();
    const { server, list } = await adder([ADD, { name: "other" }]);
    const registry = new ToolRegistry();
    const handle = await imported(registry, server, { serverName: "m", logger });
    list.tools = [ADD, { name: "other", inputSchema: { type: "object", properties: { x: { type: 12 } } } }];
    server.toolsChanged();
    await vi.waitFor(() => expect(handle.names).toEqual(["mcp_m_add"]));
    expect(registry.list()).toEqual(["mcp_m_add"]);
    expect(lines.map((line) => line.msg)).toEqual(["MCP tool skipped: the registry refused it"]);
  });

  it("leaves unchanged tools as they are (same object)", async () => {
    const { server, list } = await adder([ADD]);
    const registry = new ToolRegistry();
    const handle = await imported(registry, server, { serverName: "m" });
    const before = registry.get("mcp_m_add");
    list.tools = [ADD, { name: "extra" }];
    server.toolsChanged();
    await vi.waitFor(() => expect(handle.names).toHaveLength(2));
    expect(registry.get("mcp_m_add")).toBe(before);
  });

  it("updates every import that shares the client", async () => {
    const { server, list } = await adder([ADD]);
    const first = new ToolRegistry();
    const second = new ToolRegistry();
    await imported(first, server, { serverName: "one" });
    await imported(second, server, { serverName: "two" });
    list.tools = [ADD, { name: "more" }];
    server.toolsChanged();
    await vi.waitFor(() => {
      expect(first.list()).toEqual(["mcp_one_add", "mcp_one_more"]);
      expect(second.list()).toEqual(["mcp_two_add", "mcp_two_more"]);
    });
  });

  it("keeps the tools, with a warning, when the refresh fails", async () => {
    const { logger, lines } = captureLogger();
    let fail = false;
    const server = await scripted({
      listTools: () => (fail ? { error: { code: -32603, message: "down" } } : toolList([{ name: "a" }])),
    });
    const registry = new ToolRegistry();
    await imported(registry, server, { serverName: "s", logger });
    fail = true;
    server.toolsChanged();
    await vi.waitFor(() => expect(lines.some((line) => /not refreshed/.test(line.msg))).toBe(true));
    expect(registry.list()).toEqual(["mcp_s_a"]);
  });

  it("runs one refresh at a time: a burst of notifications costs at most two listings", async () => {
    let listings = 0;
    let release: () => void = () => {};
    const server = await scripted({
      listTools: async () => {
        listings++;
        if (listings === 2) await new Promise<void>((resolve) => (release = resolve));
        return toolList([{ name: `t${listings}` }]);
      },
    });
    const registry = new ToolRegistry();
    await imported(registry, server, { serverName: "s" });
    for (let index = 0; index < 10; index++) server.toolsChanged();
    await vi.waitFor(() => expect(listings).toBe(2));
    release();
    await vi.waitFor(() => expect(registry.list()).toEqual(["mcp_s_t3"]));
    expect(listings).toBe(3);
  });

  it("close() unregisters the tools, stops following the list, and leaves the client open", async () => {
    const { server, list } = await adder([ADD, { name: "other" }]);
    const registry = new ToolRegistry();
    registry.register({ name: "mine", description: "", parameters: {}, execute: () => "" });
    const handle = await registerMcpTools(registry, server.client, { serverName: "m" });
    await handle.close();
    await handle.close();
    expect(registry.list()).toEqual(["mine"]);
    expect(handle.names).toEqual([]);
    list.tools = [{ name: "late" }];
    const listings = server.requests.filter((request) => request.method === "tools/list").length;
    server.toolsChanged();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.requests.filter((request) => request.method === "tools/list")).toHaveLength(listings);
    expect(registry.list()).toEqual(["mine"]);
    await expect(server.client.listTools()).resolves.toMatchObject({ tools: [{ name: "late" }] });
  });

  it("close() leaves alone a tool another registration put under an imported name", async () => {
    const { server } = await adder([ADD]);
    const registry = new ToolRegistry();
    const handle = await registerMcpTools(registry, server.client, { serverName: "m" });
    const replacement = { name: "mcp_m_add", description: "mine", parameters: {}, execute: () => "" };
    registry.register(replacement);
    await handle.close();
    expect(registry.get("mcp_m_add")).toBe(replacement);
  });

  it("close() leaves alone a hidden tool another registration put under an imported name (hidden: get() cannot see it)", async () => {
    const { server } = await adder([ADD]);
    const registry = new ToolRegistry();
    const handle = await registerMcpTools(registry, server.client, { serverName: "m" });
    const replacement = { name: "mcp_m_add", description: "mine", parameters: {}, execute: () => "" };
    registry.registerHidden(replacement);
    await handle.close();
    expect(registry.has("mcp_m_add")).toBe(true);
    registry.promoteTools(["mcp_m_add"], 1);
    expect(registry.get("mcp_m_add")).toBe(replacement);
  });

  it("close() unregisters its own hidden tools", async () => {
    const { server } = await adder([ADD]);
    const registry = new ToolRegistry();
    const handle = await registerMcpTools(registry, server.client, { serverName: "m", hidden: true });
    expect(registry.list()).toEqual(["mcp_m_add"]);
    await handle.close();
    expect(registry.list()).toEqual([]);
  });

  it("close() during a refresh registers nothing more", async () => {
    let release: () => void = () => {};
    let listings = 0;
    const server = await scripted({
      listTools: async () => {
        if (++listings === 2) await new Promise<void>((resolve) => (release = resolve));
        return toolList([{ name: `t${listings}` }]);
      },
    });
    const registry = new ToolRegistry();
    const handle = await registerMcpTools(registry, server.client, { serverName: "s" });
    server.toolsChanged();
    await vi.waitFor(() => expect(listings).toBe(2));
    const closing = handle.close();
    release();
    await closing;
    expect(registry.list()).toEqual([]);
  });

  it("close() during a refresh the server never answers returns at once and cancels the listing, silently", async () => {
    const { logger, lines } = captureLogger();
    let listings = 0;
    const server = await scripted({
      listTools: () => (++listings === 1 ? toolList([{ name: "a" }]) : "never"),
    });
    const registry = new ToolRegistry();
    const handle = await registerMcpTools(registry, server.client, { serverName: "s", timeoutMs: 30_000, logger });
    server.toolsChanged();
    await vi.waitFor(() => expect(listings).toBe(2));
    const started = performance.now();
    await handle.close();
    // Far under the listing's 30 s timeout: close() cancels it (generous for a busy machine).
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(registry.list()).toEqual([]);
    expect(server.notifications).toContainEqual(expect.objectContaining({ method: "notifications/cancelled" }));
    expect(lines).toEqual([]);
  });

  it("a second close() during the first resolves only once the tools are gone", async () => {
    let listings = 0;
    const server = await scripted({ listTools: () => (++listings === 1 ? toolList([{ name: "a" }]) : "never") });
    const registry = new ToolRegistry();
    const handle = await registerMcpTools(registry, server.client, { serverName: "s" });
    server.toolsChanged();
    await vi.waitFor(() => expect(listings).toBe(2));
    const first = handle.close();
    await handle.close();
    expect(registry.list()).toEqual([]);
    await first;
  });
});

describe("registerMcpTools: list_changed storms", () => {
  // Fake setTimeout and performance.now only: the scripted transport and the import's slices turn
  // on the real setImmediate, so a listing runs to its end in a few turns while no time passes.
  function fakeClock(): void {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    cleanups.push(() => void vi.useRealTimers());
  }

  /** Lets the event loop turn `count` times (no time passes on the fake clock). */
  async function turns(count = 30): Promise<void> {
    for (let index = 0; index < count; index++) await new Promise((resolve) => setImmediate(resolve));
  }

  /** A server whose every listing differs (a new tool name each time), counting listings and the notification each one saw. */
  async function changing(options: { fail?: () => boolean } = {}) {
    const state = { listings: 0, notified: 0, seen: [] as number[] };
    const server = await scripted({
      listTools: () => {
        state.listings++;
        state.seen.push(state.notified);
        if (state.listings > 1 && options.fail?.()) return { error: { code: -32603, message: "down" } };
        return toolList([{ name: `t${state.listings}` }]);
      },
    });
    const notify = () => {
      state.notified++;
      server.toolsChanged();
    };
    return { server, state, notify };
  }

  it("a storm (list_changed every 5 ms for 10 s) is listed at most once per refreshIntervalMs; the last change is seen", async () => {
    fakeClock();
    const { server, state, notify } = await changing();
    const registry = new ToolRegistry();
    await imported(registry, server, { serverName: "s", refreshIntervalMs: 1_000 });
    for (let step = 0; step < 2_000; step++) {
      notify();
      await turns(3);
      await vi.advanceTimersByTimeAsync(5);
    }
    // One listing at once, then at most one a second: 11 in 10 s (besides the import's).
    expect(state.listings).toBeGreaterThanOrEqual(10);
    expect(state.listings).toBeLessThanOrEqual(1 + 11);
    await vi.advanceTimersByTimeAsync(1_000);
    await turns();
    // The last listing started after the last notification, and the registry holds what it listed.
    expect(state.seen.at(-1)).toBe(2_000);
    expect(registry.list()).toEqual([`mcp_s_t${state.listings}`]);
    const listings = state.listings;
    await vi.advanceTimersByTimeAsync(60_000);
    await turns();
    expect(state.listings).toBe(listings);
  });

  it("a burst of 1,000 notifications costs at most two listings: one at once, one after the interval that sees the last", async () => {
    fakeClock();
    const { server, state, notify } = await changing();
    const registry = new ToolRegistry();
    await imported(registry, server, { serverName: "s", refreshIntervalMs: 1_000 });
    // Spread over many turns (each listing would have ended between two of them), no time passing.
    for (let index = 0; index < 1_000; index++) {
      notify();
      await turns(5);
    }
    expect(state.listings).toBe(2);
    await vi.advanceTimersByTimeAsync(999);
    await turns();
    expect(state.listings).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    await turns();
    expect(state.listings).toBe(3);
    expect(state.seen).toEqual([0, 1, 1_000]);
    expect(registry.list()).toEqual(["mcp_s_t3"]);
    // After the interval, another change is picked up at once.
    await vi.advanceTimersByTimeAsync(1_000);
    notify();
    await turns();
    expect(state.listings).toBe(4);
    expect(registry.list()).toEqual(["mcp_s_t4"]);
  });

  it("waits after a refresh nine times as long as its compilations took (a tenth of the time), whatever the interval", async () => {
    fakeClock();
    const { server, state, notify } = await changing();
    // Each schema compilation takes 2 s (of the fake clock).
    class SlowRegistry extends ToolRegistry {
      override register(tool: Parameters<ToolRegistry["register"]>[0]): void {
        vi.advanceTimersByTime(2_000);
        super.register(tool);
      }
    }
    const registry = new SlowRegistry();
    await imported(registry, server, { serverName: "s", refreshIntervalMs: 100 });
    notify();
    await turns();
    expect(state.listings).toBe(2);
    notify();
    await vi.advanceTimersByTimeAsync(17_990);
    await turns();
    expect(state.listings).toBe(2);
    await vi.advanceTimersByTimeAsync(10);
    await turns();
    expect(state.listings).toBe(3);
    expect(registry.list()).toEqual(["mcp_s_t3"]);
  });

  it("a refresh that fails logs, keeps the tools, and is rate-limited like the others", async () => {
    fakeClock();
    const { logger, lines } = captureLogger();
    const { server, state, notify } = await changing({ fail: () => true });
    const registry = new ToolRegistry();
    await imported(registry, server, { serverName: "s", refreshIntervalMs: 1_000, logger });
    for (let step = 0; step < 1_000; step++) {
      notify();
      await turns(3);
      await vi.advanceTimersByTimeAsync(5);
    }
    expect(state.listings).toBeGreaterThanOrEqual(1 + 4);
    expect(state.listings).toBeLessThanOrEqual(1 + 6);
    await turns();
    const warnings = lines.filter((line) => /not refreshed after list_changed/.test(line.msg));
    expect(warnings).toHaveLength(state.listings - 1);
    expect(warnings[0]).toMatchObject({ level: 40, server: "s", reason: "MCP error -32603: down" });
    expect(registry.list()).toEqual(["mcp_s_t1"]);
  });

  it("close() drops a waiting refresh at once: nothing is listed or registered after it", async () => {
    fakeClock();
    const { server, state, notify } = await changing();
    const registry = new ToolRegistry();
    const handle = await registerMcpTools(registry, server.client, { serverName: "s", refreshIntervalMs: 60_000 });
    notify();
    await turns();
    expect(state.listings).toBe(2);
    notify();
    await turns();
    expect(state.listings).toBe(2);
    // Resolves with the clock standing still: close() does not wait for the interval.
    await handle.close();
    expect(registry.list()).toEqual([]);
    await vi.advanceTimersByTimeAsync(120_000);
    await turns();
    expect(state.listings).toBe(2);
    expect(registry.list()).toEqual([]);
  });

  it.each([
    ["-1", -1],
    ["NaN", Number.NaN],
    ["a string", "1000"],
    ["Infinity", Number.POSITIVE_INFINITY],
    ["2 ** 31", 2 ** 31],
  ])("refreshIntervalMs %s is a TypeError echoing it", async (_, refreshIntervalMs) => {
    const { server } = await adder();
    const registry = new ToolRegistry();
    const importing = registerMcpTools(registry, server.client, { serverName: "s", refreshIntervalMs } as never);
    await expect(importing).rejects.toThrow(TypeError);
    await expect(importing).rejects.toThrow(
      /registerMcpTools: refreshIntervalMs must be a number of milliseconds ≥ 0 and ≤ 2147483647, got /,
    );
    expect(server.requests.filter((request) => request.method === "tools/list")).toHaveLength(0);
  });

  it("refreshIntervalMs 0 still folds notifications: one listing runs, one waits", async () => {
    let release: () => void = () => {};
    let listings = 0;
    const server = await scripted({
      listTools: async () => {
        if (++listings === 2) await new Promise<void>((resolve) => (release = resolve));
        return toolList([{ name: `t${listings}` }]);
      },
    });
    const registry = new ToolRegistry();
    await imported(registry, server, { serverName: "s", refreshIntervalMs: 0 });
    for (let index = 0; index < 100; index++) server.toolsChanged();
    await vi.waitFor(() => expect(listings).toBe(2));
    release();
    await vi.waitFor(() => expect(registry.list()).toEqual(["mcp_s_t3"]));
    expect(listings).toBe(3);
  });
});

describe("registerMcpTools: hidden tools", () => {
  it("registers with registerHidden: invisible and not callable until promoted, found by search", async () => {
    const { server } = await adder();
    const registry = new ToolRegistry();
    const handle = await imported(registry, server, { serverName: "m", hidden: true });
    expect(handle.names).toEqual(["mcp_m_add"]);
    expect(registry.count()).toBe(1);
    expect(registry.getDefinitions()).toEqual([]);
    expect((await registry.execute("mcp_m_add", { a: 1, b: 2 })).isError).toBe(true);
    expect(registry.searchRegex("add", 5)).toEqual([{ name: "mcp_m_add", description: "[MCP:m] Adds two numbers" }]);
    registry.promoteTools(["mcp_m_add"], 1);
    expect(registry.getDefinitions().map(({ function: f }) => f.name)).toEqual(["mcp_m_add"]);
    expect((await registry.execute("mcp_m_add", { a: 1, b: 2 })).forLLM).toBe("3");
  });

  it("keeps them hidden through list_changed, and close() unregisters them", async () => {
    const { server, list } = await adder();
    const registry = new ToolRegistry();
    const handle = await registerMcpTools(registry, server.client, { serverName: "m", hidden: true });
    list.tools = [ADD, { name: "more" }];
    server.toolsChanged();
    await vi.waitFor(() => expect(registry.count()).toBe(2));
    expect(registry.getDefinitions()).toEqual([]);
    await handle.close();
    expect(registry.count()).toBe(0);
  });
});

describe("registerMcpTools: server-everything (stdio child process)", () => {
  async function everything(): Promise<StdioServer> {
    const server = await startEverythingServer();
    cleanups.push(() => server.close());
    return server;
  }

  it("imports its tools, also those it adds after connecting (list_changed)", async () => {
    const server = await everything();
    const registry = new ToolRegistry();
    const handle = await imported(registry, server, { serverName: "everything" });
    expect(handle.names).toEqual(
      expect.arrayContaining([
        "mcp_everything_echo",
        "mcp_everything_get-sum",
        "mcp_everything_get-tiny-image",
        "mcp_everything_simulate-research-query",
        "mcp_everything_trigger-long-running-operation",
      ]),
    );
    expect(registry.get("mcp_everything_echo")?.description).toBe("[MCP:everything] Echoes back the input string");
  });

  it("runs a scripted loop that calls its tools; every outcome is a tool message", async () => {
    const server = await everything();
    const registry = new ToolRegistry();
    await imported(registry, server, { serverName: "everything" });
    const provider = new ScriptedProvider([
      toolCallResponse([
        { id: "echo", name: "mcp_everything_echo", arguments: { message: "hello" } },
        { id: "sum", name: "mcp_everything_get-sum", arguments: { a: 2, b: 40 } },
        { id: "bad", name: "mcp_everything_get-sum", arguments: { a: "two" } },
        { id: "image", name: "mcp_everything_get-tiny-image", arguments: {} },
        { id: "weather", name: "mcp_everything_get-structured-content", arguments: { location: "Chicago" } },
        { id: "task", name: "mcp_everything_simulate-research-query", arguments: { topic: "mcp" } },
      ]),
      textResponse("done"),
    ]);
    const messages: Message[] = [{ role: "user", content: "try everything" }];
    const result = await runToolLoop({ provider, tools: registry, maxIterations: 3 }, messages);
    expect(result.content).toBe("done");
    const tools = Object.fromEntries(
      result.messages.filter((message) => message.role === "tool").map((message) => [message.toolCallId, message]),
    );
    expect(tools.echo).toMatchObject({ content: "Echo: hello", isError: false });
    expect(tools.sum).toMatchObject({ content: "The sum of 2 and 40 is 42.", isError: false });
    expect(tools.bad?.isError).toBe(true);
    expect(tools.bad?.content).toMatch(/^invalid arguments for tool "mcp_everything_get-sum": /);
    // The tool message's text (with the image as a part after it, where the loop passes parts on).
    expect(contentText(tools.image?.content ?? "")).toMatch(/\[image: image\/png, \d+ bytes\]/);
    expect(contentText(tools.image?.content ?? "")).not.toMatch(/iVBOR/);
    expect(tools.weather?.content).toMatch(/"temperature":36/);
    // A tool that requires task support: the server refuses a call without a task; the model reads why.
    expect(tools.task?.isError).toBe(true);
    expect(tools.task?.content).toMatch(/simulate-research-query requires task augmentation/);
  });

  it("passes its tiny image on as an image part, its text around the short note", async () => {
    const server = await everything();
    const registry = new ToolRegistry();
    await imported(registry, server, { serverName: "everything" });
    const result = await registry.execute("mcp_everything_get-tiny-image", {});
    expect(result.forLLM).toMatch(
      /^Here's the image you requested:\n\[image: image\/png, \d+ bytes\]\nThe image above is the MCP logo\.$/,
    );
    expect(result.parts).toEqual([{ type: "image", mediaType: "image/png", data: expect.stringMatching(/^iVBOR/) }]);
    const [part] = result.parts ?? [];
    const bytes = Buffer.from(part && "data" in part ? part.data : "", "base64");
    expect(result.forLLM).toContain(`${bytes.length} bytes`);
    expect(bytes.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  });

  it("reports the server's progress to the call's listener", async () => {
    const server = await everything();
    const registry = new ToolRegistry();
    await imported(registry, server, { serverName: "everything" });
    const updates: Array<number | undefined> = [];
    const result = await registry.execute(
      "mcp_everything_trigger-long-running-operation",
      { duration: 0.2, steps: 2 },
      { onProgress: (update) => void updates.push(update.progress) },
    );
    expect(result.forLLM).toMatch(/Long running operation completed/);
    // The server's first step of two, then the call's own final update.
    expect(updates[0]).toBe(0.5);
  });

  it("a call aborted mid-way answers at once; the server goes on serving", async () => {
    const server = await everything();
    const registry = new ToolRegistry();
    await imported(registry, server, { serverName: "everything" });
    const controller = new AbortController();
    const started = performance.now();
    setTimeout(() => controller.abort(), 100);
    const result = await registry.execute(
      "mcp_everything_trigger-long-running-operation",
      { duration: 30, steps: 2 },
      { signal: controller.signal },
    );
    // Far under the operation's 30 s: the abort answers at once (20 s of margin for a busy machine;
    // an answer that waited for the operation would take 30 s, within the test's 60 s).
    expect(performance.now() - started).toBeLessThan(20_000);
    expect(code(result)).toBe("aborted");
    expect((await registry.execute("mcp_everything_echo", { message: "still here" })).forLLM).toBe("Echo: still here");
  });

  it("a server killed mid-call gives an error result naming it, never a hang or an unhandled rejection", async () => {
    const server = await everything();
    const registry = new ToolRegistry();
    await imported(registry, server, { serverName: "everything" });
    const pending = registry.execute("mcp_everything_trigger-long-running-operation", { duration: 30, steps: 3 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    process.kill(server.pid, "SIGKILL");
    const result = await pending;
    expect(result.isError).toBe(true);
    expect(result.forLLM).toMatch(
      /^MCP server "everything" failed to run tool "trigger-long-running-operation": .*Connection closed/,
    );
    const after = await registry.execute("mcp_everything_echo", { message: "x" });
    expect(after.isError).toBe(true);
    expect(after.forLLM).toMatch(/^MCP server "everything" failed to run tool "echo": /);
  });
});

describe("registerMcpTools: server-filesystem (stdio child process)", () => {
  it("runs a scripted loop that writes, lists and reads files in its directory, and is refused outside", async () => {
    const server = await startFilesystemServer();
    cleanups.push(() => server.close());
    writeFileSync(join(server.dir, "notes.txt"), "first line\n");
    const registry = new ToolRegistry();
    const handle = await imported(registry, server, { serverName: "fs" });
    expect(handle.names).toEqual(
      expect.arrayContaining(["mcp_fs_read_text_file", "mcp_fs_write_file", "mcp_fs_list_directory"]),
    );

    const provider = new ScriptedProvider([
      toolCallResponse([
        {
          id: "write",
          name: "mcp_fs_write_file",
          arguments: { path: join(server.dir, "todo.md"), content: "- ship it\n" },
        },
      ]),
      toolCallResponse([
        { id: "list", name: "mcp_fs_list_directory", arguments: { path: server.dir } },
        { id: "read", name: "mcp_fs_read_text_file", arguments: { path: join(server.dir, "notes.txt") } },
        { id: "outside", name: "mcp_fs_read_text_file", arguments: { path: "/etc/hostname" } },
        { id: "invalid", name: "mcp_fs_read_text_file", arguments: {} },
      ]),
      textResponse("all done"),
    ]);
    const result = await runToolLoop({ provider, tools: registry, maxIterations: 4 }, [
      { role: "user", content: "go" },
    ]);
    const tools = Object.fromEntries(
      result.messages.filter((message) => message.role === "tool").map((message) => [message.toolCallId, message]),
    );
    expect(tools.write).toMatchObject({ isError: false, content: expect.stringMatching(/Successfully wrote/) });
    expect(readFileSync(join(server.dir, "todo.md"), "utf8")).toBe("- ship it\n");
    expect(tools.list?.content).toMatch(/\[FILE\] notes\.txt/);
    expect(tools.list?.content).toMatch(/\[FILE\] todo\.md/);
    expect(tools.read).toMatchObject({ isError: false, content: "first line\n" });
    expect(tools.outside?.isError).toBe(true);
    expect(tools.outside?.content).toMatch(/Access denied|outside allowed directories/);
    expect(tools.invalid?.content).toMatch(
      /invalid arguments for tool "mcp_fs_read_text_file": path: required property is missing/,
    );
    expect(result.content).toBe("all done");
  });
});

describe("registerMcpTools: server-filesystem's read_media_file (stdio child process)", () => {
  it("passes images, audio and other files on as parts", async () => {
    const server = await startFilesystemServer();
    cleanups.push(() => server.close());
    const files: Record<string, Buffer> = {
      "dot.png": Buffer.from(TINY_IMAGES.png.data, "base64"),
      "dot.webp": Buffer.from(TINY_IMAGES.webp.data, "base64"),
      "dot.bmp": Buffer.from("BM\x1e\0\0\0\0\0\0\0\x1a\0\0\0", "latin1"),
      "beep.wav": Buffer.from("RIFF$\0\0\0WAVEfmt \x10\0\0\0", "latin1"),
      "report.pdf": Buffer.from("%PDF-1.4\n%%EOF\n"),
    };
    for (const [name, bytes] of Object.entries(files)) writeFileSync(join(server.dir, name), bytes);
    const registry = new ToolRegistry();
    await imported(registry, server, { serverName: "fs" });
    const read = (name: string) => registry.execute("mcp_fs_read_media_file", { path: join(server.dir, name) });
    const base64 = (name: string) => (files[name] as Buffer).toString("base64");

    const png = await read("dot.png");
    expect(png.forLLM).toBe(`[image: image/png, ${files["dot.png"]?.length} bytes]`);
    expect(png.parts).toEqual([{ type: "image", mediaType: "image/png", data: base64("dot.png") }]);
    expect((await read("dot.webp")).parts).toEqual([
      { type: "image", mediaType: "image/webp", data: base64("dot.webp") },
    ]);
    // An image type few providers read: a file part, for the adapter to send or refuse.
    expect((await read("dot.bmp")).parts).toEqual([{ type: "file", mediaType: "image/bmp", data: base64("dot.bmp") }]);
    expect((await read("beep.wav")).parts).toEqual([
      { type: "file", mediaType: "audio/wav", data: base64("beep.wav") },
    ]);
    const pdf = await read("report.pdf");
    // The server sends other files as an embedded blob resource (MIME type by extension).
    expect(pdf.forLLM).toMatch(/^\[resource: file:\/\/\/.*\/report\.pdf, application\/octet-stream, 15 bytes\]$/);
    expect(pdf.parts).toEqual([
      { type: "file", mediaType: "application/octet-stream", data: base64("report.pdf"), filename: "report.pdf" },
    ]);
  });

  it('parts: "images" passes on the images only, "none" nothing (the notes stay)', async () => {
    const server = await startFilesystemServer();
    cleanups.push(() => server.close());
    writeFileSync(join(server.dir, "dot.gif"), Buffer.from(TINY_IMAGES.gif.data, "base64"));
    writeFileSync(join(server.dir, "beep.wav"), Buffer.from("RIFF$\0\0\0WAVEfmt ", "latin1"));
    const images = new ToolRegistry();
    const none = new ToolRegistry();
    await imported(images, server, { serverName: "fs", parts: "images" });
    await imported(none, server, { serverName: "fs", parts: "none" });
    const read = (registry: ToolRegistry, name: string) =>
      registry.execute("mcp_fs_read_media_file", { path: join(server.dir, name) });
    expect((await read(images, "dot.gif")).parts).toEqual([
      { type: "image", mediaType: "image/gif", data: TINY_IMAGES.gif.data },
    ]);
    const audio = await read(images, "beep.wav");
    expect([audio.forLLM, audio.parts]).toEqual(["[audio: audio/wav, 16 bytes]", undefined]);
    const gif = await read(none, "dot.gif");
    expect([gif.forLLM, gif.parts]).toEqual(["[image: image/gif, 42 bytes]", undefined]);
  });
});

/** A tool of every kind the MCP `Tool` shape refuses, each beside one good tool. */
const MALFORMED_TOOLS = [
  { description: "no name", inputSchema: { type: "object" } },
  { name: "string_input", inputSchema: { type: "string" } },
  { name: "untyped_input", inputSchema: { properties: { x: { type: "string" } } } },
  { name: "string_output", inputSchema: { type: "object" }, outputSchema: { type: "string" } },
  { name: "yes_hint", inputSchema: { type: "object" }, annotations: { readOnlyHint: "yes" } },
  { name: 42, inputSchema: { type: "object" } },
  "not a tool",
];

/** The warnings of skipped tools, as `{ mcpTool, reason }`. */
function skipped(lines: ReturnType<typeof captureLogger>["lines"]) {
  return lines
    .filter((line) => line.level === 40 && line.msg === "MCP tool skipped")
    .map(({ mcpTool, reason }) => ({ mcpTool, reason }));
}

describe("registerMcpTools: malformed tools/list entries", () => {
  it("skips each malformed entry with a warning naming it and why, and imports the rest", async () => {
    const { logger, lines } = captureLogger();
    const server = await scripted({ listTools: () => ({ result: { tools: [ADD, ...MALFORMED_TOOLS] } }) });
    const handle = await imported(new ToolRegistry(), server, { serverName: "m", logger });
    expect(handle.names).toEqual(["mcp_m_add"]);
    expect(skipped(lines)).toEqual([
      { mcpTool: undefined, reason: expect.stringMatching(/^it is not an MCP tool: name: .*expected string/i) },
      { mcpTool: "string_input", reason: expect.stringMatching(/^it is not an MCP tool: inputSchema\.type: /) },
      { mcpTool: "untyped_input", reason: expect.stringMatching(/^it is not an MCP tool: inputSchema\.type: /) },
      { mcpTool: "string_output", reason: expect.stringMatching(/^it is not an MCP tool: outputSchema\.type: /) },
      {
        mcpTool: "yes_hint",
        reason: expect.stringMatching(/^it is not an MCP tool: annotations\.readOnlyHint: .*expected boolean/i),
      },
      { mcpTool: undefined, reason: expect.stringMatching(/^it is not an MCP tool: name: .*expected string/i) },
      { mcpTool: undefined, reason: expect.stringMatching(/^it is not an MCP tool: .*expected object/i) },
    ]);
    expect((await server.client.listTools().catch((error: unknown) => error)) instanceof Error).toBe(true);
  });

  it("bounds the warning: a malformed entry with huge keys and values gives a short reason", async () => {
    const { logger, lines } = captureLogger();
    const key = "k".repeat(100_000);
    const tools = [ADD, { name: "n".repeat(100_000), inputSchema: { type: "object", properties: { [key]: 1 } } }];
    const server = await scripted({ listTools: () => ({ result: { tools } }) });
    const handle = await imported(new ToolRegistry(), server, { serverName: "m", logger });
    expect(handle.names).toEqual(["mcp_m_add"]);
    const [warning] = skipped(lines);
    expect(String(warning?.mcpTool).length).toBeLessThanOrEqual(100);
    expect(String(warning?.reason).length).toBeLessThanOrEqual(500);
    expect(JSON.stringify(lines).length).toBeLessThan(5_000);
  });

  it("a refresh that lists a tool malformed now unregisters just that one", async () => {
    const { logger, lines } = captureLogger();
    const { server, list } = await adder([ADD, { name: "other" }]);
    const registry = new ToolRegistry();
    const handle = await imported(registry, server, { serverName: "m", logger });
    expect(handle.names).toEqual(["mcp_m_add", "mcp_m_other"]);
    list.tools = [ADD, { name: "other", inputSchema: { type: "array" } }];
    server.toolsChanged();
    await vi.waitFor(() => expect(handle.names).toEqual(["mcp_m_add"]));
    expect(skipped(lines)).toEqual([{ mcpTool: "other", reason: expect.stringMatching(/inputSchema\.type/) }]);
    expect((await registry.execute("mcp_m_add", { a: 1, b: 2 })).forLLM).toBe("3");
  });

  it("fails the listing (the tools stay as they were) when the answer holds no tools array", async () => {
    const { logger, lines } = captureLogger();
    let listings = 0;
    const server = await scripted({
      listTools: () => (++listings === 1 ? toolList([ADD]) : { result: { tools: { add: ADD } } }),
    });
    const handle = await imported(new ToolRegistry(), server, { serverName: "m", logger });
    server.toolsChanged();
    await vi.waitFor(() => expect(lines.some((line) => /not refreshed/.test(line.msg))).toBe(true));
    expect(lines.find((line) => /not refreshed/.test(line.msg))?.reason).toBe(
      "the tools/list answer has no tools array",
    );
    expect(handle.names).toEqual(["mcp_m_add"]);
    const other = await scripted({ listTools: () => ({ result: { tools: "none" } }) });
    await expect(registerMcpTools(new ToolRegistry(), other.client, { serverName: "o" })).rejects.toThrow(
      'registerMcpTools: MCP server "o" did not list its tools: the tools/list answer has no tools array',
    );
  });
});

describe("registerMcpTools: what a tools/call answers", () => {
  it("converts an unknown content type as documented ([<type> content]), never a validation dump", async () => {
    const server = await scripted({
      listTools: () => toolList([{ name: "t" }]),
      callTool: () => ({
        result: {
          content: [
            { type: "text", text: "before" },
            { type: "video", uri: "file:///a.mp4" },
            { type: "x".repeat(10_000) },
            { type: 7 },
            "not a block",
            { type: "text", text: "after" },
          ],
        },
      }),
    });
    const registry = new ToolRegistry();
    await imported(registry, server, { serverName: "s" });
    const result = await registry.execute("mcp_s_t", {});
    expect(result.isError).toBe(false);
    expect(result.forLLM).toMatch(
      /^before\n\[video content\]\n\[x+ … \[\d+ more characters cut\] content\]\n\[unknown content\]\nafter$/,
    );
    expect(result.forLLM.length).toBeLessThan(300);
  });

  it("takes a result of another shape (content not an array, odd fields) as it is", async () => {
    const server = await scripted({
      listTools: () => toolList([{ name: "t" }, { name: "u" }]),
      callTool: (params) =>
        params?.name === "t"
          ? { result: { content: { type: "text", text: "x" }, isError: "yes" } }
          : { result: { structuredContent: [1, 2] } },
    });
    const registry = new ToolRegistry();
    await imported(registry, server, { serverName: "s" });
    expect(await registry.execute("mcp_s_t", {})).toMatchObject({ isError: false, forLLM: "(no content)" });
    expect(await registry.execute("mcp_s_u", {})).toMatchObject({ isError: false, forLLM: "[1,2]" });
  });

  it.each([
    [-32001, "Request timed out"],
    [-32000, "Internal error"],
    [12345, "quota exceeded"],
  ])("reports the server's JSON-RPC error %i with its message, not as our timeout", async (errorCode, message) => {
    const server = await scripted({
      listTools: () => toolList([{ name: "t" }]),
      callTool: () => ({ error: { code: errorCode, message } }),
    });
    const registry = new ToolRegistry();
    await imported(registry, server, { serverName: "s", timeoutMs: 60_000 });
    const result = await registry.execute("mcp_s_t", {});
    expect(code(result)).toBe("tool_failed");
    expect(result.forLLM).toBe(`MCP server "s" failed to run tool "t": MCP error ${errorCode}: ${message}`);
  });

  it("bounds the server's error message", async () => {
    const server = await scripted({
      listTools: () => toolList([{ name: "t" }]),
      callTool: () => ({ error: { code: -32001, message: "m".repeat(1_000_000) } }),
    });
    const registry = new ToolRegistry();
    await imported(registry, server, { serverName: "s" });
    const result = await registry.execute("mcp_s_t", {});
    expect(code(result)).toBe("tool_failed");
    expect(result.forLLM).toMatch(
      /^MCP server "s" failed to run tool "t": MCP error -32001: m+ … \[\d+ more characters cut\]$/,
    );
    expect(result.forLLM.length).toBeLessThanOrEqual(1_100);
  });

  it("says 'did not answer within' only when its own timer fired, also by default after 60 s", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const server = await scripted({ listTools: () => toolList([{ name: "slow" }]), callTool: () => "never" });
      const registry = new ToolRegistry();
      await imported(registry, server, { serverName: "s" });
      let settled = false;
      const pending = registry.execute("mcp_s_slow", {}).finally(() => (settled = true));
      // Not vi.waitFor: with fake timers it moves the clock.
      while (server.requests.at(-1)?.method !== "tools/call") await new Promise((resolve) => setImmediate(resolve));
      await vi.advanceTimersByTimeAsync(59_999);
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      const result = await pending;
      expect(code(result)).toBe("timeout");
      expect(result.forLLM).toBe('MCP server "s" did not answer tool "slow" within 60000 ms');
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("registerMcpTools: a broken server over stdio (child process)", () => {
  it("imports the good tool beside malformed ones, converts unknown content and reports the server's errors", async () => {
    const server = await startRawStdioServer({
      tools: [ADD, ...MALFORMED_TOOLS, { name: "busy", inputSchema: { type: "object" } }],
      calls: {
        add: {
          result: {
            content: [
              { type: "text", text: "3" },
              { type: "hologram", data: "…" },
            ],
          },
        },
        busy: { error: { code: -32001, message: "Request timed out" } },
      },
    });
    cleanups.push(() => server.close());
    const { logger, lines } = captureLogger();
    const registry = new ToolRegistry();
    const handle = await imported(registry, server, { serverName: "raw", logger });
    expect(handle.names).toEqual(["mcp_raw_add", "mcp_raw_busy"]);
    expect(skipped(lines).map((line) => line.mcpTool)).toEqual([
      undefined,
      "string_input",
      "untyped_input",
      "string_output",
      "yes_hint",
      undefined,
      undefined,
    ]);
    const result = await registry.execute("mcp_raw_add", { a: 1, b: 2 });
    expect(result).toMatchObject({ isError: false, forLLM: "3\n[hologram content]" });
    const busy = await registry.execute("mcp_raw_busy", {});
    expect(code(busy)).toBe("tool_failed");
    expect(busy.forLLM).toBe('MCP server "raw" failed to run tool "busy": MCP error -32001: Request timed out');
  });
});
