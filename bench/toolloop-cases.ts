/**
 * The scenario run by toolloop and by hand (the floor).
 */
import {
  defineTool,
  type LLMProvider,
  type LLMResponse,
  type Message,
  type ProviderToolCall,
  runToolLoop,
  ToolRegistry,
} from "../src/index.js";
import { type CaseOptions, FINAL_TEXT, type LoopCase, type Script, type ToolSpec } from "./scenario.js";

/** The script as `LLMResponse`s: one per step, then the final answer. */
export function toolloopResponses(script: Script): LLMResponse[] {
  const responses: LLMResponse[] = script.map((calls) => ({
    content: "",
    toolCalls: calls.map(
      (call): ProviderToolCall => ({ id: call.id, type: "function", name: call.name, arguments: call.arguments }),
    ),
    finishReason: "tool_calls",
  }));
  responses.push({ content: FINAL_TEXT, toolCalls: [], finishReason: "stop" });
  return responses;
}

/**
 * A zero-latency provider: it hands out precomputed responses in order (wrapping around) without
 * copying them. The test `ScriptedProvider` deep-clones every request and response with
 * `structuredClone`, which would cost more than the loop being measured.
 */
export class FastProvider implements LLMProvider {
  readonly #responses: readonly LLMResponse[];
  #next = 0;

  constructor(responses: readonly LLMResponse[]) {
    if (responses.length === 0) throw new TypeError("FastProvider needs at least one response");
    this.#responses = responses;
  }

  getDefaultModel(): string {
    return "bench-model";
  }

  chat(): Promise<LLMResponse> {
    const response = this.#responses[this.#next] as LLMResponse;
    this.#next = (this.#next + 1) % this.#responses.length;
    return Promise.resolve(response);
  }
}

/**
 * A provider whose calls never settle; the resolvers are kept (as an HTTP client keeps its
 * socket callbacks), so every waiting loop stays reachable and its memory can be measured.
 */
export class PendingProvider implements LLMProvider {
  readonly pending: Array<(response: LLMResponse) => void> = [];

  getDefaultModel(): string {
    return "bench-model";
  }

  chat(): Promise<LLMResponse> {
    return new Promise((resolve) => {
      this.pending.push(resolve);
    });
  }
}

/** A registry with every tool of the scenario, defined with `defineTool`. */
export function toolloopRegistry(tools: ToolSpec[]): ToolRegistry {
  const registry = new ToolRegistry();
  for (const tool of tools) {
    registry.register(
      defineTool({ name: tool.name, description: tool.description, parameters: tool.schema, execute: tool.execute }),
    );
  }
  return registry;
}

export function toolloopCase(script: Script, tools: ToolSpec[], options: CaseOptions = {}): LoopCase {
  const provider = new FastProvider(toolloopResponses(script));
  const config = {
    provider,
    tools: toolloopRegistry(tools),
    maxIterations: script.length + 1,
    ...(options.maxConcurrency === undefined ? {} : { maxConcurrency: options.maxConcurrency }),
  };
  return {
    async run() {
      const result = await runToolLoop(config, [{ role: "user", content: "go" }]);
      return { text: result.content, result };
    },
  };
}

/**
 * The floor: what any loop has to do. Await the model, look the tool up, parse the JSON
 * arguments, validate them with zod, call the function, append the messages; a turn's calls run
 * concurrently and their answers are appended in call order.
 */
export function byHandCase(script: Script, tools: ToolSpec[]): LoopCase {
  const provider = new FastProvider(toolloopResponses(script));
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const runOne = async (call: ProviderToolCall): Promise<string> => {
    const tool = byName.get(call.name as string) as ToolSpec;
    return tool.execute(tool.schema.parse(JSON.parse(call.arguments as string)));
  };
  return {
    async run() {
      const messages: Message[] = [{ role: "user", content: "go" }];
      for (;;) {
        const response = await provider.chat();
        const calls = response.toolCalls;
        if (calls === undefined || calls.length === 0) {
          messages.push({ role: "assistant", content: response.content });
          return { text: response.content, result: messages };
        }
        messages.push({ role: "assistant", content: response.content, toolCalls: calls as never });
        const contents =
          calls.length === 1 ? [await runOne(calls[0] as ProviderToolCall)] : await Promise.all(calls.map(runOne));
        for (let index = 0; index < calls.length; index++) {
          messages.push({
            role: "tool",
            content: contents[index] as string,
            toolCallId: (calls[index] as ProviderToolCall).id as string,
          });
        }
      }
    },
  };
}

/** Starts toolloop loops that wait forever on the model (memory workload). */
export function toolloopWaiting(tools: ToolSpec[], maxIterations: number) {
  const provider = new PendingProvider();
  const config = { provider, tools: toolloopRegistry(tools), maxIterations };
  return {
    start: () => runToolLoop(config, [{ role: "user", content: "go" }]),
    pending: () => provider.pending.length,
    forget: () => {},
  };
}
