import { afterEach, describe, expect, it, vi } from "vitest";
import { resolveLogger } from "../../src/internal/logger.js";
import { listServerTools, readServerTool, type Work } from "../../src/mcp/list-server-tools.js";
import { captureLogger } from "../helpers/capture-logger.js";
import { type ScriptedServer, startScriptedServer, toolList } from "../helpers/mcp-servers.js";

const clients: ScriptedServer["client"][] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const client of clients.splice(0)) await client.close();
});

async function listing(listTools: NonNullable<Parameters<typeof startScriptedServer>[0]["listTools"]>) {
  const server = await startScriptedServer({ listTools });
  clients.push(server.client);
  const { logger, lines } = captureLogger();
  const settings = { client: server.client, serverName: "s", timeout: 60_000, logger: resolveLogger(logger, "test") };
  const work: Work = { ms: 0 };
  return { server, lines, work, list: () => listServerTools(settings, new AbortController().signal, work) };
}

describe("readServerTool", () => {
  it("reads name, [MCP:<server>] description and a plain-JSON copy of the inputSchema", () => {
    const inputSchema = { type: "object", properties: { a: { type: "number" } } };
    const tool = readServerTool({ serverName: "Math" }, { name: "add", description: " Adds ", inputSchema });
    expect(tool).toMatchObject({ name: "add", description: "[MCP:Math] Adds", parameters: inputSchema });
    expect(typeof tool === "string" ? undefined : tool.parameters).not.toBe(inputSchema);
  });

  it("falls back on the title, then the name, for a tool without a description", () => {
    const inputSchema = { type: "object" };
    expect(readServerTool({ serverName: "s" }, { name: "n", title: "T", inputSchema })).toMatchObject({
      description: "[MCP:s] T",
    });
    expect(readServerTool({ serverName: "s" }, { name: "n", inputSchema })).toMatchObject({ description: "[MCP:s] n" });
  });

  it("gives a tool a new fingerprint when its description or schema changes, the same one otherwise", () => {
    const read = (entry: Record<string, unknown>) => {
      const tool = readServerTool({ serverName: "s" }, { name: "n", inputSchema: { type: "object" }, ...entry });
      return typeof tool === "string" ? tool : tool.fingerprint;
    };
    expect(read({})).toBe(read({}));
    expect(read({ description: "other" })).not.toBe(read({}));
    expect(read({ inputSchema: { type: "object", required: ["a"] } })).not.toBe(read({}));
  });

  it.each([
    ["not a tool", 42, /^it is not an MCP tool/],
    ["an inputSchema of type array", { name: "n", inputSchema: { type: "array" } }, /inputSchema\.type/],
    [
      "a schema over 100,000 characters",
      { name: "n", inputSchema: { type: "object", description: "x".repeat(100_001) } },
      /^its inputSchema is \d+ characters of JSON \(at most 100000\)$/,
    ],
  ])("says why it cannot import %s", (_, entry, reason) => {
    expect(readServerTool({ serverName: "s" }, entry)).toMatch(reason);
  });
});

describe("listServerTools", () => {
  it("follows cursors to the last page", async () => {
    const { list } = await listing((params) => {
      const page = Number(params?.cursor ?? 0);
      const tools = [{ name: `t${page}`, inputSchema: { type: "object" } }];
      return { result: page < 2 ? { tools, nextCursor: String(page + 1) } : { tools } };
    });
    expect((await list()).map((tool) => tool.name)).toEqual(["t0", "t1", "t2"]);
  });

  it("skips a tool listed twice and a malformed entry, with a warning each", async () => {
    const { list, lines } = await listing(() => toolList([{ name: "a" }, { name: "a" }, { name: "" }]));
    expect((await list()).map((tool) => tool.name)).toEqual(["a"]);
    expect(lines.map((line) => line.msg)).toEqual(["MCP tool skipped: listed twice", "MCP tool skipped"]);
  });

  it.each([
    ["no tools array", { result: { tools: "none" } }, "the tools/list answer has no tools array"],
    ["a nextCursor not a string", { result: { tools: [], nextCursor: 3 } }, "nextCursor is not a string"],
  ])("fails the listing for %s", async (_, answer, message) => {
    const { list } = await listing(() => answer);
    await expect(list()).rejects.toThrow(message);
  });

  it("counts reading as work, not the wait for the server's answer", async () => {
    vi.useFakeTimers({ toFake: ["performance"] });
    const { list, work } = await listing(() => {
      vi.advanceTimersByTime(10_000); // the server takes 10 s to answer
      return toolList([{ name: "a" }]);
    });
    await list();
    expect(work.ms).toBe(0);
  });
});
