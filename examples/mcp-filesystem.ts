/**
 * An MCP server's tools in a scripted loop: the official filesystem server
 * (`@modelcontextprotocol/server-filesystem`) runs as a child process over stdio, allowed one
 * temporary directory; `registerMcpTools` imports its tools as `mcp_fs_<tool>`, and the scripted
 * "model" writes a file, lists the directory, reads the file back, and is refused outside the
 * directory. No API key, no network. Run: npx tsx examples/mcp-filesystem.ts
 */
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { contentText, runToolLoop, ToolRegistry } from "toolloop";
import { registerMcpTools } from "toolloop/mcp";
import { ScriptedProvider, textResponse, toolCallResponse } from "toolloop/testing";

// The server compares real paths (on some systems the temporary folder is a symlink).
const dir = await realpath(await mkdtemp(join(tmpdir(), "toolloop-mcp-example-")));
const client = new Client({ name: "mcp-filesystem-example", version: "1.0.0" });
try {
  // The installed server, run by this Node (not `npx`, which could download it). Its environment
  // is PATH only (the SDK adds a short safe list), never this process's secrets; its stderr
  // greeting is not ours to print. The client declares no `roots`, so the server keeps `dir`.
  const server = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-filesystem/dist/index.js");
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [server, dir],
      env: { PATH: process.env.PATH ?? "" },
      stderr: "ignore",
    }),
  );

  const registry = new ToolRegistry();
  const fs = await registerMcpTools(registry, client, { serverName: "fs", timeoutMs: 10_000 });
  console.log(`imported ${fs.names.length} tools: ${fs.names.join(", ")}`);

  const provider = new ScriptedProvider([
    toolCallResponse(
      { name: "mcp_fs_write_file", arguments: { path: join(dir, "todo.md"), content: "- try toolloop/mcp\n" } },
      "I'll write the list first.",
    ),
    toolCallResponse([
      { name: "mcp_fs_list_directory", arguments: { path: dir } },
      { name: "mcp_fs_read_text_file", arguments: { path: join(dir, "todo.md") } },
    ]),
    toolCallResponse({ name: "mcp_fs_read_text_file", arguments: { path: "/etc/passwd" } }),
    textResponse("todo.md holds your list; I may not read outside the folder."),
  ]);

  const result = await runToolLoop({ provider, tools: registry, maxIterations: 6 }, [
    { role: "user", content: "Write a todo list with one item, then show me the folder." },
  ]);

  // The conversation, with the temporary folder's path shortened.
  const show = (text: string) => text.replaceAll(dir, "<dir>").trimEnd().replaceAll("\n", "\n    ");
  for (const message of result.messages) {
    if (message.role === "tool") {
      console.log(`tool ${message.toolName}: ${message.isError ? "error: " : ""}${show(contentText(message.content))}`);
      continue;
    }
    const calls = (message.toolCalls ?? []).map((call) => `${call.name}(${show(JSON.stringify(call.arguments))})`);
    const parts = [show(contentText(message.content)), calls.length > 0 ? `→ calls ${calls.join(", ")}` : ""];
    console.log(`${message.role}: ${parts.filter((part) => part !== "").join(" ")}`);
  }
  console.log(`${result.stopReason} after ${result.iterations} model calls`);
  await fs.close();
} finally {
  await client.close();
  await rm(dir, { recursive: true, force: true });
}
