import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it, vi } from "vitest";
import * as z from "zod";
import {
  type AnthropicClientLike,
  createAnthropicProvider,
  DEFAULT_ANTHROPIC_MAX_TOKENS,
  DEFAULT_ANTHROPIC_MODEL,
} from "../../../src/adapters/anthropic/index.js";
import {
  type ContentPart,
  defineTool,
  errorResult,
  isToolLoopError,
  isUnsupportedContentError,
  type LLMStreamPart,
  type Message,
  mediaResult,
  newToolResult,
  runToolLoop,
  streamToolLoop,
  type Tool,
  ToolLoopError,
  type ToolLoopEvent,
} from "../../../src/index.js";
import {
  abortOnceRequested,
  expectLoopRejectsUnreadable,
  expectUnreadable,
  okSample,
  registryOf,
  useReplayServers,
} from "../../helpers/adapter-fixtures.js";
import {
  type ReplayResponse,
  type ReplayServer,
  readSample,
  readSampleText,
  sseResponse,
  sseSample,
} from "../../helpers/replay-server.js";
import { checkStreamedInput, streamedRun } from "../../helpers/stream-parts.js";

type Json = Record<string, unknown>;
type WireMessage = { role: string; content: string | Json[] };
type WireRequest = Json & { messages: WireMessage[]; tools?: Json[]; model: string; max_tokens: number };

const startServer = useReplayServers();

async function replay(script: ReplayResponse[]): Promise<{ server: ReplayServer; client: Anthropic }> {
  const server = await startServer(script);
  return { server, client: new Anthropic({ apiKey: "test", baseURL: server.url, maxRetries: 0 }) };
}

const body = (server: ReplayServer, index: number) => server.requests[index]?.body as WireRequest;

/** The sample request as our client sends it: the TS SDK's recording also carried `stream: false` and `type: "custom"`. */
function withoutSdkExtras(request: WireRequest): WireRequest {
  const { stream: _stream, ...rest } = request;
  return { ...rest, tools: rest.tools?.map(({ type: _type, ...tool }) => tool) } as WireRequest;
}

/** A plain JSON-Schema tool built from a sample request's tool definition. */
function toolFromSample(definition: Json, execute: Tool["execute"]): Tool {
  return {
    name: definition.name as string,
    description: definition.description as string,
    parameters: definition.input_schema as Json,
    execute,
  };
}

const weatherRequest = readSample<WireRequest>("anthropic-request-tools.json");
const weatherDefinition = weatherRequest.tools?.[0] as Json;
const sunnyJson = '{"location": "San Francisco, CA", "temperature": "68\\u00b0F", "condition": "Sunny"}';

describe("createAnthropicProvider with the real @anthropic-ai/sdk client", () => {
  it("runs a full cycle with a zod tool: tool_use → tool → tool_result follow-up → final answer", async () => {
    const { server, client } = await replay([
      okSample("anthropic-response-tool-use.json"),
      okSample("anthropic-followup-response.json"),
    ]);
    const execute = vi.fn(async () => sunnyJson);
    const weather = defineTool({
      name: "get_weather",
      description: weatherDefinition.description as string,
      parameters: z.object({
        location: z.string().describe("The city and state, e.g. San Francisco, CA"),
        units: z.enum(["c", "f"]).describe("Unit for the output, either 'c' for celsius or 'f' for fahrenheit"),
      }),
      execute,
    });
    const provider = createAnthropicProvider({ client, model: "claude-haiku-4-5", maxTokens: 1024 });

    const result = await runToolLoop({ provider, tools: registryOf(weather), maxIterations: 5 }, [
      { role: "user", content: "What is the weather in SF?" },
    ]);

    expect(execute).toHaveBeenCalledWith({ location: "San Francisco, CA", units: "f" }, expect.anything());
    expect(result.content).toBe(
      "The weather in San Francisco, CA is currently **Sunny** with a temperature of **68°F**.",
    );
    expect(result.iterations).toBe(2);
    expect(result.usage).toEqual({
      promptTokens: 656 + 770,
      completionTokens: 74 + 25,
      totalTokens: 656 + 74 + 770 + 25,
      cachedInputTokens: 0,
      cacheWriteTokens: 0,
    });
    expect(server.requests.map(({ method, url }) => `${method} ${url}`)).toEqual([
      "POST /v1/messages",
      "POST /v1/messages",
    ]);

    const first = body(server, 0);
    expect(first.messages).toEqual(weatherRequest.messages);
    expect(first.model).toBe(weatherRequest.model);
    expect(first.max_tokens).toBe(weatherRequest.max_tokens);
    expect(first.tools).toEqual([
      {
        name: "get_weather",
        description: weatherDefinition.description,
        input_schema: expect.objectContaining({ type: "object", required: ["location", "units"] }),
      },
    ]);
    const followup = readSample<WireRequest>("anthropic-followup-request-tool-result.json");
    expect(body(server, 1).messages).toEqual(followup.messages);
  });

  it("sends the follow-up exactly as the recorded one for parallel calls: one user message, results first, in call order", async () => {
    const { server, client } = await replay([
      okSample("anthropic-response-parallel-tool-use.json"),
      okSample("anthropic-followup-response-parallel.json"),
    ]);
    const sampleRequest = readSample<WireRequest>("anthropic-request-tools-parallel.json");
    // The second call answers first: results must still follow call order.
    const delays = new Map([
      [1, 20],
      [2, 0],
    ]);
    const tool = toolFromSample(sampleRequest.tools?.[0] as Json, async (args) => {
      await new Promise((resolve) => setTimeout(resolve, delays.get(args.count as number)));
      return newToolResult(`Called with ${String(args.count)}`);
    });
    const provider = createAnthropicProvider({ client, model: "claude-sonnet-4-0", maxTokens: 1000 });

    const result = await runToolLoop({ provider, tools: registryOf(tool), maxIterations: 5 }, [
      { role: "user", content: "Use the test_tool with count 1, then use it again with count 2" },
    ]);

    expect(body(server, 0)).toEqual(withoutSdkExtras(sampleRequest));
    expect(body(server, 1)).toEqual(
      withoutSdkExtras(readSample<WireRequest>("anthropic-followup-request-parallel-tool-results.json")),
    );
    expect(result.content).toContain("I've successfully used the test_tool twice");
  });

  it("replays text and tool_use together in the assistant history (recorded follow-up, byte for byte as JSON)", async () => {
    const { server, client } = await replay([
      okSample("anthropic-response-text-and-tool-use.json"),
      okSample("anthropic-followup-response.json"),
    ]);
    const expected = readSample<WireRequest>("anthropic-followup-request-text-and-tool-use-history.json");
    const tool = toolFromSample(expected.tools?.[0] as Json, () => newToolResult(sunnyJson));
    const provider = createAnthropicProvider({ client, model: "claude-haiku-4-5", maxTokens: 1024 });

    const result = await runToolLoop({ provider, tools: registryOf(tool), maxIterations: 2 }, [
      expected.messages[0] as Message,
    ]);

    expect(body(server, 1)).toEqual(expected);
    const assistant = result.messages[1];
    expect(assistant?.content).toBe(
      "I'll get the weather for each of those cities. Let me start by checking San Francisco.",
    );
    expect(assistant?.toolCalls?.[0]?.providerMetadata).toEqual({ anthropic: { caller: { type: "direct" } } });
  });

  const failure = "RuntimeError('Unexpected error, try again')";
  it.each<[string, Tool["execute"], unknown]>([
    // Same text as the recording: the whole follow-up equals it.
    ["an error result", () => errorResult(failure), failure],
    [
      "a throw",
      () => {
        throw new Error(failure);
      },
      expect.stringContaining(failure),
    ],
  ])("sets is_error on the tool_result when the tool returns %s", async (_label, execute, content) => {
    const expected = readSample<WireRequest>("anthropic-followup-request-tool-result-is-error.json");
    // The recorded first response is the assistant turn echoed in the recorded follow-up.
    const firstResponse = { ...readSample("anthropic-response-tool-use.json"), content: expected.messages[1]?.content };
    const { server, client } = await replay([
      { body: firstResponse },
      okSample("anthropic-followup-response-after-is-error.json"),
    ]);
    const tool = toolFromSample(expected.tools?.[0] as Json, execute);
    const provider = createAnthropicProvider({ client, model: "claude-haiku-4-5", maxTokens: 1024 });

    const result = await runToolLoop({ provider, tools: registryOf(tool), maxIterations: 2 }, [
      { role: "user", content: "What is the weather in SF?" },
    ]);

    const sent = body(server, 1);
    const results = sent.messages[2]?.content as Json[];
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({
      type: "tool_result",
      tool_use_id: "toolu_01A9HHF5Ezy3oBrKmSgfASm9",
      is_error: true,
    });
    const [recorded] = (expected.messages[2] as { content: Json[] }).content;
    expect(sent).toEqual({
      ...expected,
      messages: [expected.messages[0], expected.messages[1], { role: "user", content: [{ ...recorded, content }] }],
    });
    expect(result.messages[2]).toMatchObject({ role: "tool", isError: true });
  });

  it("runs a call with no arguments (input {}) and echoes it with its text", async () => {
    const { server, client } = await replay([
      okSample("anthropic-response-tool-use-no-args.vercel-ai.json"),
      okSample("anthropic-followup-response.json"),
    ]);
    const execute = vi.fn(() => "updated");
    const tool = defineTool({
      name: "updateIssueList",
      description: "Update the issue list",
      parameters: z.object({}),
      execute,
    });
    const provider = createAnthropicProvider({ client, model: "claude-haiku-4-5" });

    await runToolLoop({ provider, tools: registryOf(tool), maxIterations: 2 }, [
      { role: "user", content: "Update it" },
    ]);

    expect(execute).toHaveBeenCalledWith({}, expect.anything());
    const sample = readSample<{ content: Json[] }>("anthropic-response-tool-use-no-args.vercel-ai.json");
    expect(body(server, 1).messages).toEqual([
      { role: "user", content: "Update it" },
      { role: "assistant", content: sample.content },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "toolu_01LRmxn9vGM1d2DZSDBowdZ1", content: "updated" }],
      },
    ]);
  });

  it("rejects with ToolLoopError whose cause is the SDK's error on an API 400", async () => {
    const sample = readSample<{ status_code: number; body: Json }>(
      "anthropic-error-response-400-tool-result-without-tool-use.json",
    );
    const { client } = await replay([{ status: sample.status_code, body: sample.body }]);
    const provider = createAnthropicProvider({ client, model: "claude-haiku-4-5" });

    const error = await runToolLoop({ provider, maxIterations: 3 }, [{ role: "user", content: "hi" }]).catch(
      (caught: unknown) => caught,
    );

    expect(error).toBeInstanceOf(ToolLoopError);
    expect(isToolLoopError(error)).toBe(true);
    const cause = (error as ToolLoopError).cause;
    expect(cause).toBeInstanceOf(Anthropic.BadRequestError);
    expect((cause as InstanceType<typeof Anthropic.BadRequestError>).status).toBe(400);
    expect((cause as InstanceType<typeof Anthropic.BadRequestError>).error).toEqual(sample.body);
    expect((error as ToolLoopError).message).toContain("unexpected `tool_use_id` found in `tool_result` blocks");
  });

  it("aborts the HTTP request mid-flight when the loop's signal aborts", async () => {
    const { server, client } = await replay([{ hang: true }]);
    const provider = createAnthropicProvider({ client });
    const { settled: loop } = await abortOnceRequested(
      server,
      (signal) => runToolLoop({ provider, maxIterations: 3 }, [{ role: "user", content: "hi" }], { signal }),
      new Error("user cancelled"),
    );

    await expect(loop).rejects.toSatisfy((error) => isToolLoopError(error) && error.message.includes("user cancelled"));
    // The signal reached the client: it closed the HTTP request.
    await server.waitForDisconnects(1);
  });

  it("hands the signal to the client: chat() alone rejects with the SDK's abort error", async () => {
    const { server, client } = await replay([{ hang: true }]);
    const provider = createAnthropicProvider({ client });
    const { settled: chat } = await abortOnceRequested(server, (signal) =>
      provider.chat([{ role: "user", content: "hi" }], undefined, "", {}, signal),
    );

    await expect(chat).rejects.toBeInstanceOf(Anthropic.APIUserAbortError);
  });

  it("passes llmOptions through; max_tokens overrides maxTokens; stream: false is left out", async () => {
    const { server, client } = await replay([okSample("anthropic-followup-response.json")]);
    const provider = createAnthropicProvider({ client, model: "claude-haiku-4-5", maxTokens: 1024 });

    await runToolLoop(
      {
        provider,
        tools: registryOf(toolFromSample(weatherDefinition, () => newToolResult(""))),
        maxIterations: 1,
        llmOptions: {
          temperature: 0.2,
          max_tokens: 300,
          tool_choice: { type: "any" },
          metadata: { user_id: "u-1" },
          stream: false,
        },
      },
      [{ role: "user", content: "hi" }],
    );

    const sent = body(server, 0);
    expect(sent).toMatchObject({
      temperature: 0.2,
      max_tokens: 300,
      tool_choice: { type: "any" },
      metadata: { user_id: "u-1" },
    });
    expect(sent).not.toHaveProperty("stream");
  });

  it("sends the loop's model, else the factory's; getDefaultModel() returns the factory's", async () => {
    const { server, client } = await replay([
      okSample("anthropic-followup-response.json"),
      okSample("anthropic-followup-response.json"),
    ]);
    const provider = createAnthropicProvider({ client, model: "claude-haiku-4-5" });
    const messages: Message[] = [{ role: "user", content: "hi" }];

    await runToolLoop({ provider, model: "claude-opus-4-5", maxIterations: 1 }, messages);
    await runToolLoop({ provider, maxIterations: 1 }, messages);

    expect(provider.getDefaultModel()).toBe("claude-haiku-4-5");
    expect(server.requests.map((request) => (request.body as WireRequest).model)).toEqual([
      "claude-opus-4-5",
      "claude-haiku-4-5",
    ]);
    expect(body(server, 1).max_tokens).toBe(DEFAULT_ANTHROPIC_MAX_TOKENS);
  });

  it("defaults the model and puts system messages in the top-level system", async () => {
    const { server, client } = await replay([okSample("anthropic-followup-response.json")]);
    const provider = createAnthropicProvider({ client });

    await runToolLoop({ provider, maxIterations: 1 }, [
      { role: "system", content: "You are terse." },
      { role: "system", content: "Answer in English." },
      { role: "user", content: "hi" },
    ]);

    expect(provider.getDefaultModel()).toBe(DEFAULT_ANTHROPIC_MODEL);
    expect(body(server, 0)).toEqual({
      model: DEFAULT_ANTHROPIC_MODEL,
      max_tokens: DEFAULT_ANTHROPIC_MAX_TOKENS,
      system: "You are terse.\n\nAnswer in English.",
      messages: [{ role: "user", content: "hi" }],
    });
  });

  it("replays thinking blocks before the turn's tool_use blocks (extended thinking)", async () => {
    const thinking = { type: "thinking", thinking: "I should call the tool.", signature: "sig-123" };
    const redacted = { type: "redacted_thinking", data: "opaque" };
    const toolUse = {
      type: "tool_use",
      id: "toolu_think",
      name: "get_weather",
      input: { location: "Paris", units: "c" },
    };
    const first = { ...readSample("anthropic-response-tool-use.json"), content: [thinking, redacted, toolUse] };
    const { server, client } = await replay([{ body: first }, okSample("anthropic-followup-response.json")]);
    const provider = createAnthropicProvider({ client, model: "claude-haiku-4-5" });

    await runToolLoop(
      { provider, tools: registryOf(toolFromSample(weatherDefinition, () => newToolResult("12°C"))), maxIterations: 2 },
      [{ role: "user", content: "Weather in Paris?" }],
    );

    expect(body(server, 1).messages[1]).toEqual({ role: "assistant", content: [thinking, redacted, toolUse] });
  });

  it("accepts the real client structurally (no SDK import in src)", () => {
    const client: AnthropicClientLike = new Anthropic({ apiKey: "test", baseURL: "http://127.0.0.1:1" });
    expect(createAnthropicProvider({ client }).getDefaultModel()).toBe(DEFAULT_ANTHROPIC_MODEL);
  });
});

describe("createAnthropicProvider with responses it cannot read (D06)", () => {
  const message = (content: unknown, extra: Json = {}): Json => ({
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "claude-sonnet-4-6",
    content,
    stop_reason: "end_turn",
    usage: { input_tokens: 3, output_tokens: 1 },
    ...extra,
  });
  const chat = (client: Anthropic) =>
    createAnthropicProvider({ client }).chat([{ role: "user", content: "hi" }], undefined, "", {});

  it.each<[string, unknown, RegExp]>([
    ["an empty object", {}, /^Anthropic: the response has no content array \(got undefined\)$/],
    [
      "an error body (type: error)",
      { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
      /^Anthropic: the response is an error \(overloaded_error: Overloaded\)$/,
    ],
    [
      "an error body without type",
      { error: { type: "api_error", message: "Internal server error" } },
      /^Anthropic: the response is an error \(api_error: Internal server error\)$/,
    ],
    ["content that is text, not blocks", message("Hello"), /no content array \(got string\)/],
    ["a JSON array", [message([])], /^Anthropic: the response is not an object \(got array\)$/],
    [
      "a tool_use block without a name",
      message([{ type: "tool_use", id: "toolu_1", input: {} }], { stop_reason: "tool_use" }),
      /^Anthropic: a tool_use block has no name \(got undefined\)$/,
    ],
    [
      "a tool_use block with an empty name",
      message([{ type: "tool_use", id: "toolu_1", name: "", input: {} }], { stop_reason: "tool_use" }),
      /^Anthropic: a tool_use block has no name \(got ""\)$/,
    ],
  ])("rejects %s with status 200", async (_name, response, expected) => {
    const { client } = await replay([{ body: response }]);
    const error = await expectUnreadable(chat(client), "Anthropic", expected);
    expect(JSON.parse(error.body)).toEqual(response);
  });

  it.each<[string, Json, string]>([
    ["no content blocks after a tool result (end_turn)", message([]), ""],
    ["an empty text", message([{ type: "text", text: "" }]), ""],
    ["a refusal without content", message([], { stop_reason: "refusal" }), ""],
  ])("still reads %s as an answer", async (_name, response, content) => {
    const { client } = await replay([{ body: response }]);
    await expect(chat(client)).resolves.toMatchObject({ content, toolCalls: [] });
  });

  it("the loop rejects with ToolLoopError whose cause is the InvalidProviderResponseError, keeping the transcript", async () => {
    const { client } = await replay([
      okSample("anthropic-response-tool-use.json"),
      { body: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } },
    ]);
    const weather = toolFromSample(weatherDefinition, () => sunnyJson);

    const run = runToolLoop(
      { provider: createAnthropicProvider({ client }), tools: registryOf(weather), maxIterations: 3 },
      [{ role: "user", content: "What's the weather like in San Francisco?" }],
    );

    const error = await expectLoopRejectsUnreadable(run, "Anthropic", [
      { role: "user" },
      { role: "assistant", toolCalls: [expect.objectContaining({ name: "get_weather" })] },
      { role: "tool", content: sunnyJson },
    ]);
    expect(error.iterations).toBe(2);
  });
});

describe("createAnthropicProvider options", () => {
  const client = { messages: { create: async () => ({ content: [] }) } } satisfies AnthropicClientLike;

  it.each([
    ["no options", undefined, /options must be an object/],
    ["no client", {}, /client must be an Anthropic client/],
    ["a client without messages.create", { client: { messages: {} } }, /client must be an Anthropic client/],
    ["an empty model", { client, model: "" }, /model must be a non-empty string, got ""/],
    ["maxTokens 0", { client, maxTokens: 0 }, /maxTokens must be an integer ≥ 1, got 0/],
    ["maxTokens 1.5", { client, maxTokens: 1.5 }, /maxTokens must be an integer ≥ 1, got 1.5/],
  ])("throws a TypeError for %s", (_label, options, message) => {
    expect(() => createAnthropicProvider(options as never)).toThrow(TypeError);
    expect(() => createAnthropicProvider(options as never)).toThrow(message);
  });

  it("propagates any client error unchanged", async () => {
    const failure = new Error("boom");
    const provider = createAnthropicProvider({ client: { messages: { create: () => Promise.reject(failure) } } });
    await expect(provider.chat([{ role: "user", content: "hi" }], undefined, "", {})).rejects.toBe(failure);
  });
});

describe("createAnthropicProvider streamed by the loop (chatStream)", () => {
  it("streamToolLoop streams the recorded text, runs the recorded call and streams the final answer", async () => {
    const event = (type: string, fields: Json = {}) => ({ event: type, data: { type, ...fields } });
    const { server, client } = await replay([
      sseSample("anthropic-stream-text-and-tool-use.fixture.sse"),
      sseResponse([
        event("message_start", { message: { content: [], usage: { input_tokens: 400, output_tokens: 1 } } }),
        event("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
        event("content_block_delta", { index: 0, delta: { type: "text_delta", text: "Sunny in Paris." } }),
        event("content_block_stop", { index: 0 }),
        event("message_delta", { delta: { stop_reason: "end_turn" }, usage: { output_tokens: 6 } }),
        event("message_stop"),
      ]),
    ]);
    const execute = vi.fn((_args: Record<string, unknown>) => "sunny");
    const schema = { type: "object", properties: { location: { type: "string" } }, required: ["location"] };
    const tool = toolFromSample({ name: "get_weather", description: "Weather.", input_schema: schema }, execute);
    const run = streamToolLoop(
      { provider: createAnthropicProvider({ client }), tools: registryOf(tool), maxIterations: 3 },
      [{ role: "user", content: "Weather in Paris?" }],
    );
    const events: ToolLoopEvent[] = [];
    for await (const item of run) events.push(item);
    const result = await run.result;

    expect(execute.mock.calls[0]?.[0]).toEqual({ location: "Paris" });
    expect(events.filter((item) => item.type === "text-delta").map((item) => item.delta)).toEqual([
      "I",
      "'ll check the current weather in Paris for you.",
      "Sunny in Paris.",
    ]);
    expect(result).toMatchObject({ content: "Sunny in Paris.", stopReason: "completed" });
    expect(result.usage).toEqual({
      promptTokens: 777,
      completionTokens: 71,
      totalTokens: 848,
      cachedInputTokens: 0,
      cacheWriteTokens: 0,
    });
    expect(server.requests.map((request) => (request.body as Json).stream)).toEqual([true, true]);
  });
});

describe("createAnthropicProvider: thinking, tool input and providerName through the loop", () => {
  it("streamToolLoop emits the recorded call's input before the call runs and the recorded thinking", async () => {
    const { client } = await replay([
      sseSample("anthropic-stream-tool-use.recorded.sse"),
      sseSample("anthropic-stream-thinking.vercel-ai.sse"),
    ]);
    const execute = vi.fn((_args: Record<string, unknown>) => "sunny");
    const tool = defineTool({
      name: "get_weather",
      description: "Weather of a place.",
      parameters: z.object({ location: z.string(), units: z.string() }),
      execute,
    });
    const { events, result, providerNames } = await streamedRun(
      { provider: createAnthropicProvider({ client }), tools: registryOf(tool), maxIterations: 3 },
      [{ role: "user", content: "Weather in San Francisco?" }],
    );

    const input = checkStreamedInput(events, { toolCallId: "toolu_01TJoxvFknVdnV9XpWFPaRmY", toolName: "get_weather" });
    expect(JSON.parse(input)).toEqual(execute.mock.calls[0]?.[0]);
    const reasoning = events.flatMap((event) => (event.type === "reasoning-delta" ? [event] : []));
    expect(reasoning.map((event) => event.iteration)).toEqual(Array(9).fill(2));
    expect(reasoning.map((event) => event.delta).join("")).toMatch(/^The previous result was 925\./);
    expect(result.content).toBe("925 ÷ 5 = 185");
    expect(result.usage).toEqual({
      promptTokens: 656 + 69,
      completionTokens: 74 + 53,
      totalTokens: 656 + 69 + 74 + 53,
      cachedInputTokens: 0,
      cacheWriteTokens: 0,
    });
    expect(providerNames).toEqual(["anthropic", "anthropic"]);
  });

  it('providerName is "anthropic" unless the factory names it', async () => {
    const { client } = await replay([]);
    expect(createAnthropicProvider({ client }).providerName).toBe("anthropic");
    expect(createAnthropicProvider({ client, providerName: "aws.bedrock" }).providerName).toBe("aws.bedrock");
    expect(() => createAnthropicProvider({ client, providerName: "" })).toThrow(
      new TypeError('createAnthropicProvider: providerName must be a non-empty string, got ""'),
    );
  });
});

describe("createAnthropicProvider: images, files and structured output (real @anthropic-ai/sdk client)", () => {
  const JPEG = "/9j/4AAQSkZJRgABAQAAAQABAAD/";
  const PDF = "JVBERi0xLjQK";
  const content = "anthropic-content/";
  const visionText = "What is in the above image?";
  type StructuredRequest = WireRequest & { output_config?: Json; tool_choice?: Json };
  const blocks = (message: WireMessage | undefined) => message?.content as Json[];
  const formatSchema = (request: StructuredRequest) => ((request.output_config as Json).format as Json).schema as Json;

  /** A docs request whose `"$NAME"` placeholder is replaced by `data`. */
  const withData = (file: string, placeholder: string, data: string) =>
    JSON.parse(readSampleText(`${content}${file}`).replace(`"${placeholder}"`, JSON.stringify(data))) as WireRequest;

  async function collect(stream: AsyncIterable<LLMStreamPart> | undefined): Promise<LLMStreamPart[]> {
    if (stream === undefined) throw new Error("the provider has no chatStream");
    const parts: LLMStreamPart[] = [];
    for await (const part of stream) parts.push(part);
    return parts;
  }

  it("sends a base64 image as the docs' vision example, byte for byte as JSON, and reads the answer", async () => {
    const { server, client } = await replay([okSample(`${content}vision-response.docs.json`)]);
    const provider = createAnthropicProvider({ client, model: "claude-opus-4-6", maxTokens: 1024 });
    const parts: ContentPart[] = [
      { type: "image", mediaType: "image/jpeg", data: JPEG },
      { type: "text", text: visionText },
    ];

    const response = await provider.chat([{ role: "user", content: parts }], undefined, "", {});

    expect(body(server, 0)).toEqual(withData("vision-request-base64.docs.json", "$IMAGE_BASE64", JPEG));
    expect(response.content).toMatch(/^This image shows an ant/);
    expect(response.finishReason).toBe("stop");
  });

  it("sends an image URL as a url source (chatStream too), as the docs' example", async () => {
    const { server, client } = await replay([
      sseSample(`${content}structured-output-stream.recorded.sse`),
      okSample(`${content}vision-response.docs.json`),
    ]);
    const provider = createAnthropicProvider({ client, model: "claude-opus-4-6", maxTokens: 1024 });
    const expected = readSample<WireRequest>(`${content}vision-request-url.docs.json`);
    const url = ((blocks(expected.messages[0])[0] as Json).source as Json).url as string;
    const messages: Message[] = [
      {
        role: "user",
        content: [
          { type: "image", url, mediaType: "image/jpeg" },
          { type: "text", text: visionText },
        ],
      },
    ];

    await collect(provider.chatStream?.(messages, undefined, "", {}));
    await provider.chat(messages, undefined, "", {});

    expect(body(server, 0)).toEqual({ ...expected, stream: true });
    expect(body(server, 1)).toEqual(expected);
  });

  it("sends a PDF as a base64 document block, as the docs' example; a filename becomes the title", async () => {
    const { server, client } = await replay([
      okSample(`${content}vision-response.docs.json`),
      okSample(`${content}vision-response.docs.json`),
    ]);
    const provider = createAnthropicProvider({ client, model: "claude-opus-4-6", maxTokens: 1024 });
    const question = { type: "text", text: "What are the key findings in this document?" } as const;

    await provider.chat(
      [{ role: "user", content: [{ type: "file", mediaType: "application/pdf", data: PDF }, question] }],
      undefined,
      "",
      {},
    );
    await provider.chat(
      [
        {
          role: "user",
          content: [{ type: "file", mediaType: "application/pdf", data: PDF, filename: "card.pdf" }, question],
        },
      ],
      undefined,
      "",
      {},
    );

    expect(body(server, 0)).toEqual(withData("pdf-request-base64.docs.json", "$PDF_BASE64", PDF));
    expect(blocks(body(server, 1).messages[0])[0]).toEqual({
      type: "document",
      source: { type: "base64", media_type: "application/pdf", data: PDF },
      title: "card.pdf",
    });
  });

  it("sends a tool message's text/plain file as a text document inside the tool_result, as the docs' example", async () => {
    const { server, client } = await replay([okSample("anthropic-followup-response.json")]);
    const provider = createAnthropicProvider({ client });
    const id = "toolu_01A09q90qw90lq917835lq9";
    const messages: Message[] = [
      { role: "user", content: "What is the weather?" },
      { role: "assistant", content: "", toolCalls: [{ id, name: "get_weather", arguments: {} }] },
      {
        role: "tool",
        toolCallId: id,
        content: [
          { type: "text", text: "The weather is" },
          { type: "file", mediaType: "text/plain", data: btoa("15 degrees") },
        ],
      },
    ];

    await provider.chat(messages, undefined, "", {});

    expect(body(server, 0).messages.at(-1)).toEqual(readSample(`${content}tool-result-document.docs.json`));
  });

  it.each<[string, Message[], ContentPart["type"], number]>([
    ["a gs: image URL", [{ role: "user", content: [{ type: "image", url: "gs://bucket/ant.jpg" }] }], "image", 0],
    [
      "an audio file",
      [
        { role: "system", content: "Be brief." },
        { role: "user", content: [{ type: "file", mediaType: "audio/wav", data: PDF }] },
      ],
      "file",
      1,
    ],
    [
      "a CSV file in a tool result",
      [
        { role: "user", content: "go" },
        { role: "assistant", content: "", toolCalls: [{ id: "a", name: "t", arguments: {} }] },
        { role: "tool", toolCallId: "a", content: [{ type: "file", mediaType: "text/csv", data: PDF }] },
      ],
      "file",
      2,
    ],
    [
      "an image in an assistant message",
      [
        { role: "user", content: "go" },
        { role: "assistant", content: [{ type: "image", mediaType: "image/png", data: PDF }] },
      ],
      "image",
      1,
    ],
  ])(
    "refuses %s with UnsupportedContentError before any request (chat and chatStream)",
    async (_, messages, part, messageIndex) => {
      const { server, client } = await replay([]);
      const provider = createAnthropicProvider({ client });
      const expected = { code: "unsupported_content", provider: "anthropic", part, messageIndex };

      await expect(provider.chat(messages, undefined, "", {})).rejects.toMatchObject(expected);
      await expect(collect(provider.chatStream?.(messages, undefined, "", {}))).rejects.toMatchObject(expected);
      const error = await provider.chat(messages, undefined, "", {}).catch((caught: unknown) => caught);
      expect(isUnsupportedContentError(error)).toBe(true);
      expect((error as Error).message).toContain(`messages[${messageIndex}]`);
      expect(server.requests).toHaveLength(0);
    },
  );

  // These two run the loop: they need its side of the issue (parts allowed in the messages it is
  // given, a result's parts carried into its tool message), merged from another branch.
  describe("through runToolLoop", () => {
    it("runs the loop with a tool returning mediaResult: the follow-up carries the image inside the tool_result, as the docs' example", async () => {
      const { server, client } = await replay([
        okSample("anthropic-response-tool-use.json"),
        okSample("anthropic-followup-response.json"),
      ]);
      const weather = toolFromSample(weatherDefinition, async () =>
        mediaResult("15 degrees", [{ type: "image", mediaType: "image/jpeg", data: JPEG }]),
      );
      const provider = createAnthropicProvider({ client, model: "claude-haiku-4-5", maxTokens: 1024 });

      const result = await runToolLoop({ provider, tools: registryOf(weather), maxIterations: 5 }, [
        { role: "user", content: "What is the weather in SF?" },
      ]);

      expect(result.iterations).toBe(2);
      const docs = readSample<WireMessage>(`${content}tool-result-image.docs.json`);
      const [docsResult] = docs.content as Json[];
      const [toolResult] = blocks(body(server, 1).messages.at(-1));
      expect(toolResult).toEqual({
        ...docsResult,
        tool_use_id: "toolu_011bpynHqFZ9P4u5rSaXsTJQ",
        content: [
          { type: "text", text: "15 degrees" },
          { type: "image", source: { type: "base64", media_type: "image/jpeg", data: JPEG } },
        ],
      });
      // Only the placeholder data differs from the docs' block.
      expect(JSON.stringify(toolResult).replace(JPEG, "/9j/4AAQSkZJRg...")).toBe(
        JSON.stringify({ ...docsResult, tool_use_id: "toolu_011bpynHqFZ9P4u5rSaXsTJQ" }),
      );
    });

    it("a run with a part the API cannot take rejects with provider_failed, the UnsupportedContentError as cause, and sends nothing", async () => {
      const { server, client } = await replay([]);
      const provider = createAnthropicProvider({ client });

      const error = await runToolLoop({ provider, tools: registryOf(), maxIterations: 2 }, [
        { role: "user", content: [{ type: "file", mediaType: "audio/mpeg", data: PDF }] },
      ]).catch((caught: unknown) => caught);

      expect(isToolLoopError(error) && error.code).toBe("provider_failed");
      expect(isUnsupportedContentError((error as Error).cause)).toBe(true);
      expect(server.requests).toHaveLength(0);
    });
  });

  describe("structured output", () => {
    // The recordings' claude-sonnet-4-5 makes the SDK warn (deprecated): the requests name a current model.
    const LIVE_MODEL = "claude-sonnet-4-6";
    const recorded = readSample<StructuredRequest>(`${content}structured-output-request.recorded.json`);
    const schema = formatSchema(recorded);
    const userMessages = (request: WireRequest): Message[] =>
      request.messages.map((message) => ({ role: "user", content: message.content as string }));

    it("asks natively with output_config.format json_schema, exactly as the SDK's recording, and returns the JSON text", async () => {
      const { server, client } = await replay([okSample(`${content}structured-output-response.recorded.json`)]);
      const provider = createAnthropicProvider({ client, model: LIVE_MODEL, maxTokens: 1024 });

      const response = await provider.chat(userMessages(recorded), undefined, "", {
        output: { name: "OrderDetails", schema },
      });

      expect(body(server, 0)).toEqual({ ...recorded, model: LIVE_MODEL });
      expect(server.requests[0]?.headers["anthropic-beta"]).toBeUndefined();
      expect(JSON.parse(response.content)).toEqual({
        items: [
          { product_name: "Green Tea", price: 5.5, quantity: 2 },
          { product_name: "Coffee", price: 3, quantity: 1 },
        ],
        total: 14,
      });
      expect(response).toMatchObject({ finishReason: "stop", toolCalls: [] });
    });

    it("keeps the caller's other output_config fields and tools callable", async () => {
      const { server, client } = await replay([okSample(`${content}structured-output-response.recorded.json`)]);
      const provider = createAnthropicProvider({ client });
      const weather = toolFromSample(weatherDefinition, async () => "sunny");

      await provider.chat(userMessages(recorded), registryOf(weather).getDefinitions(), "", {
        output: { name: "OrderDetails", schema },
        output_config: { effort: "low", format: { type: "json_schema", schema: {} } },
      });

      const sent = body(server, 0) as StructuredRequest;
      expect(sent.output_config).toEqual({ effort: "low", format: { type: "json_schema", schema } });
      expect(sent.tools?.map((tool) => tool.name)).toEqual(["get_weather"]);
      expect(sent).not.toHaveProperty("output");
      expect(sent).not.toHaveProperty("tool_choice");
    });

    it("streams a native structured answer as the SDK's recording: request and text deltas", async () => {
      const streamed = readSample<StructuredRequest>(`${content}structured-output-stream-request.recorded.json`);
      const { server, client } = await replay([sseSample(`${content}structured-output-stream.recorded.sse`)]);
      const provider = createAnthropicProvider({ client, model: LIVE_MODEL, maxTokens: 1024 });
      const output = { name: "order_ids", schema: formatSchema(streamed) };

      const parts = await collect(provider.chatStream?.(userMessages(streamed), undefined, "", { output }));

      expect(body(server, 0)).toEqual({ ...streamed, model: LIVE_MODEL });
      expect(parts.filter((part) => part.type === "text-delta").map((part) => part.delta)).toEqual([
        "[",
        "12",
        "345,",
        "67890]",
      ]);
      expect(parts.at(-1)).toMatchObject({ type: "response", response: { content: "[12345,67890]" } });
    });

    describe('structuredOutput: "tool"', () => {
      const weatherSchema = weatherDefinition.input_schema as Json;
      const output = { name: "get_weather", schema: weatherSchema };

      it("adds a final tool named output.name with tool_choice any beside the registry's; its call is the answer's JSON text", async () => {
        const { server, client } = await replay([okSample("anthropic-response-tool-use.json")]);
        const provider = createAnthropicProvider({ client, structuredOutput: "tool" });
        const other = { ...weatherDefinition, name: "lookup" };
        const lookup = toolFromSample(other, async () => "x");

        const response = await provider.chat(
          [{ role: "user", content: "What is the weather in SF?" }],
          registryOf(lookup).getDefinitions(),
          "",
          { output, tool_choice: { type: "auto", disable_parallel_tool_use: true } },
        );

        const sent = body(server, 0) as StructuredRequest;
        expect(sent.tools?.map((tool) => tool.name)).toEqual(["lookup", "get_weather"]);
        expect(sent.tools?.[1]).toMatchObject({ name: "get_weather", input_schema: weatherSchema });
        expect(sent.tool_choice).toEqual({ type: "any", disable_parallel_tool_use: true });
        expect(sent).not.toHaveProperty("output_config");
        expect(sent).not.toHaveProperty("output");
        expect(response).toMatchObject({ toolCalls: [], finishReason: "stop" });
        expect(JSON.parse(response.content)).toEqual({ location: "San Francisco, CA", units: "f" });
      });

      it("streams: the output tool's input is the answer, yielded as one text delta, no call", async () => {
        const { server, client } = await replay([sseSample("anthropic-stream-tool-use.recorded.sse")]);
        const provider = createAnthropicProvider({ client, structuredOutput: "tool" });

        const parts = await collect(
          provider.chatStream?.([{ role: "user", content: "Weather in SF?" }], undefined, "", { output }),
        );

        expect((body(server, 0) as StructuredRequest).tool_choice).toEqual({ type: "any" });
        const response = parts.at(-1);
        expect(response).toMatchObject({ type: "response", response: { toolCalls: [], finishReason: "stop" } });
        const answer = response?.type === "response" ? response.response.content : "";
        expect(JSON.parse(answer)).toEqual({ location: "San Francisco, CA", units: "f" });
        expect(parts.filter((part) => part.type === "text-delta").map((part) => part.delta)).toEqual([answer]);
      });

      it("a call of a registry tool stays a call (the output tool is not forced on the turn)", async () => {
        const { client } = await replay([okSample("anthropic-response-tool-use.json")]);
        const provider = createAnthropicProvider({ client, structuredOutput: "tool" });

        const response = await provider.chat([{ role: "user", content: "go" }], undefined, "", {
          output: { name: "final_answer", schema: { type: "object", properties: {} } },
        });

        expect(response.toolCalls.map((call) => call.name)).toEqual(["get_weather"]);
        expect(response.finishReason).toBe("tool_calls");
      });

      it("refuses a schema that is not an object, and a name a registry tool has, before any request", async () => {
        const { server, client } = await replay([]);
        const provider = createAnthropicProvider({ client, structuredOutput: "tool" });
        const weather = toolFromSample(weatherDefinition, async () => "x");
        const messages: Message[] = [{ role: "user", content: "go" }];

        await expect(
          provider.chat(messages, undefined, "", { output: { name: "ids", schema: { type: "array" } } }),
        ).rejects.toThrow('Anthropic: structuredOutput "tool" needs an object schema');
        await expect(provider.chat(messages, registryOf(weather).getDefinitions(), "", { output })).rejects.toThrow(
          "is a registry tool's name",
        );
        expect(server.requests).toHaveLength(0);
      });
    });

    it("refuses a structuredOutput that is neither native nor tool", () => {
      expect(() =>
        createAnthropicProvider({
          client: { messages: { create: async () => ({ content: [] }) } },
          structuredOutput: "json" as "tool",
        }),
      ).toThrow('createAnthropicProvider: structuredOutput must be "native" or "tool", got "json"');
    });
  });
});
