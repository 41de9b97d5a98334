/**
 * The loop on Anthropic's Messages API through your own `@anthropic-ai/sdk` client.
 *
 * Run: ANTHROPIC_API_KEY=sk-ant-… npx tsx examples/anthropic.ts
 * Optional: ANTHROPIC_MODEL (default: the adapter's DEFAULT_ANTHROPIC_MODEL).
 * Without a key it says what to set and exits 0 (nothing is sent).
 */
import Anthropic from "@anthropic-ai/sdk";
import { defineTool, errorResult, runToolLoop, ToolRegistry } from "toolloop";
import { createAnthropicProvider } from "toolloop/anthropic";
import { z } from "zod";

if (!process.env.ANTHROPIC_API_KEY) {
  console.log("Set ANTHROPIC_API_KEY to run this example against the Anthropic API, e.g.:");
  console.log("  ANTHROPIC_API_KEY=sk-ant-... npx tsx examples/anthropic.ts");
  console.log("Optionally set ANTHROPIC_MODEL (e.g. claude-haiku-4-5) to choose the model.");
  process.exit(0);
}

// A Map, not a plain object: the city comes from the model ("constructor" must not match anything).
const temperatures = new Map([
  ["paris", 21],
  ["london", 16],
  ["tokyo", 27],
]);

const weather = defineTool({
  name: "get_weather",
  description: "Current temperature of a city, in degrees Celsius",
  parameters: z.object({ city: z.string().describe("City name, e.g. Paris") }),
  execute: ({ city }) => {
    const celsius = temperatures.get(city.toLowerCase());
    // The model sees this as a tool_result with is_error: true and can say so.
    return celsius === undefined ? errorResult(`No data for ${city}.`) : `${celsius} °C in ${city}`;
  },
});

const registry = new ToolRegistry();
registry.register(weather);

const provider = createAnthropicProvider({
  client: new Anthropic(), // reads ANTHROPIC_API_KEY
  ...(process.env.ANTHROPIC_MODEL ? { model: process.env.ANTHROPIC_MODEL } : {}),
  maxTokens: 1024,
});

const result = await runToolLoop({ provider, tools: registry, maxIterations: 5 }, [
  { role: "system", content: "Answer in one sentence." },
  { role: "user", content: "Is it warmer in Paris, London or Atlantis right now?" },
]);

for (const message of result.messages) {
  const calls = message.toolCalls?.map((call) => `${call.name}(${JSON.stringify(call.arguments)})`).join(", ");
  const suffix = calls ? ` → calls ${calls}` : message.isError ? " (error)" : "";
  console.log(`${message.role.padEnd(9)} ${message.content}${suffix}`);
}
console.log(`\n${result.stopReason} after ${result.iterations} iterations with ${provider.getDefaultModel()}`);
console.log(`usage: ${JSON.stringify(result.usage)}`);
