import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import {
  createAnthropicProvider,
  fromAnthropicMessage,
  fromAnthropicStream,
} from "../../../src/adapters/anthropic/index.js";
import type { LLMProvider, Message } from "../../../src/index.js";
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

const PROVIDER = "Anthropic";
const startServer = useReplayServers();
const user: Message[] = [{ role: "user", content: "What's the weather in Paris?" }];

async function replay(script: ReplayResponse[]): Promise<{ server: ReplayServer; provider: LLMProvider }> {
  const server = await startServer(script);
  const client = new Anthropic({ apiKey: "test", baseURL: server.url, maxRetries: 0 });
  return { server, provider: createAnthropicProvider({ client }) };
}

function streamOf(provider: LLMProvider, options: Record<string, unknown> = {}, signal?: AbortSignal) {
  const { chatStream } = provider;
  if (chatStream === undefined) throw new Error("the provider has no chatStream");
  return chatStream.call(provider, user, undefined, "claude-haiku-4-5", options, signal);
}

/** Replays one streamed answer made of `events` and collects the provider's stream of it. */
async function collectEvents(events: SseEvent[]): Promise<CollectedStream> {
  const { provider } = await replay([sseResponse(events)]);
  return collectStream(streamOf(provider));
}

/** An event named after its `type`, as the API sends them. */
const event = (type: string, fields: Record<string, unknown> = {}): SseEvent => ({
  event: type,
  data: { type, ...fields },
});
const start = (usage: Record<string, unknown> = { input_tokens: 10, output_tokens: 1 }) =>
  event("message_start", {
    message: { id: "msg_1", type: "message", role: "assistant", content: [], stop_reason: null, usage },
  });
const blockStart = (index: number, block: Record<string, unknown>) =>
  event("content_block_start", { index, content_block: block });
const blockDelta = (index: number, delta: unknown) => event("content_block_delta", { index, delta });
const text = (index: number, piece: string) => blockDelta(index, { type: "text_delta", text: piece });
const json = (index: number, piece: string) => blockDelta(index, { type: "input_json_delta", partial_json: piece });
const blockStop = (index: number) => event("content_block_stop", { index });
const messageDelta = (stopReason: string, usage: Record<string, unknown> = { output_tokens: 20 }) =>
  event("message_delta", { delta: { stop_reason: stopReason, stop_sequence: null }, usage });
const STOP = event("message_stop");
const toolUse = (index: number, id: string, name: string) =>
  blockStart(index, { type: "tool_use", id, name, input: {} });

describe("chatStream over the real @anthropic-ai/sdk client, on the recorded streams", () => {
  it("assembles the recorded call (input from its JSON pieces, caller kept) with usage, and asks for a stream", async () => {
    const { server, provider } = await replay([sseSample("anthropic-stream-tool-use.recorded.sse")]);
    const { deltas, response } = await collectStream(streamOf(provider, { temperature: 0 }));

    expect(deltas).toEqual([]);
    expect(response).toEqual({
      content: "",
      toolCalls: [
        {
          id: "toolu_01TJoxvFknVdnV9XpWFPaRmY",
          type: "function",
          name: "get_weather",
          arguments: { location: "San Francisco, CA", units: "f" },
          providerMetadata: { anthropic: { caller: { type: "direct" } } },
        },
      ],
      finishReason: "tool_calls",
      usage: { promptTokens: 656, completionTokens: 74, totalTokens: 730, cachedInputTokens: 0, cacheWriteTokens: 0 },
    });
    expect(server.requests[0]?.url).toBe("/v1/messages");
    expect(server.requests[0]?.body).toMatchObject({
      model: "claude-haiku-4-5",
      max_tokens: 4096,
      temperature: 0,
      stream: true,
    });
  });

  // This fixture's last event (message_stop) has no blank line after it, so the client drops it
  // (SSE discards an event that is not terminated): the answer is finished by message_delta's stop_reason.
  it("streams the recorded text before the call; the deltas join to the content", async () => {
    const { provider } = await replay([sseSample("anthropic-stream-text-and-tool-use.fixture.sse")]);
    const { deltas, response } = await collectStream(streamOf(provider));

    expect(deltas).toEqual(["I", "'ll check the current weather in Paris for you."]);
    expect(response).toEqual({
      content: "I'll check the current weather in Paris for you.",
      toolCalls: [
        {
          id: "toolu_01NRLabsLyVHZPKxbKvkfSMn",
          type: "function",
          name: "get_weather",
          arguments: { location: "Paris" },
        },
      ],
      finishReason: "tool_calls",
      usage: { promptTokens: 377, completionTokens: 65, totalTokens: 442, cachedInputTokens: 0, cacheWriteTokens: 0 },
    });
  });
});

describe("chatStream (Anthropic): the answer chat would give", () => {
  it("gives exactly what chat gives: text, interleaved parallel calls, thinking kept, finish reason, usage", async () => {
    const message = {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "claude-haiku-4-5",
      content: [
        { type: "thinking", thinking: "Two lookups.", signature: "sig-abc" },
        { type: "text", text: "Checking both." },
        { type: "tool_use", id: "toolu_a", name: "get_weather", input: { city: "Paris" } },
        { type: "tool_use", id: "toolu_b", name: "get_time", input: {} },
      ],
      stop_reason: "tool_use",
      stop_sequence: null,
      usage: { input_tokens: 30, cache_read_input_tokens: 5, output_tokens: 40 },
    };
    const { server, provider } = await replay([
      { body: message },
      sseResponse([
        start({ input_tokens: 30, cache_read_input_tokens: 5, output_tokens: 1 }),
        blockStart(0, { type: "thinking", thinking: "" }),
        blockDelta(0, { type: "thinking_delta", thinking: "Two " }),
        blockDelta(0, { type: "thinking_delta", thinking: "lookups." }),
        blockDelta(0, { type: "signature_delta", signature: "sig-abc" }),
        blockStop(0),
        blockStart(1, { type: "text", text: "" }),
        text(1, "Checking "),
        text(1, "both."),
        blockStop(1),
        toolUse(2, "toolu_a", "get_weather"),
        toolUse(3, "toolu_b", "get_time"),
        json(2, ""),
        json(2, '{"city"'),
        json(3, ""),
        json(2, ': "Paris"}'),
        blockStop(3),
        blockStop(2),
        { event: "ping", data: { type: "ping" } },
        messageDelta("tool_use", { output_tokens: 40 }),
        STOP,
      ]),
    ]);
    const whole = await provider.chat(user, undefined, "claude-haiku-4-5", {});
    const { deltas, response } = await collectStream(streamOf(provider));

    expect(response).toEqual(whole);
    expect(response.toolCalls[0]?.providerMetadata).toEqual({
      anthropic: { thinking: [{ type: "thinking", thinking: "Two lookups.", signature: "sig-abc" }] },
    });
    expect(response.usage).toEqual({ promptTokens: 35, completionTokens: 40, totalTokens: 75, cachedInputTokens: 5 });
    expect(deltas).toEqual(["Checking ", "both."]);
    // The same request, asking for a stream.
    expect(server.requests[1]?.body).toEqual({ ...(server.requests[0]?.body as object), stream: true });
  });

  it("a final answer: end_turn finishes with stop; message_delta's cumulative counts win over message_start's", async () => {
    const { response } = await collectEvents([
      start({ input_tokens: 12, output_tokens: 1 }),
      blockStart(0, { type: "text", text: "" }),
      text(0, "Sunny."),
      blockStop(0),
      messageDelta("end_turn", { input_tokens: 12, output_tokens: 3, cache_read_input_tokens: null }),
      STOP,
    ]);
    expect(response).toEqual({
      content: "Sunny.",
      toolCalls: [],
      finishReason: "stop",
      usage: { promptTokens: 12, completionTokens: 3, totalTokens: 15 },
    });
  });

  it("refuses llmOptions.stream: true before sending anything, as chat does", async () => {
    const { server, provider } = await replay([]);
    await expect(collectStream(streamOf(provider, { stream: true }))).rejects.toThrow(
      "Anthropic: llmOptions.stream must be false or absent",
    );
    expect(server.requests).toHaveLength(0);
  });
});

describe("chatStream (Anthropic) on hostile or broken streams", () => {
  it("passes input JSON that does not parse through as text (the loop tells the model); empty input is {}", async () => {
    const { response } = await collectEvents([
      start(),
      toolUse(0, "toolu_a", "get_weather"),
      json(0, '{"location": "Par'),
      toolUse(1, "toolu_b", "get_time"),
      json(1, ""),
      messageDelta("tool_use"),
      STOP,
    ]);
    expect(response.toolCalls).toEqual([
      { id: "toolu_a", type: "function", name: "get_weather", arguments: '{"location": "Par' },
      { id: "toolu_b", type: "function", name: "get_time", arguments: {} },
    ]);
  });

  it("a model-sent __proto__ key in streamed input stays an own data property; no prototype is set", async () => {
    const { response } = await collectEvents([
      start(),
      toolUse(0, "toolu_a", "t"),
      json(0, '{"__proto__": {"polluted": true}, "constructor": 1}'),
      messageDelta("tool_use"),
      STOP,
    ]);
    const args = response.toolCalls[0]?.arguments as Record<string, unknown>;
    expect(Object.getPrototypeOf(args)).toBe(Object.prototype);
    expect(Object.hasOwn(args, "__proto__")).toBe(true);
    expect(Object.keys(args)).toEqual(["__proto__", "constructor"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("input JSON that is not an object reaches the loop as its JSON text, as in chat", async () => {
    const { provider } = await replay([
      sseResponse([start(), toolUse(0, "toolu_a", "t"), json(0, "[1, 2]"), messageDelta("tool_use"), STOP]),
    ]);
    const { response } = await collectStream(streamOf(provider));
    expect(response.toolCalls[0]?.arguments).toBe("[1,2]");
  });

  it("refuses a stream that ends before a stop_reason or message_stop (a cut-off answer is no answer)", async () => {
    const { provider } = await replay([
      sseResponse([start(), blockStart(0, { type: "text", text: "" }), text(0, "Sun")]),
    ]);
    const error = await expectUnreadable(
      collectStream(streamOf(provider)),
      PROVIDER,
      "Anthropic: the stream ended without a stop_reason or message_stop",
    );
    expect(error.body).toContain("Sun");
  });

  it("rejects with the client's APIError for an error event, as chat does for an error status", async () => {
    const { provider } = await replay([
      sseResponse([
        start(),
        { event: "error", data: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } },
      ]),
    ]);
    const error = await collectStream(streamOf(provider)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect((error as Error).message).toContain("Overloaded");
  });

  it("refuses an error object a client passes on as an event", async () => {
    const create = async () =>
      eventsOf([{ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }]);
    const provider = createAnthropicProvider({ client: { messages: { create } } });
    await expectUnreadable(
      collectStream(streamOf(provider)),
      PROVIDER,
      "Anthropic: the response is an error (overloaded_error: Overloaded)",
    );
  });

  it("ignores pings, unknown events, deltas of unknown blocks or types, and a block started twice", async () => {
    const { deltas, response } = await collectEvents([
      start(),
      { event: "brand_new_event", data: { type: "brand_new_event", index: 0 } },
      blockStart(0, { type: "text", text: "" }),
      blockStart(0, { type: "tool_use", id: "toolu_x", name: "hijack", input: {} }),
      text(0, "Hi"),
      text(7, "nowhere"),
      blockDelta(0, { type: "citations_delta", citation: {} }),
      blockDelta(0, "not an object"),
      { event: "ping", data: { type: "ping" } },
      blockStart(1, { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} }),
      messageDelta("end_turn"),
      STOP,
    ]);
    expect(deltas).toEqual(["Hi"]);
    expect(response).toMatchObject({ content: "Hi", toolCalls: [], finishReason: "stop" });
  });

  it("refuses a tool_use block without a name, as chat does", async () => {
    const { provider } = await replay([
      sseResponse([
        start(),
        blockStart(0, { type: "tool_use", id: "toolu_a", input: {} }),
        messageDelta("tool_use"),
        STOP,
      ]),
    ]);
    await expectUnreadable(collectStream(streamOf(provider)), PROVIDER, /a tool_use block has no name/);
  });

  it("assembles a huge number of deltas in linear time: each piece added once, each text joined once", async () => {
    const pieces = 20_000;
    function* events() {
      yield { type: "message_start", message: { content: [], usage: { input_tokens: 1 } } };
      yield { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } };
      yield {
        type: "content_block_start",
        index: 1,
        content_block: { type: "tool_use", id: "t1", name: "t", input: {} },
      };
      yield { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"a":"' } };
      for (let index = 0; index < pieces; index++) {
        yield { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "a" } };
        yield { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "b" } };
      }
      yield { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '"}' } };
      yield { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 5 } };
      yield { type: "message_stop" };
    }
    const create = async () => eventsOf(events());
    const provider = createAnthropicProvider({ client: { messages: { create } } });
    const { value, added, joinedChars } = await countTextAssembly(() => collectStream(streamOf(provider)));
    const { deltas, response } = value;
    // Work, not time (no machine load changes it): 2N + 2 pieces, the text and the JSON joined once
    // each (about 2N characters); a join per delta would copy about N² = 4e8.
    expect(added).toBe(2 * pieces + 2);
    expect(joinedChars).toBeLessThanOrEqual(2 * pieces + 16);
    expect(deltas).toHaveLength(pieces);
    expect(response.content).toHaveLength(pieces);
    expect(response.toolCalls[0]?.arguments).toEqual({ a: "b".repeat(pieces) });
  });

  it("gives the same as fromAnthropicMessage for the assembled message", async () => {
    const { response } = await collectEvents([
      start(),
      blockStart(0, { type: "text", text: "" }),
      text(0, "ok"),
      messageDelta("max_tokens"),
      STOP,
    ]);
    const content = [{ type: "text", text: "ok" }];
    expect(response).toEqual(
      fromAnthropicMessage({
        content,
        stop_reason: "max_tokens",
        usage: { input_tokens: 10, output_tokens: 20 },
      }),
    );
  });
});

describe("chatStream (Anthropic) and abort", () => {
  it("an abort mid-stream reaches the request and ends the iteration with the signal's reason", async () => {
    const { server, provider } = await replay([
      {
        hang: true,
        contentType: "text/event-stream",
        raw: sseText([start(), blockStart(0, { type: "text", text: "" }), text(0, "It is ")]),
      },
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
      {
        hang: true,
        contentType: "text/event-stream",
        raw: sseText([start(), blockStart(0, { type: "text", text: "" }), text(0, "It is ")]),
      },
    ]);
    for await (const part of streamOf(provider)) {
      expect(part).toEqual({ type: "text-delta", delta: "It is " });
      break;
    }
    await server.waitForDisconnects(1);
  });

  it("rejects with the client's error for an error status", async () => {
    const { provider } = await replay([
      { status: 400, body: { type: "error", error: { type: "invalid_request_error", message: "bad" } } },
    ]);
    await expect(collectStream(streamOf(provider))).rejects.toBeInstanceOf(Anthropic.BadRequestError);
  });
});

describe("fromAnthropicStream (exported for custom providers)", () => {
  it("reads a stream of events given directly", async () => {
    const events = [
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hi" } },
      { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 1 } },
      { type: "message_stop" },
    ];
    const { deltas, response } = await collectStream(fromAnthropicStream({ stream: eventsOf(events) }));
    expect(deltas).toEqual(["Hi"]);
    expect(response).toEqual({
      content: "Hi",
      toolCalls: [],
      finishReason: "stop",
      usage: { promptTokens: 0, completionTokens: 1, totalTokens: 1 },
    });
  });
});

describe("chatStream (Anthropic): thinking, tool input and usage details", () => {
  it("streams the recorded call's input_json_delta pieces under the tool_use id the response carries", async () => {
    const { provider } = await replay([sseSample("anthropic-stream-tool-use.recorded.sse")]);
    const collected = await collectStream(streamOf(provider));
    expect(checkToolInputs(collected)).toEqual(['{"location": "San Francisco, CA", "units": "f"}']);
    expect(collected.parts[0]).toEqual({
      type: "tool-input-start",
      toolCallId: "toolu_01TJoxvFknVdnV9XpWFPaRmY",
      toolName: "get_weather",
    });
  });

  it("streams the recorded text and call in order: the text's deltas, then the call's start and input", async () => {
    const { provider } = await replay([sseSample("anthropic-stream-text-and-tool-use.fixture.sse")]);
    const collected = await collectStream(streamOf(provider));
    const types = collected.parts.map((part) => part.type);
    expect(types.lastIndexOf("text-delta")).toBeLessThan(types.indexOf("tool-input-start"));
    expect(checkToolInputs(collected)).toHaveLength(collected.response.toolCalls.length);
  });

  it("streams the recorded thinking as reasoning deltas and keeps the thinking block, as chat does", async () => {
    const { provider } = await replay([sseSample("anthropic-stream-thinking.vercel-ai.sse")]);
    const { reasoning, deltas, response, parts } = await collectStream(streamOf(provider));
    expect(reasoning.join("")).toBe("The previous result was 925. Now I need to divide that by 5.\n\n925 ÷ 5 = 185");
    expect(reasoning).toHaveLength(9);
    const types = parts.map((part) => part.type);
    expect(types.lastIndexOf("reasoning-delta")).toBeLessThan(types.indexOf("text-delta"));
    expect(deltas.join("")).toBe("925 ÷ 5 = 185");
    expect(response).toEqual({
      content: "925 ÷ 5 = 185",
      toolCalls: [],
      finishReason: "stop",
      usage: { promptTokens: 69, completionTokens: 53, totalTokens: 122, cachedInputTokens: 0, cacheWriteTokens: 0 },
    });
  });

  it("maps the recorded prompt cache counts; server tools' input is not streamed as calls", async () => {
    const { provider } = await replay([sseSample("anthropic-stream-prompt-cache.vercel-ai.sse")]);
    const { toolInputs, response } = await collectStream(streamOf(provider));
    expect(toolInputs.size).toBe(0);
    expect(response.content).toBe("The sum of the squares of the numbers 1 through 12 is **650**.");
    // input_tokens counts the uncached input only; promptTokens is the whole input, as OpenAI's prompt_tokens.
    expect(response.usage).toStrictEqual({
      promptTokens: 6 + 3337 + 6289,
      completionTokens: 198,
      totalTokens: 6 + 3337 + 6289 + 198,
      cachedInputTokens: 6289,
      cacheWriteTokens: 3337,
      reasoningTokens: 0,
    });
  });

  it("interleaved parallel calls stream by tool_use id; a thinking block's start text is a reasoning delta", async () => {
    const collected = await collectEvents([
      start(),
      blockStart(0, { type: "thinking", thinking: "Two ", signature: "" }),
      blockDelta(0, { type: "thinking_delta", thinking: "calls." }),
      blockDelta(0, { type: "signature_delta", signature: "sig" }),
      toolUse(1, "toolu_a", "get_weather"),
      toolUse(2, "toolu_b", "get_time"),
      json(1, '{"city":'),
      json(2, '{"zone":"CET"}'),
      json(1, '"Paris"}'),
      messageDelta("tool_use"),
      STOP,
    ]);
    expect(collected.parts.slice(0, -1)).toEqual([
      { type: "reasoning-delta", delta: "Two " },
      { type: "reasoning-delta", delta: "calls." },
      { type: "tool-input-start", toolCallId: "toolu_a", toolName: "get_weather" },
      { type: "tool-input-start", toolCallId: "toolu_b", toolName: "get_time" },
      { type: "tool-input-delta", toolCallId: "toolu_a", delta: '{"city":' },
      { type: "tool-input-delta", toolCallId: "toolu_b", delta: '{"zone":"CET"}' },
      { type: "tool-input-delta", toolCallId: "toolu_a", delta: '"Paris"}' },
    ]);
    expect(checkToolInputs(collected)).toEqual(['{"city":"Paris"}', '{"zone":"CET"}']);
    expect(collected.response.toolCalls[0]?.providerMetadata).toEqual({
      anthropic: { thinking: [{ type: "thinking", thinking: "Two calls.", signature: "sig" }] },
    });
  });

  it('the output tool of structuredOutput: "tool" is the answer, not a call: its input is not streamed as one', async () => {
    const server = await startServer([
      sseResponse([
        start(),
        toolUse(0, "toolu_out", "final_answer"),
        json(0, '{"city":"Paris"}'),
        messageDelta("tool_use"),
        STOP,
      ]),
    ]);
    const client = new Anthropic({ apiKey: "test", baseURL: server.url, maxRetries: 0 });
    const provider = createAnthropicProvider({ client, structuredOutput: "tool" });
    const output = { name: "final_answer", schema: { type: "object", properties: { city: { type: "string" } } } };
    const { toolInputs, deltas, response } = await collectStream(streamOf(provider, { output }));
    expect(toolInputs.size).toBe(0);
    expect(deltas).toEqual(['{"city":"Paris"}']);
    expect(response).toMatchObject({ content: '{"city":"Paris"}', toolCalls: [], finishReason: "stop" });
  });

  it("maps thinking_tokens to reasoningTokens and leaves unreported details absent, in chat as in the stream", async () => {
    const usage = { input_tokens: 10, output_tokens: 50, output_tokens_details: { thinking_tokens: 30 } };
    const message = { content: [{ type: "text", text: "ok" }], stop_reason: "end_turn", usage };
    const { provider } = await replay([
      { body: { id: "msg_1", type: "message", role: "assistant", ...message } },
      sseResponse([
        start({ input_tokens: 10, output_tokens: 1 }),
        blockStart(0, { type: "text", text: "ok" }),
        messageDelta("end_turn", { output_tokens: 50, output_tokens_details: { thinking_tokens: 30 } }),
        STOP,
      ]),
    ]);
    const whole = await provider.chat(user, undefined, "claude-haiku-4-5", {});
    const { response } = await collectStream(streamOf(provider));
    expect(response).toEqual(whole);
    expect(response.usage).toStrictEqual({
      promptTokens: 10,
      completionTokens: 50,
      totalTokens: 60,
      reasoningTokens: 30,
    });
  });

  it("streams megabytes of input in linear time: each piece added once, the text joined once", async () => {
    const { pieces, piece } = MEGABYTE_ARGUMENTS;
    const [open, close] = ['{"a":[', "0]}"];
    const inputDelta = (partial: string) => ({
      type: "content_block_delta",
      index: 0,
      delta: { type: "input_json_delta", partial_json: partial },
    });
    async function* events() {
      yield { type: "message_start", message: { content: [], usage: { input_tokens: 1, output_tokens: 1 } } };
      yield {
        type: "content_block_start",
        index: 0,
        content_block: { type: "tool_use", id: "t", name: "f", input: {} },
      };
      yield inputDelta(open);
      for (let index = 0; index < pieces; index++) yield inputDelta(piece);
      yield inputDelta(close);
      yield { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 9 } };
      yield { type: "message_stop" };
    }
    const read = () => fromAnthropicStream({ stream: events() });
    const { collected } = await collectMegabyteArguments(read, { callId: "t", open, close });
    const input = collected.response.toolCalls[0]?.arguments as { a?: unknown[] } | undefined;
    expect(input?.a).toHaveLength(pieces + 1);
  });
});

describe("chatStream (Anthropic) on broken streams", () => {
  it("refuses an event that is not JSON, naming it (the client's SyntaxError the cause)", async () => {
    const server = await startServer([
      {
        contentType: "text/event-stream",
        raw: `${sseText([start()])}event: content_block_start\ndata: {"type":"content_blo\n\n`,
      },
    ]);
    const client = new Anthropic({ apiKey: "test", baseURL: server.url, maxRetries: 0, logLevel: "off" });
    const provider = createAnthropicProvider({ client });
    const error = await expectUnreadable(
      collectStream(streamOf(provider)),
      PROVIDER,
      /^Anthropic: the stream sent an event that is not JSON \(/,
    );
    expect(error.cause).toBeInstanceOf(SyntaxError);
  });

  it("a connection cut mid-stream rejects with the client's error (never a half answer)", async () => {
    const { server, provider } = await replay([
      {
        hang: true,
        contentType: "text/event-stream",
        raw: sseText([start(), blockStart(0, { type: "text", text: "" }), text(0, "It is ")]),
      },
    ]);
    const iterator = streamOf(provider)[Symbol.asyncIterator]();
    expect(await iterator.next()).toEqual({ done: false, value: { type: "text-delta", delta: "It is " } });
    const next = iterator.next();
    await server.close();
    // fetch's own error for a body cut off ("terminated"), as the client passes it on.
    await expect(next).rejects.toThrow("terminated");
  });
});
