/**
 * Quickstart: a zod tool, a registry and the loop, on the built-in scripted provider
 * (no API key, no network). Run: npx tsx examples/quickstart.ts
 *
 * To talk to a real model, replace the ScriptedProvider with an adapter, e.g.
 * `createOpenAIChatProvider({ client: new OpenAI() })` from "toolloop/openai".
 */
import { defineTool, runToolLoop, ToolRegistry, userResult } from "toolloop";
import { ScriptedProvider, textResponse, toolCallResponse } from "toolloop/testing";
import { z } from "zod";

const weather = defineTool({
  name: "get_weather",
  description: "Current weather for a city",
  parameters: z.object({
    city: z.string().describe("City name, e.g. Paris"),
    unit: z.enum(["celsius", "fahrenheit"]).default("celsius"),
  }),
  execute: async ({ city, unit }) => `It is 21 degrees ${unit} and sunny in ${city}.`,
});

const add = defineTool({
  name: "add",
  description: "Add two numbers",
  parameters: z.object({ a: z.number(), b: z.number() }),
  // A ToolResult separates what the model sees from what the user sees.
  execute: ({ a, b }) => userResult(`${a} + ${b} = ${a + b}`),
});

const registry = new ToolRegistry();
registry.register(weather);
registry.register(add);

// The scripted "model": two parallel tool calls (one with a wrong argument type), then an answer.
const provider = new ScriptedProvider([
  toolCallResponse(
    [
      { name: "get_weather", arguments: { city: "Paris" } },
      { name: "add", arguments: { a: 2, b: "three" } },
    ],
    "Let me check.",
  ),
  textResponse("It is sunny in Paris, 21 °C. (The sum failed: b must be a number.)"),
]);

const result = await runToolLoop({ provider, tools: registry, maxIterations: 5 }, [
  { role: "system", content: "You are a helpful assistant." },
  { role: "user", content: "Weather in Paris? And what is 2 + three?" },
]);

for (const message of result.messages) {
  const calls = message.toolCalls?.map((call) => `${call.name}(${call.function?.arguments})`).join(", ");
  const suffix = calls ? ` → calls ${calls}` : message.isError ? " (error)" : "";
  console.log(`${message.role.padEnd(9)} ${message.content}${suffix}`);
}
console.log(`\n${result.stopReason} after ${result.iterations} iterations: ${result.content}`);
