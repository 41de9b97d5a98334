import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import {
  createOpenAIResponsesProvider,
  fromOpenAIResponse,
  fromOpenAIResponsesStream,
} from "../../../src/adapters/openai/index.js";
import type { LLMProvider, Message, ToolDefinition } from "../../../src/index.js";
import { expectUnreadable, useReplayServers } from "../../helpers/adapter-fixtures.js";
import {
  type ReplayResponse,
  type ReplayServer,
  readSampleText,
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

const PROVIDER = "OpenAI Responses";
const startServer = useReplayServers();
const user: Message[] = [{ role: "user", content: "What's the weather in Beijing?" }];

async function replay(
  script: ReplayResponse[],
  strict = false,
): Promise<{ server: ReplayServer; provider: LLMProvider }> {
  const server = await startServer(script);
  const client = new OpenAI({ apiKey: "test", baseURL: `${server.url}/v1`, maxRetries: 0 });
  return { server, provider: createOpenAIResponsesProvider({ client, strict }) };
}

function streamOf(
  provider: LLMProvider,
  options: Record<string, unknown> = {},
  signal?: AbortSignal,
  tools?: ToolDefinition[],
) {
  const { chatStream } = provider;
  if (chatStream === undefined) throw new Error("the provider has no chatStream");
  return chatStream.call(provider, user, tools, "gpt-5.1", options, signal);
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
const completed = (output: unknown[], usage: unknown = { input_tokens: 12, output_tokens: 8, total_tokens: 20 }) =>
  event("response.completed", { response: { id: "resp_1", object: "response", status: "completed", output, usage } });
const textDelta = (delta: string, outputIndex = 0) =>
  event("response.output_text.delta", { item_id: "msg_1", output_index: outputIndex, content_index: 0, delta });
const message = (text: string) => ({
  id: "msg_1",
  type: "message",
  role: "assistant",
  status: "completed",
  content: [{ type: "output_text", text, annotations: [] }],
});
const functionCall = (callId: string, name: string, args: string, status = "completed") => ({
  id: `fc_${callId}`,
  type: "function_call",
  status,
  call_id: callId,
  name,
  arguments: args,
});

describe("chatStream over the real openai client, on the recorded Responses stream", () => {
  it("gives the recorded call, finish reason and usage, and asks for a stream", async () => {
    const { server, provider } = await replay([sseSample("openai-responses-stream-tool-call.sse")]);
    const { deltas, response } = await collectStream(streamOf(provider, { tool_choice: "required" }));

    expect(deltas).toEqual([]);
    expect(response).toEqual({
      content: "",
      toolCalls: [
        { id: "call_2FQdm3Br7Qb35YUBSkDR7kue", type: "function", name: "get_weather", arguments: '{"city":"Beijing"}' },
      ],
      finishReason: "tool_calls",
      usage: {
        promptTokens: 45,
        completionTokens: 25,
        totalTokens: 70,
        cachedInputTokens: 0,
        cacheWriteTokens: 0,
        reasoningTokens: 0,
      },
    });
    expect(server.requests[0]?.url).toBe("/v1/responses");
    expect(server.requests[0]?.body).toMatchObject({ model: "gpt-5.1", stream: true, tool_choice: "required" });
  });

  it("gives what chat gives for the recorded stream's final response", async () => {
    const finalLine = readSampleText("openai-responses-stream-tool-call.sse")
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .at(-1);
    const final = JSON.parse(String(finalLine).slice("data: ".length)) as { response: Record<string, unknown> };
    const { server, provider } = await replay([
      { body: final.response },
      sseSample("openai-responses-stream-tool-call.sse"),
    ]);
    const whole = await provider.chat(user, undefined, "gpt-5.1", {});
    const { response } = await collectStream(streamOf(provider));
    expect(response).toEqual(whole);
    // The same request, asking for a stream.
    expect(server.requests[1]?.body).toEqual({ ...(server.requests[0]?.body as object), stream: true });
  });

  it("in strict mode parses the recorded call against the tool's schema", async () => {
    const tool: ToolDefinition = {
      type: "function",
      function: {
        name: "get_weather",
        description: "Get weather",
        parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      },
    };
    const { provider } = await replay([sseSample("openai-responses-stream-tool-call.sse")], true);
    const { response } = await collectStream(streamOf(provider, {}, undefined, [tool]));
    expect(response.toolCalls[0]).toMatchObject({
      arguments: { city: "Beijing" },
      function: { name: "get_weather", arguments: '{"city":"Beijing"}' },
    });
  });
});

describe("chatStream: Responses text", () => {
  it("yields each output_text delta; the pieces join to the content", async () => {
    const { deltas, response } = await collectEvents([
      event("response.created", { response: { id: "resp_1", status: "in_progress", output: [] } }),
      event("response.output_item.added", { output_index: 0, item: { ...message(""), content: [] } }),
      textDelta("It is "),
      textDelta("sunny."),
      event("response.output_text.done", { output_index: 0, content_index: 0, text: "It is sunny." }),
      completed([message("It is sunny.")]),
    ]);
    expect(deltas).toEqual(["It is ", "sunny."]);
    expect(response).toEqual({
      content: "It is sunny.",
      toolCalls: [],
      finishReason: "stop",
      usage: { promptTokens: 12, completionTokens: 8, totalTokens: 20 },
    });
  });

  it("streams a refusal as text", async () => {
    const refusal = { id: "msg_1", type: "message", role: "assistant", content: [{ type: "refusal", refusal: "No." }] };
    const { deltas, response } = await collectEvents([
      event("response.refusal.delta", { output_index: 0, content_index: 0, delta: "No." }),
      completed([refusal]),
    ]);
    expect(deltas).toEqual(["No."]);
    expect(response.content).toBe("No.");
  });

  it("an incomplete response (max_output_tokens) finishes with length, as in chat", async () => {
    const { response } = await collectEvents([
      textDelta("It is"),
      event("response.incomplete", {
        response: {
          status: "incomplete",
          incomplete_details: { reason: "max_output_tokens" },
          output: [message("It is")],
          usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5 },
        },
      }),
    ]);
    expect(response).toMatchObject({ content: "It is", finishReason: "length" });
  });
});

describe("chatStream on hostile or broken Responses streams", () => {
  it("assembles interleaved parallel calls by output_index when the final response carries no output", async () => {
    const delta = (index: number, text: string) =>
      event("response.function_call_arguments.delta", { output_index: index, item_id: `fc_${index}`, delta: text });
    const { response } = await collectEvents([
      event("response.output_item.added", {
        output_index: 1,
        item: functionCall("call_b", "get_time", "", "in_progress"),
      }),
      event("response.output_item.added", {
        output_index: 0,
        item: functionCall("call_a", "get_weather", "", "in_progress"),
      }),
      delta(0, '{"city"'),
      delta(1, '{"zone":'),
      delta(0, ':"Paris"}'),
      delta(1, '"CET"}'),
      completed([]),
    ]);
    expect(response).toEqual({
      content: "",
      toolCalls: [
        { id: "call_a", type: "function", name: "get_weather", arguments: '{"city":"Paris"}' },
        { id: "call_b", type: "function", name: "get_time", arguments: '{"zone":"CET"}' },
      ],
      finishReason: "tool_calls",
      usage: { promptTokens: 12, completionTokens: 8, totalTokens: 20 },
    });
  });

  it("refuses a final response whose output is not an array, as chat does", async () => {
    const { provider } = await replay([
      sseResponse([textDelta("Hi"), event("response.completed", { response: { status: "completed", output: "x" } })]),
    ]);
    await expectUnreadable(
      collectStream(streamOf(provider)),
      PROVIDER,
      "the response has no output array (got string)",
    );
  });

  it("passes arguments that are not JSON through as text, as chat does", async () => {
    const { provider } = await replay([
      sseResponse([completed([functionCall("call_a", "get_weather", '{"city": "Par')])]),
    ]);
    const { response } = await collectStream(streamOf(provider));
    expect(response.toolCalls).toEqual([
      { id: "call_a", type: "function", name: "get_weather", arguments: '{"city": "Par' },
    ]);
  });

  it("refuses a stream that ends without a final event", async () => {
    const { provider } = await replay([
      sseResponse([
        event("response.output_item.added", { output_index: 0, item: message("") }),
        textDelta("It is sun"),
      ]),
    ]);
    await expectUnreadable(
      collectStream(streamOf(provider)),
      PROVIDER,
      "OpenAI Responses: the stream ended without response.completed",
    );
  });

  it("refuses an error event, quoting its code and message", async () => {
    const { provider } = await replay([
      sseResponse([
        textDelta("It"),
        event("error", { code: "server_error", message: "The server had an error", param: null }),
      ]),
    ]);
    await expectUnreadable(
      collectStream(streamOf(provider)),
      PROVIDER,
      "OpenAI Responses: the stream sent an error (server_error: The server had an error)",
    );
  });

  it("refuses a failed response, as chat does", async () => {
    const { provider } = await replay([
      sseResponse([
        event("response.failed", { response: { status: "failed", error: { message: "boom" }, output: [] } }),
      ]),
    ]);
    await expectUnreadable(collectStream(streamOf(provider)), PROVIDER, "OpenAI Responses: the response failed: boom");
  });

  it("ignores unknown events, events without an output_index and events that are not objects", async () => {
    const { deltas, response } = await collectEvents([
      event("response.brand_new_thing", { output_index: 0, delta: "ignored" }),
      event("response.output_text.delta", { delta: "no index" }),
      event("response.output_text.delta", { output_index: -1, delta: "bad index" }),
      { event: "response.output_text.delta", data: "[1,2]" },
      textDelta("Hi"),
      completed([message("Hi")]),
    ]);
    expect(deltas).toEqual(["Hi"]);
    expect(response.content).toBe("Hi");
  });

  it("assembles a huge number of deltas in linear time: each piece added once, each text joined once", async () => {
    const pieces = 20_000;
    function* events() {
      yield { type: "response.output_item.added", output_index: 0, item: functionCall("c", "t", "", "in_progress") };
      yield { type: "response.output_item.added", output_index: 1, item: { type: "message", content: [] } };
      for (let index = 0; index < pieces; index++) {
        yield { type: "response.function_call_arguments.delta", output_index: 0, delta: " " };
        yield { type: "response.output_text.delta", output_index: 1, delta: "a" };
      }
      yield { type: "response.completed", response: { status: "completed", output: [] } };
    }
    const create = async () => eventsOf(events());
    const provider = createOpenAIResponsesProvider({ client: { responses: { create } } });
    const { value, added, joinedChars } = await countTextAssembly(() => collectStream(streamOf(provider)));
    const { deltas, response } = value;
    // Work, not time (no machine load changes it): 2N pieces, the arguments and the text joined once
    // each (about 2N characters); a join per delta would copy about N² = 4e8.
    expect(added).toBe(2 * pieces);
    expect(joinedChars).toBeLessThanOrEqual(2 * pieces);
    expect(deltas).toHaveLength(pieces);
    expect(response.content).toHaveLength(pieces);
    expect(response.toolCalls[0]?.arguments).toBe(" ".repeat(pieces));
  });

  it("gives the same as fromOpenAIResponse for the final response", async () => {
    const output = [message("Checking."), functionCall("call_a", "get_weather", '{"city":"Paris"}')];
    const { provider } = await replay([sseResponse([textDelta("Checking."), completed(output)])]);
    const { response } = await collectStream(streamOf(provider));
    expect(response).toEqual(
      fromOpenAIResponse({
        status: "completed",
        output,
        usage: { input_tokens: 12, output_tokens: 8, total_tokens: 20 },
      }),
    );
  });
});

describe("chatStream (Responses) and abort", () => {
  it("an abort mid-stream reaches the request and ends the iteration with the signal's reason", async () => {
    const { server, provider } = await replay([
      { hang: true, contentType: "text/event-stream", raw: sseText([textDelta("It is ")]) },
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

  it("rejects with the client's error for an error status", async () => {
    const { provider } = await replay([{ status: 500, body: { error: { message: "down" } } }]);
    await expect(collectStream(streamOf(provider))).rejects.toBeInstanceOf(OpenAI.InternalServerError);
  });
});

describe("fromOpenAIResponsesStream (exported for custom providers)", () => {
  it("reads a stream of events given directly", async () => {
    const events = [
      { type: "response.output_text.delta", output_index: 0, delta: "Hi" },
      { type: "response.completed", response: { status: "completed", output: [message("Hi")] } },
    ];
    const { deltas, response } = await collectStream(fromOpenAIResponsesStream({ stream: eventsOf(events) }));
    expect(deltas).toEqual(["Hi"]);
    expect(response).toEqual({ content: "Hi", toolCalls: [], finishReason: "stop" });
  });
});

describe("chatStream (Responses): reasoning, tool input and usage details", () => {
  it("streams the recorded reasoning summary and the call's arguments; the response is chat's for the final Response", async () => {
    const sample = "openai-responses-stream-reasoning-summary-tool-call.vercel-ai.sse";
    const { provider } = await replay([sseSample(sample)]);
    const collected = await collectStream(streamOf(provider));
    const { reasoning, deltas, response } = collected;

    expect(reasoning.join("")).toBe(
      "**Calculating step-by-step using calculator**\n\nI'll compute 12 plus 7, then multiply the result by 3, and finally multiply that by 10, reporting the final product.",
    );
    expect(reasoning).toHaveLength(32);
    expect(deltas).toEqual([]);
    expect(checkToolInputs(collected)).toEqual(['{"a":12,"b":7,"op":"add"}']);
    // The reasoning comes first, then the call: the recorded order.
    expect(collected.parts.map((part) => part.type).indexOf("tool-input-start")).toBe(32);
    const final = readSampleText(sample)
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => JSON.parse(line.slice(6)) as { type: string; response?: unknown })
      .find((item) => item.type === "response.completed")?.response;
    expect(response).toEqual(fromOpenAIResponse(final));
    expect(response).toEqual({
      content: "",
      toolCalls: [
        {
          id: "call_AB6AaRZ1FYZB2RwS6A5vbdqn",
          type: "function",
          name: "calculator",
          arguments: '{"a":12,"b":7,"op":"add"}',
        },
      ],
      finishReason: "tool_calls",
      usage: { promptTokens: 134, completionTokens: 28, totalTokens: 162, cachedInputTokens: 0, reasoningTokens: 0 },
    });
  });

  it("streams the recorded call's arguments under the call_id the response carries", async () => {
    const { provider } = await replay([sseSample("openai-responses-stream-tool-call.sse")]);
    const collected = await collectStream(streamOf(provider));
    expect(checkToolInputs(collected)).toEqual(['{"city":"Beijing"}']);
    expect(collected.parts[0]).toEqual({
      type: "tool-input-start",
      toolCallId: "call_2FQdm3Br7Qb35YUBSkDR7kue",
      toolName: "get_weather",
    });
  });

  it("maps the recorded cached and reasoning tokens, in chat and in the stream alike", async () => {
    const sample = "openai-responses-stream-cached-usage.vercel-ai.sse";
    const final = readSampleText(sample)
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => JSON.parse(line.slice(6)) as { type: string; response?: unknown })
      .find((item) => item.type === "response.completed")?.response;
    const { provider } = await replay([sseSample(sample), { body: final }]);
    const { deltas, response } = await collectStream(streamOf(provider));
    const usage = {
      promptTokens: 7112,
      completionTokens: 463,
      totalTokens: 7575,
      cachedInputTokens: 3072,
      reasoningTokens: 64,
    };
    expect(response.usage).toStrictEqual(usage);
    // The fixture's text deltas are trimmed (the final Response holds the whole text): only the start matches.
    expect(response.content.startsWith(deltas.slice(0, 2).join(""))).toBe(true);
    expect(await provider.chat(user, undefined, "gpt-5.1", {})).toEqual(response);
  });

  it("interleaved parallel calls stream their arguments by call id, each started before its first delta", async () => {
    const delta = (index: number, text: string) =>
      event("response.function_call_arguments.delta", {
        output_index: index,
        item_id: `fc_call_${index}`,
        delta: text,
      });
    const collected = await collectEvents([
      event("response.output_item.added", {
        output_index: 0,
        item: functionCall("call_0", "get_weather", "", "in_progress"),
      }),
      event("response.output_item.added", {
        output_index: 1,
        item: functionCall("call_1", "get_time", "", "in_progress"),
      }),
      delta(0, '{"city"'),
      delta(1, '{"zone":'),
      delta(0, ':"Paris"}'),
      delta(1, '"CET"}'),
      completed([
        functionCall("call_0", "get_weather", '{"city":"Paris"}'),
        functionCall("call_1", "get_time", '{"zone":"CET"}'),
      ]),
    ]);
    expect(collected.parts.slice(0, -1)).toEqual([
      { type: "tool-input-start", toolCallId: "call_0", toolName: "get_weather" },
      { type: "tool-input-start", toolCallId: "call_1", toolName: "get_time" },
      { type: "tool-input-delta", toolCallId: "call_0", delta: '{"city"' },
      { type: "tool-input-delta", toolCallId: "call_1", delta: '{"zone":' },
      { type: "tool-input-delta", toolCallId: "call_0", delta: ':"Paris"}' },
      { type: "tool-input-delta", toolCallId: "call_1", delta: '"CET"}' },
    ]);
    expect(checkToolInputs(collected)).toEqual(['{"city":"Paris"}', '{"zone":"CET"}']);
  });

  it("follows an argument delta that names its item only (no output_index) by item_id", async () => {
    const collected = await collectEvents([
      event("response.output_item.added", { output_index: 0, item: functionCall("call_a", "f", "", "in_progress") }),
      event("response.function_call_arguments.delta", { item_id: "fc_call_a", delta: '{"x":1}' }),
      completed([functionCall("call_a", "f", '{"x":1}')]),
    ]);
    expect(checkToolInputs(collected)).toEqual(['{"x":1}']);
  });

  it("a call a server announces only when done starts then, its whole arguments one delta", async () => {
    const collected = await collectEvents([
      event("response.output_item.done", { output_index: 0, item: functionCall("call_a", "f", '{"x":1}') }),
      completed([functionCall("call_a", "f", '{"x":1}')]),
    ]);
    expect(collected.parts.slice(0, -1)).toEqual([
      { type: "tool-input-start", toolCallId: "call_a", toolName: "f" },
      { type: "tool-input-delta", toolCallId: "call_a", delta: '{"x":1}' },
    ]);
  });

  it("in strict mode the deltas are the raw text the model sent; the arguments are parsed without its nulls", async () => {
    const schema = {
      type: "object",
      properties: { city: { type: "string" }, units: { type: "string" } },
      required: ["city"],
    };
    const tools: ToolDefinition[] = [
      { type: "function", function: { name: "get_weather", description: "w", parameters: schema } },
    ];
    const raw = '{"city":"Paris","units":null}';
    const { provider } = await replay(
      [
        sseResponse([
          event("response.output_item.added", {
            output_index: 0,
            item: functionCall("call_a", "get_weather", "", "in_progress"),
          }),
          event("response.function_call_arguments.delta", { output_index: 0, delta: raw.slice(0, 10) }),
          event("response.function_call_arguments.delta", { output_index: 0, delta: raw.slice(10) }),
          completed([functionCall("call_a", "get_weather", raw)]),
        ]),
      ],
      true,
    );
    const collected = await collectStream(streamOf(provider, {}, undefined, tools));
    expect(collected.response.toolCalls[0]?.arguments).toEqual({ city: "Paris" });
    expect(checkToolInputs(collected)).toEqual([raw]);
  });

  it("streams megabytes of arguments in linear time: each piece added once, the text joined once", async () => {
    const { pieces, piece } = MEGABYTE_ARGUMENTS;
    const [open, close] = ["[", "0]"];
    const argumentsDelta = (delta: string) => ({
      type: "response.function_call_arguments.delta",
      output_index: 0,
      delta,
    });
    async function* events() {
      yield { type: "response.output_item.added", output_index: 0, item: functionCall("c", "t", "", "in_progress") };
      yield argumentsDelta(open);
      for (let index = 0; index < pieces; index++) yield argumentsDelta(piece);
      yield argumentsDelta(close);
      yield { type: "response.completed", response: { status: "completed", output: [] } };
    }
    const read = () => fromOpenAIResponsesStream({ stream: events() });
    const { collected, size } = await collectMegabyteArguments(read, { callId: "c", open, close });
    expect(collected.response.toolCalls[0]?.arguments).toHaveLength(size);
  });
});

describe("chatStream (Responses) on broken streams", () => {
  it("refuses an event that is not JSON, naming it (the client's SyntaxError the cause)", async () => {
    const server = await startServer([
      {
        contentType: "text/event-stream",
        raw: `${sseText([textDelta("It is ")])}event: response.output_text.delta\ndata: {"type":"response.out\n\n`,
      },
    ]);
    const client = new OpenAI({ apiKey: "test", baseURL: `${server.url}/v1`, maxRetries: 0, logLevel: "off" });
    const provider = createOpenAIResponsesProvider({ client });
    const error = await expectUnreadable(
      collectStream(streamOf(provider)),
      PROVIDER,
      /^OpenAI Responses: the stream sent an event that is not JSON \(/,
    );
    expect(error.cause).toBeInstanceOf(SyntaxError);
  });

  it("a connection cut mid-stream rejects (never a half answer)", async () => {
    const { server, provider } = await replay([
      { hang: true, contentType: "text/event-stream", raw: sseText([textDelta("It is ")]) },
    ]);
    const iterator = streamOf(provider)[Symbol.asyncIterator]();
    expect(await iterator.next()).toEqual({ done: false, value: { type: "text-delta", delta: "It is " } });
    const next = iterator.next();
    await server.close();
    // fetch's own error for a body cut off ("terminated"), as the client passes it on.
    await expect(next).rejects.toThrow("terminated");
  });
});
