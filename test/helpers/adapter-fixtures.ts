import { afterEach, expect } from "vitest";
import * as z from "zod";
import { createAISDKProvider } from "../../src/adapters/ai-sdk/index.js";
import { createAnthropicProvider } from "../../src/adapters/anthropic/index.js";
import { createGeminiProvider } from "../../src/adapters/gemini/index.js";
import { createOllamaProvider } from "../../src/adapters/ollama/index.js";
import { createOpenAIChatProvider, createOpenAIResponsesProvider } from "../../src/adapters/openai/index.js";
import {
  defineTool,
  type InvalidProviderResponseError,
  isInvalidProviderResponseError,
  isToolLoopError,
  type LLMProvider,
  type Message,
  type Tool,
  type ToolLoopError,
  ToolRegistry,
} from "../../src/index.js";
import { type ReplayResponse, type ReplayServer, readSample, startReplayServer } from "./replay-server.js";

type Script = Parameters<typeof startReplayServer>[0];

/**
 * For a test file: returns a function that starts a replay server, and closes every server it
 * started after each test. Call it once at the top level of the file.
 */
export function useReplayServers(): (script: Script) => Promise<ReplayServer> {
  const servers: ReplayServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  return async (script) => {
    const server = await startReplayServer(script);
    servers.push(server);
    return server;
  };
}

/** A 200 answer whose body is the wire sample `file`. */
export const okSample = (file: string): ReplayResponse => ({ body: readSample(file) });

/** A `get_weather` tool that answers `sunny in <city>` (the AI SDK UI message stream tests' tool). */
export const weatherTool = defineTool({
  name: "get_weather",
  description: "The weather in a city.",
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => `sunny in ${city}`,
});

/**
 * A `waits` tool whose call waits until the run's signal aborts, then answers "aborted" (the AI SDK
 * UI message stream tests' tool for a reader that goes away): `started` resolves once a call waits;
 * `signals` keeps each call's signal.
 */
export function waitingTool(): { waits: Tool; started: Promise<void>; signals: AbortSignal[] } {
  const signals: AbortSignal[] = [];
  let start!: () => void;
  const started = new Promise<void>((resolve) => {
    start = resolve;
  });
  const waits = defineTool({
    name: "waits",
    description: "Waits until aborted.",
    parameters: z.object({}),
    execute: (_args, context) =>
      new Promise<string>((resolve) => {
        signals.push(context.signal);
        context.signal.addEventListener("abort", () => resolve("aborted"));
        start();
      }),
  });
  return { waits, started, signals };
}

/** A registry holding `tools`, in order. */
export function registryOf(...tools: Tool[]): ToolRegistry {
  const registry = new ToolRegistry();
  for (const tool of tools) registry.register(tool);
  return registry;
}

/**
 * Starts `run` with a fresh signal, waits until the server has seen the request, then aborts with
 * `reason`. Returns `run`'s promise in `settled` for the test to assert on (it is marked handled
 * here, so an early rejection is not reported as unhandled).
 */
export async function abortOnceRequested<T>(
  server: ReplayServer,
  run: (signal: AbortSignal) => Promise<T>,
  reason?: unknown,
): Promise<{ settled: Promise<T> }> {
  const controller = new AbortController();
  const settled = run(controller.signal);
  settled.catch(() => {});
  await server.waitForRequests(server.requests.length + 1);
  controller.abort(reason);
  return { settled };
}

/**
 * Awaits `pending`, which must reject with an `InvalidProviderResponseError` from `provider` whose
 * message matches `message`; returns it for further checks.
 */
export async function expectUnreadable(
  pending: Promise<unknown>,
  provider: string,
  message: string | RegExp,
): Promise<InvalidProviderResponseError> {
  const error = await pending.then(
    (value) => {
      throw new Error(`expected an InvalidProviderResponseError, but it resolved with ${JSON.stringify(value)}`);
    },
    (caught: unknown) => caught,
  );
  expect(isInvalidProviderResponseError(error), String(error)).toBe(true);
  const invalid = error as InvalidProviderResponseError;
  expect(invalid.provider).toBe(provider);
  expect(invalid.message).toMatch(message);
  expect(invalid.message.startsWith(`${provider}: `)).toBe(true);
  expect(invalid.body.length).toBeLessThanOrEqual(2_000);
  return invalid;
}

/**
 * Awaits a `runToolLoop` that must reject with a `ToolLoopError` whose `cause` is an
 * `InvalidProviderResponseError` from `provider`, and whose `messages` are `transcript` (what the
 * loop had when the unreadable response came).
 */
export async function expectLoopRejectsUnreadable(
  run: Promise<unknown>,
  provider: string,
  transcript: Array<Partial<Message>>,
): Promise<ToolLoopError> {
  const error = await run.then(
    () => {
      throw new Error("expected the loop to reject");
    },
    (caught: unknown) => caught,
  );
  expect(isToolLoopError(error), String(error)).toBe(true);
  const loopError = error as ToolLoopError;
  expect(isInvalidProviderResponseError(loopError.cause)).toBe(true);
  expect((loopError.cause as InvalidProviderResponseError).provider).toBe(provider);
  expect(loopError.message).toContain((loopError.cause as Error).message);
  expect(loopError.messages).toHaveLength(transcript.length);
  transcript.forEach((message, index) => {
    expect(loopError.messages[index]).toMatchObject(message);
  });
  return loopError;
}

/** What an adapter sent its client in one request, as the client received it. */
export type RecordedBody = Record<string, unknown>;

/**
 * One adapter over an in-process client that records every request and answers each with a
 * final text answer ("ok"): for tests of what every adapter does the same way.
 */
export interface RecordingAdapter {
  /** The adapter, as tests name it: `"openai-chat"`, `"openai-chat strict"`, `"anthropic"` … */
  name: string;
  /** The API's name in the adapter's errors (`InvalidProviderResponseError.provider`). */
  provider: string;
  /** A new provider over a new recording client. */
  create(): { provider: LLMProvider; requests: RecordedBody[] };
  /** The tools array a recorded request carries (the function declarations for Gemini). */
  toolsOf(request: RecordedBody): unknown;
  /** The names of the tools a recorded request carries. */
  toolNamesOf(request: RecordedBody): string[];
}

const record = (requests: RecordedBody[], body: unknown) => {
  requests.push(body as RecordedBody);
};

const at = (value: unknown, ...path: Array<string | number>): unknown =>
  path.reduce<unknown>((node, key) => (node as Record<string | number, unknown> | undefined)?.[key], value);

const names = (tools: unknown, ...path: string[]) =>
  Array.isArray(tools) ? tools.map((tool) => String(at(tool, ...path))) : [];

function openAIChat(strict: boolean): RecordingAdapter {
  return {
    name: strict ? "openai-chat strict" : "openai-chat",
    provider: "OpenAI Chat Completions",
    create() {
      const requests: RecordedBody[] = [];
      const create = async (body: unknown) => {
        record(requests, body);
        return { choices: [{ message: { role: "assistant", content: "ok" }, finish_reason: "stop" }] };
      };
      return {
        provider: createOpenAIChatProvider({ client: { chat: { completions: { create } } }, strict }),
        requests,
      };
    },
    toolsOf: (request) => request.tools,
    toolNamesOf: (request) => names(request.tools, "function", "name"),
  };
}

function openAIResponses(strict: boolean): RecordingAdapter {
  return {
    name: strict ? "openai-responses strict" : "openai-responses",
    provider: "OpenAI Responses",
    create() {
      const requests: RecordedBody[] = [];
      const create = async (body: unknown) => {
        record(requests, body);
        return { status: "completed", output: [{ type: "message", content: [{ type: "output_text", text: "ok" }] }] };
      };
      return { provider: createOpenAIResponsesProvider({ client: { responses: { create } }, strict }), requests };
    },
    toolsOf: (request) => request.tools,
    toolNamesOf: (request) => names(request.tools, "name"),
  };
}

/** Every adapter (the OpenAI ones with and without strict mode) over a recording client. */
export const recordingAdapters: readonly RecordingAdapter[] = [
  openAIChat(false),
  openAIChat(true),
  openAIResponses(false),
  openAIResponses(true),
  {
    name: "anthropic",
    provider: "Anthropic",
    create() {
      const requests: RecordedBody[] = [];
      const create = async (body: unknown) => {
        record(requests, body);
        return { content: [{ type: "text", text: "ok" }], stop_reason: "end_turn" };
      };
      return { provider: createAnthropicProvider({ client: { messages: { create } } }), requests };
    },
    toolsOf: (request) => request.tools,
    toolNamesOf: (request) => names(request.tools, "name"),
  },
  {
    name: "gemini",
    provider: "Gemini",
    create() {
      const requests: RecordedBody[] = [];
      const generateContent = async (params: unknown) => {
        record(requests, params);
        return { candidates: [{ content: { role: "model", parts: [{ text: "ok" }] }, finishReason: "STOP" }] };
      };
      return { provider: createGeminiProvider({ client: { models: { generateContent } } }), requests };
    },
    toolsOf: (request) => at(request, "config", "tools", 0, "functionDeclarations"),
    toolNamesOf: (request) => names(at(request, "config", "tools", 0, "functionDeclarations"), "name"),
  },
  {
    name: "ollama",
    provider: "Ollama",
    create() {
      const requests: RecordedBody[] = [];
      const chat = async (request: unknown) => {
        record(requests, request);
        async function* chunks() {
          yield { message: { role: "assistant", content: "ok" }, done: true, done_reason: "stop" };
        }
        return Object.assign(chunks(), { abort() {} });
      };
      return { provider: createOllamaProvider({ client: { chat } }), requests };
    },
    toolsOf: (request) => request.tools,
    toolNamesOf: (request) => names(request.tools, "function", "name"),
  },
  {
    name: "ai-sdk",
    provider: "AI SDK",
    create() {
      const requests: RecordedBody[] = [];
      const doGenerate = async (options: unknown) => {
        record(requests, options);
        return { content: [{ type: "text", text: "ok" }], finishReason: "stop" };
      };
      return { provider: createAISDKProvider({ model: { modelId: "m", doGenerate } }), requests };
    },
    toolsOf: (request) => request.tools,
    toolNamesOf: (request) => names(request.tools, "name"),
  },
];
