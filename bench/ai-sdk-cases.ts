/**
 * The scenario run by the Vercel AI SDK: `generateText` with zod `tool()`s, `stopWhen:
 * stepCountIs(steps + 1)` and a `MockLanguageModelV3` from `ai/test` answering precomputed results.
 * Realistic: also a caller's `abortSignal` and a 30 s step timeout (`timeout: { stepMs }`).
 */
import { tool as aiTool, generateText, stepCountIs, type ToolSet } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { REALISTIC_TIMEOUT_MS } from "./constants.js";
import { type CaseOptions, FINAL_TEXT, type LoopCase, type Script, type ToolSpec } from "./scenario.js";

/** What a V3 language model's `doGenerate` resolves to (taken from the mock, so no extra import). */
type GenerateResult = Awaited<ReturnType<MockLanguageModelV3["doGenerate"]>>;

const USAGE: GenerateResult["usage"] = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

function results(script: Script): GenerateResult[] {
  const list: GenerateResult[] = script.map((calls) => ({
    content: calls.map((call) => ({
      type: "tool-call" as const,
      toolCallId: call.id,
      toolName: call.name,
      input: call.arguments,
    })),
    finishReason: { unified: "tool-calls", raw: "tool_calls" },
    usage: USAGE,
    warnings: [],
  }));
  list.push({
    content: [{ type: "text", text: FINAL_TEXT }],
    finishReason: { unified: "stop", raw: "stop" },
    usage: USAGE,
    warnings: [],
  });
  return list;
}

/** The AI SDK's tools object. */
export function aiTools(tools: ToolSpec[]): ToolSet {
  const set: ToolSet = {};
  for (const tool of tools) {
    set[tool.name] = aiTool({
      description: tool.description,
      inputSchema: tool.schema,
      execute: (args: Record<string, unknown>) => tool.execute(args),
    });
  }
  return set;
}

export function aiSdkCase(script: Script, tools: ToolSpec[], options: CaseOptions = {}): LoopCase {
  const answers = results(script);
  let next = 0;
  const model = new MockLanguageModelV3({
    doGenerate: async () => {
      const result = answers[next] as GenerateResult;
      next = (next + 1) % answers.length;
      return result;
    },
  });
  const toolSet = aiTools(tools);
  const stopWhen = stepCountIs(script.length + 1);
  const realistic = options.realistic === true;
  const timeout = { stepMs: REALISTIC_TIMEOUT_MS };
  return {
    async run() {
      // Realistic: a caller's signal per run, as a server passes each request's (the AI SDK leaves a
      // listener on the caller's signal per call, so one long-lived signal would collect them), and
      // a 30 s step timeout.
      const result = realistic
        ? await generateText({
            model,
            tools: toolSet,
            prompt: "go",
            stopWhen,
            abortSignal: new AbortController().signal,
            timeout,
          })
        : await generateText({ model, tools: toolSet, prompt: "go", stopWhen });
      // The mock records every call; a real provider does not, so the records are dropped.
      model.doGenerateCalls.length = 0;
      return { text: result.text, result };
    },
  };
}

/** Starts `generateText` calls that wait forever on the model (memory workload). */
export function aiSdkWaiting(tools: ToolSpec[], maxSteps: number) {
  const resolvers: unknown[] = [];
  const model = new MockLanguageModelV3({ doGenerate: () => new Promise((resolve) => resolvers.push(resolve)) });
  const toolSet = aiTools(tools);
  const stopWhen = stepCountIs(maxSteps);
  return {
    start: () => generateText({ model, tools: toolSet, prompt: "go", stopWhen }),
    pending: () => resolvers.length,
    forget: () => {
      model.doGenerateCalls.length = 0;
    },
  };
}
