import OpenAI from "openai";
import { describe, expect, it, vi } from "vitest";
import * as z from "zod";
import {
  createOpenAIResponsesProvider,
  DEFAULT_OPENAI_MODEL,
  toOpenAIStrictSchema,
} from "../../../src/adapters/openai/index.js";
import {
  type ContentPart,
  defineTool,
  errorResult,
  isToolLoopError,
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
  sseResponse,
  sseSample,
} from "../../helpers/replay-server.js";
import { checkStreamedInput, streamedRun } from "../../helpers/stream-parts.js";

type Json = Record<string, unknown>;
type WireRequest = Json & { model: string; input: Json[]; tools?: Json[] };
type WireResponse = Json & { output: Json[] };

const startServer = useReplayServers();

async function replay(script: ReplayResponse[]): Promise<{ server: ReplayServer; client: OpenAI }> {
  const server = await startServer(script);
  return { server, client: new OpenAI({ apiKey: "test", baseURL: `${server.url}/v1`, maxRetries: 0 }) };
}

const body = (server: ReplayServer, index: number) => server.requests[index]?.body as WireRequest;
const finalAnswer = () => okSample("openai-responses-followup-response.pydantic-ai.json");

/** A function_call response from the documented sample, with the call's fields replaced. */
function functionCallResponse(...calls: Json[]): WireResponse {
  const response = readSample<WireResponse>("openai-responses-response-function-call.pydantic-ai.json");
  const [template] = response.output;
  response.output = calls.map((call, index) => ({ ...template, id: `fc_${index}`, ...call }));
  return response;
}

describe("createOpenAIResponsesProvider with the real openai client", () => {
  it("runs a full cycle statelessly and sends the follow-up as the recorded one (strict mode)", async () => {
    const { server, client } = await replay([
      okSample("openai-responses-response-function-call.pydantic-ai.json"),
      finalAnswer(),
    ]);
    const execute = vi.fn((_args: { country: string }) => "Potato City");
    const getCapital = defineTool({
      name: "get_capital",
      description: "Get the capital of a country.",
      parameters: z.object({ country: z.string() }),
      execute,
    });

    const result = await runToolLoop(
      {
        provider: createOpenAIResponsesProvider({ client, strict: true }),
        model: "gpt-4o",
        tools: registryOf(getCapital),
        maxIterations: 5,
        llmOptions: { tool_choice: "auto" },
      },
      [{ role: "user", content: "What is the capital of PotatoLand?" }],
    );

    expect(execute.mock.calls[0]?.[0]).toEqual({ country: "PotatoLand" });
    expect(result).toMatchObject({ content: "The capital of PotatoLand is Potato City.", iterations: 2 });
    expect(result.usage).toEqual({
      promptTokens: 40 + 67,
      completionTokens: 18 + 11,
      totalTokens: 58 + 78,
      cachedInputTokens: 0,
      reasoningTokens: 0,
    });
    expect(server.requests.map(({ method, url }) => `${method} ${url}`)).toEqual([
      "POST /v1/responses",
      "POST /v1/responses",
    ]);

    // The recorded requests (pydantic-ai) also sent `stream: false`, `description: null` and
    // `status: null` on the replayed function_call; nothing else differs.
    const normalise = ({ stream: _stream, ...request }: WireRequest) => ({
      ...request,
      input: request.input.map(({ status: _status, ...item }) => item),
      tools: request.tools?.map((tool) => ({ ...tool, description: "Get the capital of a country." })),
    });
    expect(body(server, 0)).toEqual(
      normalise(readSample<WireRequest>("openai-responses-request-tools.pydantic-ai.json")),
    );
    expect(body(server, 1)).toEqual(
      normalise(readSample<WireRequest>("openai-responses-followup-request.pydantic-ai.json")),
    );
    expect(body(server, 1)).not.toHaveProperty("previous_response_id");
  });

  it("replays parallel calls then their outputs in call order, an error result included", async () => {
    const { server, client } = await replay([
      okSample("openai-responses-response-parallel-function-calls.pydantic-ai.json"),
      finalAnswer(),
    ]);
    const wrong = 'Wrong location, I only know about "London".\n\nFix the errors and try again.';
    const getLocation = defineTool({
      name: "get_location",
      description: "",
      parameters: z.object({ loc_name: z.string() }),
      execute: async ({ loc_name }) => {
        // the first call finishes last
        if (loc_name === "Londos") await new Promise((resolve) => setTimeout(resolve, 20));
        return loc_name === "London" ? '{"lat": 51, "lng": 0}' : errorResult(wrong);
      },
    });

    const result = await runToolLoop(
      {
        provider: createOpenAIResponsesProvider({ client, strict: true }),
        tools: registryOf(getLocation),
        maxIterations: 3,
      },
      [{ role: "user", content: "What is the location of Londos and London?" }],
    );

    expect(result.messages.filter((message) => message.role === "tool").map((message) => message.isError)).toEqual([
      true,
      false,
    ]);
    // The recorded follow-up also carried an empty assistant message before the calls; we leave it out.
    const recorded = readSample<WireRequest>("openai-responses-followup-request-parallel.pydantic-ai.json");
    expect(body(server, 1).input).toEqual(
      recorded.input.filter((item) => !(item.role === "assistant" && item.content === "")),
    );
  });

  it("puts assistant text before its function_call items, and keeps system messages in order", async () => {
    const response = functionCallResponse({
      call_id: "call_A",
      name: "get_capital",
      arguments: '{"country":"France"}',
    });
    response.output.unshift({
      type: "message",
      id: "msg_1",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: "Let me check.", annotations: [] }],
    });
    const { server, client } = await replay([{ body: response }, finalAnswer()]);
    const getCapital = defineTool({
      name: "get_capital",
      description: "",
      parameters: z.object({ country: z.string() }),
      execute: () => "Paris",
    });

    const result = await runToolLoop(
      { provider: createOpenAIResponsesProvider({ client }), tools: registryOf(getCapital), maxIterations: 3 },
      [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Capital of France?" },
      ],
    );

    expect(result.messages[2]).toMatchObject({ role: "assistant", content: "Let me check." });
    expect(body(server, 1).input).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Capital of France?" },
      { role: "assistant", content: "Let me check." },
      { type: "function_call", call_id: "call_A", name: "get_capital", arguments: '{"country":"France"}' },
      { type: "function_call_output", call_id: "call_A", output: "Paris" },
    ]);
  });

  it.each<[string, string, Json | undefined, string]>([
    ["an empty arguments string runs the tool with {}", "", {}, "{}"],
    ["invalid JSON reaches the loop unchanged and the model is told", "{not json", undefined, "{not json"],
  ])("%s", async (_name, rawArguments, expectedArgs, replayed) => {
    const response = functionCallResponse({ call_id: "call_T", name: "get_time", arguments: rawArguments });
    const { server, client } = await replay([{ body: response }, finalAnswer()]);
    const execute = vi.fn((_args: Json) => "12:00");
    const getTime = defineTool({ name: "get_time", description: "Time", parameters: z.object({}), execute });

    await runToolLoop(
      { provider: createOpenAIResponsesProvider({ client }), tools: registryOf(getTime), maxIterations: 3 },
      [{ role: "user", content: "Time?" }],
    );

    const [call, output] = body(server, 1).input.slice(1);
    expect(call).toEqual({ type: "function_call", call_id: "call_T", name: "get_time", arguments: replayed });
    if (expectedArgs === undefined) {
      expect(execute).not.toHaveBeenCalled();
      expect(output?.output).toMatch(/^invalid JSON in arguments for tool "get_time"/);
    } else {
      expect(execute.mock.calls[0]?.[0]).toEqual(expectedArgs);
      expect(output).toEqual({ type: "function_call_output", call_id: "call_T", output: "12:00" });
    }
  });

  it("sends strict: false explicitly on every tool when strict mode is off, in the documented flat shape", async () => {
    const { server, client } = await replay([finalAnswer()]);
    const documented = readSample<WireRequest>("openai-responses-request-tools.json");
    const [documentedTool] = documented.tools as Array<{ name: string; description: string; parameters: Json }>;
    const tool: Tool = {
      name: documentedTool?.name as string,
      description: documentedTool?.description as string,
      parameters: documentedTool?.parameters as Json,
      execute: () => newToolResult(""),
    };

    await runToolLoop(
      {
        provider: createOpenAIResponsesProvider({ client }),
        model: documented.model,
        tools: registryOf(tool),
        maxIterations: 1,
        llmOptions: { tool_choice: "auto" },
      },
      [{ role: "user", content: documented.input as unknown as string }],
    );

    expect(body(server, 0)).toEqual({
      ...documented,
      input: [{ role: "user", content: documented.input }],
      tools: [{ ...documentedTool, strict: false }],
    });
  });

  it("strips the nulls a strict-mode model sends for optional fields", async () => {
    const response = functionCallResponse({
      call_id: "call_W",
      name: "get_weather",
      arguments: '{"location":"Boston, MA","unit":null,"details":{"hourly":null,"days":2}}',
    });
    const { server, client } = await replay([{ body: response }, finalAnswer()]);
    const execute = vi.fn((_args: Json) => "cold");
    const weather = defineTool({
      name: "get_weather",
      description: "",
      parameters: z.object({
        location: z.string(),
        unit: z.enum(["celsius", "fahrenheit"]).optional(),
        details: z.object({ hourly: z.boolean().optional(), days: z.number() }).optional(),
      }),
      execute,
    });

    await runToolLoop(
      {
        provider: createOpenAIResponsesProvider({ client, strict: true }),
        tools: registryOf(weather),
        maxIterations: 3,
      },
      [{ role: "user", content: "Weather in Boston?" }],
    );

    expect(body(server, 0).tools).toEqual([
      {
        type: "function",
        name: "get_weather",
        description: "",
        parameters: toOpenAIStrictSchema(weather.parameters),
        strict: true,
      },
    ]);
    expect(execute.mock.calls[0]?.[0]).toEqual({ location: "Boston, MA", details: { days: 2 } });
  });

  it("an API 400 rejects the loop with ToolLoopError whose cause is the client's error", async () => {
    const error = {
      message: "No tool output found for function call call_YfwRsW8sUxDKipwyhWTzOXCA.",
      type: "invalid_request_error",
      param: "input",
      code: null,
    };
    const { client } = await replay([{ status: 400, body: { error } }]);

    const failure = await runToolLoop({ provider: createOpenAIResponsesProvider({ client }), maxIterations: 2 }, [
      { role: "user", content: "hi" },
    ]).then(
      () => undefined,
      (reason: unknown) => reason,
    );

    expect(failure).toBeInstanceOf(ToolLoopError);
    expect((failure as ToolLoopError).cause).toBeInstanceOf(OpenAI.BadRequestError);
    expect((failure as ToolLoopError).cause).toMatchObject({ status: 400, param: "input" });
    expect((failure as ToolLoopError).message).toContain(error.message);
  });

  it("aborts the HTTP request mid-flight when the loop's signal aborts", async () => {
    const { server, client } = await replay([{ hang: true }]);
    const { settled: loop } = await abortOnceRequested(
      server,
      (signal) =>
        runToolLoop(
          { provider: createOpenAIResponsesProvider({ client }), maxIterations: 3 },
          [{ role: "user", content: "hi" }],
          { signal },
        ),
      new Error("user cancelled"),
    );

    await expect(loop).rejects.toSatisfy((error) => isToolLoopError(error) && error.message.includes("user cancelled"));
    // The signal reached the client: it closed the HTTP request.
    await server.waitForDisconnects(1);
  });

  it("hands the signal to the client: chat() alone rejects with the SDK's abort error", async () => {
    const { server, client } = await replay([{ hang: true }]);
    const { settled: chat } = await abortOnceRequested(server, (signal) =>
      createOpenAIResponsesProvider({ client }).chat([{ role: "user", content: "hi" }], undefined, "m", {}, signal),
    );

    await expect(chat).rejects.toBeInstanceOf(OpenAI.APIUserAbortError);
  });

  it("passes llmOptions into the body and sends the loop's model, not the factory's", async () => {
    const { server, client } = await replay([finalAnswer(), finalAnswer()]);
    const provider = createOpenAIResponsesProvider({ client, model: "factory-model" });
    const llmOptions = {
      temperature: 0.3,
      max_output_tokens: 200,
      instructions: "Be brief.",
      store: false,
      tool_choice: "none",
    };

    await runToolLoop({ provider, model: "gpt-4o", maxIterations: 1, llmOptions }, [{ role: "user", content: "hi" }]);
    await runToolLoop({ provider, maxIterations: 1 }, [{ role: "user", content: "hi" }]);

    expect(body(server, 0)).toEqual({ ...llmOptions, model: "gpt-4o", input: [{ role: "user", content: "hi" }] });
    expect(body(server, 1)).toEqual({ model: "factory-model", input: [{ role: "user", content: "hi" }] });
    expect(provider.getDefaultModel()).toBe("factory-model");
    expect(createOpenAIResponsesProvider({ client }).getDefaultModel()).toBe(DEFAULT_OPENAI_MODEL);
  });

  it.each<[string, unknown, RegExp]>([
    ["no client", {}, /client must be an OpenAI client/],
    ["a client without responses", { client: { chat: { completions: { create() {} } } } }, /client\.responses\.create/],
    [
      "a non-string model",
      { client: new OpenAI({ apiKey: "x" }), model: 4 },
      /^createOpenAIResponsesProvider: model must be a non-empty string, got 4$/,
    ],
  ])("rejects %s at creation", (_name, options, message) => {
    expect(() => createOpenAIResponsesProvider(options as never)).toThrow(message);
  });
});

describe("createOpenAIResponsesProvider with responses it cannot read (D06)", () => {
  const PROVIDER = "OpenAI Responses";
  const chat = (client: OpenAI) =>
    createOpenAIResponsesProvider({ client }).chat([{ role: "user", content: "hi" }], undefined, "m", {});
  const response = (extra: Json): Json => ({ id: "resp_1", object: "response", status: "completed", ...extra });

  it.each<[string, unknown, RegExp]>([
    ["an empty object", {}, /^OpenAI Responses: the response has no output array \(got undefined\)$/],
    [
      "an error body",
      { error: { message: "The model is overloaded.", type: "server_error", code: "server_error" } },
      /^OpenAI Responses: the response is an error \(server_error: The model is overloaded\.\)$/,
    ],
    [
      "a failed response",
      response({ status: "failed", error: { code: "server_error", message: "server overloaded" }, output: [] }),
      /^OpenAI Responses: the response failed: server overloaded$/,
    ],
    [
      "a background response still in progress",
      response({ status: "in_progress", output: [] }),
      /^OpenAI Responses: the response has no answer yet \(status: in_progress\)$/,
    ],
    ["a queued response", response({ status: "queued", output: [] }), /no answer yet \(status: queued\)$/],
    [
      "a cancelled response",
      response({ status: "cancelled", output: [] }),
      /^OpenAI Responses: the response was cancelled$/,
    ],
    [
      "an output item that is not an object",
      response({ output: ["Hello"] }),
      /^OpenAI Responses: an output item is not an object \(got string\)$/,
    ],
    [
      "a function_call without a name",
      response({ output: [{ type: "function_call", call_id: "call_1", arguments: "{}" }] }),
      /^OpenAI Responses: a function_call item has no name \(got undefined\)$/,
    ],
  ])("rejects %s with status 200", async (_name, body, expected) => {
    const { client } = await replay([{ body }]);
    const error = await expectUnreadable(chat(client), PROVIDER, expected);
    // The SDK adds `output_text` to what it read.
    expect(JSON.parse(error.body)).toMatchObject(body as Json);
  });

  it.each<[string, Json, string]>([
    ["an empty output (completed)", response({ output: [], error: null }), "stop"],
    [
      "an empty text",
      response({ output: [{ type: "message", role: "assistant", content: [{ type: "output_text", text: "" }] }] }),
      "stop",
    ],
    [
      "a filtered answer without output",
      response({ status: "incomplete", incomplete_details: { reason: "content_filter" }, output: [] }),
      "content_filter",
    ],
  ])("still reads %s", async (_name, body, finishReason) => {
    const { client } = await replay([{ body }]);
    await expect(chat(client)).resolves.toMatchObject({ content: "", toolCalls: [], finishReason });
  });

  it("the loop rejects with ToolLoopError whose cause is the InvalidProviderResponseError, keeping the transcript", async () => {
    const { client } = await replay([
      { body: functionCallResponse({ call_id: "call_1", name: "get_capital", arguments: '{"country":"France"}' }) },
      { body: {} },
    ]);
    const tool: Tool = {
      name: "get_capital",
      description: "Capital of a country",
      parameters: { type: "object", properties: { country: { type: "string" } } },
      execute: () => "Paris",
    };

    const run = runToolLoop(
      { provider: createOpenAIResponsesProvider({ client }), tools: registryOf(tool), maxIterations: 3 },
      [{ role: "user", content: "What is the capital of France?" }],
    );

    const error = await expectLoopRejectsUnreadable(run, PROVIDER, [
      { role: "user" },
      { role: "assistant", toolCalls: [expect.objectContaining({ id: "call_1", name: "get_capital" })] },
      { role: "tool", toolCallId: "call_1", content: "Paris" },
    ]);
    expect(error.iterations).toBe(2);
  });
});

function recordingClient() {
  const bodies: Record<string, unknown>[] = [];
  const client = {
    responses: {
      create: async (body: Record<string, unknown>) => {
        bodies.push(body);
        return { status: "completed", output: [{ type: "message", content: [{ type: "output_text", text: "ok" }] }] };
      },
    },
  };
  return { client, bodies };
}

describe("createOpenAIResponsesProvider llmOptions", () => {
  it.each([
    [{ max_tokens: 100 }, { max_output_tokens: 100 }],
    [{ max_tokens: 100, max_output_tokens: 50 }, { max_output_tokens: 50 }],
    [
      { max_output_tokens: 70, temperature: 0 },
      { max_output_tokens: 70, temperature: 0 },
    ],
  ])("%j is sent as %j (the Responses API has no max_tokens)", async (llmOptions, expected) => {
    const { client, bodies } = recordingClient();
    const provider = createOpenAIResponsesProvider({ client: client as never });
    await provider.chat([{ role: "user", content: "hi" }], undefined, "gpt-4.1-mini", llmOptions);
    expect(bodies[0]).toMatchObject(expected);
    expect(bodies[0]).not.toHaveProperty("max_tokens");
  });
});

describe("createOpenAIResponsesProvider streamed by the loop (chatStream)", () => {
  it("streamToolLoop runs the recorded streamed call and streams the final answer's text", async () => {
    const event = (type: string, fields: Json = {}) => ({ event: type, data: { type, ...fields } });
    const answer = {
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text: "Sunny in Beijing." }],
    };
    const { server, client } = await replay([
      sseSample("openai-responses-stream-tool-call.sse"),
      sseResponse([
        event("response.output_text.delta", { output_index: 0, content_index: 0, delta: "Sunny " }),
        event("response.output_text.delta", { output_index: 0, content_index: 0, delta: "in Beijing." }),
        event("response.completed", {
          response: {
            status: "completed",
            output: [answer],
            usage: { input_tokens: 80, output_tokens: 5, total_tokens: 85 },
          },
        }),
      ]),
    ]);
    const execute = vi.fn((_args: { city: string }) => "sunny");
    const tool = defineTool({
      name: "get_weather",
      description: "Get weather",
      parameters: z.object({ city: z.string() }),
      execute,
    });
    const provider = createOpenAIResponsesProvider({ client });
    const run = streamToolLoop({ provider, tools: registryOf(tool), maxIterations: 3 }, [
      { role: "user", content: "Weather in Beijing?" },
    ]);
    const events: ToolLoopEvent[] = [];
    for await (const item of run) events.push(item);
    const result = await run.result;

    expect(execute.mock.calls[0]?.[0]).toEqual({ city: "Beijing" });
    expect(events.filter((item) => item.type === "text-delta").map((item) => item.delta)).toEqual([
      "Sunny ",
      "in Beijing.",
    ]);
    expect(result).toMatchObject({ content: "Sunny in Beijing.", stopReason: "completed" });
    expect(result.usage).toEqual({
      promptTokens: 125,
      completionTokens: 30,
      totalTokens: 155,
      cachedInputTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
    });
    expect(server.requests.map((request) => (request.body as Json).stream)).toEqual([true, true]);
  });
});

describe("createOpenAIResponsesProvider: reasoning, tool input and providerName through the loop", () => {
  it("streamToolLoop emits the recorded reasoning summary and the call's input before the call runs", async () => {
    const event = (type: string, fields: Json = {}) => ({ event: type, data: { type, ...fields } });
    const answer = { type: "message", role: "assistant", content: [{ type: "output_text", text: "19." }] };
    const { client } = await replay([
      sseSample("openai-responses-stream-reasoning-summary-tool-call.vercel-ai.sse"),
      sseResponse([
        event("response.output_text.delta", { output_index: 0, content_index: 0, delta: "19." }),
        event("response.completed", { response: { status: "completed", output: [answer] } }),
      ]),
    ]);
    const execute = vi.fn((_args: { a: number; b: number; op: string }) => "19");
    const tool = defineTool({
      name: "calculator",
      description: "Calculate.",
      parameters: z.object({ a: z.number(), b: z.number(), op: z.string() }),
      execute,
    });
    const { events, result, providerNames } = await streamedRun(
      { provider: createOpenAIResponsesProvider({ client }), tools: registryOf(tool), maxIterations: 3 },
      [{ role: "user", content: "(12 + 7)?" }],
    );

    const types = events.map((item) => item.type);
    const reasoning = events.flatMap((item) => (item.type === "reasoning-delta" ? [item.delta] : []));
    expect(reasoning.join("")).toMatch(/^\*\*Calculating step-by-step using calculator\*\*/);
    expect(types.lastIndexOf("reasoning-delta")).toBeLessThan(types.indexOf("tool-input-start"));
    const input = checkStreamedInput(events, { toolCallId: "call_AB6AaRZ1FYZB2RwS6A5vbdqn", toolName: "calculator" });
    expect(JSON.parse(input)).toEqual(execute.mock.calls[0]?.[0]);
    expect(result.content).toBe("19.");
    expect(result.usage).toEqual({
      promptTokens: 134,
      completionTokens: 28,
      totalTokens: 162,
      cachedInputTokens: 0,
      reasoningTokens: 0,
    });
    expect(providerNames).toEqual(["openai", "openai"]);
  });

  it('providerName is "openai" unless the factory names it', async () => {
    const { client } = await replay([]);
    expect(createOpenAIResponsesProvider({ client }).providerName).toBe("openai");
    expect(createOpenAIResponsesProvider({ client, providerName: "azure.ai.openai" }).providerName).toBe(
      "azure.ai.openai",
    );
    expect(() => createOpenAIResponsesProvider({ client, providerName: 7 as unknown as string })).toThrow(
      new TypeError("createOpenAIResponsesProvider: providerName must be a non-empty string, got 7"),
    );
  });
});

/** A `data:` URL's media type and base64, as a recorded request carries an inline part. */
function fromDataUrl(url: string): { mediaType: string; data: string } {
  const match = /^data:([^;]+);base64,(.*)$/s.exec(url);
  if (match === null) throw new Error(`not a data URL: ${url.slice(0, 40)}`);
  return { mediaType: match[1] as string, data: match[2] as string };
}

const png = { type: "image", mediaType: "image/png", data: "iVBORw0KGgo=" } as const;
const noArguments = { additionalProperties: false, properties: {}, type: "object" };
const getFile = { type: "function" as const, function: { name: "get_file", description: "", parameters: noArguments } };

/** The recorded `function_call_output` item of a pydantic-ai follow-up request, and its call's id. */
function recordedOutput(file: string): { callId: string; output: Json[] } {
  const recorded = readSample<WireRequest>(file);
  const item = recorded.input.find((entry) => entry.type === "function_call_output") as Json;
  return { callId: item.call_id as string, output: item.output as Json[] };
}

describe("createOpenAIResponsesProvider with images, files and structured output", () => {
  it("sends the official image example's input: input_text and input_image (with detail auto)", async () => {
    const recorded = readSample<WireRequest>("openai-responses-request-image-url.json");
    const { server, client } = await replay([okSample("openai-responses-response-image-url.json")]);
    const [message] = recorded.input as [{ content: Array<{ text?: string; image_url?: string }> }];
    const response = await createOpenAIResponsesProvider({ client }).chat(
      [
        {
          role: "user",
          content: [
            { type: "text", text: message.content[0]?.text as string },
            { type: "image", url: message.content[1]?.image_url as string },
          ],
        },
      ],
      undefined,
      "gpt-5.4",
      {},
    );
    // The example leaves `detail` out (the API's default is "auto"); openai-node's type requires it.
    const expected = structuredClone(recorded) as unknown as { input: [{ content: Json[] }] };
    expected.input[0].content[1] = { ...expected.input[0].content[1], detail: "auto" };
    expect(body(server, 0)).toEqual(expected);
    expect(response.content).toMatch(/^The image depicts a scenic landscape/);
  });

  it("puts a tool's image and file in function_call_output arrays, as the recorded follow-ups", async () => {
    const image = recordedOutput("openai-responses-followup-request-function-call-output-image.pydantic-ai.json");
    const file = recordedOutput("openai-responses-followup-request-function-call-output-file.pydantic-ai.json");
    const { server, client } = await replay([
      okSample("openai-responses-response-image-url.json"),
      okSample("openai-responses-response-image-url.json"),
    ]);
    const provider = createOpenAIResponsesProvider({ client });
    const answer = (callId: string, part: ContentPart): Message[] => [
      { role: "user", content: "Use the get_file tool" },
      { role: "assistant", content: "", toolCalls: [{ id: callId, name: "get_file", arguments: {} }] },
      // The recorded tools sent no text with the part: an empty text, left out of the output array.
      { role: "tool", content: [{ type: "text", text: "" }, part], toolCallId: callId, toolName: "get_file" },
    ];
    const imageUrl = (image.output[0] as { image_url: string }).image_url;
    await provider.chat(answer(image.callId, { type: "image", url: imageUrl }), [getFile], "gpt-5-mini", {});
    const pdf = file.output[0] as { file_data: string; filename: string };
    await provider.chat(
      answer(file.callId, { type: "file", ...fromDataUrl(pdf.file_data), filename: pdf.filename }),
      [getFile],
      "gpt-5-mini",
      {},
    );
    expect(body(server, 0).input.at(-1)).toEqual({
      type: "function_call_output",
      call_id: image.callId,
      output: image.output,
    });
    expect(body(server, 1).input.at(-1)).toEqual({
      type: "function_call_output",
      call_id: file.callId,
      output: file.output,
    });
  });

  it("asks for the output as the recorded request (text.format json_schema, strict) and reads the JSON answer", async () => {
    const recorded = readSample<WireRequest>("openai-responses-followup-request-structured-output.pydantic-ai.json");
    const { server, client } = await replay([okSample("openai-responses-response-structured-output.pydantic-ai.json")]);
    const format = (recorded.text as { format: { name: string; schema: Json } }).format;
    const call = recorded.input.find((item) => item.type === "function_call") as Json;
    const response = await createOpenAIResponsesProvider({ client }).chat(
      [
        { role: "user", content: "What is the largest city in the user country?" },
        {
          role: "assistant",
          content: "",
          toolCalls: [{ id: call.call_id as string, name: "get_user_country", arguments: {} }],
        },
        { role: "tool", content: "Mexico", toolCallId: call.call_id as string },
      ],
      [{ type: "function", function: { name: "get_user_country", description: "", parameters: noArguments } }],
      "gpt-4o",
      { tool_choice: "auto", output: { name: format.name, schema: format.schema } },
    );
    // pydantic-ai also sent an empty assistant message before the call and `stream: false`; the
    // adapter leaves an empty assistant text out and sends no `stream`.
    const { stream: _stream, ...expected } = recorded;
    expected.input = recorded.input.filter((item) => !(item.role === "assistant" && item.content === ""));
    expect(body(server, 0)).toEqual(expected);
    expect(body(server, 0)).not.toHaveProperty("output");
    expect(response).toMatchObject({ content: '{"city":"Mexico City","country":"Mexico"}', finishReason: "stop" });
  });

  it("strips the nulls strict output made the model send, and keeps the caller's text options", async () => {
    const answer = readSample<WireResponse>("openai-responses-response-structured-output.pydantic-ai.json");
    ((answer.output[0] as { content: Json[] }).content[0] as Json).text = '{"city":"Mexico City","country":null}';
    const { server, client } = await replay([{ body: answer }]);
    const schema = {
      type: "object",
      properties: { city: { type: "string" }, country: { type: "string" } },
      required: ["city"],
    };
    const response = await createOpenAIResponsesProvider({ client }).chat(
      [{ role: "user", content: "Largest city?" }],
      undefined,
      "gpt-4o",
      { text: { verbosity: "low" }, output: { name: "CityLocation", schema } },
    );
    expect(response.content).toBe('{"city":"Mexico City"}');
    expect(body(server, 0).text).toEqual({
      verbosity: "low",
      format: { type: "json_schema", name: "CityLocation", schema: toOpenAIStrictSchema(schema), strict: true },
    });
  });

  it("throws UnsupportedContentError for audio before any request, in chat and chatStream", async () => {
    const { server, client } = await replay([finalAnswer()]);
    const provider = createOpenAIResponsesProvider({ client });
    const messages: Message[] = [
      { role: "user", content: [{ type: "file", mediaType: "audio/wav", data: "UklGRg==" }] },
    ];
    await expect(provider.chat(messages, undefined, "gpt-4o", {})).rejects.toMatchObject({
      code: "unsupported_content",
      provider: "openai",
      part: "file",
      messageIndex: 0,
    });
    const stream = provider.chatStream?.(messages, undefined, "gpt-4o", {});
    await expect(stream?.[Symbol.asyncIterator]().next()).rejects.toMatchObject({ code: "unsupported_content" });
    expect(server.requests).toHaveLength(0);
  });

  it("runs the loop with a tool returning mediaResult: function_call_output carries the text and the image", async () => {
    const { server, client } = await replay([
      { body: functionCallResponse({ call_id: "call_1", name: "screenshot", arguments: "{}" }) },
      finalAnswer(),
    ]);
    const tool = defineTool({
      name: "screenshot",
      description: "Takes a screenshot.",
      parameters: z.object({}),
      execute: () => mediaResult("Screenshot of the page", [png]),
    });
    await runToolLoop(
      { provider: createOpenAIResponsesProvider({ client }), tools: registryOf(tool), maxIterations: 4 },
      [{ role: "user", content: "What does the page look like?" }],
    );
    expect(body(server, 1).input.find((item) => item.type === "function_call_output")).toEqual({
      type: "function_call_output",
      call_id: "call_1",
      output: [
        { type: "input_text", text: "Screenshot of the page" },
        { type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgo=", detail: "auto" },
      ],
    });
  });
});
