// A registry served over stdio by createMcpServer, for test/mcp/create-mcp-server.test.ts (run with tsx).
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createMcpServer } from "../../src/mcp/index.js";
import { ToolRegistry } from "../../src/tool-registry.js";
import { errorResult } from "../../src/tool-result.js";

const registry = new ToolRegistry();
registry.register({
  name: "add",
  description: "Adds two integers",
  parameters: {
    type: "object",
    properties: { a: { type: "integer" }, b: { type: "integer" } },
    required: ["a", "b"],
    additionalProperties: false,
  },
  execute: ({ a, b }) => String((a as number) + (b as number)),
});
registry.register({
  name: "fail",
  description: "Always fails",
  parameters: { type: "object" },
  execute: () => errorResult("always fails"),
});

await createMcpServer(registry, { name: "registry-over-stdio", version: "0.1.0" }).connect(new StdioServerTransport());
