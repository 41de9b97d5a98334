import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  CallToolResultSchema,
  ErrorCode,
  McpError,
  type Progress,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import type { ContentPart } from "../../src/content-part.js";
import { defineTool } from "../../src/define-tool.js";
import { createMcpServer, type McpServerOptions } from "../../src/mcp/index.js";
import type { Tool, ToolContext } from "../../src/tool.js";
import { ToolRegistry } from "../../src/tool-registry.js";
import {
  errorResult,
  mediaResult,
  newToolResult,
  silentResult,
  ToolResult,
  userResult,
} from "../../src/tool-result.js";
import { createToolSearchTools } from "../../src/tool-search-tools.js";
import { TINY_IMAGES } from "../helpers/tiny-images.js";

const INFO = { name: "test-server", version: "1.2.3" };

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A registry served by createMcpServer, and an official v1 client connected to it in memory. */
async function connect(
  registry: ToolRegistry,
  options?: McpServerOptions,
): Promise<{ server: McpServer; client: Client }> {
  const server = createMcpServer(registry, INFO, options);
  const client = new Client({ name: "test-client", version: "0.0.1" });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  await client.connect(clientTransport);
  closers.push(
    () => server.close(),
    () => client.close(),
  );
  return { server, client };
}

function tool(name: string, execute: Tool["execute"], parameters: Record<string, unknown> = { type: "object" }): Tool {
  return { name, description: `The ${name} tool`, parameters, execute };
}

function registryWith(...tools: Tool[]): ToolRegistry {
  const registry = new ToolRegistry();
  for (const t of tools) registry.register(t);
  return registry;
}

/** Resolves once `signal` aborts. */
function aborted(signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(signal.reason);
    else signal.addEventListener("abort", () => resolve(signal.reason), { once: true });
  });
}

/** A tool that waits on its signal; `seen` resolves with the context once it was aborted. */
function waitingTool() {
  let started!: () => void;
  let seenAbort!: (context: ToolContext) => void;
  const start = new Promise<void>((resolve) => {
    started = resolve;
  });
  const seen = new Promise<ToolContext>((resolve) => {
    seenAbort = resolve;
  });
  const waiting = tool("wait", async (_args, context) => {
    started();
    await aborted(context.signal);
    seenAbort(context);
    return "never read";
  });
  return { tool: waiting, start, seen };
}

describe("createMcpServer: creation", () => {
  it.each([
    ["a registry that is null", null, INFO],
    ["a registry without execute", { getDefinitions: () => [] }, INFO],
    ["info that is not an object", new ToolRegistry(), "server"],
    ["info.name that is not a string", new ToolRegistry(), { name: 7, version: "1" }],
    ["an empty info.name", new ToolRegistry(), { name: "", version: "1" }],
    ["info.version that is not a string", new ToolRegistry(), { name: "x" }],
  ])("%s is a TypeError", (_case, registry, info) => {
    expect(() => createMcpServer(registry as ToolRegistry, info as typeof INFO)).toThrow(TypeError);
  });

  it("echoes the bad value in its TypeError", () => {
    expect(() =>
      createMcpServer(new ToolRegistry(), { name: 7 } as unknown as typeof INFO),
    ).toThrowErrorMatchingInlineSnapshot(`[TypeError: createMcpServer: info.name must be a non-empty string, got 7]`);
    expect(() => createMcpServer({} as ToolRegistry, INFO)).toThrowErrorMatchingInlineSnapshot(
      `[TypeError: createMcpServer: registry must be a ToolRegistry, got {}]`,
    );
  });

  it("introduces itself with info and declares tools with listChanged", async () => {
    const { client } = await connect(new ToolRegistry());
    expect(client.getServerVersion()).toMatchObject(INFO);
    expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true });
  });

  it("refuses server.registerTool clearly: the tool handlers serve the registry", () => {
    const server = createMcpServer(new ToolRegistry(), INFO);
    expect(() => server.registerTool("x", { description: "x" }, () => ({ content: [] }))).toThrow(
      /tools\/list already exists/,
    );
  });
});

describe("createMcpServer: tools/list", () => {
  it("lists the registry's tools sorted, with name, description and parameters as inputSchema", async () => {
    const weather = defineTool({
      name: "weather",
      description: "Weather for a city",
      parameters: z.object({ city: z.string(), days: z.number().int().default(1) }),
      execute: ({ city }) => city,
    });
    const registry = registryWith(
      weather,
      tool("clock", () => "now", { type: "object", properties: {}, additionalProperties: false }),
    );
    const { client } = await connect(registry);
    const { tools } = await client.listTools();
    expect(tools).toEqual(
      registry.getDefinitions().map(({ function: f }) => ({
        name: f.name,
        description: f.description,
        inputSchema: f.parameters,
      })),
    );
    expect(tools.map((t) => t.name)).toEqual(["clock", "weather"]);
    expect(Object.keys(tools[0] ?? {})).toEqual(["name", "description", "inputSchema"]);
  });

  it("gives a schema without type the type object MCP requires (the client would refuse the list)", async () => {
    const registry = registryWith(
      tool("bare", () => "", {}),
      tool("props", () => "", { properties: { a: {} } }),
    );
    const { client } = await connect(registry);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.inputSchema)).toEqual([{ type: "object" }, { type: "object", properties: { a: {} } }]);
  });

  it("reads the registry on every request: tools registered or removed after connecting", async () => {
    const registry = registryWith(tool("first", () => ""));
    const { client } = await connect(registry);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["first"]);
    registry.register(tool("second", () => "2"));
    registry.unregister("first");
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["second"]);
    expect((await client.callTool({ name: "second" })).content).toEqual([{ type: "text", text: "2" }]);
  });

  it("sends notifications/tools/list_changed only when you call server.sendToolListChanged()", async () => {
    const registry = new ToolRegistry();
    const { server, client } = await connect(registry);
    const notified: string[] = [];
    client.setNotificationHandler(ToolListChangedNotificationSchema, (n) => void notified.push(n.method));
    registry.register(tool("added", () => ""));
    await client.ping(); // a round trip: anything sent before it has arrived
    expect(notified).toEqual([]);
    server.sendToolListChanged();
    await client.ping();
    expect(notified).toEqual(["notifications/tools/list_changed"]);
  });

  it("neither lists nor runs a hidden tool until it is promoted, and hides it again when its ttl ran out", async () => {
    let runs = 0;
    const registry = registryWith(tool("visible", () => "v"));
    registry.registerHidden(tool("secret", () => `secret ran ${++runs}`));
    const { client } = await connect(registry);
    const names = async () => (await client.listTools()).tools.map((t) => t.name);

    expect(await names()).toEqual(["visible"]);
    expect(await client.callTool({ name: "secret" })).toEqual({
      content: [{ type: "text", text: 'tool "secret" not found. Available tools: visible.' }],
      isError: true,
    });
    expect(runs).toBe(0);

    registry.promoteTools(["secret"], 1);
    expect(await names()).toEqual(["secret", "visible"]);
    expect(await client.callTool({ name: "secret" })).toEqual({ content: [{ type: "text", text: "secret ran 1" }] });

    registry.tickTTL();
    expect(await names()).toEqual(["visible"]);
    expect((await client.callTool({ name: "secret" })).isError).toBe(true);
    expect(runs).toBe(1);
  });

  it("lists nothing for an empty registry", async () => {
    const { client } = await connect(new ToolRegistry());
    expect((await client.listTools()).tools).toEqual([]);
  });
});

describe("createMcpServer: tools/list in pages", () => {
  const many = (count: number) =>
    registryWith(...Array.from({ length: count }, (_, index) => tool(`t${String(index).padStart(3, "0")}`, () => "")));

  it("lists 250 tools in pages of 100: each nextCursor leads to the next page, every tool once, in order", async () => {
    const { client } = await connect(many(250));
    const pages: string[][] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? undefined : { cursor });
      pages.push(page.tools.map((t) => t.name));
      cursor = page.nextCursor;
    } while (cursor !== undefined && pages.length < 10);
    expect(pages.map((page) => page.length)).toEqual([100, 100, 50]);
    expect(pages.flat()).toEqual(Array.from({ length: 250 }, (_, index) => `t${String(index).padStart(3, "0")}`));
  });

  it("pageSize sets the page; a registry change between pages neither repeats nor skips a tool that stays", async () => {
    const registry = many(5);
    const { client } = await connect(registry, { pageSize: 2 });
    const first = await client.listTools();
    expect(first.tools.map((t) => t.name)).toEqual(["t000", "t001"]);
    registry.unregister("t001");
    registry.register(tool("t0005", () => ""));
    const second = await client.listTools({ cursor: first.nextCursor as string });
    expect(second.tools.map((t) => t.name)).toEqual(["t002", "t003"]);
    const last = await client.listTools({ cursor: second.nextCursor as string });
    expect(last.tools.map((t) => t.name)).toEqual(["t004"]);
    expect(last.nextCursor).toBeUndefined();
  });

  /** What listing with `cursor` is answered: a JSON-RPC error is its code and message. */
  const listWith = (client: Client, cursor: string) =>
    client.listTools({ cursor }).then(
      (page) => page.tools.map((t) => t.name),
      (error: unknown) => {
        expect(error).toBeInstanceOf(McpError);
        const { code, message } = error as McpError;
        return `${code} ${message.slice(message.indexOf("invalid cursor"))}`;
      },
    );
  const INVALID = `${ErrorCode.InvalidParams} invalid cursor: send back the nextCursor of the previous page`;

  it.each([
    ["not a tool name", "../../etc"],
    ["too long", "x".repeat(65)],
    ["empty", ""],
  ])("a cursor that is %s is invalid params (-32602)", async (_case, cursor) => {
    const { client } = await connect(many(3));
    expect(await listWith(client, cursor)).toBe(INVALID);
  });

  it("a cursor the server did not give is invalid params: a tool's name, a made-up one, a tampered one", async () => {
    const { client } = await connect(many(250));
    const { nextCursor } = await client.listTools();
    expect(nextCursor).toEqual(expect.any(String));
    // Cursors were once the last name of the page: any name-shaped text was taken.
    for (const forged of ["t150", "zzz", "a", "x".repeat(64), `${nextCursor}x`, (nextCursor as string).slice(1)]) {
      expect(await listWith(client, forged)).toBe(INVALID);
    }
    // The same name signed by someone else: the first part names t099, the MAC is made up.
    const [name] = (nextCursor as string).split(".");
    expect(await listWith(client, `${name}.${"A".repeat(22)}`)).toBe(INVALID);
    expect(await listWith(client, `${Buffer.from("t199").toString("base64url")}.${nextCursor?.split(".")[1]}`)).toBe(
      INVALID,
    );
    expect((await listWith(client, nextCursor as string))[0]).toBe("t100");
  });

  it("a cursor is valid on its connection only: another client's is invalid params", async () => {
    const registry = many(250);
    const first = await connect(registry);
    const second = await connect(registry);
    const { nextCursor } = await first.client.listTools();
    expect(await listWith(second.client, nextCursor as string)).toBe(INVALID);
    expect((await listWith(first.client, nextCursor as string))[0]).toBe("t100");
    // Still valid later on its connection (no state is kept per cursor).
    await first.client.listTools();
    expect((await listWith(first.client, nextCursor as string))[0]).toBe("t100");
  });

  it("reads the registry's cached definitions: a listing copies no schema (no getDefinitions per request)", async () => {
    const registry = many(3);
    const copies = vi.spyOn(registry, "getDefinitions");
    const { client } = await connect(registry);
    for (let request = 0; request < 3; request++) expect((await client.listTools()).tools).toHaveLength(3);
    expect(copies).not.toHaveBeenCalled();
  });
});

describe("createMcpServer: what a client's search finds belongs to its connection", () => {
  /** A registry with a visible tool, a hidden `secret_mail` and the discovery tools. */
  function searchable(ttl = 2) {
    let runs = 0;
    const registry = registryWith(tool("visible", () => "v"));
    registry.registerHidden({ ...tool("secret_mail", () => `sent ${++runs}`), description: "Send a secret email" });
    for (const each of createToolSearchTools(registry, { ttl })) registry.register(each);
    return { registry, runs: () => runs };
  }
  const search = { name: "tool_search_tool_bm25", arguments: { query: "email" } };
  const names = async (client: Client) => (await client.listTools()).tools.map((t) => t.name);
  const text = (result: Awaited<ReturnType<Client["callTool"]>>) =>
    (result.content as Array<{ text: string }>)[0]?.text;

  it("a client's search offers the tool to that client only: other clients, the registry and its runs never see it", async () => {
    const { registry, runs } = searchable();
    const first = await connect(registry);
    const second = await connect(registry);
    expect(text(await first.client.callTool(search))).toMatch(
      /^Found 1 tool, callable directly for the next 2 model calls:/,
    );
    expect(await names(first.client)).toContain("secret_mail");
    expect(await names(second.client)).not.toContain("secret_mail");
    expect(text(await second.client.callTool({ name: "secret_mail" }))).toMatch(/^tool "secret_mail" not found/);
    expect(registry.getDefinitions().map(({ function: f }) => f.name)).not.toContain("secret_mail");
    expect(text(await first.client.callTool({ name: "secret_mail" }))).toBe("sent 1");
    expect(runs()).toBe(1);
  });

  it("the found tool runs only once the client listed it, for its next ttl calls; the client is told when its list changes", async () => {
    const { registry, runs } = searchable(3);
    const { client } = await connect(registry);
    const changes: string[] = [];
    client.setNotificationHandler(ToolListChangedNotificationSchema, (n) => void changes.push(n.method));
    await client.callTool(search); // call 1: offers secret_mail to calls 2 to 4
    await client.ping();
    expect(changes).toHaveLength(1);
    // Called before the client listed it: its model has not seen the tool (nor is it named as available).
    expect(text(await client.callTool({ name: "secret_mail" }))).toBe(
      'tool "secret_mail" not found. Available tools: tool_search_tool_bm25, tool_search_tool_regex, visible.',
    ); // call 2
    expect(await names(client)).toContain("secret_mail");
    expect(text(await client.callTool({ name: "nope" }))).toMatch(/Available tools: secret_mail, tool_search/); // call 3
    expect(text(await client.callTool({ name: "secret_mail" }))).toBe("sent 1"); // call 4
    await client.ping();
    expect(changes).toHaveLength(2); // its window ended: the client lists again
    expect(await names(client)).not.toContain("secret_mail");
    expect(text(await client.callTool({ name: "secret_mail" }))).toMatch(/^tool "secret_mail" not found/);
    expect(runs()).toBe(1);
  });

  it("a registry whose execute is overridden keeps receiving every call (its searches then promote nothing)", async () => {
    const seen: string[] = [];
    class Audited extends ToolRegistry {
      override execute(...args: Parameters<ToolRegistry["execute"]>) {
        seen.push(args[0]);
        return super.execute(...args);
      }
    }
    const registry = new Audited();
    registry.register(tool("visible", () => "v"));
    registry.registerHidden({ ...tool("secret_mail", () => "sent"), description: "Send a secret email" });
    for (const each of createToolSearchTools(registry)) registry.register(each);
    const { client } = await connect(registry);
    expect(text(await client.callTool({ name: "visible" }))).toBe("v");
    expect(text(await client.callTool(search))).toMatch(/^Found 1 tool \(not callable here/);
    expect(seen).toEqual(["visible", "tool_search_tool_bm25"]);
  });

  it("a reconnection is a new session: what the connection before found is gone", async () => {
    const { registry } = searchable();
    const { server, client } = await connect(registry);
    await client.callTool(search);
    expect(await names(client)).toContain("secret_mail");
    await client.close();
    const again = new Client({ name: "again", version: "0.0.1" });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    await server.connect(serverTransport);
    await again.connect(clientTransport);
    closers.push(() => again.close());
    expect(await names(again)).not.toContain("secret_mail");
    expect(text(await again.callTool({ name: "secret_mail" }))).toMatch(/^tool "secret_mail" not found/);
  });
});

describe("createMcpServer: tools/call", () => {
  it("runs the tool through the registry with its arguments and answers with forLLM as text", async () => {
    const calls: unknown[] = [];
    const registry = registryWith(
      tool("echo", (args) => {
        calls.push(args);
        return `got ${JSON.stringify(args)}`;
      }),
    );
    const { client } = await connect(registry);
    const result = await client.callTool({ name: "echo", arguments: { a: 1, nested: { b: [true] } } });
    expect(result).toEqual({ content: [{ type: "text", text: 'got {"a":1,"nested":{"b":[true]}}' }] });
    expect(calls).toEqual([{ a: 1, nested: { b: [true] } }]);
  });

  it("calls without arguments with {}", async () => {
    const calls: unknown[] = [];
    const { client } = await connect(
      registryWith(
        tool("noargs", (args) => {
          calls.push(args);
          return "ok";
        }),
      ),
    );
    expect((await client.callTool({ name: "noargs" })).content).toEqual([{ type: "text", text: "ok" }]);
    expect(calls).toEqual([{}]);
  });

  const withEverything = new ToolResult({
    forLLM: "for the model",
    forUser: "for the user only",
    silent: false,
    responseHandled: true,
    data: { secret: "for your code" },
  });
  it.each([
    ["a plain string", () => "plain", { content: [{ type: "text", text: "plain" }] }],
    ["newToolResult", () => newToolResult("new"), { content: [{ type: "text", text: "new" }] }],
    ["silentResult", () => silentResult("quiet"), { content: [{ type: "text", text: "quiet" }] }],
    ["userResult (forUser stays out)", () => userResult("both"), { content: [{ type: "text", text: "both" }] }],
    ["forUser, data and responseHandled", () => withEverything, { content: [{ type: "text", text: "for the model" }] }],
    ["an empty forLLM", () => newToolResult(""), { content: [{ type: "text", text: "" }] }],
    [
      "an error result",
      () => errorResult("disk full"),
      { content: [{ type: "text", text: "disk full" }], isError: true },
    ],
    [
      "an error result with an empty forLLM: the error's message (contentForLLM)",
      () => errorResult("").withError(new Error("from err")),
      { content: [{ type: "text", text: "from err" }], isError: true },
    ],
    [
      "an error result with forUser and data",
      () => new ToolResult({ forLLM: "bad", forUser: "user text", isError: true, data: { x: 1 } }),
      { content: [{ type: "text", text: "bad" }], isError: true },
    ],
  ])(
    "%s: only the model's text and isError cross (no forUser, data or structuredContent)",
    async (_case, execute, expected) => {
      const { client } = await connect(registryWith(tool("t", execute)));
      expect(await client.callTool({ name: "t" })).toEqual(expected);
    },
  );

  it.each([
    [
      "a throw",
      tool("t", () => {
        throw new Error("boom");
      }),
      {},
      /^tool "t" failed: boom$/,
    ],
    [
      "invalid arguments",
      tool("t", () => "ran", { type: "object", properties: { n: { type: "integer" } }, required: ["n"] }),
      { n: "x" },
      /^invalid arguments for tool "t": n: /,
    ],
    [
      "a zod tool's invalid arguments",
      defineTool({ name: "t", description: "d", parameters: z.object({ n: z.number() }), execute: () => "ran" }),
      { n: "x" },
      /^invalid arguments for tool "t": n: /,
    ],
    [
      "a tool that returns nothing",
      tool("t", () => undefined as unknown as string),
      {},
      /^tool "t" returned no result$/,
    ],
  ])("%s is an isError result the model reads, not a JSON-RPC error", async (_case, t, args, text) => {
    const { client } = await connect(registryWith(t));
    const result = await client.callTool({ name: "t", arguments: args });
    expect(result).toEqual({ content: [{ type: "text", text: expect.stringMatching(text) }], isError: true });
  });

  it.each(["missing", "__proto__", "constructor", "toString", "hasOwnProperty"])(
    "an unknown tool %j is an isError result naming the available tools",
    async (name) => {
      const { client } = await connect(registryWith(tool("real", () => "")));
      const result = await client.callTool({ name });
      expect(result).toEqual({
        content: [{ type: "text", text: `tool ${JSON.stringify(name)} not found. Available tools: real.` }],
        isError: true,
      });
    },
  );

  it("a huge tool name gets a bounded error result", async () => {
    const { client } = await connect(registryWith(tool("real", () => "")));
    const name = "x".repeat(1_000_000);
    const result = await client.callTool({ name });
    expect(result.isError).toBe(true);
    const text = (result.content as Array<{ text: string }>)[0]?.text ?? "";
    expect(text.length).toBeLessThan(200);
    expect(text).toMatchInlineSnapshot(
      `"tool "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…" not found. Available tools: real."`,
    );
  });

  it("a top-level __proto__ key reaches the tool as an own data property, as in a direct call", async () => {
    const seen: Array<{ keys: string[]; proto: unknown }> = [];
    const open = tool("open", (args) => {
      seen.push({ keys: Object.keys(args), proto: Object.getPrototypeOf(args) });
      return "ok";
    });
    const strict = tool("strict", () => "ran", { type: "object", properties: { a: {} }, additionalProperties: false });
    const { client } = await connect(registryWith(open, strict));
    const args = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;

    expect((await client.callTool({ name: "open", arguments: args })).content).toEqual([{ type: "text", text: "ok" }]);
    expect(seen).toEqual([{ keys: ["__proto__", "a"], proto: Object.prototype }]);
    const refused = await client.callTool({ name: "strict", arguments: args });
    expect(refused.isError).toBe(true);
    // The validator's wording is core's (test/tool-registry.test.ts): here, that the key reached it.
    expect(refused.content).toEqual([
      { type: "text", text: expect.stringMatching(/^invalid arguments for tool "strict": .*__proto__/) },
    ]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each([
    ["an array", [1, 2]],
    ["a string", "text"],
    ["a number", 5],
    ["null", null],
  ])(
    "arguments that are %s: the SDK refuses the request as invalid params; the tool never runs, the server goes on",
    async (_case, args) => {
      let ran = 0;
      const { client } = await connect(registryWith(tool("t", () => `ran ${++ran}`)));
      const request = { method: "tools/call", params: { name: "t", arguments: args } } as const;
      const error = await client.request(request as never, CallToolResultSchema).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(McpError);
      expect((error as McpError).code).toBe(ErrorCode.InvalidParams);
      expect((error as McpError).message).toMatch(/^MCP error -32602: .*Invalid tools\/call request: .*"arguments"/s);
      expect(ran).toBe(0);
      expect((await client.callTool({ name: "t" })).content).toEqual([{ type: "text", text: "ran 1" }]);
    },
  );

  it("a registry-like object that rejects gives an isError result, never a JSON-RPC error", async () => {
    const broken = {
      getDefinitions: () => [],
      execute: () => Promise.reject(new Error("registry broke")),
    } as unknown as ToolRegistry;
    const { client } = await connect(broken);
    expect(await client.callTool({ name: "x" })).toEqual({
      content: [{ type: "text", text: "registry broke" }],
      isError: true,
    });
  });

  it.each([
    ["a number", 42],
    ["null", null],
    ["an object", { toString: "x" }],
    ["missing", undefined],
  ])(
    "a name that is %s: the request is refused as invalid params (-32602), not an internal error; no tool runs",
    async (_case, name) => {
      let ran = 0;
      const { client } = await connect(registryWith(tool("t", () => `ran ${++ran}`)));
      const params = name === undefined ? {} : { name };
      const request = { method: "tools/call", params } as const;
      const error = await client.request(request as never, CallToolResultSchema).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(McpError);
      expect((error as McpError).code).toBe(ErrorCode.InvalidParams);
      expect((error as McpError).message).toMatch(/^MCP error -32602: .*Invalid tools\/call request: .*"name"/s);
      expect(ran).toBe(0);
      expect((await client.callTool({ name: "t" })).content).toEqual([{ type: "text", text: "ran 1" }]);
    },
  );

  it("gives each call its own context.toolCallId, unique in the connection", async () => {
    const ids: unknown[] = [];
    const { client } = await connect(
      registryWith(
        tool("t", (_a, context) => {
          ids.push(context.toolCallId);
          return "";
        }),
      ),
    );
    await client.callTool({ name: "t" });
    await client.callTool({ name: "t" });
    expect(ids).toHaveLength(2);
    expect(ids.every((id) => typeof id === "string" && /^mcp-[0-9a-f-]{36}-\d+$/.test(id))).toBe(true);
    expect(ids[0]).not.toBe(ids[1]);
  });

  it("gives calls of two connections with the same JSON-RPC id different toolCallIds (a queued tool joins by id)", async () => {
    const ids: unknown[] = [];
    const registry = registryWith(
      tool("t", (_a, context) => {
        ids.push(context.toolCallId);
        return "";
      }),
    );
    // Two clients of one registry: each numbers its requests from the same start.
    const first = await connect(registry);
    const second = await connect(registry);
    await first.client.callTool({ name: "t" });
    await second.client.callTool({ name: "t" });
    // The same server, reconnected: a new connection, again numbered from the start.
    await first.server.close();
    const again = new Client({ name: "again", version: "0.0.1" });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    await first.server.connect(serverTransport);
    await again.connect(clientTransport);
    closers.push(() => again.close());
    await again.callTool({ name: "t" });
    expect(ids).toHaveLength(3);
    expect(new Set(ids).size).toBe(3);
  });
});

describe("createMcpServer: arguments as the client sent them (fast-check)", () => {
  it("any JSON object of arguments, __proto__ keys included, reaches the tool as in a direct call", async () => {
    const echo = tool("echo", (args) => JSON.stringify(args));
    const registry = registryWith(echo);
    const { client } = await connect(registry);
    const key = fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom("__proto__", "constructor", "toString"));
    // Object.fromEntries defines own data properties: a "__proto__" entry stays a key.
    const args = fc.array(fc.tuple(key, fc.jsonValue({ maxDepth: 3 })), { maxLength: 6 }).map(Object.fromEntries);
    await fc.assert(
      fc.asyncProperty(args, async (value: Record<string, unknown>) => {
        const direct = await registry.execute("echo", value);
        const viaMcp = await client.callTool({ name: "echo", arguments: value });
        expect(viaMcp).toEqual({ content: [{ type: "text", text: direct.forLLM }] });
      }),
      { numRuns: 100 },
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("createMcpServer: options (a client cannot run unbounded calls)", { timeout: 10_000 }, () => {
  /** A tool whose calls wait until released; counts how many run at once. */
  function gate() {
    let running = 0;
    let most = 0;
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const gated = tool("gated", async () => {
      running++;
      most = Math.max(most, running);
      await released;
      running--;
      return newToolResult("done");
    });
    return { gated, release, running: () => running, most: () => most };
  }

  it("runs at most maxConcurrency calls at once; the others wait for a slot and all complete", async () => {
    const { gated, release, running, most } = gate();
    const { client } = await connect(registryWith(gated), { maxConcurrency: 2 });
    const calls = Array.from({ length: 5 }, () => client.callTool({ name: "gated" }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(running()).toBe(2);
    release();
    const results = await Promise.all(calls);
    expect(results.map((result) => result.isError ?? false)).toEqual([false, false, false, false, false]);
    expect(most()).toBe(2);
  });

  it("a call cancelled while it waits for a slot never runs", async () => {
    const { gated, release, running } = gate();
    let started = 0;
    const counted = tool("counted", () => {
      started++;
      return newToolResult("ran");
    });
    const { client } = await connect(registryWith(gated, counted), { maxConcurrency: 1 });
    const first = client.callTool({ name: "gated" });
    await vi.waitFor(() => expect(running()).toBe(1));
    const controller = new AbortController();
    const waiting = client.callTool({ name: "counted" }, undefined, { signal: controller.signal });
    controller.abort(new Error("not any more"));
    await expect(waiting).rejects.toThrow("not any more");
    release();
    await first;
    expect(started).toBe(0);
  });

  it("beyond 1,000 waiting calls, a call is answered busy at once (isError), and the server keeps serving", async () => {
    const { gated, release } = gate();
    const { client } = await connect(registryWith(gated), { maxConcurrency: 1 });
    const calls = Array.from({ length: 1_001 }, () =>
      client.callTool({ name: "gated" }, undefined, { timeout: 9_000 }),
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    const busy = await client.callTool({ name: "gated" });
    expect(busy).toMatchObject({
      isError: true,
      content: [{ type: "text", text: "MCP server busy: 1 calls running and 1000 waiting; try again later" }],
    });
    release();
    const results = await Promise.all(calls);
    expect(results.every((result) => result.isError !== true)).toBe(true);
  });

  it("timeoutMs answers a call still running with a timeout error and aborts its tool", async () => {
    const waiting = waitingTool();
    const { client } = await connect(registryWith(waiting.tool), { timeoutMs: 50 });
    const result = await client.callTool({ name: "wait" });
    expect(result).toMatchObject({ isError: true });
    expect(JSON.stringify(result.content)).toMatch(/timed out|did not finish|50 ms/);
    expect((await waiting.seen).signal.aborted).toBe(true);
  });

  it.each([
    ["options that are not an object", "fast"],
    ["a maxConcurrency of 0", { maxConcurrency: 0 }],
    ["a timeoutMs that is negative", { timeoutMs: -1 }],
  ])("%s is a TypeError", (_case, options) => {
    expect(() => createMcpServer(new ToolRegistry(), INFO, options as McpServerOptions)).toThrow(TypeError);
  });
});

describe("createMcpServer: cancellation", { timeout: 5_000 }, () => {
  it("the client's abort (notifications/cancelled) aborts the tool's context.signal", async () => {
    const waiting = waitingTool();
    const { client } = await connect(registryWith(waiting.tool));
    const controller = new AbortController();
    const call = client.callTool({ name: "wait" }, undefined, { signal: controller.signal });
    await waiting.start;
    controller.abort(new Error("user gave up"));
    await expect(call).rejects.toThrow("user gave up");
    const context = await waiting.seen;
    expect(context.signal.aborted).toBe(true);
  });

  it("the client's request timeout aborts the tool", async () => {
    const waiting = waitingTool();
    const { client } = await connect(registryWith(waiting.tool));
    const call = client.callTool({ name: "wait" }, undefined, { timeout: 50 });
    await expect(call).rejects.toMatchObject({ code: ErrorCode.RequestTimeout });
    expect((await waiting.seen).signal.aborted).toBe(true);
  });

  it("a connection closed mid-call aborts the tool; nothing rejects unhandled", async () => {
    const waiting = waitingTool();
    const { client } = await connect(registryWith(waiting.tool));
    const call = client.callTool({ name: "wait" }).catch((e: unknown) => e);
    await waiting.start;
    await client.close();
    expect((await waiting.seen).signal.aborted).toBe(true);
    expect(await call).toBeInstanceOf(Error);
  });
});

describe("createMcpServer: progress", () => {
  it("forwards reportProgress as notifications/progress when the client sent a progressToken, only when it increases", async () => {
    const reporting = tool("report", (_args, context) => {
      context.reportProgress(0.25, "a quarter");
      context.reportProgress(0.25, "still a quarter"); // not an increase
      context.reportProgress(undefined, "no number"); // not an increase
      context.reportProgress(0.1); // lower
      context.reportProgress(7); // clamped to 1
      return "done";
    });
    const { client } = await connect(registryWith(reporting));
    const updates: Progress[] = [];
    const result = await client.callTool({ name: "report" }, undefined, { onprogress: (p) => void updates.push(p) });
    expect(result.content).toEqual([{ type: "text", text: "done" }]);
    expect(updates).toEqual([
      { progress: 0.25, total: 1, message: "a quarter" },
      { progress: 1, total: 1 },
    ]);
  });

  it("sends no progress notification to a client that sent no progressToken", async () => {
    const reporting = tool("report", (_args, context) => {
      context.reportProgress(0.5, "half");
      return "done";
    });
    const { client } = await connect(registryWith(reporting));
    const errors: unknown[] = [];
    // The v1 client reports a progress notification with a token it does not know through onerror.
    client.onerror = (error) => void errors.push(error);
    expect((await client.callTool({ name: "report" })).content).toEqual([{ type: "text", text: "done" }]);
    await client.ping();
    expect(errors).toEqual([]);
  });
});

describe("createMcpServer: over stdio, to a child process", () => {
  it("lists and calls the tools of a registry served by another process", async () => {
    const script = fileURLToPath(new URL("../helpers/mcp-registry-server.ts", import.meta.url));
    const tsx = fileURLToPath(new URL("../../node_modules/.bin/tsx", import.meta.url));
    const transport = new StdioClientTransport({ command: tsx, args: [script], stderr: "pipe" });
    const client = new Client({ name: "stdio-client", version: "0.0.1" });
    await client.connect(transport);
    closers.push(() => client.close());

    expect(client.getServerVersion()).toMatchObject({ name: "registry-over-stdio", version: "0.1.0" });
    const { tools } = await client.listTools();
    expect(tools.map((t) => [t.name, t.description])).toEqual([
      ["add", "Adds two integers"],
      ["fail", "Always fails"],
    ]);
    expect(await client.callTool({ name: "add", arguments: { a: 2, b: 40 } })).toEqual({
      content: [{ type: "text", text: "42" }],
    });
    const args = JSON.parse('{"a": 1, "b": 2, "__proto__": {"x": 1}}') as Record<string, unknown>;
    expect(await client.callTool({ name: "add", arguments: args })).toEqual({
      content: [{ type: "text", text: expect.stringMatching(/^invalid arguments for tool "add": .*__proto__/) }],
      isError: true,
    });
    expect(await client.callTool({ name: "fail" })).toEqual({
      content: [{ type: "text", text: "always fails" }],
      isError: true,
    });
    expect((await client.callTool({ name: "nope" })).isError).toBe(true);
  }, 30_000);
});

describe("createMcpServer: a result's parts", () => {
  const png = TINY_IMAGES.png;
  const parts: ContentPart[] = [
    { type: "image", mediaType: png.mediaType, data: png.data },
    { type: "image", url: "https://example.com/charts/q3.png?v=2", mediaType: "image/png" },
    { type: "file", mediaType: "audio/wav", data: "UklGRg==" },
    { type: "file", mediaType: "application/pdf", data: "JVBERi0=", filename: "Q3 report.pdf" },
    { type: "file", mediaType: "text/csv", data: "YSxiCg==" },
    { type: "text", text: "a text part" },
  ];

  it("come after the text as MCP image, resource_link, audio, embedded resource and text content", async () => {
    const { client } = await connect(registryWith(tool("chart", () => mediaResult("The chart:", parts))));
    // callTool checks the answer against the SDK's CallToolResult schema (base64 blobs included).
    const result = await client.callTool({ name: "chart" });
    expect(result).toEqual({
      content: [
        { type: "text", text: "The chart:" },
        { type: "image", data: png.data, mimeType: "image/png" },
        { type: "resource_link", uri: "https://example.com/charts/q3.png?v=2", name: "q3.png", mimeType: "image/png" },
        { type: "audio", data: "UklGRg==", mimeType: "audio/wav" },
        {
          type: "resource",
          resource: { uri: "toolloop:///parts/3/Q3%20report.pdf", mimeType: "application/pdf", blob: "JVBERi0=" },
        },
        { type: "resource", resource: { uri: "toolloop:///parts/4/", mimeType: "text/csv", blob: "YSxiCg==" } },
        { type: "text", text: "a text part" },
      ],
    });
  });

  it("cross with an error result too", async () => {
    const failed = new ToolResult({ forLLM: "render failed", isError: true, parts: parts.slice(0, 1) });
    const { client } = await connect(registryWith(tool("render", () => failed)));
    expect(await client.callTool({ name: "render" })).toEqual({
      content: [
        { type: "text", text: "render failed" },
        { type: "image", data: png.data, mimeType: "image/png" },
      ],
      isError: true,
    });
  });

  it("parts a tool built by hand that are no content parts are not sent: the registry refuses the result, and the client reads why", async () => {
    const bad = new ToolResult({
      forLLM: "here",
      parts: [{ type: "image", mediaType: "image/png\r\nX: 1", data: png.data }],
    });
    const { client } = await connect(registryWith(tool("bad", () => bad)));
    // The registry checks a result's parts when its call ends (to-mcp-content.test.ts covers the
    // server's own check, for a registry that does not).
    expect(await client.callTool({ name: "bad" })).toEqual({
      content: [
        {
          type: "text",
          text: 'tool "bad" returned an invalid result: parts[0] an image\'s mediaType must be image/png, image/jpeg, image/gif or image/webp',
        },
      ],
      isError: true,
    });
  });
});
