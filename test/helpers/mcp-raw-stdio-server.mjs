// A raw MCP server over stdio, without the SDK (whose server would refuse to send what a broken
// server sends): newline-delimited JSON-RPC on stdin/stdout, answering from the JSON script given
// as its only argument — `{ "tools": [...], "calls": { "<tool>": { "result": … } | { "error": … } } }`.
// Started by `startRawStdioServer` in mcp-servers.ts; plain JavaScript, so plain `node` runs it.
import { createInterface } from "node:readline";

const script = JSON.parse(process.argv[2] ?? "{}");

function send(message) {
  process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
}

function answer(method, params) {
  switch (method) {
    case "initialize":
      return {
        result: {
          protocolVersion: params?.protocolVersion ?? "2025-06-18",
          capabilities: { tools: { listChanged: true } },
          serverInfo: { name: "raw-stdio", version: "0.0.0" },
        },
      };
    case "ping":
      return { result: {} };
    case "tools/list":
      return { result: { tools: script.tools ?? [] } };
    case "tools/call":
      return script.calls?.[params?.name] ?? { error: { code: -32602, message: `Unknown tool: ${params?.name}` } };
    default:
      return { error: { code: -32601, message: `Method not found: ${method}` } };
  }
}

createInterface({ input: process.stdin }).on("line", (line) => {
  if (line.trim() === "") return;
  const message = JSON.parse(line);
  // Notifications (initialized, cancelled) get no answer.
  if (message.id === undefined || typeof message.method !== "string") return;
  send({ id: message.id, ...answer(message.method, message.params) });
});
