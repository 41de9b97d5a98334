/**
 * A zod tool on a real OpenAI model, through your own `openai` client.
 *
 *   OPENAI_API_KEY=sk-... npx tsx examples/openai.ts              # Chat Completions
 *   OPENAI_API_KEY=sk-... npx tsx examples/openai.ts --responses  # Responses API, strict mode
 *
 * Optional: OPENAI_MODEL (default "gpt-4.1-mini"); OPENAI_BASE_URL, read by the openai client
 * itself, points the Chat adapter at an OpenAI-compatible server (vLLM, llama.cpp server,
 * LM Studio, Ollama's http://localhost:11434/v1 — any non-empty OPENAI_API_KEY then).
 * Without OPENAI_API_KEY it only says what to set.
 */
import OpenAI from "openai";
import { defineTool, isToolLoopError, runToolLoop, ToolRegistry } from "toolloop";
import { createOpenAIChatProvider, createOpenAIResponsesProvider, DEFAULT_OPENAI_MODEL } from "toolloop/openai";
import { z } from "zod";

if (!process.env.OPENAI_API_KEY) {
  console.log(
    [
      "examples/openai.ts calls the real OpenAI API, so it needs an API key:",
      "  export OPENAI_API_KEY=sk-...        (https://platform.openai.com/api-keys)",
      "  npx tsx examples/openai.ts          Chat Completions",
      "  npx tsx examples/openai.ts --responses   Responses API, strict mode",
      `Optional: OPENAI_MODEL (default ${DEFAULT_OPENAI_MODEL}), OPENAI_BASE_URL for an OpenAI-compatible server.`,
      "OPENAI_API_KEY is not set: nothing was sent.",
    ].join("\n"),
  );
  process.exit(0);
}

const celsius: Record<string, number> = { paris: 21, london: 16, tokyo: 27 };

const weather = defineTool({
  name: "get_weather",
  description: "Current temperature for a city",
  parameters: z.object({
    city: z.string().describe("City name, e.g. Paris"),
    unit: z.enum(["celsius", "fahrenheit"]).optional().describe("Defaults to celsius"),
  }),
  execute: ({ city, unit = "celsius" }) => {
    const value = celsius[city.toLowerCase()];
    if (value === undefined) return `No data for ${city}.`;
    return unit === "fahrenheit" ? `${Math.round((value * 9) / 5 + 32)} °F in ${city}` : `${value} °C in ${city}`;
  },
});

const registry = new ToolRegistry();
registry.register(weather);

const client = new OpenAI(); // reads OPENAI_API_KEY and OPENAI_BASE_URL
const model = process.env.OPENAI_MODEL ?? DEFAULT_OPENAI_MODEL;
const useResponses = process.argv.includes("--responses");
const provider = useResponses
  ? createOpenAIResponsesProvider({ client, model, strict: true })
  : createOpenAIChatProvider({ client, model });

try {
  const result = await runToolLoop({ provider, tools: registry, maxIterations: 5, llmOptions: { temperature: 0 } }, [
    { role: "system", content: "Answer in one sentence. Use the tools for weather." },
    { role: "user", content: "How warm is it in Paris and in Tokyo, in fahrenheit?" },
  ]);
  for (const message of result.messages) {
    const calls = message.toolCalls?.map((call) => `${call.name}(${call.function?.arguments})`).join(", ");
    console.log(`${message.role.padEnd(9)} ${message.content}${calls ? ` → calls ${calls}` : ""}`);
  }
  const api = useResponses ? "Responses API" : "Chat Completions";
  console.log(`\n${api}, ${model}: ${result.iterations} calls, ${result.usage?.totalTokens ?? "?"} tokens`);
} catch (error) {
  // The client's own error (bad key, unknown model, rate limit …) is the cause.
  console.log(`The loop failed: ${isToolLoopError(error) ? error.message : String(error)}`);
  process.exitCode = 1;
}
