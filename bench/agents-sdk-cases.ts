/**
 * The scenario run by the OpenAI Agents SDK: an `Agent` with zod `tool()`s, a fake `Model` that
 * plays precomputed responses, `Runner.run` with `maxTurns`, tracing disabled.
 *
 * Import this module only when the Agents SDK is measured: once it has run, the SDK keeps an
 * AsyncLocalStorage active, which slows every promise in the process (see docs/benchmarks.md).
 */
import {
  Agent,
  type AgentOutputItem,
  tool as agentsTool,
  type Model,
  type ModelResponse,
  Runner,
  setTracingDisabled,
  Usage,
} from "@openai/agents";
import { FINAL_TEXT, type LoopCase, type Script, type ToolSpec } from "./scenario.js";

setTracingDisabled(true);

const runner = new Runner({ tracingDisabled: true });

function responses(script: Script): ModelResponse[] {
  const usage = () => new Usage({ requests: 1, inputTokens: 1, outputTokens: 1, totalTokens: 2 });
  const list: ModelResponse[] = script.map((calls) => ({
    usage: usage(),
    output: calls.map(
      (call): AgentOutputItem => ({
        type: "function_call",
        callId: call.id,
        name: call.name,
        arguments: call.arguments,
        status: "completed",
      }),
    ),
  }));
  list.push({
    usage: usage(),
    output: [
      { type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: FINAL_TEXT }] },
    ],
  });
  return list;
}

/** A fake `Model` that plays precomputed responses in order, wrapping around. */
class ScriptedModel implements Model {
  readonly #responses: ModelResponse[];
  #next = 0;

  constructor(list: ModelResponse[]) {
    this.#responses = list;
  }

  async getResponse(): Promise<ModelResponse> {
    const response = this.#responses[this.#next] as ModelResponse;
    this.#next = (this.#next + 1) % this.#responses.length;
    return response;
  }

  // biome-ignore lint/correctness/useYield: the benchmark never streams
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("ScriptedModel does not stream");
  }
}

/** A fake `Model` whose calls never settle; the resolvers are kept so the runs stay reachable. */
class PendingModel implements Model {
  readonly pending: Array<(response: ModelResponse) => void> = [];

  getResponse(): Promise<ModelResponse> {
    return new Promise((resolve) => {
      this.pending.push(resolve);
    });
  }

  // biome-ignore lint/correctness/useYield: the benchmark never streams
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("PendingModel does not stream");
  }
}

function agent(model: Model, tools: ToolSpec[]): Agent {
  return new Agent({
    name: "bench",
    instructions: "Use the tools.",
    model,
    tools: tools.map((tool) =>
      agentsTool({
        name: tool.name,
        description: tool.description,
        parameters: tool.schema,
        execute: (args: Record<string, unknown>) => tool.execute(args),
      }),
    ),
  });
}

export function agentsCase(script: Script, tools: ToolSpec[]): LoopCase {
  const scripted = agent(new ScriptedModel(responses(script)), tools);
  const maxTurns = script.length + 1;
  return {
    async run() {
      const result = await runner.run(scripted, "go", { maxTurns });
      return { text: String(result.finalOutput), result };
    },
  };
}

/** Starts runs that wait forever on the model (memory workload). */
export function agentsWaiting(tools: ToolSpec[], maxTurns: number) {
  const model = new PendingModel();
  const waiting = agent(model, tools);
  return {
    start: () => runner.run(waiting, "go", { maxTurns }),
    pending: () => model.pending.length,
    forget: () => {},
  };
}
