/**
 * Structured output: the run's final answer is JSON matching a zod schema, and `result.output` is
 * typed from it. The scripted "model" (no API key, no network) calls a tool, then answers with
 * JSON that misses a field — the loop feeds the validation error back and asks again — and then
 * answers correctly. Run: npx tsx examples/structured-output.ts
 *
 * With a real adapter ("toolloop/openai", "toolloop/anthropic" …) the provider is also asked for
 * the schema natively (`options.output`), so a wrong answer is rare; the loop checks it either way.
 */
import { defineTool, runToolLoop } from "toolloop";
import { ScriptedProvider, textResponse, toolCallResponse } from "toolloop/testing";
import { z } from "zod";

const Forecast = z.object({
  city: z.string(),
  celsius: z.number(),
  advice: z.enum(["umbrella", "sunglasses", "coat"]),
});

const weather = defineTool({
  name: "get_weather",
  description: "Current weather for a city",
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => `It is 21 degrees and sunny in ${city}.`,
});

const provider = new ScriptedProvider([
  toolCallResponse({ name: "get_weather", arguments: { city: "Paris" } }),
  // Invalid: `advice` is missing.
  textResponse('{"city":"Paris","celsius":21}'),
  textResponse('{"city":"Paris","celsius":21,"advice":"sunglasses"}'),
]);

const result = await runToolLoop({ provider, tools: [weather], maxIterations: 5, output: Forecast, outputRetries: 1 }, [
  { role: "user", content: "What should I bring in Paris today?" },
]);

console.log(`asked for: ${JSON.stringify(provider.calls[0]?.options.output)}`);
for (const message of result.messages.slice(1)) {
  const text = typeof message.content === "string" ? message.content : "[parts]";
  console.log(`${message.role.padEnd(9)} ${message.toolCalls ? `→ calls ${message.toolCalls[0]?.name}` : text}`);
}
// `result.output` is typed { city: string; celsius: number; advice: "umbrella" | "sunglasses" | "coat" }.
const forecast = result.output;
if (forecast !== undefined) {
  console.log(
    `${result.stopReason} after ${result.iterations} model calls: bring ${forecast.advice} (${forecast.celsius} °C in ${forecast.city})`,
  );
}
