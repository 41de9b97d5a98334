import { afterEach, describe, expect, it } from "vitest";
import { isToolExecutionError } from "../../src/errors.js";
import { createServerTool } from "../../src/mcp/call-server-tool.js";
import { createToolContext } from "../../src/testing/index.js";
import type { ToolResult } from "../../src/tool-result.js";
import { type ScriptedServer, startScriptedServer } from "../helpers/mcp-servers.js";

const clients: ScriptedServer["client"][] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
});

async function serverTool(callTool: NonNullable<Parameters<typeof startScriptedServer>[0]["callTool"]>) {
  const server = await startScriptedServer({ callTool });
  clients.push(server.client);
  const settings = { client: server.client, serverName: "Math", timeout: 60_000 };
  const serverSide = { name: "add", description: "[MCP:Math] Adds", parameters: { type: "object" }, fingerprint: "" };
  return { server, tool: createServerTool(settings, "mcp_math_add", serverSide) };
}

const code = (result: ToolResult) => (isToolExecutionError(result.err) ? result.err.code : undefined);

describe("createServerTool", () => {
  it("is a frozen tool with the registry name, the description and the schema", async () => {
    const { tool } = await serverTool(() => ({ result: { content: [] } }));
    expect(Object.isFrozen(tool)).toBe(true);
    expect(tool).toMatchObject({
      name: "mcp_math_add",
      description: "[MCP:Math] Adds",
      parameters: { type: "object" },
    });
  });

  it("calls the server's tool by its own name with the arguments, and reads the content as text", async () => {
    const { server, tool } = await serverTool((params) => ({
      result: { content: [{ type: "text", text: `sum of ${JSON.stringify(params?.arguments)}` }] },
    }));
    const result = (await tool.execute({ a: 1, b: 2 }, createToolContext())) as ToolResult;
    expect(result.forLLM).toBe('sum of {"a":1,"b":2}');
    expect(result.isError).toBe(false);
    expect(server.requests.at(-1)).toMatchObject({
      method: "tools/call",
      params: { name: "add", arguments: { a: 1, b: 2 } },
    });
  });

  it("answers a JSON-RPC error with an error result naming the server (tool_failed), bounded", async () => {
    const { tool } = await serverTool(() => ({ error: { code: -32603, message: "x".repeat(5_000) } }));
    const result = (await tool.execute({}, createToolContext())) as ToolResult;
    expect(code(result)).toBe("tool_failed");
    expect(result.forLLM).toMatch(/^MCP server "Math" failed to run tool "add": MCP error -32603: x+/);
    expect(result.forLLM.length).toBeLessThan(1_200);
  });

  it("answers a call whose signal aborts with an aborted error result, at once", async () => {
    const { tool } = await serverTool(() => "never");
    const controller = new AbortController();
    const running = tool.execute({}, createToolContext({ signal: controller.signal })) as Promise<ToolResult>;
    controller.abort();
    const result = await running;
    expect(code(result)).toBe("aborted");
    expect(result.forLLM).toContain('was aborted before MCP server "Math" answered');
  });
});
