/**
 * A guardrail middleware: `wrapToolCall` reads a call's validated arguments and refuses the call
 * with a result of its own — the tool never runs, the model reads why and the loop goes on.
 * Here shell commands that delete or reach outside the workspace are refused. Runs on the
 * scripted provider (no API key, no network). Run: npx tsx examples/guardrail-middleware.ts
 */
import { errorResult, runToolLoop, type ToolLoopMiddleware, ToolRegistry } from "toolloop";
import { ScriptedProvider, textResponse, toolCallResponse } from "toolloop/testing";

// The guardrail: 10–30 lines, reusable with any registry.
const FORBIDDEN = [/\brm\b/, /\.\.\//, /\bsudo\b/];

const shellGuardrail: ToolLoopMiddleware = {
  name: "shell-guardrail",
  async wrapToolCall(request, next) {
    if (request.toolName !== "run_command") return next(request);
    const command = String(request.arguments.command);
    const rule = FORBIDDEN.find((pattern) => pattern.test(command));
    // Refused: an error result of our own, without calling next (the tool does not run).
    if (rule !== undefined) return errorResult(`refused by policy: the command matches ${rule}`);
    return next(request);
  },
};

const ran: string[] = [];
const registry = new ToolRegistry();
registry.register({
  name: "run_command",
  description: "Runs a shell command in the workspace",
  parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
  execute: (args) => {
    ran.push(String(args.command));
    return `ran: ${String(args.command)}`;
  },
});

const provider = new ScriptedProvider([
  toolCallResponse([
    { name: "run_command", arguments: { command: "ls -la" } },
    { name: "run_command", arguments: { command: "rm -rf ../backup" } },
  ]),
  textResponse("I listed the files; deleting the backup was refused."),
]);

const result = await runToolLoop({ provider, tools: registry, maxIterations: 5, middleware: [shellGuardrail] }, [
  { role: "user", content: "List the files and delete the old backup." },
]);

for (const message of result.messages.filter((each) => each.role === "tool")) {
  console.log(`${message.toolName}: ${message.isError ? "error: " : ""}${message.content}`);
}
console.log(`commands that ran: ${ran.join(", ")}`);
console.log(`${result.stopReason}: ${result.content}`);
