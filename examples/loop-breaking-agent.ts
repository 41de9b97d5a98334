/**
 * An agent with ordinary tools plus the ready-made loop-breaking tools; the agent works until it
 * calls task_completion, which ends the loop without another model call. Runs on the built-in
 * scripted provider (no API key, no network). Run: npx tsx examples/loop-breaking-agent.ts
 */
import { defineTool, loopBreakingTools, runToolLoop, ToolRegistry } from "toolloop";
import { ScriptedProvider, textResponse, toolCallResponse } from "toolloop/testing";
import { z } from "zod";

const calculator = defineTool({
  name: "calculator",
  description: "Multiply two numbers",
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => String(a * b),
});

const registry = new ToolRegistry();
registry.register(calculator);
for (const tool of loopBreakingTools()) registry.register(tool);

// The scripted "model": it calculates, tries to finish with an empty result (an error it reads),
// then finishes properly. The last response is never asked for: task_completion ends the loop.
const provider = new ScriptedProvider([
  toolCallResponse({ name: "calculator", arguments: { a: 6, b: 7 } }),
  toolCallResponse({ name: "task_completion", arguments: { result: "" } }),
  toolCallResponse({ name: "task_completion", arguments: { result: "6 × 7 = 42" } }),
  textResponse("(never asked)"),
]);

const result = await runToolLoop({ provider, tools: registry, maxIterations: 10 }, [
  { role: "system", content: "Work with your tools; call task_completion when you are done." },
  { role: "user", content: "What is 6 times 7?" },
]);

for (const message of result.messages.filter((each) => each.role === "tool")) {
  console.log(`${message.toolName}: ${message.isError ? "error: " : ""}${message.content}`);
}
console.log(`stopped by ${result.stoppedBy?.toolName} (${result.stopReason}) after ${result.iterations} model calls`);
console.log(`answer: ${result.content}`);
