/**
 * An async tool (Go's AsyncTool): it answers the model at once with `asyncResult(...)`, keeps
 * working in the background, and reports through the callback given to `executeWithContext`.
 * Run: npx tsx examples/async-tool.ts
 */
import {
  type AsyncCallback,
  type AsyncTool,
  asyncResult,
  type ToolContext,
  ToolRegistry,
  type ToolResult,
  userResult,
} from "toolloop";

class BackupTool implements AsyncTool {
  readonly name = "start_backup";
  readonly description = "Start a backup; reports when finished";
  readonly parameters = { type: "object", properties: { target: { type: "string" } }, required: ["target"] };
  #callback: AsyncCallback | undefined;

  setCallback(callback: AsyncCallback): void {
    this.#callback = callback;
  }

  execute(args: Record<string, unknown>, _context: ToolContext): ToolResult {
    // Capture this call's callback now: another call may replace the shared one later.
    const callback = this.#callback;
    setTimeout(() => void callback?.(userResult(`backup of ${args.target} finished: 12 files`)), 50);
    return asyncResult(`backup of ${args.target} started; I will report when it is done`);
  }
}

const registry = new ToolRegistry();
registry.register(new BackupTool());

const finished = new Promise<ToolResult>((resolve) => {
  const onDone: AsyncCallback = (result) => resolve(result);
  registry
    .executeWithContext("start_backup", { target: "/home" }, "cli", "local", onDone)
    .then((started) => console.log(`immediately: ${started.forLLM} (async: ${started.async})`));
});

console.log(`later: ${(await finished).forUser}`);
