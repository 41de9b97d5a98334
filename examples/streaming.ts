/**
 * Streaming a run to a UI: the model's text as it arrives, each tool call with its progress, and
 * every message persisted as it is appended. Runs on the scripted provider (no API key, no
 * network), given a chatStream that streams its scripted text in small pieces.
 * Run: npx tsx examples/streaming.ts
 */
import { type LLMProvider, type LLMResponse, type Message, streamToolLoop, ToolRegistry } from "toolloop";
import { ScriptedProvider, textResponse, toolCallResponse } from "toolloop/testing";

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

const scripted = new ScriptedProvider([
  toolCallResponse({ name: "count_words", arguments: { text: "the quick brown fox" } }, "Let me count."),
  textResponse("The text has 4 words."),
]);
// A provider that can stream: the adapters' chatStream sends text-delta parts, then the response.
const provider: LLMProvider & { chatStream: (...args: Parameters<LLMProvider["chat"]>) => AsyncIterable<unknown> } = {
  chat: (...args) => scripted.chat(...args),
  getDefaultModel: () => scripted.getDefaultModel(),
  async *chatStream(...args) {
    const response: LLMResponse = await scripted.chat(...args);
    for (const piece of response.content.match(/.{1,6}/gs) ?? []) yield { type: "text-delta" as const, delta: piece };
    yield { type: "response" as const, response };
  },
};

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
      break;
  }
}
const result = await stream.result;
console.log(
  `saved ${saved.length} messages, the same as the result: ${JSON.stringify(saved) === JSON.stringify(result.messages)}`,
);
console.log(`${result.stopReason} after ${result.iterations} model calls: ${result.content}`);
