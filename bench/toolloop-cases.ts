/**
 * The scenario run by toolloop and by hand (the floor).
 */
import { pino } from "pino";
import { createOpenAIChatProvider, type OpenAIChatClient } from "../src/adapters/openai/index.js";
import {
  defineTool,
  type LLMProvider,
  type LLMResponse,
  type Logger,
  type Message,
  type ProviderToolCall,
  runToolLoop,
  type ToolLoopEvent,
  type ToolLoopMiddleware,
  ToolRegistry,
} from "../src/index.js";
import { tracing } from "../src/otel/index.js";
import { eventsPerLoop, REALISTIC_TIMEOUT_MS } from "./constants.js";
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

/** The script as Chat Completions responses, as `openai`'s `chat.completions.create` resolves them. */
export function chatCompletions(script: Script): unknown[] {
  const completion = (message: Record<string, unknown>, finishReason: string) => ({
    id: "chatcmpl-bench",
    object: "chat.completion",
    created: 1_700_000_000,
    model: "gpt-4.1-mini",
    choices: [{ index: 0, message: { role: "assistant", refusal: null, ...message }, finish_reason: finishReason }],
    usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
  });
  const list = script.map((calls) =>
    completion(
      {
        content: null,
        tool_calls: calls.map((call) => ({
          id: call.id,
          type: "function",
          function: { name: call.name, arguments: call.arguments },
        })),
      },
      "tool_calls",
    ),
  );
  list.push(completion({ content: FINAL_TEXT }, "stop"));
  return list;
}

/**
 * An in-process stand-in for `new OpenAI()`: `chat.completions.create` resolves to the next
 * prebuilt completion (wrapping around), without copying it or reading the request.
 */
export function fakeOpenAIChatClient(completions: readonly unknown[]): OpenAIChatClient {
  let next = 0;
  return {
    chat: {
      completions: {
        create: () => {
          const completion = completions[next] as { choices: unknown[] };
          next = (next + 1) % completions.length;
          return Promise.resolve(completion);
        },
      },
    },
  };
}

/**
 * An `info`-level pino logger writing synchronously to a destination that discards every line:
 * pino's `DestinationStream` (an object with `write(line)`), so what is measured is pino building
 * each line, not a Node `Writable`'s buffering (a `Buffer` per line and a `nextTick` per write,
 * which would add about 0.5 µs per line).
 */
export function discardingInfoLogger(): Logger {
  return pino({ level: "info" }, { write: (_line: string) => {} });
}

/** A registry with every tool of the scenario, defined with `defineTool`. */
export function toolloopRegistry(tools: ToolSpec[], logger?: Logger): ToolRegistry {
  const registry = new ToolRegistry(logger === undefined ? {} : { logger });
  for (const tool of tools) {
    registry.register(
      defineTool({ name: tool.name, description: tool.description, parameters: tool.schema, execute: tool.execute }),
    );
  }
  return registry;
}

/** The `onEvent` of the events case: a synchronous listener that does nothing. */
const ignoreEvent = (_event: ToolLoopEvent): void => {};

/** The middleware of the middleware case: around each model call and each tool call, it only calls `next`. */
export const PASS_THROUGH: ToolLoopMiddleware = {
  name: "pass-through",
  wrapModelCall: (request, next) => next(request),
  wrapToolCall: (request, next) => next(request),
};

export function toolloopCase(script: Script, tools: ToolSpec[], options: CaseOptions = {}): LoopCase {
  if (options.realistic === true) return realisticToolloopCase(script, tools);
  const provider = new FastProvider(toolloopResponses(script));
  const config = {
    provider,
    tools: toolloopRegistry(tools),
    maxIterations: script.length + 1,
    ...(options.maxConcurrency === undefined ? {} : { maxConcurrency: options.maxConcurrency }),
    ...(options.events === true ? { onEvent: ignoreEvent } : {}),
    ...(options.middleware === true ? { middleware: [PASS_THROUGH] } : {}),
    // No tracer provider is registered in the bench's processes: the default tracer is the no-op one.
    ...(options.tracing === true ? { middleware: [tracing()] } : {}),
  };
  return {
    async run() {
      const result = await runToolLoop(config, [{ role: "user", content: "go" }]);
      return { text: result.content, result };
    },
  };
}

/**
 * Runs the events case's loop once with a listener that counts, and throws unless it saw
 * {@link eventsPerLoop} events: the figure the cost per event is divided by.
 */
export async function checkEventCount(script: Script, tools: ToolSpec[], callsPerStep: number): Promise<number> {
  let seen = 0;
  const config = {
    provider: new FastProvider(toolloopResponses(script)),
    tools: toolloopRegistry(tools),
    maxIterations: script.length + 1,
    onEvent: () => {
      seen++;
    },
  };
  await runToolLoop(config, [{ role: "user", content: "go" }]);
  const expected = eventsPerLoop(script.length, callsPerStep);
  if (seen !== expected) throw new Error(`the onEvent case delivered ${seen} events per loop, expected ${expected}`);
  return seen;
}

/** What the realistic case adds to the minimal one; each can be left out to see what it costs. */
export interface RealisticParts {
  /** The OpenAI Chat adapter over a fake client, instead of a provider that hands out `LLMResponse`s. */
  adapter: boolean;
  /** A caller's signal: a new controller per run (never aborted), as a server passes each request's. */
  signal: boolean;
  /** `toolTimeoutMs: 30_000`. */
  timeout: boolean;
  /** An `info` pino logger for the loop and the registry (which logs every call at info). */
  logger: boolean;
}

export const ALL_PARTS: RealisticParts = { adapter: true, signal: true, timeout: true, logger: true };

/**
 * toolloop as users run it (all parts): the OpenAI Chat adapter over a fake client, a caller's
 * signal, `toolTimeoutMs: 30_000`, and an `info` pino logger for the loop and the registry.
 */
export function realisticToolloopCase(
  script: Script,
  tools: ToolSpec[],
  parts: RealisticParts = ALL_PARTS,
  logger: Logger | undefined = parts.logger ? discardingInfoLogger() : undefined,
): LoopCase {
  const provider = parts.adapter
    ? createOpenAIChatProvider({ client: fakeOpenAIChatClient(chatCompletions(script)) })
    : new FastProvider(toolloopResponses(script));
  const config = {
    provider,
    tools: toolloopRegistry(tools, logger),
    maxIterations: script.length + 1,
    ...(parts.timeout ? { toolTimeoutMs: REALISTIC_TIMEOUT_MS } : {}),
    ...(logger === undefined ? {} : { logger }),
  };
  const messages = (): Message[] => [{ role: "user", content: "go" }];
  return {
    async run() {
      // A caller's signal per run, as a server passes each request's (as for the AI SDK).
      const result = parts.signal
        ? await runToolLoop(config, messages(), { signal: new AbortController().signal })
        : await runToolLoop(config, messages());
      return { text: result.content, result };
    },
  };
}

/**
 * The floor: what any loop has to do. Await the (async) model, look the tool up, parse the JSON
 * arguments, validate them with zod, call the function and await it (the tools are async), append
 * the messages; a turn's calls run concurrently and their answers are appended in call order.
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
