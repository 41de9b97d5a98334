// Tools the loop and call tests (test/run-tool-loop.test.ts, test/execute-tool-call.test.ts …) build their runs from.
import { type Tool, ToolRegistry, ToolResult } from "../../src/index.js";

/** A tool named `name` that takes any object and runs `execute`; `extra` adds or overrides fields. */
export function tool(name: string, execute: Tool["execute"], extra: Record<string, unknown> = {}): Tool {
  return { name, description: `the ${name} tool`, parameters: { type: "object" }, execute, ...extra };
}

/** A registry holding `tools`. */
export function registryWith(...tools: Tool[]): ToolRegistry {
  const registry = new ToolRegistry();
  for (const each of tools) registry.register(each);
  return registry;
}

/** An async tool: its result says it started; `callbacks` keeps each call's per-call callback. */
export function backgroundTool(): {
  background: Tool;
  callbacks: Array<((result: ToolResult) => void | Promise<void>) | undefined>;
} {
  const callbacks: Array<((result: ToolResult) => void | Promise<void>) | undefined> = [];
  const background = tool("background", (_args, context) => {
    callbacks.push(context.asyncCallback);
    return new ToolResult({ forLLM: "started", async: true });
  });
  return { background, callbacks };
}
