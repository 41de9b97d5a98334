/**
 * The built-in tools on a scripted agent: in a temporary workspace, the "model" lists the
 * directory, reads a file, edits it and runs `ls` — and is refused when it reaches outside the
 * workspace or tries a destructive command. Runs on the built-in scripted provider (no API key,
 * no network). Run: npx tsx examples/builtin-tools.ts
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { contentText, runToolLoop, ToolRegistry } from "toolloop";
import { registerBuiltinTools } from "toolloop/builtin";
import { ScriptedProvider, textResponse, toolCallResponse } from "toolloop/testing";

const workspace = await mkdtemp(join(tmpdir(), "toolloop-example-"));
try {
  await writeFile(join(workspace, "greeting.txt"), "Hello, world!\n");

  // The file tools and execute_bash, all confined to the workspace.
  const registry = new ToolRegistry();
  registerBuiltinTools(registry, { workspace });

  // The scripted "model": one call per turn, then its answer.
  const provider = new ScriptedProvider([
    toolCallResponse({ name: "list_dir", arguments: { path: "." } }),
    toolCallResponse({ name: "read_file", arguments: { path: "greeting.txt" } }),
    toolCallResponse({
      name: "edit_file",
      arguments: { path: "greeting.txt", old_text: "world", new_text: "toolloop" },
    }),
    toolCallResponse({ name: "execute_bash", arguments: { command: "ls" } }),
    toolCallResponse({ name: "read_file", arguments: { path: "../../../../etc/passwd" } }),
    toolCallResponse({ name: "execute_bash", arguments: { command: "rm -rf ." } }),
    textResponse("greeting.txt now greets toolloop."),
  ]);

  const result = await runToolLoop({ provider, tools: registry, maxIterations: 10 }, [
    { role: "system", content: "You work on the files of the workspace with your tools." },
    { role: "user", content: "Make greeting.txt greet toolloop instead of the world." },
  ]);

  for (const message of result.messages.filter((each) => each.role === "tool")) {
    const text = contentText(message.content).trimEnd().replaceAll("\n", "\n    ");
    console.log(`${message.toolName}: ${message.isError ? "error: " : ""}${text}`);
  }
  console.log(`greeting.txt now reads: ${(await readFile(join(workspace, "greeting.txt"), "utf8")).trim()}`);
  console.log(`${result.stopReason} after ${result.iterations} model calls: ${result.content}`);
} finally {
  await rm(workspace, { recursive: true, force: true });
}
