/**
 * Streaming a run to a UI: the model's text as it arrives, each tool call with its progress, and
 * every message persisted as it is appended. Runs on the scripted provider (no API key, no
 * network), which streams its scripted text in pieces.
 * Run: npx tsx examples/streaming.ts
 */
import { type Message, streamToolLoop, ToolRegistry } from "toolloop";
import { ScriptedProvider, toolCallResponse } from "toolloop/testing";

const registry = new ToolRegistry();
registry.register({
  name: "count_words",
  description: "Counts the words of a text",
  parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  execute: async (args, context) => {
    const words = String(args.text).split(/\s+/).filter(Boolean);
    context.reportProgress(0.5, `counting ${words.length} words`);
    return String(words.length);
  },
});

// The scripted "model" streams its text in pieces (textDeltas), as a real provider's chatStream does.
const provider = new ScriptedProvider([
  {
    ...toolCallResponse({ name: "count_words", arguments: { text: "the quick brown fox" } }, "Let me count."),
    textDeltas: ["Let me", " count", "."],
  },
  { textDeltas: ["The te", "xt has", " 4 wor", "ds."] },
]);

const saved: Message[] = [{ role: "user", content: "How many words in 'the quick brown fox'?" }];
const stream = streamToolLoop({ provider, tools: registry, maxIterations: 5 }, [...saved]);

let line = "";
for await (const event of stream) {
  switch (event.type) {
    case "step-start":
      line = "";
      break;
    case "text-delta":
      line += event.delta;
      console.log(`streamed: ${JSON.stringify(line)}`);
      break;
    case "tool-call-start":
      console.log(`calling ${event.toolName}(${JSON.stringify(event.arguments)})`);
      break;
    case "tool-progress":
      console.log(`progress ${event.update.status} ${event.update.message ?? ""}`.trimEnd());
      break;
    case "tool-call-end":
      console.log(`${event.toolName} → ${event.result.forLLM}`);
      break;
    case "message":
      saved.push(event.message); // persist as you go
      if (event.message.role === "assistant") console.log(`assistant: ${JSON.stringify(event.message.content)}`);
      break;
  }
}
const result = await stream.result;
console.log(
  `saved ${saved.length} messages, the same as the result: ${JSON.stringify(saved) === JSON.stringify(result.messages)}`,
);
console.log(`${result.stopReason} after ${result.iterations} model calls: ${result.content}`);
