import { createOpenAI } from "@ai-sdk/openai";
import { convertArrayToReadableStream, MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { type AISDKLanguageModelLike, createAISDKProvider } from "../../../src/adapters/ai-sdk/index.js";
import {
  defineTool,
  isInvalidProviderResponseError,
  type LLMProvider,
  type LLMStreamPart,
  type Message,
  streamToolLoop,
  type ToolDefinition,
  type ToolLoopEvent,
} from "../../../src/index.js";
import { registryOf, useReplayServers } from "../../helpers/adapter-fixtures.js";
import { readSampleText, sseResponse, sseSample } from "../../helpers/replay-server.js";
import { checkToolInputs, collectStream, countTextAssembly } from "../../helpers/stream-parts.js";

type Json = Record<string, unknown>;
const startServer = useReplayServers();
const user: Message[] = [{ role: "user", content: "What's the weather and AAPL?" }];
const PARALLEL = "openai-chat-stream-parallel-tool-calls.recorded.sse";
/** The follow-up: a short text answer, as Chat Completions streams it (made here, not recorded). */
const textAnswer = sseResponse([
  { data: { id: "c2", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: "Hello!" } }] } },
  { data: { id: "c2", object: "chat.completion.chunk", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] } },
  { data: "[DONE]" },
]);

const tool = (name: string): ToolDefinition => ({
  type: "function",
  function: { name, description: name, parameters: { type: "object", properties: {} } },
});
const tools = [tool("GetWeatherArgs"), tool("get_stock_price")];

const streamOf = (provider: LLMProvider, signal?: AbortSignal): AsyncIterable<LLMStreamPart> =>
  (provider.chatStream as NonNullable<LLMProvider["chatStream"]>)(user, tools, "", {}, signal);

/**
 * The Chat Completion the recorded SSE chunks add up to (the same exchange, not streamed): the
 * first choice's text, its calls by index with their arguments joined, finish reason and usage.
 */
function completionOf(sse: string): Json {
  const calls: Array<{ id: string; type: string; function: { name: string; arguments: string } }> = [];
  let content = "";
  let finish: unknown = null;
  let usage: unknown;
  for (const line of sse.split("\n")) {
    if (!line.startsWith("data: ") || line === "data: [DONE]") continue;
    const chunk = JSON.parse(line.slice(6)) as Json & { choices: Json[] };
    if (chunk.usage !== undefined && chunk.usage !== null) usage = chunk.usage;
    const choice = chunk.choices[0] as (Json & { delta: Json }) | undefined;
    if (choice === undefined) continue;
    if (choice.finish_reason !== null) finish = choice.finish_reason;
    if (typeof choice.delta.content === "string") content += choice.delta.content;
    for (const piece of (choice.delta.tool_calls ?? []) as Array<Json & { index: number; function: Json }>) {
      calls[piece.index] ??= { id: "", type: "function", function: { name: "", arguments: "" } };
      const call = calls[piece.index] as (typeof calls)[number];
      if (typeof piece.id === "string") call.id = piece.id;
      if (typeof piece.function.name === "string") call.function.name = piece.function.name;
      call.function.arguments += String(piece.function.arguments ?? "");
    }
  }
  const message = { role: "assistant", content: content === "" ? null : content, tool_calls: calls };
  return {
    id: "chatcmpl-1",
    object: "chat.completion",
    choices: [{ index: 0, message, finish_reason: finish }],
    usage,
  };
}

/**
 * A stream of `parts`, each enqueued when read (`convertArrayToReadableStream` enqueues them all
 * at once, and Node's stream queue then costs time quadratic in their number).
 */
function pulledStream(parts: readonly unknown[]): ReadableStream<never> {
  let next = 0;
  return new ReadableStream({
    pull(controller) {
      if (next < parts.length) controller.enqueue(parts[next++] as never);
      else controller.close();
    },
  });
}

/** A spec v3 model (the `ai` package's own mock) whose `doStream` streams `parts`. */
function v3Model(parts: unknown[], provider = "mock.chat"): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    provider,
    modelId: "mock-model",
    doStream: async () => ({ stream: pulledStream(parts) }),
  });
}

const usageV3 = {
  inputTokens: { total: 120, noCache: 20, cacheRead: 100, cacheWrite: 0 },
  outputTokens: { total: 50, text: 30, reasoning: 20 },
};

describe("chatStream with ai@6 and @ai-sdk/openai@3 on a recorded stream", () => {
  it("streams parallel calls' input under their final ids and assembles what chat gives for the same exchange", async () => {
    const sse = readSampleText(PARALLEL);
    const server = await startServer([{ body: completionOf(sse) }, sseSample(PARALLEL)]);
    const model = createOpenAI({ apiKey: "test", baseURL: `${server.url}/v1` }).chat("gpt-4o");
    const provider = createAISDKProvider({ model });

    const whole = await provider.chat(user, tools, "", {});
    const collected = await collectStream(streamOf(provider));
    const { toolInputs, response } = collected;

    expect(response).toEqual(whole);
    expect(response.finishReason).toBe("tool_calls");
    // @ai-sdk/openai reports the cached count as 0 when the API sent none.
    expect(response.usage).toEqual({
      promptTokens: 149,
      completionTokens: 60,
      totalTokens: 209,
      cachedInputTokens: 0,
      reasoningTokens: 0,
    });
    expect(response.toolCalls.map((call) => [call.id, call.name])).toEqual([
      ["call_JMW1whyEaYG438VE1OIflxA2", "GetWeatherArgs"],
      ["call_DNYTawLBoN8fj3KN6qU9N1Ou", "get_stock_price"],
    ]);
    // Each call's input streamed under the id its final call carries; the pieces joined parse to its arguments.
    expect([...toolInputs.keys()]).toEqual(response.toolCalls.map((call) => call.id));
    checkToolInputs(collected);
    // The same request, streamed.
    expect(server.requests[1]?.body).toMatchObject({ stream: true, model: "gpt-4o" });
    expect(provider.providerName).toBe("openai");
  });

  it("in streamToolLoop: tool-input-start, then its deltas, then tool-call-start once per call, with the same ids", async () => {
    const server = await startServer([sseSample(PARALLEL), textAnswer]);
    const provider = createAISDKProvider({
      model: createOpenAI({ apiKey: "test", baseURL: `${server.url}/v1` }).chat("gpt-4o"),
    });
    const echo = (name: string) =>
      defineTool({ name, description: name, parameters: z.object({}).passthrough(), execute: async () => "ok" });
    const events: ToolLoopEvent[] = [];
    const run = streamToolLoop(
      { provider, tools: registryOf(echo("GetWeatherArgs"), echo("get_stock_price")), maxIterations: 3 },
      user,
    );
    for await (const event of run) events.push(event);
    const calls = events.filter((event) => event.type.startsWith("tool-input") || event.type === "tool-call-start");
    const ids = ["call_JMW1whyEaYG438VE1OIflxA2", "call_DNYTawLBoN8fj3KN6qU9N1Ou"];
    for (const id of ids) {
      const mine = calls.filter((event) => "toolCallId" in event && event.toolCallId === id).map((event) => event.type);
      expect(mine[0]).toBe("tool-input-start");
      expect(mine.filter((type) => type === "tool-input-start")).toHaveLength(1);
      expect(mine.filter((type) => type === "tool-call-start")).toHaveLength(1);
      expect(mine.at(-1)).toBe("tool-call-start");
      expect(mine).toContain("tool-input-delta");
    }
    expect((await run.result).content).toBe("Hello!");
  });

  it("a malformed chunk in a genuine stream ends it with InvalidProviderResponseError, not a half answer", async () => {
    const [first, second] = readSampleText(PARALLEL).split("\n\n");
    const server = await startServer([
      { raw: `${first}\n\n${second}\n\ndata: {"choices": [tru\n\n`, contentType: "text/event-stream" },
    ]);
    const provider = createAISDKProvider({
      model: createOpenAI({ apiKey: "test", baseURL: `${server.url}/v1` }).chat("gpt-4o"),
    });
    const failure = await collectStream(streamOf(provider)).catch((error: unknown) => error);
    expect(isInvalidProviderResponseError(failure)).toBe(true);
    expect((failure as Error).message).toMatch(/^AI SDK: the stream sent an error \(/);
  });

  it("ends with the signal's reason when the stream stalls until the run aborts, and the request is closed", async () => {
    const head = readSampleText(PARALLEL).split("\n\n").slice(0, 3).join("\n\n");
    const server = await startServer([{ raw: `${head}\n\n`, contentType: "text/event-stream", hang: true }]);
    const provider = createAISDKProvider({
      model: createOpenAI({ apiKey: "test", baseURL: `${server.url}/v1` }).chat("gpt-4o"),
    });
    const controller = new AbortController();
    const parts: LLMStreamPart[] = [];
    const reason = new Error("run aborted");
    const read = (async () => {
      for await (const part of streamOf(provider, controller.signal)) {
        parts.push(part);
        if (parts.length === 2) controller.abort(reason);
      }
    })();
    await expect(read).rejects.toBe(reason);
    expect(parts.map((part) => part.type)).toEqual(["tool-input-start", "tool-input-delta"]);
    await server.waitForDisconnects(1);
  });
});

describe("chatStream with spec v3 and v2 models", () => {
  it("v3: text, reasoning (its metadata kept for replay), calls and detailed usage, as doGenerate's content gives them", async () => {
    const signature = { anthropic: { signature: "sig-1" } };
    const parts = [
      { type: "stream-start", warnings: [] },
      { type: "response-metadata", id: "r1", modelId: "mock-model" },
      { type: "reasoning-start", id: "r0" },
      { type: "reasoning-delta", id: "r0", delta: "Let me " },
      { type: "reasoning-delta", id: "r0", delta: "think." },
      { type: "reasoning-end", id: "r0", providerMetadata: signature },
      { type: "text-start", id: "t0" },
      { type: "text-delta", id: "t0", delta: "Checking " },
      { type: "text-delta", id: "t0", delta: "" },
      { type: "text-delta", id: "t0", delta: "both." },
      { type: "text-end", id: "t0" },
      { type: "tool-input-start", id: "call_a", toolName: "GetWeatherArgs" },
      { type: "tool-input-start", id: "call_b", toolName: "get_stock_price" },
      { type: "tool-input-delta", id: "call_a", delta: '{"city":' },
      { type: "tool-input-delta", id: "call_b", delta: '{"ticker":"AAPL"}' },
      { type: "tool-input-delta", id: "call_a", delta: '"Paris"}' },
      { type: "tool-input-end", id: "call_a" },
      { type: "tool-input-end", id: "call_b" },
      { type: "tool-call", toolCallId: "call_a", toolName: "GetWeatherArgs", input: '{"city":"Paris"}' },
      { type: "tool-call", toolCallId: "call_b", toolName: "get_stock_price", input: '{"ticker":"AAPL"}' },
      { type: "finish", finishReason: { unified: "tool-calls", raw: "tool_use" }, usage: usageV3 },
    ];
    const content = [
      { type: "reasoning", text: "Let me think.", providerMetadata: signature },
      { type: "text", text: "Checking both." },
      { type: "tool-call", toolCallId: "call_a", toolName: "GetWeatherArgs", input: '{"city":"Paris"}' },
      { type: "tool-call", toolCallId: "call_b", toolName: "get_stock_price", input: '{"ticker":"AAPL"}' },
    ];
    const model = new MockLanguageModelV3({
      provider: "anthropic.messages",
      doStream: async () => ({ stream: convertArrayToReadableStream(parts as never[]) }),
      doGenerate: async () =>
        ({
          content,
          finishReason: { unified: "tool-calls", raw: "tool_use" },
          usage: usageV3,
          warnings: [],
        }) as never,
    });
    const provider = createAISDKProvider({ model });
    const streamed = await collectStream(streamOf(provider));

    expect(streamed.response).toEqual(await provider.chat(user, tools, "", {}));
    expect(streamed.deltas).toEqual(["Checking ", "both."]);
    expect(streamed.reasoning).toEqual(["Let me ", "think."]);
    expect(streamed.parts.slice(4, 9)).toEqual([
      { type: "tool-input-start", toolCallId: "call_a", toolName: "GetWeatherArgs" },
      { type: "tool-input-start", toolCallId: "call_b", toolName: "get_stock_price" },
      { type: "tool-input-delta", toolCallId: "call_a", delta: '{"city":' },
      { type: "tool-input-delta", toolCallId: "call_b", delta: '{"ticker":"AAPL"}' },
      { type: "tool-input-delta", toolCallId: "call_a", delta: '"Paris"}' },
    ]);
    expect(streamed.response.usage).toEqual({
      promptTokens: 120,
      completionTokens: 50,
      totalTokens: 170,
      cachedInputTokens: 100,
      cacheWriteTokens: 0,
      reasoningTokens: 20,
    });
    expect(streamed.response.toolCalls[0]?.providerMetadata).toEqual({
      aiSdk: { reasoning: [{ type: "reasoning", text: "Let me think.", providerOptions: signature }] },
    });
    expect(provider.providerName).toBe("anthropic");
  });

  it("v2: string finish reason and flat usage with cached and reasoning counts", async () => {
    const parts = [
      { type: "text-start", id: "0" },
      { type: "text-delta", id: "0", delta: "Hi" },
      { type: "text-end", id: "0" },
      {
        type: "finish",
        finishReason: "stop",
        usage: { inputTokens: 10, outputTokens: 4, totalTokens: 14, cachedInputTokens: 6, reasoningTokens: 0 },
      },
    ];
    const model: AISDKLanguageModelLike = {
      specificationVersion: "v2",
      provider: "google.generative-ai",
      modelId: "gemini",
      doGenerate: async () => ({ content: [] }),
      doStream: async () => ({ stream: convertArrayToReadableStream(parts) }),
    };
    const provider = createAISDKProvider({ model });
    const { deltas, response } = await collectStream(streamOf(provider));
    expect(deltas).toEqual(["Hi"]);
    expect(response).toEqual({
      content: "Hi",
      toolCalls: [],
      finishReason: "stop",
      usage: { promptTokens: 10, completionTokens: 4, totalTokens: 14, cachedInputTokens: 6, reasoningTokens: 0 },
    });
    expect(provider.providerName).toBe("gcp.gemini");
  });

  it("streams no input for calls the provider executes, nor deltas of an input streamed as plain text", async () => {
    const model = v3Model([
      { type: "tool-input-start", id: "ws", toolName: "web_search", providerExecuted: true },
      { type: "tool-input-delta", id: "ws", delta: '{"q":"x"}' },
      { type: "tool-call", toolCallId: "ws", toolName: "web_search", input: '{"q":"x"}', providerExecuted: true },
      { type: "tool-input-start", id: "patch", toolName: "apply_patch", inputEncoding: "text" },
      { type: "tool-input-delta", id: "patch", delta: "*** Begin" },
      { type: "tool-input-start", id: "c1", toolName: "GetWeatherArgs" },
      { type: "tool-input-start", id: "c1", toolName: "GetWeatherArgs" },
      { type: "tool-input-delta", id: "c1", delta: "{}" },
      { type: "tool-input-delta", id: "unknown", delta: "{}" },
      { type: "tool-call", toolCallId: "patch", toolName: "apply_patch", input: '{"patch":"*** Begin"}' },
      { type: "tool-call", toolCallId: "c1", toolName: "GetWeatherArgs", input: "{}" },
      { type: "finish", finishReason: { unified: "tool-calls", raw: undefined }, usage: usageV3 },
    ]);
    const { parts, response } = await collectStream(streamOf(createAISDKProvider({ model })));
    expect(parts.slice(0, -1)).toEqual([
      { type: "tool-input-start", toolCallId: "c1", toolName: "GetWeatherArgs" },
      { type: "tool-input-delta", toolCallId: "c1", delta: "{}" },
    ]);
    expect(response.toolCalls.map((call) => call.id)).toEqual(["patch", "c1"]);
  });

  it("offers no chatStream for a model without doStream", () => {
    const model: AISDKLanguageModelLike = { modelId: "m", doGenerate: async () => ({ content: [] }) };
    const provider = createAISDKProvider({ model });
    expect(provider.chatStream).toBeUndefined();
    expect(provider.providerName).toBeUndefined();
  });

  it("assembles megabytes of deltas in linear work", async () => {
    const pieces = 100_000;
    const parts: unknown[] = [{ type: "tool-input-start", id: "c", toolName: "t" }];
    for (let index = 0; index < pieces; index++) {
      parts.push({ type: "text-delta", id: "0", delta: "x" }, { type: "tool-input-delta", id: "c", delta: " " });
    }
    parts.push(
      { type: "tool-call", toolCallId: "c", toolName: "t", input: "{}" },
      { type: "finish", finishReason: { unified: "tool-calls", raw: undefined }, usage: usageV3 },
    );
    const provider = createAISDKProvider({ model: v3Model(parts) });
    const { value, added, joinedChars } = await countTextAssembly(() => collectStream(streamOf(provider)));
    // Each piece added once and the text joined once; a join per delta would copy about N²/2 characters.
    expect(added).toBe(pieces);
    expect(joinedChars).toBe(pieces);
    expect(value.response.content).toHaveLength(pieces);
  });
});

describe("chatStream on broken streams: clear errors, never a half answer", () => {
  const text = { type: "text-delta", id: "0", delta: "half an ans" };

  it.each([
    ["a stream cut off (no finish part)", [text], "AI SDK: the stream ended without a finish part"],
    [
      "a part that is not an object",
      [text, "garbage"],
      "AI SDK: a stream part is not an object with a type (got string)",
    ],
    [
      "a text-delta without its delta",
      [{ type: "text-delta", id: "0" }],
      "AI SDK: a text-delta part has no delta string (got undefined)",
    ],
    [
      "a tool-input-start without a toolName",
      [{ type: "tool-input-start", id: "c" }],
      "AI SDK: a tool-input-start part has no toolName string (got undefined)",
    ],
    [
      "an API error object in an error part",
      [text, { type: "error", error: { type: "server_error", message: "The server had an error" } }],
      "AI SDK: the stream sent an error (server_error: The server had an error)",
    ],
    [
      "an Error in an error part",
      [text, { type: "error", error: new SyntaxError("JSON parsing failed") }],
      "AI SDK: the stream sent an error (JSON parsing failed)",
    ],
    [
      "a tool-call without a toolName",
      [
        { type: "tool-call", toolCallId: "c", input: "{}" },
        { type: "finish", finishReason: "stop", usage: {} },
      ],
      "AI SDK: a tool-call part has no toolName (got undefined)",
    ],
  ])("%s", async (_name, parts, message) => {
    const failure = await collectStream(streamOf(createAISDKProvider({ model: v3Model(parts) }))).catch((e) => e);
    expect(isInvalidProviderResponseError(failure)).toBe(true);
    expect((failure as Error).message).toBe(message);
  });

  it("keeps an error part's error as the cause", async () => {
    const error = new Error("overloaded");
    const model = v3Model([{ type: "error", error }]);
    const failure = await collectStream(streamOf(createAISDKProvider({ model }))).catch((e) => e);
    expect((failure as Error).cause).toBe(error);
  });

  it("refuses a doStream result without a stream", async () => {
    const model = new MockLanguageModelV3({ doStream: async () => ({}) as never });
    await expect(collectStream(streamOf(createAISDKProvider({ model })))).rejects.toThrow(
      "AI SDK: the doStream result has no stream (got undefined)",
    );
  });

  it("a stream that stalls and ignores the signal is cancelled on abort, ending with the signal's reason", async () => {
    let cancelled: unknown;
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue({ type: "text-delta", id: "0", delta: "Hel" });
      },
      cancel(reason) {
        cancelled = reason;
      },
    });
    const model = new MockLanguageModelV3({ doStream: async () => ({ stream }) });
    const controller = new AbortController();
    const reason = new Error("stop");
    const read = (async () => {
      for await (const part of streamOf(createAISDKProvider({ model }), controller.signal)) {
        if (part.type === "text-delta") controller.abort(reason);
      }
    })();
    await expect(read).rejects.toBe(reason);
    expect(cancelled).toBe(reason);
  });

  it("a consumer that stops early cancels the model's stream", async () => {
    let cancelled = false;
    const stream = new ReadableStream({
      pull(controller) {
        controller.enqueue({ type: "text-delta", id: "0", delta: "x" });
      },
      cancel() {
        cancelled = true;
      },
    });
    const model = new MockLanguageModelV3({ doStream: async () => ({ stream }) });
    for await (const part of streamOf(createAISDKProvider({ model }))) {
      expect(part.type).toBe("text-delta");
      break;
    }
    expect(cancelled).toBe(true);
  });
});
