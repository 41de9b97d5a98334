/**
 * A model-call cache middleware: `wrapModelCall` answers a request it has seen before from memory,
 * without calling `next` (the provider). The key is what the provider would receive: model,
 * messages and tool names. Two runs of the same conversation: the second makes no provider call.
 * Runs on the scripted provider (no API key, no network). Run: npx tsx examples/cache-middleware.ts
 */
import { type LLMResponse, runToolLoop, type ToolLoopMiddleware, ToolRegistry } from "toolloop";
import { ScriptedProvider, textResponse, toolCallResponse } from "toolloop/testing";

// The cache: 10–30 lines. A real one would bound its size and expire entries.
function modelCallCache(): ToolLoopMiddleware & { hits: number } {
  const responses = new Map<string, LLMResponse>();
  return {
    name: "model-call-cache",
    hits: 0,
    async wrapModelCall(request, next) {
      const tools = request.tools?.map((tool) => tool.function.name);
      const key = JSON.stringify([request.model, request.messages, tools]);
      const cached = responses.get(key);
      if (cached !== undefined) {
        this.hits++;
        return cached;
      }
      const response = await next(request);
      responses.set(key, response);
      return response;
    },
  };
}

const registry = new ToolRegistry();
registry.register({
  name: "get_rate",
  description: "The exchange rate between two currencies",
  parameters: { type: "object", properties: { pair: { type: "string" } }, required: ["pair"] },
  execute: () => "1.08",
});

// Scripted for one run only: a second provider call for the same conversation would fail.
const provider = new ScriptedProvider([
  toolCallResponse({ name: "get_rate", arguments: { pair: "EUR/USD" } }),
  textResponse("1 EUR is 1.08 USD."),
]);
const cache = modelCallCache();
const config = { provider, tools: registry, maxIterations: 5, middleware: [cache] };
const question = [{ role: "user" as const, content: "How many dollars is one euro?" }];

for (const run of ["first", "second"]) {
  const result = await runToolLoop(config, question);
  console.log(`${run} run: ${result.content} (${result.iterations} model calls)`);
}
console.log(`provider calls: ${provider.calls.length}, cache hits: ${cache.hits}`);
