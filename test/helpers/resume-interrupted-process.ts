// The second process of test/loop-interruptions.test.ts's cross-process test: reads
// { checkpoint, decisions } as JSON from stdin (all that survives the first process), resumes the
// interrupted run with its own tools and provider, and prints what ran and the result as JSON.
import { type Message, resumeToolLoop, ToolRegistry } from "../../src/index.js";
import { ScriptedProvider, textResponse } from "../../src/testing/index.js";

let input = "";
for await (const chunk of process.stdin) input += chunk;
const { checkpoint, decisions } = JSON.parse(input);

const ran: string[] = [];
const tools = new ToolRegistry();
for (const [name, needsApproval] of [
  ["read", false],
  ["delete", true],
  ["pay", true],
] as const) {
  tools.register({
    name,
    description: name,
    parameters: { type: "object" },
    needsApproval,
    execute: (args) => {
      ran.push(`${name}:${String(args.name)}`);
      return `${name} ${String(args.name)} done`;
    },
  });
}

const provider = new ScriptedProvider([textResponse("resumed elsewhere")]);
const result = await resumeToolLoop(
  { provider, tools, maxIterations: 5, approve: "interrupt" },
  checkpoint,
  {},
  decisions,
);
const answers = result.messages
  .filter((message: Message) => message.role === "tool")
  .map(
    (message: Message) =>
      `${message.toolCallId} ${message.isError === true ? "error: " : ""}${String(message.content)}`,
  );
process.stdout.write(JSON.stringify({ ran, stopReason: result.stopReason, content: result.content, answers }));
