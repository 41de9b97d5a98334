/**
 * Forge's text protocol, for a model without native tool calling: the model writes
 * <tool>{"server_name":"local","tool_name":…,"arguments":…}</tool> blocks in its text, and
 * withTextToolProtocol turns them into the loop's calls; the tool list goes in the system prompt,
 * the answers go back as <tool_result> blocks. Runs on the built-in scripted provider (no API key,
 * no network); with Ollama, wrap createOllamaProvider(...) the same way.
 * Run: npx tsx examples/text-protocol.ts
 */
import { defineTool, runToolLoop, withTextToolProtocol } from "toolloop";
import { ScriptedProvider } from "toolloop/testing";
import { z } from "zod";

const weather = defineTool({
  name: "get_weather",
  description: "The current weather in a city",
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => `21 degrees and sunny in ${city}`,
});

// The scripted "model" answers in plain text only, as a model without tool calling does: a block
// for a server that does not exist (it reads the error), a proper block, then its answer.
const model = new ScriptedProvider([
  {
    content: 'Let me check. <tool>{"server_name":"web","tool_name":"get_weather","arguments":{"city":"Paris"}}</tool>',
  },
  { content: 'Once more. <tool>{"server_name":"local","tool_name":"get_weather","arguments":{"city":"Paris"}}</tool>' },
  { content: "It is 21 degrees and sunny in Paris." },
]);

const result = await runToolLoop({ provider: withTextToolProtocol(model), tools: [weather], maxIterations: 5 }, [
  { role: "user", content: "What's the weather in Paris?" },
]);

// What the model was sent in its last request: no native tools, only text.
const last = model.calls.at(-1);
console.log(`native tools sent: ${last?.tools === undefined ? "none" : last.tools.length}`);
for (const message of last?.messages ?? []) console.log(`--- ${message.role}\n${message.content}`);
console.log(`---\n${result.stopReason} after ${result.iterations} model calls: ${result.content}`);
