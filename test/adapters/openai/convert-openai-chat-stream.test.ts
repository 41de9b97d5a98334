import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import {
  createOpenAIChatProvider,
  fromOpenAIChatCompletion,
  fromOpenAIChatStream,
} from "../../../src/adapters/openai/index.js";
import type { LLMProvider, Message, ToolDefinition } from "../../../src/index.js";
import { expectUnreadable, useReplayServers } from "../../helpers/adapter-fixtures.js";
import {
  type ReplayResponse,
  type ReplayServer,
  type SseEvent,
  sseResponse,
  sseSample,
  sseText,
} from "../../helpers/replay-server.js";
import {
  type CollectedStream,
  checkToolInputs,
  collectMegabyteArguments,
  collectStream,
  countTextAssembly,
  eventsOf,
  MEGABYTE_ARGUMENTS,
} from "../../helpers/stream-parts.js";

const PROVIDER = "OpenAI Chat Completions";
const startServer = useReplayServers();
const user: Message[] = [{ role: "user", content: "What's the weather?" }];

async function replay(
  script: ReplayResponse[],
  strict = false,
): Promise<{ server: ReplayServer; provider: LLMProvider; client: OpenAI }> {
  const server = await startServer(script);
  const client = new OpenAI({ apiKey: "test", baseURL: `${server.url}/v1`, maxRetries: 0 });
  return { server, provider: createOpenAIChatProvider({ client, strict }), client };
}

function streamOf(
  provider: LLMProvider,
  options: Record<string, unknown> = {},
  signal?: AbortSignal,
  tools?: ToolDefinition[],
) {
  const { chatStream } = provider;
  if (chatStream === undefined) throw new Error("the provider has no chatStream");
  return chatStream.call(provider, user, tools, "gpt-4o", options, signal);
}

/** Replays one streamed answer made of `events` and collects the provider's stream of it. */
async function collectEvents(events: SseEvent[]): Promise<CollectedStream> {
  const { provider } = await replay([sseResponse(events)]);
  return collectStream(streamOf(provider));
}

/** A chunk of choice 0 with `delta` (and a finish reason). */
const chunk = (delta: Record<string, unknown>, finish: string | null = null, index = 0) => ({
  data: { id: "chatcmpl-1", object: "chat.completion.chunk", choices: [{ index, delta, finish_reason: finish }] },
});
const usageChunk = (prompt: number, completion: number) => ({
  data: {
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    choices: [],
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
  },
});
const DONE = { data: "[DONE]" };

const weatherTool: ToolDefinition = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Get the weather.",
    parameters: {
      type: "object",
      properties: { city: { type: "string" }, state: { type: "string" }, units: { type: "string" } },
      required: ["city", "state"],
    },
  },
};

describe("chatStream over the real openai client, on the recorded streams", () => {
  it("assembles the recorded call and asks for a stream with usage", async () => {
    const { server, provider } = await replay([sseSample("openai-chat-stream-tool-call.recorded.sse")]);
    const { deltas, response } = await collectStream(streamOf(provider, { temperature: 0 }));

    expect(deltas).toEqual([]);
    expect(response).toEqual({
      content: "",
      toolCalls: [
        {
          id: "call_4XzlGBLtUe9dy3GVNV4jhq7h",
          type: "function",
          name: "get_weather",
          arguments: '{"city":"New York City"}',
        },
      ],
      finishReason: "tool_calls",
      usage: { promptTokens: 44, completionTokens: 16, totalTokens: 60, reasoningTokens: 0 },
    });
    expect(server.requests[0]?.url).toBe("/v1/chat/completions");
    expect(server.requests[0]?.body).toMatchObject({
      model: "gpt-4o",
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it("assembles the recorded parallel calls by index, each with its arguments", async () => {
    const { provider } = await replay([sseSample("openai-chat-stream-parallel-tool-calls.recorded.sse")]);
    const { response } = await collectStream(streamOf(provider));

    expect(response.toolCalls.map(({ id, name }) => ({ id, name }))).toEqual([
      { id: "call_JMW1whyEaYG438VE1OIflxA2", name: "GetWeatherArgs" },
      { id: "call_DNYTawLBoN8fj3KN6qU9N1Ou", name: "get_stock_price" },
    ]);
    expect(response.toolCalls.map((call) => JSON.parse(String(call.arguments)))).toEqual([
      { city: "Edinburgh", country: "GB", units: "c" },
      { ticker: "AAPL", exchange: "NASDAQ" },
    ]);
    expect(response.finishReason).toBe("tool_calls");
    expect(response.usage).toEqual({ promptTokens: 149, completionTokens: 60, totalTokens: 209, reasoningTokens: 0 });
  });

  it("in strict mode parses the recorded strict call against the tool's schema, as chat does", async () => {
    const { server, provider } = await replay([sseSample("openai-chat-stream-tool-call-strict.recorded.sse")], true);
    const { response } = await collectStream(streamOf(provider, {}, undefined, [weatherTool]));

    expect(response.toolCalls).toEqual([
      {
        id: "call_CTf1nWJLqSeRgDqaCG27xZ74",
        type: "function",
        name: "get_weather",
        arguments: { city: "San Francisco", state: "CA" },
        function: { name: "get_weather", arguments: '{"city":"San Francisco","state":"CA"}' },
      },
    ]);
    expect(response.usage).toEqual({ promptTokens: 48, completionTokens: 19, totalTokens: 67, reasoningTokens: 0 });
    expect(server.requests[0]?.body).toMatchObject({
      stream: true,
      tools: [{ type: "function", function: { name: "get_weather", strict: true } }],
    });
  });
});

describe("chatStream: text and the answer chat would give", () => {
  it("yields each text piece as it comes; the pieces join to the content", async () => {
    const { deltas, response } = await collectEvents([
      chunk({ role: "assistant", content: "" }),
      chunk({ content: "It is " }),
      chunk({ content: "sunny " }),
      chunk({ content: "in Paris." }),
      chunk({}, "stop"),
      usageChunk(10, 5),
      DONE,
    ]);

    expect(deltas).toEqual(["It is ", "sunny ", "in Paris."]);
    expect(response).toEqual({
      content: "It is sunny in Paris.",
      toolCalls: [],
      finishReason: "stop",
      usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 },
    });
  });

  it("gives exactly what chat gives for the same answer: text, interleaved parallel calls, finish reason, usage", async () => {
    const completion = {
      id: "chatcmpl-1",
      object: "chat.completion",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: "Checking both.",
            tool_calls: [
              { id: "call_a", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
              { id: "call_b", type: "function", function: { name: "get_time", arguments: '{"zone":"CET"}' } },
            ],
          },
          finish_reason: "tool_calls",
        },
      ],
      usage: { prompt_tokens: 20, completion_tokens: 30, total_tokens: 50 },
    };
    const call = (index: number, piece: Record<string, unknown>) => chunk({ tool_calls: [{ index, ...piece }] });
    const { server, provider } = await replay([
      { body: completion },
      sseResponse([
        chunk({ role: "assistant", content: "Checking " }),
        chunk({ content: "both." }),
        call(0, { id: "call_a", type: "function", function: { name: "get_weather", arguments: "" } }),
        call(1, { id: "call_b", type: "function", function: { name: "get_time", arguments: '{"zo' } }),
        call(0, { function: { arguments: '{"city":' } }),
        call(1, { function: { arguments: 'ne":"CET"}' } }),
        call(0, { function: { arguments: '"Paris"}' } }),
        chunk({}, "tool_calls"),
        usageChunk(20, 30),
        DONE,
      ]),
    ]);
    const whole = await provider.chat(user, undefined, "gpt-4o", {});
    const { deltas, response } = await collectStream(streamOf(provider));

    expect(response).toEqual(whole);
    expect(response).toEqual(fromOpenAIChatCompletion(completion));
    expect(deltas.join("")).toBe(response.content);
    // The same request, asking for a stream.
    expect(server.requests[1]?.body).toEqual({
      ...(server.requests[0]?.body as object),
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it("streams a refusal as text; the response's content is the refusal, as in chat", async () => {
    const { deltas, response } = await collectEvents([
      chunk({ role: "assistant", content: null, refusal: "I can't " }),
      chunk({ refusal: "help." }),
      chunk({}, "stop"),
    ]);
    expect(deltas).toEqual(["I can't ", "help."]);
    expect(response).toEqual({ content: "I can't help.", toolCalls: [], finishReason: "stop" });
  });

  it("keeps the caller's stream_options and always asks for usage; stream: false in llmOptions is allowed", async () => {
    const { server, provider } = await replay([sseResponse([chunk({ content: "ok" }, "stop")])]);
    await collectStream(streamOf(provider, { stream: false, stream_options: { include_obfuscation: false } }));
    expect(server.requests[0]?.body).toMatchObject({
      stream: true,
      stream_options: { include_obfuscation: false, include_usage: true },
    });
  });

  it("refuses llmOptions.stream: true before sending anything, as chat does", async () => {
    const { server, provider } = await replay([]);
    await expect(collectStream(streamOf(provider, { stream: true }))).rejects.toThrow(
      "OpenAI Chat Completions: llmOptions.stream must be false or absent",
    );
    expect(server.requests).toHaveLength(0);
  });
});

describe("chatStream on hostile or broken streams", () => {
  it("passes arguments that are not JSON through as text at the end, as chat does (the loop tells the model)", async () => {
    const { response } = await collectEvents([
      chunk({
        tool_calls: [
          { index: 0, id: "call_x", type: "function", function: { name: "get_weather", arguments: '{"city": "Par' } },
        ],
      }),
      chunk({}, "tool_calls"),
    ]);
    expect(response.toolCalls).toEqual([
      { id: "call_x", type: "function", name: "get_weather", arguments: '{"city": "Par' },
    ]);
  });

  it("refuses a stream that ends without a finish_reason (a cut-off answer is no answer)", async () => {
    const { provider } = await replay([sseResponse([chunk({ content: "It is sun" }), DONE])]);
    const error = await expectUnreadable(
      collectStream(streamOf(provider)),
      PROVIDER,
      "OpenAI Chat Completions: the stream ended without a finish_reason",
    );
    expect(error.body).toContain("It is sun");
  });

  it("refuses an empty stream", async () => {
    const { provider } = await replay([sseResponse([DONE])]);
    await expectUnreadable(collectStream(streamOf(provider)), PROVIDER, /ended without a finish_reason/);
  });

  it("ignores unknown chunks and fields, other choices, and pieces that are not objects", async () => {
    const { deltas, response } = await collectEvents([
      { data: { object: "something.new", surprise: [1, 2, 3] } },
      { data: { choices: "not an array" } },
      { data: { choices: [null, 7] } },
      chunk({ content: "other choice" }, null, 1),
      chunk({ content: "Hi", tool_calls: [null, "x"], audio: { data: "…" } }),
      chunk({}, "stop"),
    ]);
    expect(deltas).toEqual(["Hi"]);
    expect(response).toEqual({ content: "Hi", toolCalls: [], finishReason: "stop" });
  });

  it("assembles calls without an index (some compatible servers) by their ids", async () => {
    const { response } = await collectEvents([
      chunk({ tool_calls: [{ id: "call_1", function: { name: "a", arguments: '{"x"' } }] }),
      chunk({ tool_calls: [{ function: { arguments: ":1}" } }] }),
      chunk({ tool_calls: [{ id: "call_2", function: { name: "b", arguments: "{}" } }] }),
      chunk({}, "tool_calls"),
    ]);
    expect(response.toolCalls).toEqual([
      { id: "call_1", type: "function", name: "a", arguments: '{"x":1}' },
      { id: "call_2", type: "function", name: "b", arguments: "{}" },
    ]);
  });

  it("refuses a call that never got a name, as chat does", async () => {
    const { provider } = await replay([
      sseResponse([
        chunk({ tool_calls: [{ index: 0, id: "call_1", function: { arguments: "{}" } }] }),
        chunk({}, "tool_calls"),
      ]),
    ]);
    await expectUnreadable(collectStream(streamOf(provider)), PROVIDER, /a function tool call has no name/);
  });

  it("rejects with the client's APIError for an error chunk, as chat does for an error status", async () => {
    const { provider } = await replay([
      sseResponse([
        chunk({ content: "Hi" }),
        { data: { error: { message: "server overloaded", type: "server_error" } } },
      ]),
    ]);
    const error = await collectStream(streamOf(provider)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as Error).message).toContain("server overloaded");
  });

  it("rejects with the client's error for an error status", async () => {
    const { provider } = await replay([{ status: 429, body: { error: { message: "slow down", type: "rate_limit" } } }]);
    await expect(collectStream(streamOf(provider))).rejects.toBeInstanceOf(OpenAI.RateLimitError);
  });

  it("assembles a huge number of deltas in linear time: each piece added once, each text joined once", async () => {
    const pieces = 20_000;
    async function* chunks() {
      for (let index = 0; index < pieces; index++) {
        yield {
          choices: [{ index: 0, delta: { content: "a", tool_calls: [{ index: 0, function: { arguments: " " } }] } }],
        };
      }
      yield {
        choices: [
          { index: 0, delta: { tool_calls: [{ index: 0, id: "c", function: { name: "t", arguments: "{}" } }] } },
        ],
      };
      yield { choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] };
    }
    const provider = createOpenAIChatProvider({ client: { chat: { completions: { create: async () => chunks() } } } });
    const { value, added, joinedChars } = await countTextAssembly(() => collectStream(streamOf(provider)));
    const { deltas, response } = value;
    // Work, not time (no machine load changes it): 2N + 1 pieces, the content and the arguments joined
    // once each (about 2N characters); a join per delta would copy about N² = 4e8.
    expect(added).toBe(2 * pieces + 1);
    expect(joinedChars).toBeLessThanOrEqual(2 * pieces + 2);
    expect(deltas).toHaveLength(pieces);
    expect(response.content).toHaveLength(pieces);
    expect(response.toolCalls[0]?.arguments).toBe(`${" ".repeat(pieces)}{}`);
  });

  it("refuses a client that answers a stream request with a whole completion", async () => {
    const create = async () => ({ choices: [{ message: { content: "ok" }, finish_reason: "stop" }] });
    const provider = createOpenAIChatProvider({ client: { chat: { completions: { create } } } });
    await expectUnreadable(
      collectStream(streamOf(provider)),
      PROVIDER,
      "the client did not return a stream (got object)",
    );
  });
});

describe("chatStream and abort", () => {
  it("an abort mid-stream reaches the request and ends the iteration with the signal's reason", async () => {
    const { server, provider } = await replay([
      { hang: true, contentType: "text/event-stream", raw: sseText([chunk({ content: "It is " })]) },
    ]);
    const controller = new AbortController();
    const iterator = streamOf(provider, {}, controller.signal)[Symbol.asyncIterator]();
    expect(await iterator.next()).toEqual({ done: false, value: { type: "text-delta", delta: "It is " } });
    const next = iterator.next();
    const reason = new Error("user cancelled");
    controller.abort(reason);
    await expect(next).rejects.toBe(reason);
    await server.waitForDisconnects(1);
  });

  it("a consumer that stops iterating early cancels the request", async () => {
    const { server, provider } = await replay([
      { hang: true, contentType: "text/event-stream", raw: sseText([chunk({ content: "It is " })]) },
    ]);
    for await (const part of streamOf(provider)) {
      expect(part).toEqual({ type: "text-delta", delta: "It is " });
      break;
    }
    await server.waitForDisconnects(1);
  });

  it("an abort before the request rejects without an answer", async () => {
    const { provider } = await replay([sseResponse([chunk({ content: "ok" }, "stop")])]);
    const controller = new AbortController();
    controller.abort(new Error("early"));
    await expect(collectStream(streamOf(provider, {}, controller.signal))).rejects.toThrow();
  });
});

describe("fromOpenAIChatStream (exported for custom providers)", () => {
  it("reads a stream of chunks given directly, with strict schemas", async () => {
    const chunks = [
      {
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [
                {
                  index: 0,
                  id: "c",
                  function: { name: "get_weather", arguments: '{"city":"X","state":"Y","units":null}' },
                },
              ],
            },
          },
        ],
      },
      { choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] },
    ];
    const schemas = new Map([["get_weather", weatherTool.function.parameters]]);
    const { response } = await collectStream(
      fromOpenAIChatStream({ stream: eventsOf(chunks), strictSchemas: schemas }),
    );
    // units is optional: strict mode's null for it is removed.
    expect(response.toolCalls[0]?.arguments).toEqual({ city: "X", state: "Y" });
  });
});

describe("chatStream (Chat): tool input, reasoning and usage details", () => {
  it("streams the recorded calls' arguments under the ids the response carries", async () => {
    const { provider } = await replay([sseSample("openai-chat-stream-parallel-tool-calls.recorded.sse")]);
    const collected = await collectStream(streamOf(provider));
    const inputs = checkToolInputs(collected);
    expect(inputs.map((input) => JSON.parse(input))).toEqual([
      { city: "Edinburgh", country: "GB", units: "c" },
      { ticker: "AAPL", exchange: "NASDAQ" },
    ]);
    expect(collected.parts[0]).toEqual({
      type: "tool-input-start",
      toolCallId: "call_JMW1whyEaYG438VE1OIflxA2",
      toolName: "GetWeatherArgs",
    });
  });

  it("in strict mode the deltas are the recorded raw text; the arguments are parsed against the schema", async () => {
    const { provider } = await replay([sseSample("openai-chat-stream-tool-call-strict.recorded.sse")], true);
    const collected = await collectStream(streamOf(provider, {}, undefined, [weatherTool]));
    expect(checkToolInputs(collected)).toEqual(['{"city":"San Francisco","state":"CA"}']);
    expect(collected.response.toolCalls[0]?.arguments).toEqual({ city: "San Francisco", state: "CA" });
  });

  it("interleaved parallel calls stream by call id, each started (id and name) before its first delta", async () => {
    const call = (index: number, piece: Record<string, unknown>) => chunk({ tool_calls: [{ index, ...piece }] });
    const collected = await collectEvents([
      call(0, { id: "call_a", type: "function", function: { name: "get_weather", arguments: "" } }),
      call(1, { id: "call_b", type: "function", function: { name: "get_time", arguments: '{"zo' } }),
      call(0, { function: { arguments: '{"city":' } }),
      call(1, { function: { arguments: 'ne":"CET"}' } }),
      call(0, { function: { arguments: '"Paris"}' } }),
      chunk({}, "tool_calls"),
    ]);
    expect(collected.parts.slice(0, -1)).toEqual([
      { type: "tool-input-start", toolCallId: "call_a", toolName: "get_weather" },
      { type: "tool-input-start", toolCallId: "call_b", toolName: "get_time" },
      { type: "tool-input-delta", toolCallId: "call_b", delta: '{"zo' },
      { type: "tool-input-delta", toolCallId: "call_a", delta: '{"city":' },
      { type: "tool-input-delta", toolCallId: "call_b", delta: 'ne":"CET"}' },
      { type: "tool-input-delta", toolCallId: "call_a", delta: '"Paris"}' },
    ]);
    expect(checkToolInputs(collected)).toEqual(['{"city":"Paris"}', '{"zone":"CET"}']);
  });

  it("a call whose id or name comes late starts then, with the argument pieces that came before", async () => {
    const collected = await collectEvents([
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"x"' } }] }),
      chunk({ tool_calls: [{ index: 0, id: "call_1", function: { arguments: ":" } }] }),
      chunk({ tool_calls: [{ index: 0, function: { name: "f", arguments: "1" } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: "}" } }] }),
      chunk({}, "tool_calls"),
    ]);
    expect(collected.parts.slice(0, -1)).toEqual([
      { type: "tool-input-start", toolCallId: "call_1", toolName: "f" },
      { type: "tool-input-delta", toolCallId: "call_1", delta: '{"x"' },
      { type: "tool-input-delta", toolCallId: "call_1", delta: ":" },
      { type: "tool-input-delta", toolCallId: "call_1", delta: "1" },
      { type: "tool-input-delta", toolCallId: "call_1", delta: "}" },
    ]);
    expect(checkToolInputs(collected)).toEqual(['{"x":1}']);
  });

  it("follows calls without an index (some compatible servers) by their ids", async () => {
    const collected = await collectEvents([
      chunk({ tool_calls: [{ id: "call_1", function: { name: "a", arguments: '{"x"' } }] }),
      chunk({ tool_calls: [{ function: { arguments: ":1}" } }] }),
      chunk({ tool_calls: [{ id: "call_2", function: { name: "b", arguments: "{}" } }] }),
      chunk({}, "tool_calls"),
    ]);
    expect(checkToolInputs(collected)).toEqual(['{"x":1}', "{}"]);
  });

  it("a call that never gets an id is not streamed (no id to match the response's); the answer is chat's", async () => {
    const { parts, response } = await collectEvents([
      chunk({ tool_calls: [{ index: 0, function: { name: "f", arguments: "{}" } }] }),
      chunk({}, "tool_calls"),
    ]);
    expect(parts).toHaveLength(1);
    expect(response.toolCalls).toEqual([{ type: "function", name: "f", arguments: "{}" }]);
  });

  it("maps a compatible server's reasoning_content / reasoning to reasoning deltas (made-up chunks, not a recording)", async () => {
    // Made up for this test, in the shape DeepSeek and vLLM (`reasoning_content`) and OpenRouter
    // (`reasoning`) document; OpenAI itself sends no reasoning text in Chat Completions.
    const { reasoning, deltas, response } = await collectEvents([
      chunk({ role: "assistant", content: null, reasoning_content: "The user asks " }),
      chunk({ content: null, reasoning_content: "about weather." }),
      chunk({ content: null, reasoning: " Answer briefly.", reasoning_content: null }),
      chunk({ content: "Sunny." }),
      chunk({}, "stop"),
    ]);
    expect(reasoning).toEqual(["The user asks ", "about weather.", " Answer briefly."]);
    expect(deltas).toEqual(["Sunny."]);
    expect(response).toEqual({ content: "Sunny.", toolCalls: [], finishReason: "stop" });
  });

  it("maps cached, cache-write and reasoning tokens in the stream as in chat (usage shaped as the API reference's)", async () => {
    const usage = {
      prompt_tokens: 2006,
      completion_tokens: 300,
      total_tokens: 2306,
      prompt_tokens_details: { cached_tokens: 1920, cache_write_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 192, audio_tokens: 0 },
    };
    const completion = {
      choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
      usage,
    };
    const { provider } = await replay([
      { body: completion },
      sseResponse([chunk({ content: "ok" }, "stop"), { data: { choices: [], usage } }, DONE]),
    ]);
    const whole = await provider.chat(user, undefined, "gpt-4o", {});
    const { response } = await collectStream(streamOf(provider));
    expect(response).toEqual(whole);
    expect(response.usage).toStrictEqual({
      promptTokens: 2006,
      completionTokens: 300,
      totalTokens: 2306,
      cachedInputTokens: 1920,
      cacheWriteTokens: 0,
      reasoningTokens: 192,
    });
  });

  it("leaves a detail a server did not report absent (never 0 for unknown)", async () => {
    const { response } = await collectEvents([
      chunk({ content: "ok" }, "stop"),
      { data: { choices: [], usage: { prompt_tokens: 5, completion_tokens: 1, prompt_tokens_details: null } } },
    ]);
    expect(response.usage).toStrictEqual({ promptTokens: 5, completionTokens: 1, totalTokens: 6 });
  });

  it("streams megabytes of arguments in linear time: each piece added once, the text joined once", async () => {
    const { pieces, piece } = MEGABYTE_ARGUMENTS;
    const [open, close] = ["[", "0]"];
    const callPiece = (fields: Record<string, unknown>) => ({
      choices: [{ index: 0, delta: { tool_calls: [{ index: 0, ...fields }] } }],
    });
    async function* chunks() {
      yield callPiece({ id: "c", function: { name: "t", arguments: open } });
      for (let index = 0; index < pieces; index++) yield callPiece({ function: { arguments: piece } });
      yield callPiece({ function: { arguments: close } });
      yield { choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] };
    }
    const read = () => fromOpenAIChatStream({ stream: chunks() });
    const { collected, size } = await collectMegabyteArguments(read, { callId: "c", open, close });
    expect(collected.response.toolCalls[0]?.arguments).toHaveLength(size);
  });
});

describe("chatStream (Chat) on broken streams", () => {
  it("refuses a chunk that is not JSON, naming it (the client's SyntaxError the cause)", async () => {
    const server = await startServer([
      {
        contentType: "text/event-stream",
        raw: `${sseText([chunk({ content: "It is " })])}data: {"id":"chatcmpl-1","choi\n\n`,
      },
    ]);
    const client = new OpenAI({ apiKey: "test", baseURL: `${server.url}/v1`, maxRetries: 0, logLevel: "off" });
    const provider = createOpenAIChatProvider({ client });
    const error = await expectUnreadable(
      collectStream(streamOf(provider)),
      PROVIDER,
      /^OpenAI Chat Completions: the stream sent an event that is not JSON \(/,
    );
    expect(error.cause).toBeInstanceOf(SyntaxError);
  });

  it("a connection cut mid-stream rejects with the client's error (never a half answer)", async () => {
    const { server, provider } = await replay([
      { hang: true, contentType: "text/event-stream", raw: sseText([chunk({ content: "It is " })]) },
    ]);
    const iterator = streamOf(provider)[Symbol.asyncIterator]();
    expect(await iterator.next()).toEqual({ done: false, value: { type: "text-delta", delta: "It is " } });
    const next = iterator.next();
    await server.close();
    // fetch's own error for a body cut off ("terminated"), as the client passes it on.
    await expect(next).rejects.toThrow("terminated");
  });
});
