/**
 * Workload 7: one `provider.chat(transcript, definitions)` of each adapter over an in-process fake
 * client that resolves to a response prebuilt once. The transcript and the definitions are the ones
 * the loop hands the provider in its second step (a call of `echo` and its answer), taken from a
 * real run, so `definitions` is the registry's cached frozen array, as on the loop path.
 *
 * Adapters are imported through their public barrels only.
 */
import { createAISDKProvider } from "../src/adapters/ai-sdk/index.js";
import { createAnthropicProvider } from "../src/adapters/anthropic/index.js";
import { createGeminiProvider } from "../src/adapters/gemini/index.js";
import { createOllamaProvider } from "../src/adapters/ollama/index.js";
import { createOpenAIChatProvider, createOpenAIResponsesProvider } from "../src/adapters/openai/index.js";
import {
  type LLMProvider,
  type LLMResponse,
  type Message,
  runToolLoop,
  type ToolDefinition,
  type ToolRegistry,
} from "../src/index.js";
import type { AdapterName } from "./constants.js";
import { FINAL_TEXT } from "./scenario.js";
import { chatCompletions } from "./toolloop-cases.js";

/** What the loop passes a provider at its second step. */
export interface StepInput {
  transcript: Message[];
  definitions: ToolDefinition[];
}

/** Runs a two-step loop (one `echo` call, then an answer) and keeps what the second `chat` received. */
export async function secondStepInput(registry: ToolRegistry): Promise<StepInput> {
  let input: StepInput | undefined;
  let step = 0;
  const capture: LLMProvider = {
    getDefaultModel: () => "bench-model",
    async chat(messages, tools): Promise<LLMResponse> {
      step++;
      if (step === 1) {
        return {
          content: "",
          toolCalls: [{ id: "call_1", type: "function", name: "echo", arguments: '{"text":"hello"}' }],
          finishReason: "tool_calls",
        };
      }
      input = { transcript: [...messages], definitions: tools as ToolDefinition[] };
      return { content: FINAL_TEXT, toolCalls: [], finishReason: "stop" };
    },
  };
  await runToolLoop({ provider: capture, tools: registry, maxIterations: 2 }, [{ role: "user", content: "go" }]);
  if (input === undefined || !Object.isFrozen(input.definitions)) {
    throw new Error("secondStepInput: the loop did not pass its cached, frozen definitions");
  }
  return input;
}

const USAGE_V3 = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/** A resolved promise of the same prebuilt response at every call. */
function always<T>(response: T): () => Promise<T> {
  return () => Promise.resolve(response);
}

/** Each adapter over a fake client whose every call resolves to one prebuilt final answer. */
export function adapterProvider(name: AdapterName): LLMProvider {
  switch (name) {
    case "OpenAI Chat":
    case "OpenAI Chat strict": {
      const completion = chatCompletions([])[0] as { choices: unknown[] };
      const client = { chat: { completions: { create: always(completion) } } };
      return createOpenAIChatProvider({ client, strict: name === "OpenAI Chat strict" });
    }
    case "OpenAI Responses": {
      const response = {
        id: "resp_bench",
        object: "response",
        status: "completed",
        output: [
          {
            type: "message",
            id: "msg_bench",
            role: "assistant",
            status: "completed",
            content: [{ type: "output_text", text: FINAL_TEXT, annotations: [] }],
          },
        ],
        usage: { input_tokens: 100, output_tokens: 20, total_tokens: 120 },
      };
      return createOpenAIResponsesProvider({ client: { responses: { create: always(response) } } });
    }
    case "Anthropic": {
      const message = {
        id: "msg_bench",
        type: "message",
        role: "assistant",
        model: "claude-sonnet-4-6",
        content: [{ type: "text", text: FINAL_TEXT }],
        stop_reason: "end_turn",
        usage: { input_tokens: 100, output_tokens: 20 },
      };
      return createAnthropicProvider({ client: { messages: { create: always(message) } } });
    }
    case "Gemini": {
      const response = {
        candidates: [{ content: { role: "model", parts: [{ text: FINAL_TEXT }] }, finishReason: "STOP", index: 0 }],
        usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 20, totalTokenCount: 120 },
      };
      return createGeminiProvider({ client: { models: { generateContent: always(response) } } });
    }
    case "Ollama": {
      const chunk = {
        model: "llama3.2",
        created_at: "2025-07-07T20:22:19.19314Z",
        message: { role: "assistant", content: FINAL_TEXT },
        done_reason: "stop",
        done: true,
        prompt_eval_count: 100,
        eval_count: 20,
      };
      const chunks = [chunk];
      // The client streams: a stream object per request is part of its interface.
      const stream = () => ({ abort() {}, [Symbol.asyncIterator]: () => chunks.values() });
      return createOllamaProvider({ client: { chat: () => Promise.resolve(stream()) as never } });
    }
    case "AI SDK": {
      const result = {
        content: [{ type: "text", text: FINAL_TEXT }],
        finishReason: { unified: "stop", raw: "stop" },
        usage: USAGE_V3,
        warnings: [],
      };
      return createAISDKProvider({
        model: { specificationVersion: "v3", modelId: "bench-model", doGenerate: always(result) },
      });
    }
  }
}

/** One step through `provider`: what the workload times. Checks the answer once. */
export async function adapterStep(name: AdapterName, input: StepInput): Promise<() => Promise<LLMResponse>> {
  const provider = adapterProvider(name);
  const model = provider.getDefaultModel();
  const step = () => provider.chat(input.transcript, input.definitions, model, {});
  const response = await step();
  if (response.content !== FINAL_TEXT || (response.toolCalls ?? []).length !== 0) {
    throw new Error(`${name}: unexpected response ${JSON.stringify(response)}`);
  }
  return step;
}
