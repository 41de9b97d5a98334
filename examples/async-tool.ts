/**
 * An async tool: it answers the model at once with `asyncResult(...)`, keeps working in the
 * background, and reports through the callback given to `executeWithContext`. It reads that
 * callback from `context.asyncCallback` — this call's own, so concurrent callers never get each
 * other's results (picoclaw's `ExecuteAsync(ctx, args, cb)`). Go's `AsyncTool.setCallback` mixin
 * still works, but writes to the shared instance.
 * Run: npx tsx examples/async-tool.ts
 */
import {
  type AsyncCallback,
  asyncResult,
  type Tool,
  type ToolContext,
  ToolRegistry,
  type ToolResult,
  userResult,
} from "toolloop";

class BackupTool implements Tool {
  readonly name = "start_backup";
  readonly description = "Start a backup; reports when finished";
  readonly parameters = { type: "object", properties: { target: { type: "string" } }, required: ["target"] };
  execute(args: Record<string, unknown>, context: ToolContext): ToolResult {
    const callback = context.asyncCallback; // this call's own
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
