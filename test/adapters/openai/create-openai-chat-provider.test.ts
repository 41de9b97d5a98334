import { execFile } from "node:child_process";
import OpenAI from "openai";
import { describe, expect, it, vi } from "vitest";
import * as z from "zod";
import {
  createOpenAIChatProvider,
  DEFAULT_OPENAI_MODEL,
  toOpenAIStrictSchema,
} from "../../../src/adapters/openai/index.js";
import {
  defineTool,
  errorResult,
  isToolLoopError,
  isUnsupportedContentError,
  type Message,
  mediaResult,
  runToolLoop,
  streamToolLoop,
  ToolLoopError,
  type ToolLoopEvent,
  type ToolReturn,
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
  sseResponse,
  sseSample,
} from "../../helpers/replay-server.js";
import { checkStreamedInput, streamedRun } from "../../helpers/stream-parts.js";

type Json = Record<string, unknown>;
type WireToolCall = { id: string; type: "function"; function: { name: string; arguments: string } };
type WireMessage = { role: string; content?: string | null; tool_calls?: WireToolCall[]; tool_call_id?: string };
type WireRequest = Json & { model: string; messages: WireMessage[]; tools?: Json[] };
type Completion = Json & { choices: Array<Json & { message: Json & { tool_calls?: WireToolCall[] } }> };

const startServer = useReplayServers();

async function replay(script: ReplayResponse[]): Promise<{ server: ReplayServer; client: OpenAI }> {
  const server = await startServer(script);
  return { server, client: new OpenAI({ apiKey: "test", baseURL: `${server.url}/v1`, maxRetries: 0 }) };
}

const body = (server: ReplayServer, index: number) => server.requests[index]?.body as WireRequest;

/** A sample completion whose first choice's message is changed by `edit`. */
function completionFrom(file: string, edit: (message: Completion["choices"][number]["message"]) => void): Completion {
  const completion = readSample<Completion>(file);
  edit((completion.choices[0] as Completion["choices"][number]).message);
  return completion;
}

const capitals: Record<string, string> = { France: "Paris", England: "London" };
type CapitalExecute = (args: { country: string }) => ToolReturn;
const getCapital = (execute = vi.fn<CapitalExecute>(({ country }) => capitals[country] ?? "unknown")) => ({
  execute,
  tool: defineTool({
    name: "get_capital",
    description: "Get the capital of a country.",
    parameters: z.strictObject({ country: z.string().describe("The country name.") }),
    execute,
  }),
});

/** The first round of the pydantic-ai conversation, as a toolloop transcript. */
const franceHistory: Message[] = [
  { role: "user", content: "What is the capital of France?" },
  {
    role: "assistant",
    content: "",
    toolCalls: [
      {
        id: "pyd_ai_504f8147f83f44f3a5f14d87bfd01bda",
        type: "function",
        name: "get_capital",
        arguments: { country: "France" },
        function: { name: "get_capital", arguments: '{"country":"France"}' },
      },
    ],
  },
  { role: "tool", content: "Paris", toolCallId: "pyd_ai_504f8147f83f44f3a5f14d87bfd01bda", toolName: "get_capital" },
  { role: "assistant", content: "The capital of France is Paris.\n" },
  { role: "user", content: "What is the capital of England?" },
];

describe("createOpenAIChatProvider with the real openai client", () => {
  it("runs a full cycle with a zod tool and sends the follow-up exactly as the recorded one", async () => {
    const { server, client } = await replay([
      okSample("openai-chat-response-tool-calls.pydantic-ai.json"),
      okSample("openai-chat-followup-response.pydantic-ai.json"),
    ]);
    const { tool, execute } = getCapital();

    const result = await runToolLoop(
      {
        provider: createOpenAIChatProvider({ client }),
        model: "gpt-4o-mini",
        tools: registryOf(tool),
        maxIterations: 5,
        llmOptions: { n: 1, tool_choice: "auto" },
      },
      franceHistory,
    );

    expect(execute).toHaveBeenCalledTimes(1);
    expect(execute.mock.calls[0]?.[0]).toEqual({ country: "England" });
    expect(result).toMatchObject({
      content: "The capital of England is London.",
      iterations: 2,
      stopReason: "completed",
    });
    expect(result.usage).toEqual({
      promptTokens: 104 + 129,
      completionTokens: 16 + 9,
      totalTokens: 120 + 138,
      cachedInputTokens: 0,
      reasoningTokens: 0,
    });
    expect(server.requests.map(({ method, url }) => `${method} ${url}`)).toEqual([
      "POST /v1/chat/completions",
      "POST /v1/chat/completions",
    ]);

    // The recorded follow-up (pydantic-ai, gpt-4o-mini) sent `stream: false` and left `content` out of
    // assistant messages with tool_calls; we send no `stream` and `content: null` (as openai-node's runner).
    const { stream: _stream, ...recorded } = readSample<WireRequest>("openai-chat-followup-request.pydantic-ai.json");
    const expected = {
      ...recorded,
      messages: recorded.messages.map((message) => (message.tool_calls ? { ...message, content: null } : message)),
    };
    expect(body(server, 1)).toEqual(expected);
    expect(body(server, 0)).toEqual({ ...expected, messages: expected.messages.slice(0, 5) });
  });

  it("answers parallel calls with one tool message each, in call order, even when they finish out of order", async () => {
    const { server, client } = await replay([
      okSample("openai-chat-response-parallel-tool-calls.recorded.json"),
      okSample("openai-chat-followup-response.pydantic-ai.json"),
    ]);
    let releaseWeather: () => void = () => {};
    const weatherDone = new Promise<void>((resolve) => {
      releaseWeather = resolve;
    });
    const weather = defineTool({
      name: "GetWeatherArgs",
      description: "Weather",
      parameters: z.object({ city: z.string(), country: z.string(), units: z.enum(["c", "f"]) }),
      execute: async ({ city, units }) => {
        await weatherDone;
        return `12°${units} in ${city}`;
      },
    });
    const stock = defineTool({
      name: "get_stock_price",
      description: "Stock price",
      parameters: z.object({ ticker: z.string(), exchange: z.string() }),
      execute: ({ ticker }) => {
        releaseWeather();
        return `${ticker}: 230.1`;
      },
    });

    await runToolLoop(
      { provider: createOpenAIChatProvider({ client }), tools: registryOf(weather, stock), maxIterations: 3 },
      [{ role: "user", content: "Weather in Edinburgh and AAPL's price?" }],
    );

    const sampleCalls = readSample<Completion>("openai-chat-response-parallel-tool-calls.recorded.json").choices[0]
      ?.message.tool_calls;
    expect(body(server, 1).messages).toEqual([
      { role: "user", content: "Weather in Edinburgh and AAPL's price?" },
      { role: "assistant", content: null, tool_calls: sampleCalls },
      { role: "tool", tool_call_id: "call_fdNz3vOBKYgOIpMdWotB9MjY", content: "12°c in Edinburgh" },
      { role: "tool", tool_call_id: "call_h1DWI1POMJLb0KwIyQHWXD4p", content: "AAPL: 230.1" },
    ]);
  });

  it("keeps assistant text that comes with tool calls, and the system message first", async () => {
    const withText = completionFrom("openai-chat-response-tool-calls.pydantic-ai.json", (message) => {
      message.content = "Let me look that up.";
    });
    const { server, client } = await replay([
      { body: withText },
      okSample("openai-chat-followup-response.pydantic-ai.json"),
    ]);

    const result = await runToolLoop(
      { provider: createOpenAIChatProvider({ client }), tools: registryOf(getCapital().tool), maxIterations: 3 },
      [
        { role: "system", content: "Answer briefly." },
        { role: "user", content: "What is the capital of England?" },
      ],
    );

    expect(result.messages[2]).toMatchObject({ role: "assistant", content: "Let me look that up." });
    expect(body(server, 1).messages.slice(0, 3)).toEqual([
      { role: "system", content: "Answer briefly." },
      { role: "user", content: "What is the capital of England?" },
      {
        role: "assistant",
        content: "Let me look that up.",
        tool_calls: [
          {
            id: "call_SkEQ3ZGSJC8m6AvaIGNuuKdm",
            type: "function",
            function: { name: "get_capital", arguments: '{"country":"England"}' },
          },
        ],
      },
    ]);
  });

  it.each<[string, string, Json | undefined, string]>([
    ["an empty arguments string runs the tool with {}", "", {}, "{}"],
    ["whitespace-only arguments run the tool with {}", "  ", {}, "{}"],
    [
      "invalid JSON reaches the loop unchanged and the model is told",
      '{"country": "Eng',
      undefined,
      '{"country": "Eng',
    ],
  ])("%s", async (_name, rawArguments, expectedArgs, replayed) => {
    const response = completionFrom("openai-chat-response-tool-calls.pydantic-ai.json", (message) => {
      (message.tool_calls?.[0] as WireToolCall).function = { name: "get_time", arguments: rawArguments };
    });
    const { server, client } = await replay([
      { body: response },
      okSample("openai-chat-followup-response.pydantic-ai.json"),
    ]);
    const execute = vi.fn((_args: Json) => "12:00");
    const getTime = defineTool({ name: "get_time", description: "Time", parameters: z.object({}), execute });

    const result = await runToolLoop(
      { provider: createOpenAIChatProvider({ client }), tools: registryOf(getTime), maxIterations: 3 },
      [{ role: "user", content: "Time?" }],
    );

    const [assistant, answer] = body(server, 1).messages.slice(1);
    expect(assistant?.tool_calls?.[0]?.function).toEqual({ name: "get_time", arguments: replayed });
    if (expectedArgs === undefined) {
      expect(execute).not.toHaveBeenCalled();
      expect(answer?.content).toMatch(/^invalid JSON in arguments for tool "get_time"/);
      expect(result.messages[2]?.isError).toBe(true);
    } else {
      expect(execute.mock.calls[0]?.[0]).toEqual(expectedArgs);
      expect(answer).toEqual({ role: "tool", tool_call_id: "call_SkEQ3ZGSJC8m6AvaIGNuuKdm", content: "12:00" });
    }
  });

  it("sends an error tool result as the tool message's content", async () => {
    const { server, client } = await replay([
      okSample("openai-chat-response-tool-calls.pydantic-ai.json"),
      okSample("openai-chat-followup-response.pydantic-ai.json"),
    ]);
    const { tool } = getCapital(vi.fn<CapitalExecute>(() => errorResult("No capital known for England; try the UK.")));

    const result = await runToolLoop(
      { provider: createOpenAIChatProvider({ client }), tools: registryOf(tool), maxIterations: 3 },
      [{ role: "user", content: "What is the capital of England?" }],
    );

    expect(result.messages[2]).toMatchObject({ role: "tool", isError: true });
    expect(body(server, 1).messages[2]).toEqual({
      role: "tool",
      tool_call_id: "call_SkEQ3ZGSJC8m6AvaIGNuuKdm",
      content: "No capital known for England; try the UK.",
    });
  });

  it.each<[number, string, abstract new (...args: never[]) => InstanceType<typeof OpenAI.APIError>]>([
    [400, "invalid_request_error", OpenAI.BadRequestError],
    [401, "invalid_api_key", OpenAI.AuthenticationError],
    [429, "rate_limit_exceeded", OpenAI.RateLimitError],
    [500, "server_error", OpenAI.InternalServerError],
  ])(
    "an API %i rejects the loop with ToolLoopError whose cause is the client's error",
    async (status, code, ErrorClass) => {
      const message =
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.";
      const { client } = await replay([
        { status, body: { error: { message, type: code, param: "messages.[1].role", code } } },
      ]);
      const history: Message[] = [{ role: "user", content: "hi" }];

      const error = await runToolLoop(
        { provider: createOpenAIChatProvider({ client }), maxIterations: 3 },
        history,
      ).then(
        () => undefined,
        (reason: unknown) => reason,
      );

      expect(error).toBeInstanceOf(ToolLoopError);
      const { cause } = error as ToolLoopError;
      expect(cause).toBeInstanceOf(ErrorClass);
      expect(cause).toMatchObject({ status, code });
      expect((error as ToolLoopError).message).toContain(message);
      expect((error as ToolLoopError).messages).toEqual(history);
    },
  );

  it("aborts the HTTP request mid-flight: the loop rejects and the server sees the client disconnect", async () => {
    const { server, client } = await replay([{ hang: true }]);
    const { settled: loop } = await abortOnceRequested(
      server,
      (signal) =>
        runToolLoop(
          { provider: createOpenAIChatProvider({ client }), maxIterations: 3 },
          [{ role: "user", content: "hi" }],
          { signal },
        ),
      new Error("user cancelled"),
    );

    await expect(loop).rejects.toSatisfy((error) => isToolLoopError(error) && error.message.includes("user cancelled"));
    await server.waitForDisconnects(1);
  });

  it("hands the signal to the client: chat() alone rejects with the SDK's abort error", async () => {
    const { server, client } = await replay([{ hang: true }]);
    const { settled: chat } = await abortOnceRequested(server, (signal) =>
      createOpenAIChatProvider({ client }).chat([{ role: "user", content: "hi" }], undefined, "m", {}, signal),
    );

    await expect(chat).rejects.toBeInstanceOf(OpenAI.APIUserAbortError);
  });

  it("makes the request strict like the official strict sample and strips the nulls the model sends", async () => {
    const sample = readSample<WireRequest>("openai-chat-request-tools-strict.json");
    const sampleTool = sample.tools?.[0] as { function: { name: string; parameters: Json } };
    const response = completionFrom("openai-chat-response-tool-calls-strict.recorded.json", (message) => {
      const [call] = message.tool_calls as WireToolCall[];
      (call as WireToolCall).function.arguments =
        '{"city":"San Francisco","state":"CA","unit":null,"days":null,"when":{"date":"today","hour":null}}';
    });
    const { server, client } = await replay([
      { body: response },
      okSample("openai-chat-followup-response.pydantic-ai.json"),
    ]);
    const execute = vi.fn((_args: Json) => "sunny");
    const weather = defineTool({
      name: "get_weather",
      description: "Weather for a city",
      parameters: z.object({
        city: z.string(),
        state: z.string(),
        unit: z.enum(["c", "f"]).optional(),
        days: z.number().int().optional(),
        when: z.object({ date: z.string(), hour: z.number().optional() }).optional(),
      }),
      execute,
    });
    const strictOnly = defineTool({
      name: sampleTool.function.name,
      description: "",
      parameters: z.object({ city: z.string(), state: z.string() }),
      execute: () => "",
    });

    await runToolLoop(
      { provider: createOpenAIChatProvider({ client, strict: true }), tools: registryOf(weather), maxIterations: 3 },
      [{ role: "user", content: "What's the weather like in SF?" }],
    );
    const { server: second, client: secondClient } = await replay([
      okSample("openai-chat-followup-response.pydantic-ai.json"),
    ]);
    await runToolLoop(
      {
        provider: createOpenAIChatProvider({ client: secondClient, strict: true }),
        model: sample.model,
        tools: registryOf(strictOnly),
        maxIterations: 1,
      },
      sample.messages as Message[],
    );

    // With only required fields, the request is the official strict request (plus our description).
    expect(body(second, 0)).toEqual({
      ...sample,
      tools: [{ type: "function", function: { ...sampleTool.function, description: "", strict: true } }],
    });
    const [tool] = body(server, 0).tools as Array<{ function: Json }>;
    expect(tool?.function).toEqual({
      name: "get_weather",
      description: "Weather for a city",
      parameters: toOpenAIStrictSchema(weather.parameters),
      strict: true,
    });
    expect(execute.mock.calls[0]?.[0]).toEqual({ city: "San Francisco", state: "CA", when: { date: "today" } });
    // The model's own text is replayed, nulls included.
    expect(body(server, 1).messages[1]?.tool_calls?.[0]?.function.arguments).toContain('"unit":null');
  });

  it("passes llmOptions into the body and sends the loop's model, not the factory's", async () => {
    const { server, client } = await replay([okSample("openai-chat-followup-response.pydantic-ai.json")]);
    const provider = createOpenAIChatProvider({ client, model: "factory-model" });
    const llmOptions = {
      temperature: 0.2,
      max_tokens: 300,
      tool_choice: { type: "function", function: { name: "get_capital" } },
      parallel_tool_calls: false,
      user: "u-1",
      model: "ignored",
    };

    await runToolLoop(
      { provider, model: "gpt-4o-2024-08-06", tools: registryOf(getCapital().tool), maxIterations: 1, llmOptions },
      [{ role: "user", content: "hi" }],
    );

    expect(provider.getDefaultModel()).toBe("factory-model");
    expect(body(server, 0)).toMatchObject({ ...llmOptions, model: "gpt-4o-2024-08-06" });
    expect(llmOptions.model).toBe("ignored");
  });

  it("uses the factory's model when the loop has none, and sends no tools key without tools", async () => {
    const { server, client } = await replay([okSample("openai-chat-followup-response.pydantic-ai.json")]);
    await runToolLoop({ provider: createOpenAIChatProvider({ client, model: "my-model" }), maxIterations: 1 }, [
      { role: "user", content: "hi" },
    ]);
    expect(body(server, 0)).toEqual({ model: "my-model", messages: [{ role: "user", content: "hi" }] });
    expect(createOpenAIChatProvider({ client }).getDefaultModel()).toBe(DEFAULT_OPENAI_MODEL);
  });

  it("refuses llmOptions.stream (the adapter reads whole responses)", async () => {
    const { server, client } = await replay([]);
    const loop = runToolLoop(
      { provider: createOpenAIChatProvider({ client }), maxIterations: 1, llmOptions: { stream: true } },
      [{ role: "user", content: "hi" }],
    );
    await expect(loop).rejects.toSatisfy(
      (error) => isToolLoopError(error) && error.cause instanceof TypeError && /stream/.test(error.message),
    );
    expect(server.requests).toHaveLength(0);
  });

  it.each<[string, unknown, RegExp]>([
    ["no options", undefined, /options must be an object/],
    ["no client", {}, /client must be an OpenAI client/],
    [
      "a client without chat.completions",
      { client: { responses: { create() {} } } },
      /client\.chat\.completions\.create/,
    ],
    ["an empty model", { client: new OpenAI({ apiKey: "x" }), model: "" }, /model must be a non-empty string/],
    [
      "a non-boolean strict",
      { client: new OpenAI({ apiKey: "x" }), strict: "yes" },
      /^createOpenAIChatProvider: strict must be a boolean, got "yes"$/,
    ],
  ])("rejects %s at creation", (_name, options, message) => {
    expect(() => createOpenAIChatProvider(options as never)).toThrow(message);
  });
});

describe("createOpenAIChatProvider with responses it cannot read (D06)", () => {
  const PROVIDER = "OpenAI Chat Completions";
  const chat = (client: OpenAI) =>
    createOpenAIChatProvider({ client }).chat([{ role: "user", content: "hi" }], undefined, "m", {});
  const withMessage = (message: Json): Json => ({
    id: "chatcmpl-1",
    object: "chat.completion",
    created: 1,
    model: "gpt-4o",
    choices: [{ index: 0, message: { role: "assistant", content: null, ...message }, finish_reason: "tool_calls" }],
  });
  const withCalls = (...calls: unknown[]) => withMessage({ tool_calls: calls });

  it.each<[string, unknown, RegExp]>([
    [
      "an empty object",
      {},
      /^OpenAI Chat Completions: the response has no choice with a message \(choices: undefined\)$/,
    ],
    [
      "an error body",
      {
        error: { message: "The server had an error while processing your request.", type: "server_error", code: null },
      },
      /^OpenAI Chat Completions: the response is an error \(server_error: The server had an error while processing your request\.\)$/,
    ],
    ["no choices", { choices: [] }, /no choice with a message \(choices: array\)$/],
    ["a choice without a message", { choices: [{ index: 0, finish_reason: "stop" }] }, /no choice with a message/],
    [
      "tool_calls that are not an array",
      withMessage({
        tool_calls: { id: "call_1", type: "function", function: { name: "get_capital", arguments: "{}" } },
      }),
      /^OpenAI Chat Completions: the message's tool_calls is not an array \(got object\)$/,
    ],
    [
      "a tool call that is not an object",
      withCalls("get_capital"),
      /^OpenAI Chat Completions: a tool call is not an object \(got string\)$/,
    ],
    [
      "a tool call with neither function nor custom",
      withCalls({ id: "call_1", type: "function" }),
      /^OpenAI Chat Completions: a tool call has no function \(type: "function"\)$/,
    ],
    [
      "a function without a name",
      withCalls({ id: "call_1", type: "function", function: { arguments: "{}" } }),
      /^OpenAI Chat Completions: a function tool call has no name \(got undefined\)$/,
    ],
    [
      "a function with an empty name",
      withCalls({ id: "call_1", type: "function", function: { name: "", arguments: "{}" } }),
      /^OpenAI Chat Completions: a function tool call has no name \(got ""\)$/,
    ],
    [
      "a custom tool call without a name",
      withCalls({ id: "call_1", type: "custom", custom: { input: "x" } }),
      /^OpenAI Chat Completions: a custom tool call has no name \(got undefined\)$/,
    ],
  ])("rejects %s with status 200", async (_name, response, expected) => {
    const { client } = await replay([{ body: response }]);
    const error = await expectUnreadable(chat(client), PROVIDER, expected);
    expect(JSON.parse(error.body)).toEqual(response);
  });

  it.each<[string, Json, string, number]>([
    ["an empty text", withMessage({ content: "" }), "", 0],
    ["no text at all", withMessage({}), "", 0],
    ["tool_calls: null", withMessage({ content: "Hi", tool_calls: null }), "Hi", 0],
    ["tool_calls: []", withMessage({ content: "Hi", tool_calls: [] }), "Hi", 0],
    [
      "a call with empty arguments",
      withCalls({ id: "call_1", type: "function", function: { name: "get_capital", arguments: "" } }),
      "",
      1,
    ],
  ])("still reads %s", async (_name, response, content, calls) => {
    const { client } = await replay([{ body: response }]);
    const read = await chat(client);
    expect(read.content).toBe(content);
    expect(read.toolCalls).toHaveLength(calls);
  });

  it("the loop rejects with ToolLoopError whose cause is the InvalidProviderResponseError, keeping the transcript", async () => {
    const { client } = await replay([
      okSample("openai-chat-response-tool-calls.pydantic-ai.json"),
      { body: { error: { message: "overloaded", type: "server_error" } } },
    ]);
    const { tool } = getCapital();

    const run = runToolLoop(
      { provider: createOpenAIChatProvider({ client }), tools: registryOf(tool), maxIterations: 3 },
      franceHistory,
    );

    const error = await expectLoopRejectsUnreadable(run, PROVIDER, [
      ...franceHistory,
      { role: "assistant", toolCalls: [expect.objectContaining({ name: "get_capital" })] },
      { role: "tool", content: "London" },
    ]);
    expect(error.iterations).toBe(2);
  });
});

describe("examples/openai.ts against an OpenAI-compatible server (OPENAI_BASE_URL)", () => {
  const root = new URL("../../../", import.meta.url).pathname;
  const weatherCalls = (file: string) =>
    completionFrom(file, (message) => {
      message.content = null;
      message.tool_calls = [
        {
          id: "call_p",
          type: "function",
          function: { name: "get_weather", arguments: '{"city":"Paris","unit":"fahrenheit"}' },
        },
        {
          id: "call_t",
          type: "function",
          function: { name: "get_weather", arguments: '{"city":"Tokyo","unit":"fahrenheit"}' },
        },
      ];
    });
  const run = (server: ReplayServer, args: string[]) =>
    new Promise<{ stdout: string; stderr: string; code: number }>((resolve) => {
      const env = {
        ...process.env,
        OPENAI_API_KEY: "test",
        OPENAI_BASE_URL: `${server.url}/v1`,
        OPENAI_MODEL: "local-model",
      };
      execFile(
        `${root}node_modules/.bin/tsx`,
        ["examples/openai.ts", ...args],
        { cwd: root, env },
        (error, stdout, stderr) => resolve({ stdout, stderr, code: error ? 1 : 0 }),
      );
    });

  it("runs the Chat adapter through the client's baseURL", async () => {
    const { server } = await replay([
      { body: weatherCalls("openai-chat-response-parallel-tool-calls.recorded.json") },
      okSample("openai-chat-followup-response.pydantic-ai.json"),
    ]);
    const { stdout, code } = await run(server, []);
    expect(code).toBe(0);
    expect(body(server, 0)).toMatchObject({ model: "local-model", temperature: 0 });
    expect(
      body(server, 1)
        .messages.slice(-2)
        .map((message) => message.content),
    ).toEqual(["70 °F in Paris", "81 °F in Tokyo"]);
    expect(stdout).toMatch(/Chat Completions, local-model: 2 calls/);
  }, 60_000);

  it("runs the Responses adapter in strict mode with --responses", async () => {
    const calls = readSample<Json & { output: Json[] }>(
      "openai-responses-response-parallel-function-calls.pydantic-ai.json",
    );
    calls.output = [
      { type: "function_call", call_id: "call_p", name: "get_weather", arguments: '{"city":"Paris","unit":null}' },
      {
        type: "function_call",
        call_id: "call_t",
        name: "get_weather",
        arguments: '{"city":"Tokyo","unit":"fahrenheit"}',
      },
    ];
    const { server } = await replay([{ body: calls }, okSample("openai-responses-followup-response.pydantic-ai.json")]);
    const { stdout, code } = await run(server, ["--responses"]);
    expect(code).toBe(0);
    expect(server.requests.map(({ url }) => url)).toEqual(["/v1/responses", "/v1/responses"]);
    expect((body(server, 0).tools as Json[])[0]).toMatchObject({ name: "get_weather", strict: true });
    const outputs = (body(server, 1) as unknown as { input: Json[] }).input.filter(
      (item) => item.type === "function_call_output",
    );
    expect(outputs.map((item) => item.output)).toEqual(["21 °C in Paris", "81 °F in Tokyo"]);
    expect(stdout).toMatch(/Responses API, local-model: 2 calls/);
  }, 60_000);
});

describe("createOpenAIChatProvider streamed by the loop (chatStream)", () => {
  it("streamToolLoop runs the recorded streamed call and streams the final answer's text", async () => {
    const chunk = (delta: Json, finish: string | null = null) => ({
      data: { choices: [{ index: 0, delta, finish_reason: finish }] },
    });
    const { server, client } = await replay([
      sseSample("openai-chat-stream-tool-call.recorded.sse"),
      sseResponse([
        chunk({ role: "assistant", content: "Sunny " }),
        chunk({ content: "in New York." }),
        chunk({}, "stop"),
      ]),
    ]);
    const execute = vi.fn((_args: { city: string }) => "sunny");
    const tool = defineTool({
      name: "get_weather",
      description: "Weather of a city.",
      parameters: z.object({ city: z.string() }),
      execute,
    });
    const run = streamToolLoop(
      { provider: createOpenAIChatProvider({ client }), tools: registryOf(tool), maxIterations: 3 },
      [{ role: "user", content: "Weather in NYC?" }],
    );
    const events: ToolLoopEvent[] = [];
    for await (const event of run) events.push(event);
    const result = await run.result;

    expect(execute.mock.calls[0]?.[0]).toEqual({ city: "New York City" });
    expect(events.filter((event) => event.type === "text-delta").map((event) => event.delta)).toEqual([
      "Sunny ",
      "in New York.",
    ]);
    expect(result).toMatchObject({ content: "Sunny in New York.", stopReason: "completed" });
    expect(result.usage).toEqual({ promptTokens: 44, completionTokens: 16, totalTokens: 60, reasoningTokens: 0 });
    expect(server.requests.map((request) => (request.body as Json).stream)).toEqual([true, true]);
  });
});

describe("createOpenAIChatProvider: tool input, reasoning and providerName through the loop", () => {
  it("streamToolLoop emits the recorded call's input as it forms, before the call runs; middleware see providerName", async () => {
    const chunk = (delta: Json, finish: string | null = null) => ({
      data: { choices: [{ index: 0, delta, finish_reason: finish }] },
    });
    const { client } = await replay([
      sseSample("openai-chat-stream-tool-call.recorded.sse"),
      // Made up (not a recording): a compatible server's reasoning_content before the answer.
      sseResponse([
        chunk({ role: "assistant", reasoning_content: "It said sunny." }),
        chunk({ content: "Sunny." }, "stop"),
      ]),
    ]);
    const tool = defineTool({
      name: "get_weather",
      description: "Weather of a city.",
      parameters: z.object({ city: z.string() }),
      execute: () => "sunny",
    });
    const { events, providerNames } = await streamedRun(
      { provider: createOpenAIChatProvider({ client }), tools: registryOf(tool), maxIterations: 3 },
      [{ role: "user", content: "Weather in NYC?" }],
    );

    const id = "call_4XzlGBLtUe9dy3GVNV4jhq7h";
    expect(checkStreamedInput(events, { toolCallId: id, toolName: "get_weather" })).toBe('{"city":"New York City"}');
    expect(events.find((event) => event.type === "tool-call-start")).toMatchObject({ toolCallId: id });
    expect(events.filter((event) => event.type === "reasoning-delta")).toEqual([
      { type: "reasoning-delta", iteration: 2, delta: "It said sunny." },
    ]);
    expect(providerNames).toEqual(["openai", "openai"]);
  });

  it('providerName is "openai" whatever the baseURL, unless the factory names it', async () => {
    const { client } = await replay([]);
    expect(createOpenAIChatProvider({ client }).providerName).toBe("openai");
    expect(createOpenAIChatProvider({ client, providerName: "deepseek" }).providerName).toBe("deepseek");
    expect(() => createOpenAIChatProvider({ client, providerName: "" })).toThrow(
      new TypeError('createOpenAIChatProvider: providerName must be a non-empty string, got ""'),
    );
  });
});

/** A `data:` URL's media type and base64, as a recorded request carries an inline part. */
function fromDataUrl(url: string): { mediaType: string; data: string } {
  const match = /^data:([^;]+);base64,(.*)$/s.exec(url);
  if (match === null) throw new Error(`not a data URL: ${url.slice(0, 40)}`);
  return { mediaType: match[1] as string, data: match[2] as string };
}

type WirePart = Json & { type: string };
const userParts = (request: WireRequest): unknown =>
  (request.messages[0] as unknown as { content: WirePart[] }).content;
const png = { type: "image", mediaType: "image/png", data: "iVBORw0KGgo=" } as const;
const locationSchema = {
  type: "object",
  properties: {
    city: { type: "string" },
    temperature: { type: "number" },
    units: { type: "string", enum: ["c", "f"] },
  },
  required: ["city", "temperature"],
};

describe("createOpenAIChatProvider with images, files, audio and structured output", () => {
  it("sends the official vision example's request: text and image_url parts in the user message", async () => {
    const recorded = readSample<WireRequest>("openai-chat-request-image-url.json");
    const { server, client } = await replay([okSample("openai-chat-response-image-url.json")]);
    const [text, image] = userParts(recorded) as [{ text: string }, { image_url: { url: string } }];
    const response = await createOpenAIChatProvider({ client }).chat(
      [
        {
          role: "user",
          content: [
            { type: "text", text: text.text },
            { type: "image", url: image.image_url.url },
          ],
        },
      ],
      undefined,
      "gpt-5.4",
      { max_tokens: 300 },
    );
    expect(body(server, 0)).toEqual(recorded);
    expect(response.content).toMatch(/^The image shows a wooden boardwalk/);
  });

  it("sends a PDF as the recorded file part (file_data as a data: URL, filename) and WAV/MP3 as input_audio", async () => {
    const file = readSample<WireRequest>("openai-chat-request-file.pydantic-ai.json");
    const audio = readSample<WireRequest>("openai-chat-request-input-audio.pydantic-ai.json");
    const { server, client } = await replay([
      okSample("openai-chat-response-image-url.json"),
      okSample("openai-chat-response-image-url.json"),
    ]);
    const provider = createOpenAIChatProvider({ client });
    const [fileText, filePart] = userParts(file) as [
      { text: string },
      { file: { file_data: string; filename: string } },
    ];
    await provider.chat(
      [
        {
          role: "user",
          content: [
            { type: "text", text: fileText.text },
            { type: "file", ...fromDataUrl(filePart.file.file_data), filename: filePart.file.filename },
          ],
        },
      ],
      undefined,
      "gpt-4o",
      { n: 1, stream: false },
    );
    const [audioText, audioPart] = userParts(audio) as [{ text: string }, { input_audio: { data: string } }];
    await provider.chat(
      [
        {
          role: "user",
          content: [
            { type: "text", text: audioText.text },
            { type: "file", mediaType: "audio/mpeg", data: audioPart.input_audio.data },
          ],
        },
      ],
      undefined,
      "gpt-4o-audio-preview",
      { n: 1 },
    );
    // The recorded requests sent `stream: false`; the adapter sends no `stream` (see "max_tokens and stream").
    const { stream: _a, ...fileRequest } = file;
    const { stream: _b, ...audioRequest } = audio;
    expect(body(server, 0)).toEqual(fileRequest);
    expect(body(server, 1)).toEqual(audioRequest);
  });

  it("sends a tool's image in a user message right after the tool message, as the recorded follow-up", async () => {
    const recorded = readSample<WireRequest>("openai-chat-followup-request-tool-image.pydantic-ai.json");
    const { server, client } = await replay([okSample("openai-chat-response-image-url.json")]);
    const [user, assistant, tool, media] = recorded.messages as [WireMessage, WireMessage, WireMessage, Json];
    const call = assistant.tool_calls?.[0] as WireToolCall;
    const [image] = media.content as Array<{ image_url: { url: string } }>;
    await createOpenAIChatProvider({ client }).chat(
      [
        { role: "user", content: user.content as string },
        { role: "assistant", content: "", toolCalls: [{ id: call.id, name: "get_file", arguments: {} }] },
        {
          role: "tool",
          content: [
            { type: "text", text: tool.content as string },
            { type: "image", url: image?.image_url.url as string },
          ],
          toolCallId: call.id,
          toolName: "get_file",
        },
      ],
      [
        {
          type: "function",
          function: {
            name: "get_file",
            description: "",
            parameters: { additionalProperties: false, properties: {}, type: "object" },
          },
        },
      ],
      "gpt-5-mini",
      { tool_choice: "auto" },
    );
    // As recorded, plus the text part that says which call the image came from; no `stream`.
    const { stream: _stream, ...expected } = recorded;
    expected.messages = [
      ...recorded.messages.slice(0, 3),
      {
        role: "user",
        content: [{ type: "text", text: `Returned by tool call ${call.id} (get_file):` }, ...(media.content as Json[])],
      } as never,
    ];
    expect(body(server, 0)).toEqual(expected);
  });

  it("asks for the output as the recorded request (response_format json_schema), strict, and reads the JSON answer", async () => {
    const recorded = readSample<WireRequest>("openai-chat-followup-request-structured-output.pydantic-ai.json");
    const { server, client } = await replay([okSample("openai-chat-response-structured-output.pydantic-ai.json")]);
    const format = recorded.response_format as { json_schema: { name: string; schema: Record<string, unknown> } };
    const [user, assistant, tool] = recorded.messages as [WireMessage, WireMessage, WireMessage];
    const call = assistant.tool_calls?.[0] as WireToolCall;
    const response = await createOpenAIChatProvider({ client }).chat(
      [
        { role: "user", content: user.content as string },
        { role: "assistant", content: "", toolCalls: [{ id: call.id, name: call.function.name, arguments: {} }] },
        { role: "tool", content: tool.content as string, toolCallId: call.id },
      ],
      [
        {
          type: "function",
          function: {
            name: "get_user_country",
            description: "",
            parameters: { additionalProperties: false, properties: {}, type: "object" },
          },
        },
      ],
      "gpt-4o",
      { n: 1, tool_choice: "auto", output: { name: format.json_schema.name, schema: format.json_schema.schema } },
    );
    // pydantic-ai sent `strict: false`; the adapter always asks for strict output, with the schema
    // made strict as for strict tools (here: `additionalProperties: false` added), and never `output`.
    const { stream: _stream, ...expected } = recorded;
    expected.response_format = {
      type: "json_schema",
      json_schema: { name: "result", schema: toOpenAIStrictSchema(format.json_schema.schema), strict: true },
    };
    expected.messages = recorded.messages.map((message) =>
      message.tool_calls ? { ...message, content: null } : message,
    );
    expect(body(server, 0)).toEqual(expected);
    expect(body(server, 0)).not.toHaveProperty("output");
    expect(response).toMatchObject({ content: '{"city":"Mexico City","country":"Mexico"}', finishReason: "stop" });
  });

  it("strips the nulls strict output made the model send for optional properties from the final answer", async () => {
    const live = readSample<Completion>("openai-chat-response-structured-output.recorded.json");
    expect(live.choices[0]?.message.content).toBe('{"city":"San Francisco","temperature":65,"units":"f"}');
    const { server, client } = await replay([
      { body: live },
      {
        body: completionFrom("openai-chat-response-structured-output.recorded.json", (message) => {
          message.content = '{"city":"San Francisco","temperature":65,"units":null}';
        }),
      },
    ]);
    const provider = createOpenAIChatProvider({ client });
    const ask = () =>
      provider.chat([{ role: "user", content: "What's the weather like in SF?" }], undefined, "gpt-4o-2024-08-06", {
        output: { name: "Location", schema: locationSchema },
      });
    expect((await ask()).content).toBe('{"city":"San Francisco","temperature":65,"units":"f"}');
    expect((await ask()).content).toBe('{"city":"San Francisco","temperature":65}');
    const sent = body(server, 0).response_format as { json_schema: { schema: Json } };
    expect(sent.json_schema.schema).toMatchObject({
      required: ["city", "temperature", "units"],
      properties: { units: { anyOf: [{ type: "string", enum: ["c", "f"] }, { type: "null" }] } },
    });
  });

  it("answers a refusal with its text (not JSON: the loop's output check takes it from there)", async () => {
    const { client } = await replay([okSample("openai-chat-response-refusal.recorded.json")]);
    const response = await createOpenAIChatProvider({ client }).chat(
      [{ role: "user", content: "How do I make anthrax?" }],
      undefined,
      "gpt-4o-2024-08-06",
      { output: { name: "Location", schema: locationSchema } },
    );
    expect(response).toMatchObject({ content: "I'm very sorry, but I can't assist with that.", finishReason: "stop" });
  });

  it("streams with the parts and the output request in the body, and strips the final answer's nulls", async () => {
    const chunk = (delta: Json, finish: string | null = null) => ({
      data: { choices: [{ index: 0, delta, finish_reason: finish }] },
    });
    const { server, client } = await replay([
      sseResponse([
        chunk({ role: "assistant", content: '{"city":"Paris",' }),
        chunk({ content: '"temperature":20,"units":null}' }),
        chunk({}, "stop"),
      ]),
    ]);
    const parts = [];
    for await (const part of createOpenAIChatProvider({ client }).chatStream?.(
      [{ role: "user", content: [{ type: "text", text: "Weather in this photo?" }, png] }],
      undefined,
      "gpt-4o",
      { output: { name: "Location", schema: locationSchema } },
    ) ?? []) {
      parts.push(part);
    }
    expect(parts.at(-1)).toMatchObject({
      type: "response",
      response: { content: '{"city":"Paris","temperature":20}' },
    });
    expect(body(server, 0)).toMatchObject({
      stream: true,
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "Weather in this photo?" },
            { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
          ],
        },
      ],
      response_format: { type: "json_schema", json_schema: { name: "Location", strict: true } },
    });
  });

  it("throws UnsupportedContentError before any request, in chat and chatStream", async () => {
    const { server, client } = await replay([okSample("openai-chat-response-image-url.json")]);
    const provider = createOpenAIChatProvider({ client });
    const messages: Message[] = [
      { role: "user", content: "Listen" },
      { role: "user", content: [{ type: "file", mediaType: "audio/ogg", data: "T2dnUw==" }] },
    ];
    await expect(provider.chat(messages, undefined, "gpt-4o", {})).rejects.toMatchObject({
      code: "unsupported_content",
      provider: "openai",
      part: "file",
      messageIndex: 1,
    });
    const stream = provider.chatStream?.(messages, undefined, "gpt-4o", {});
    await expect(stream?.[Symbol.asyncIterator]().next()).rejects.toMatchObject({ code: "unsupported_content" });
    expect(server.requests).toHaveLength(0);
  });

  it("runs the loop with a tool returning mediaResult: the next request carries the image after the tool message", async () => {
    const { server, client } = await replay([
      okSample("openai-chat-response-tool-calls.pydantic-ai.json"),
      okSample("openai-chat-followup-response.pydantic-ai.json"),
    ]);
    const tool = defineTool({
      name: "get_capital",
      description: "Get the capital of a country.",
      parameters: z.strictObject({ country: z.string() }),
      execute: ({ country }) => mediaResult(`A photo of ${capitals[country] ?? "?"}`, [png]),
    });
    await runToolLoop({ provider: createOpenAIChatProvider({ client }), tools: registryOf(tool), maxIterations: 5 }, [
      { role: "user", content: "Show me the capital of England" },
    ]);
    const sent = body(server, 1).messages;
    const toolIndex = sent.findIndex((message) => message.role === "tool");
    const callId = sent[toolIndex]?.tool_call_id;
    expect(sent[toolIndex]).toEqual({ role: "tool", tool_call_id: callId, content: "A photo of London" });
    expect(sent[toolIndex + 1]).toEqual({
      role: "user",
      content: [
        { type: "text", text: `Returned by tool call ${callId} (get_capital):` },
        { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
      ],
    });
  });

  it("the loop rejects with provider_failed whose cause is the UnsupportedContentError, and sends nothing", async () => {
    const { server, client } = await replay([okSample("openai-chat-response-image-url.json")]);
    const run = runToolLoop({ provider: createOpenAIChatProvider({ client }), maxIterations: 2 }, [
      { role: "user", content: [{ type: "image", url: "gs://bucket/photo.png" }] },
    ]);
    const error = await run.then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(isToolLoopError(error) && error.code).toBe("provider_failed");
    expect(isUnsupportedContentError((error as ToolLoopError).cause)).toBe(true);
    expect(server.requests).toHaveLength(0);
  });
});
