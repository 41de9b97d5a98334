import { createOpenAI } from "@ai-sdk/openai";
import { APICallError, type LanguageModel } from "ai";
import { describe, expect, it, vi } from "vitest";
import * as z from "zod";
import { type AISDKLanguageModelLike, createAISDKProvider, toCallOptions } from "../../../src/adapters/ai-sdk/index.js";
import {
  type ContentPart,
  defineTool,
  errorResult,
  isToolLoopError,
  isUnsupportedContentError,
  type Message,
  mediaResult,
  runToolLoop,
  ToolLoopError,
} from "../../../src/index.js";
import {
  abortOnceRequested,
  expectLoopRejectsUnreadable,
  expectUnreadable,
  okSample,
  registryOf,
  useReplayServers,
} from "../../helpers/adapter-fixtures.js";
import { type ReplayResponse, type ReplayServer, readSample } from "../../helpers/replay-server.js";

type Json = Record<string, unknown>;
type ChatRequest = Json & { messages: Json[]; tools?: Json[]; model: string };
type ModelV2 = Extract<LanguageModel, { specificationVersion: "v2" }>;
type ModelV3 = Extract<LanguageModel, { specificationVersion: "v3" }>;
type V2Result = Awaited<ReturnType<ModelV2["doGenerate"]>>;
type V3Result = Awaited<ReturnType<ModelV3["doGenerate"]>>;

const startServer = useReplayServers();

/** `ai@6` with `@ai-sdk/openai@3`: `.chat()` is the Chat Completions model, pointed at the local replay server. */
async function replay(script: ReplayResponse[]): Promise<{ server: ReplayServer; model: ModelV3 }> {
  const server = await startServer(script);
  return { server, model: createOpenAI({ apiKey: "test", baseURL: `${server.url}/v1` }).chat("gpt-4o") };
}

const body = (server: ReplayServer, index: number) => server.requests[index]?.body as ChatRequest;

/**
 * The recorded follow-up leaves `content` out of assistant messages that only carry tool calls;
 * the AI SDK sends `content: null` there (both accepted by the API: "Required unless tool_calls").
 */
function withoutNullContent(messages: Json[]): Json[] {
  return messages.map(({ content, ...rest }) => (content === null ? rest : { content, ...rest }));
}

describe("createAISDKProvider with ai@6 and @ai-sdk/openai@3 (Chat Completions)", () => {
  it("runs a full cycle and sends the recorded follow-up (tool_calls, then a tool message per call)", async () => {
    const { server, model } = await replay([
      okSample("openai-chat-response-tool-calls.pydantic-ai.json"),
      okSample("openai-chat-followup-response.pydantic-ai.json"),
    ]);
    const expected = readSample<ChatRequest>("openai-chat-followup-request.pydantic-ai.json");
    const definition = (expected.tools as Array<{ function: Json }>)[0]?.function ?? {};
    const execute = vi.fn(async ({ country }: { country: string }) => (country === "England" ? "London" : "?"));
    const capital = defineTool({
      name: "get_capital",
      description: definition.description as string,
      parameters: z.object({ country: z.string() }),
      execute,
    });
    // The first round of the recorded conversation, as a transcript handed to the loop.
    const history: Message[] = [
      { role: "user", content: "What is the capital of France?" },
      {
        role: "assistant",
        content: "",
        toolCalls: [
          { id: "pyd_ai_504f8147f83f44f3a5f14d87bfd01bda", name: "get_capital", arguments: { country: "France" } },
        ],
      },
      {
        role: "tool",
        content: "Paris",
        toolCallId: "pyd_ai_504f8147f83f44f3a5f14d87bfd01bda",
        toolName: "get_capital",
      },
      { role: "assistant", content: "The capital of France is Paris.\n" },
      { role: "user", content: "What is the capital of England?" },
    ];
    const provider = createAISDKProvider({ model });

    const result = await runToolLoop(
      { provider, tools: registryOf(capital), maxIterations: 3, llmOptions: { tool_choice: "auto" } },
      history,
    );

    expect(execute).toHaveBeenCalledWith({ country: "England" }, expect.anything());
    expect(result.content).toBe("The capital of England is London.");
    // @ai-sdk/openai reports the cached and reasoning counts as 0 when the API sent none; they are passed on.
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
    const followup = body(server, 1);
    expect(withoutNullContent(followup.messages)).toEqual(expected.messages);
    expect(followup).toMatchObject({ model: "gpt-4o", tool_choice: "auto" });
    expect(followup.tools).toEqual([
      {
        type: "function",
        function: {
          name: "get_capital",
          description: definition.description,
          parameters: expect.objectContaining({ type: "object" }),
        },
      },
    ]);
  });

  it("answers parallel calls in call order, one tool message each", async () => {
    const { server, model } = await replay([
      okSample("openai-chat-response-parallel-tool-calls.recorded.json"),
      okSample("openai-chat-followup-response.pydantic-ai.json"),
    ]);
    const weather = defineTool({
      name: "GetWeatherArgs",
      description: "Weather",
      parameters: z.object({ city: z.string(), country: z.string(), units: z.enum(["c", "f"]) }),
      // Answers last: results must still follow call order.
      execute: async ({ city }) => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        return `Cloudy in ${city}`;
      },
    });
    const stock = defineTool({
      name: "get_stock_price",
      description: "Stock price",
      parameters: z.object({ ticker: z.string(), exchange: z.string() }),
      execute: ({ ticker }) => `${ticker}: 100`,
    });
    const provider = createAISDKProvider({ model });

    await runToolLoop({ provider, tools: registryOf(weather, stock), maxIterations: 2 }, [
      { role: "user", content: "Weather in Edinburgh and the AAPL price?" },
    ]);

    const sent = body(server, 1).messages;
    expect(sent.slice(1)).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_fdNz3vOBKYgOIpMdWotB9MjY",
            type: "function",
            function: {
              name: "GetWeatherArgs",
              arguments: JSON.stringify({ city: "Edinburgh", country: "GB", units: "c" }),
            },
          },
          {
            id: "call_h1DWI1POMJLb0KwIyQHWXD4p",
            type: "function",
            function: { name: "get_stock_price", arguments: JSON.stringify({ ticker: "AAPL", exchange: "NASDAQ" }) },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_fdNz3vOBKYgOIpMdWotB9MjY", content: "Cloudy in Edinburgh" },
      { role: "tool", tool_call_id: "call_h1DWI1POMJLb0KwIyQHWXD4p", content: "AAPL: 100" },
    ]);
  });

  it("rejects with ToolLoopError whose cause is the AI SDK's APICallError on an API 400", async () => {
    const errorBody = {
      error: {
        message:
          "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'.",
        type: "invalid_request_error",
        param: "messages",
        code: null,
      },
    };
    const { model } = await replay([{ status: 400, body: errorBody }]);
    const provider = createAISDKProvider({ model });

    const error = await runToolLoop({ provider, maxIterations: 2 }, [{ role: "user", content: "hi" }]).catch(
      (caught: unknown) => caught,
    );

    expect(error).toBeInstanceOf(ToolLoopError);
    const cause = (error as ToolLoopError).cause;
    expect(APICallError.isInstance(cause)).toBe(true);
    expect((cause as APICallError).statusCode).toBe(400);
    expect((error as ToolLoopError).message).toContain("must be followed by tool messages");
  });

  it("aborts the request mid-flight when the loop's signal aborts", async () => {
    const { server, model } = await replay([{ hang: true }]);
    const { settled: loop } = await abortOnceRequested(
      server,
      (signal) =>
        runToolLoop({ provider: createAISDKProvider({ model }), maxIterations: 2 }, [{ role: "user", content: "hi" }], {
          signal,
        }),
      new Error("user cancelled"),
    );

    await expect(loop).rejects.toSatisfy((error) => isToolLoopError(error) && error.message.includes("user cancelled"));
    // The signal reached the client: it closed the HTTP request.
    await server.waitForDisconnects(1);
  });

  it("hands the signal to doGenerate: chat() alone rejects once aborted", async () => {
    const { server, model } = await replay([{ hang: true }]);
    const { settled: chat } = await abortOnceRequested(server, (signal) =>
      createAISDKProvider({ model }).chat([{ role: "user", content: "hi" }], undefined, "", {}, signal),
    );

    await expect(chat).rejects.toMatchObject({ name: "AbortError" });
  });

  it("maps llmOptions to call options on the wire", async () => {
    const { server, model } = await replay([okSample("openai-chat-followup-response.pydantic-ai.json")]);
    const provider = createAISDKProvider({ model });

    await runToolLoop(
      {
        provider,
        tools: registryOf(defineTool({ name: "t", description: "d", parameters: z.object({}), execute: () => "" })),
        maxIterations: 1,
        llmOptions: {
          max_tokens: 50,
          temperature: 0.3,
          top_p: 0.9,
          stop: "END",
          seed: 7,
          tool_choice: { type: "function", function: { name: "t" } },
        },
      },
      [{ role: "user", content: "hi" }],
    );

    expect(body(server, 0)).toMatchObject({
      max_tokens: 50,
      temperature: 0.3,
      top_p: 0.9,
      stop: ["END"],
      seed: 7,
      tool_choice: { type: "function", function: { name: "t" } },
    });
  });

  it("returns the model's id from getDefaultModel()", async () => {
    const { model } = await replay([]);
    expect(createAISDKProvider({ model }).getDefaultModel()).toBe("gpt-4o");
  });
});

describe("createAISDKProvider with hand-made spec v2 and v3 models", () => {
  function scriptedModel<M extends ModelV2 | ModelV3>(
    specificationVersion: M["specificationVersion"],
    results: Array<Awaited<ReturnType<M["doGenerate"]>>>,
  ) {
    const calls: Json[] = [];
    const model = {
      specificationVersion,
      provider: "fake",
      modelId: `fake-${specificationVersion}`,
      supportedUrls: {},
      doGenerate: async (options: Json) => {
        calls.push(options);
        const result = results[calls.length - 1];
        if (result === undefined) throw new Error("no scripted result");
        return result;
      },
      doStream: async () => {
        throw new Error("not used");
      },
    } as unknown as M;
    return { model, calls };
  }

  const weather = () =>
    registryOf(
      defineTool({
        name: "weather",
        description: "Weather for a city",
        parameters: z.object({ city: z.string() }),
        execute: ({ city }) => (city === "Paris" ? "Sunny" : errorResult("unknown city")),
      }),
    );

  it("works with a v2 model: string finish reasons, flat usage, tool-result parts", async () => {
    const v2: V2Result[] = [
      {
        content: [
          { type: "text", text: "Let me check." },
          { type: "tool-call", toolCallId: "c1", toolName: "weather", input: '{"city":"Paris"}' },
        ],
        finishReason: "tool-calls",
        usage: { inputTokens: 10, outputTokens: 5, totalTokens: 16 },
        warnings: [],
      },
      {
        content: [{ type: "text", text: "Sunny." }],
        finishReason: "stop",
        usage: { inputTokens: 20, outputTokens: 2, totalTokens: 22 },
        warnings: [],
      },
    ];
    const { model, calls } = scriptedModel<ModelV2>("v2", v2);
    const typed: AISDKLanguageModelLike = model;

    const result = await runToolLoop(
      { provider: createAISDKProvider({ model: typed }), tools: weather(), maxIterations: 3 },
      [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Weather in Paris?" },
      ],
    );

    expect(result.content).toBe("Sunny.");
    expect(result.usage).toEqual({ promptTokens: 30, completionTokens: 7, totalTokens: 38 });
    expect(calls[0]).toMatchObject({
      tools: [
        {
          type: "function",
          name: "weather",
          description: "Weather for a city",
          inputSchema: expect.objectContaining({ type: "object" }),
        },
      ],
    });
    expect(calls[1]?.prompt).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Let me check." },
          { type: "tool-call", toolCallId: "c1", toolName: "weather", input: { city: "Paris" } },
        ],
      },
      {
        role: "tool",
        content: [
          { type: "tool-result", toolCallId: "c1", toolName: "weather", output: { type: "text", value: "Sunny" } },
        ],
      },
    ]);
  });

  it("works with a v3 model: object finish reasons, nested usage, error-text results, provider metadata round trip", async () => {
    const v3: V3Result[] = [
      {
        content: [
          { type: "reasoning", text: "Two cities.", providerMetadata: { fake: { signature: "sig" } } },
          {
            type: "tool-call",
            toolCallId: "c1",
            toolName: "weather",
            input: '{"city":"Paris"}',
            providerMetadata: { fake: { itemId: "i1" } },
          },
          { type: "tool-call", toolCallId: "c2", toolName: "weather", input: '{"city":"Atlantis"}' },
          { type: "tool-call", toolCallId: "s1", toolName: "web_search", input: "{}", providerExecuted: true },
        ],
        finishReason: { unified: "tool-calls", raw: "tool_use" },
        usage: {
          inputTokens: { total: 12, noCache: 12, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: 8, text: 8, reasoning: undefined },
        },
        warnings: [],
      },
      {
        content: [{ type: "text", text: "Paris is sunny; Atlantis is unknown." }],
        finishReason: { unified: "stop", raw: "end_turn" },
        usage: {
          inputTokens: { total: 30, noCache: 30, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: 9, text: 9, reasoning: undefined },
        },
        warnings: [],
      },
    ];
    const { model, calls } = scriptedModel<ModelV3>("v3", v3);
    const provider = createAISDKProvider({ model });

    const result = await runToolLoop({ provider, tools: weather(), maxIterations: 3 }, [
      { role: "user", content: "Paris and Atlantis?" },
    ]);

    expect(provider.getDefaultModel()).toBe("fake-v3");
    expect(result.usage).toEqual({ promptTokens: 42, completionTokens: 17, totalTokens: 59 });
    expect(result.messages[1]?.toolCalls?.map((call) => call.id)).toEqual(["c1", "c2"]);
    expect((calls[1]?.prompt as Json[] | undefined)?.slice(1)).toEqual([
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "Two cities.", providerOptions: { fake: { signature: "sig" } } },
          {
            type: "tool-call",
            toolCallId: "c1",
            toolName: "weather",
            input: { city: "Paris" },
            providerOptions: { fake: { itemId: "i1" } },
          },
          { type: "tool-call", toolCallId: "c2", toolName: "weather", input: { city: "Atlantis" } },
        ],
      },
      {
        role: "tool",
        content: [
          { type: "tool-result", toolCallId: "c1", toolName: "weather", output: { type: "text", value: "Sunny" } },
          {
            type: "tool-result",
            toolCallId: "c2",
            toolName: "weather",
            output: { type: "error-text", value: "unknown city" },
          },
        ],
      },
    ]);
  });

  it("propagates the model's error unchanged", async () => {
    const failure = new Error("rate limited");
    const provider = createAISDKProvider({ model: { modelId: "m", doGenerate: () => Promise.reject(failure) } });
    await expect(provider.chat([{ role: "user", content: "hi" }], undefined, "m", {})).rejects.toBe(failure);
  });

  it.each([
    ["no options", undefined, /options must be an object/],
    ["a model id string", { model: "openai/gpt-4o" }, /model must be an AI SDK LanguageModel object/],
    ["a model without doGenerate", { model: { modelId: "m" } }, /model must be an AI SDK LanguageModel object/],
    ["a v1 model", { model: { specificationVersion: "v1", modelId: "m", doGenerate: () => {} } }, /"v2" or newer/],
  ])("throws a TypeError for %s", (_label, options, message) => {
    expect(() => createAISDKProvider(options as never)).toThrow(TypeError);
    expect(() => createAISDKProvider(options as never)).toThrow(message);
  });
});

describe("createAISDKProvider with results it cannot read (D06)", () => {
  const PROVIDER = "AI SDK";
  const prompt: Message[] = [{ role: "user", content: "hi" }];
  /** A spec v2 model whose doGenerate returns `results` in turn. */
  const modelReturning = (...results: unknown[]): AISDKLanguageModelLike => {
    let index = 0;
    return { specificationVersion: "v2", modelId: "hand-made", doGenerate: async () => results[index++] as never };
  };
  const chatWith = (model: AISDKLanguageModelLike) => createAISDKProvider({ model }).chat(prompt, undefined, "", {});
  const nameless = {
    id: "chatcmpl-1",
    object: "chat.completion",
    created: 1,
    model: "gpt-4o",
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_1", type: "function", function: { name: "", arguments: "{}" } }],
        },
        finish_reason: "tool_calls",
      },
    ],
  };

  it.each<[string, unknown, RegExp]>([
    ["nothing", undefined, /^AI SDK: the doGenerate result is not an object \(got undefined\)$/],
    ["an empty object", {}, /^AI SDK: the doGenerate result has no content array \(got undefined\)$/],
    ["content that is text", { content: "Hello", finishReason: "stop" }, /no content array \(got string\)$/],
    [
      "a content part that is not an object",
      { content: ["Hello"], finishReason: "stop" },
      /^AI SDK: a content part is not an object \(got string\)$/,
    ],
    [
      "a tool-call part without a toolName",
      { content: [{ type: "tool-call", toolCallId: "c", input: "{}" }], finishReason: "tool-calls" },
      /^AI SDK: a tool-call part has no toolName \(got undefined\)$/,
    ],
    [
      "finishReason error with nothing (v2)",
      { content: [], finishReason: "error" },
      /^AI SDK: the model finished with an error and gave no answer \(finishReason: error\)$/,
    ],
    [
      "finishReason error with nothing (v3, raw reason kept)",
      { content: [], finishReason: { unified: "error", raw: "MALFORMED_FUNCTION_CALL" } },
      /^AI SDK: the model finished with an error and gave no answer \(finishReason: error, raw: MALFORMED_FUNCTION_CALL\)$/,
    ],
  ])("rejects %s", async (_name, result, expected) => {
    await expectUnreadable(chatWith(modelReturning(result)), PROVIDER, expected);
  });

  it.each<[string, unknown, string, string]>([
    ["an empty answer", { content: [], finishReason: "stop" }, "", "stop"],
    ["an error with text", { content: [{ type: "text", text: "Part" }], finishReason: "error" }, "Part", "error"],
    [
      "an empty text with finishReason other",
      { content: [{ type: "text", text: "" }], finishReason: "other" },
      "",
      "other",
    ],
  ])("still reads %s", async (_name, result, content, finishReason) => {
    await expect(chatWith(modelReturning(result))).resolves.toMatchObject({ content, toolCalls: [], finishReason });
  });

  it("on the wire: @ai-sdk/openai refuses {} and an error body itself; a nameless call is refused by the adapter", async () => {
    const { model } = await replay([
      { body: {} },
      { body: { error: { message: "overloaded", type: "server_error" } } },
      { body: nameless },
    ]);
    const provider = createAISDKProvider({ model });

    for (let index = 0; index < 2; index++) {
      const error = await provider.chat(prompt, undefined, "", {}).catch((caught: unknown) => caught);
      expect(APICallError.isInstance(error)).toBe(true);
    }
    await expectUnreadable(
      provider.chat(prompt, undefined, "", {}),
      PROVIDER,
      /a tool-call part has no toolName \(got ""\)$/,
    );
  });

  it("the loop rejects with ToolLoopError whose cause is the InvalidProviderResponseError, keeping the transcript", async () => {
    const { model } = await replay([okSample("openai-chat-response-tool-calls.pydantic-ai.json"), { body: nameless }]);
    const capital = defineTool({
      name: "get_capital",
      description: "Capital of a country",
      parameters: z.object({ country: z.string() }),
      execute: ({ country }) => (country === "England" ? "London" : "?"),
    });

    const run = runToolLoop(
      { provider: createAISDKProvider({ model }), tools: registryOf(capital), maxIterations: 3 },
      [{ role: "user", content: "What is the capital of England?" }],
    );

    const error = await expectLoopRejectsUnreadable(run, PROVIDER, [
      { role: "user" },
      { role: "assistant", toolCalls: [expect.objectContaining({ name: "get_capital" })] },
      { role: "tool", content: "London" },
    ]);
    expect(error.iterations).toBe(2);
  });
});

describe("toCallOptions", () => {
  it.each<[string, Json, Json]>([
    [
      "OpenAI names are renamed",
      { max_tokens: 5, top_p: 1, frequency_penalty: 0.1, presence_penalty: 0.2 },
      { maxOutputTokens: 5, topP: 1, frequencyPenalty: 0.1, presencePenalty: 0.2 },
    ],
    ["the AI SDK's name wins", { max_tokens: 5, maxOutputTokens: 9 }, { maxOutputTokens: 9 }],
    ["stop as a string", { stop: "x" }, { stopSequences: ["x"] }],
    ["Anthropic's stop_sequences and top_k", { stop_sequences: ["a"], top_k: 3 }, { stopSequences: ["a"], topK: 3 }],
    ["tool_choice string", { tool_choice: "required" }, { toolChoice: { type: "required" } }],
    ["Anthropic's any", { tool_choice: { type: "any" } }, { toolChoice: { type: "required" } }],
    [
      "Anthropic's named tool",
      { tool_choice: { type: "tool", name: "t" } },
      { toolChoice: { type: "tool", toolName: "t" } },
    ],
    ["AI SDK toolChoice shorthand", { toolChoice: "none" }, { toolChoice: { type: "none" } }],
    [
      "AI SDK toolChoice object",
      { toolChoice: { type: "tool", toolName: "t" } },
      { toolChoice: { type: "tool", toolName: "t" } },
    ],
    [
      "other keys pass through",
      { providerOptions: { openai: { user: "u" } }, headers: { a: "b" } },
      { providerOptions: { openai: { user: "u" } }, headers: { a: "b" } },
    ],
  ])("toCallOptions: %s", (_label, input, expected) => {
    expect(toCallOptions(input)).toEqual(expected);
  });
});

describe("createAISDKProvider: images, files and structured output", () => {
  // A genuine PNG: the image of Ollama's documented vision request.
  const pig = (readSample<{ messages: Array<{ images: string[] }> }>("ollama-chat-request-images.json").messages[0]
    ?.images[0] ?? "") as string;
  const pigPart: ContentPart = { type: "image", mediaType: "image/png", data: pig };
  const pdfPart: ContentPart = { type: "file", mediaType: "application/pdf", data: "JVBERi0=", filename: "a.pdf" };
  const schema = {
    type: "object",
    properties: {
      city: { type: "string" },
      temperature: { type: "number" },
      units: { type: "string", enum: ["c", "f"] },
    },
    required: ["city", "temperature", "units"],
    additionalProperties: false,
  };

  /** A hand-made model of `version` that records its call options and answers "ok". */
  function recordingModel(version: "v2" | "v3") {
    const calls: Array<Json & { prompt: Json[] }> = [];
    const model: AISDKLanguageModelLike = {
      specificationVersion: version,
      modelId: `fake-${version}`,
      doGenerate: async (options) => {
        calls.push(options as unknown as Json & { prompt: Json[] });
        return {
          content: [{ type: "text", text: "ok" }],
          finishReason: version === "v2" ? "stop" : { unified: "stop" },
        };
      },
    };
    return { model, calls };
  }

  it("@ai-sdk/openai sends a user message's image URL as the documented image input", async () => {
    const expected = readSample<ChatRequest>("ai-sdk-openai-chat-request-image-input.json");
    const answer = readSample<{ choices: Array<{ message: { content: string } }> }>(
      "ai-sdk-openai-chat-response-image-input.json",
    );
    const server = await startServer([{ body: answer }]);
    const model = createOpenAI({ apiKey: "test", baseURL: `${server.url}/v1` }).chat("gpt-5.4");
    const [text, image] = (expected.messages[0] as { content: [Json, { image_url: { url: string } }] }).content;

    const response = await createAISDKProvider({ model }).chat(
      [{ role: "user", content: [text as ContentPart, { type: "image", url: image.image_url.url }] }],
      undefined,
      "",
      { max_tokens: 300 },
    );

    // @ai-sdk/openai names the cap max_completion_tokens for gpt-5 (reasoning) models.
    const { max_tokens: cap, ...documented } = expected;
    expect(body(server, 0)).toEqual({ ...documented, max_completion_tokens: cap });
    expect(response.content).toBe(answer.choices[0]?.message.content);
  });

  it("@ai-sdk/openai sends base64 images as data URLs and a PDF as a file part", async () => {
    const { server, model } = await replay([okSample("openai-chat-followup-response.pydantic-ai.json")]);

    await createAISDKProvider({ model }).chat(
      [{ role: "user", content: [{ type: "text", text: "Compare:" }, pigPart, pdfPart] }],
      undefined,
      "",
      {},
    );

    expect(body(server, 0).messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "Compare:" },
          { type: "image_url", image_url: { url: `data:image/png;base64,${pig}` } },
          { type: "file", file: { filename: "a.pdf", file_data: "data:application/pdf;base64,JVBERi0=" } },
        ],
      },
    ]);
  });

  it.each(["v2", "v3"] as const)("gives a %s model file parts: base64 text, a URL as a URL", async (version) => {
    const { model, calls } = recordingModel(version);

    await createAISDKProvider({ model }).chat(
      [
        {
          role: "user",
          content: [
            { type: "text", text: "Look:" },
            pigPart,
            { type: "image", url: "https://example.com/a.webp", mediaType: "image/webp" },
            { type: "image", url: "gs://bucket/b.png" },
            { ...pdfPart },
            { type: "file", mediaType: "audio/wav", data: "UklGRg==" },
          ],
        },
      ],
      undefined,
      "",
      {},
    );

    const [message] = (calls[0] ?? { prompt: [] }).prompt as [{ content: Json[] }];
    expect(message.content).toEqual([
      { type: "text", text: "Look:" },
      { type: "file", data: pig, mediaType: "image/png" },
      { type: "file", data: new URL("https://example.com/a.webp"), mediaType: "image/webp" },
      { type: "file", data: new URL("gs://bucket/b.png"), mediaType: "image/*" },
      { type: "file", data: "JVBERi0=", mediaType: "application/pdf", filename: "a.pdf" },
      { type: "file", data: "UklGRg==", mediaType: "audio/wav" },
    ]);
    expect(message.content[2]?.data).toBeInstanceOf(URL);
  });

  const withToolAnswer = (parts: ContentPart[], isError = false): Message[] => [
    { role: "user", content: "Screenshot, please." },
    { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "screenshot", arguments: {} }] },
    {
      role: "tool",
      content: [{ type: "text", text: "The screenshot." }, ...parts],
      toolCallId: "c1",
      toolName: "screenshot",
      isError,
    },
  ];

  it.each<["v2" | "v3", Json[]]>([
    [
      "v3",
      [
        { type: "text", text: "The screenshot." },
        { type: "image-data", data: pig, mediaType: "image/png" },
        { type: "image-url", url: "https://example.com/a.png" },
        { type: "file-data", data: "JVBERi0=", mediaType: "application/pdf", filename: "a.pdf" },
      ],
    ],
    [
      "v2",
      [
        { type: "text", text: "The screenshot." },
        { type: "media", data: pig, mediaType: "image/png" },
        { type: "media", data: "JVBERi0=", mediaType: "application/pdf" },
      ],
    ],
  ])("gives a %s model a tool's parts as its result's content output", async (version, value) => {
    const { model, calls } = recordingModel(version);
    const parts: ContentPart[] =
      version === "v3" ? [pigPart, { type: "image", url: "https://example.com/a.png" }, pdfPart] : [pigPart, pdfPart];

    await createAISDKProvider({ model }).chat(withToolAnswer(parts), undefined, "", {});

    expect(calls[0]?.prompt[2]).toEqual({
      role: "tool",
      content: [{ type: "tool-result", toolCallId: "c1", toolName: "screenshot", output: { type: "content", value } }],
    });
  });

  it("keeps a failed tool's parts (content output) rather than drop them", async () => {
    const { model, calls } = recordingModel("v3");
    await createAISDKProvider({ model }).chat(withToolAnswer([pigPart], true), undefined, "", {});
    expect(calls[0]?.prompt[2]).toMatchObject({ role: "tool", content: [{ toolCallId: "c1" }] });
    expect((calls[0]?.prompt[2]?.content as Array<{ output: Json }> | undefined)?.[0]?.output).toEqual({
      type: "content",
      value: [
        { type: "text", text: "The screenshot." },
        { type: "image-data", data: pig, mediaType: "image/png" },
      ],
    });
  });

  it("refuses a tool's image URL for a v2 model (its tool results take base64 only) before doGenerate", async () => {
    const { model, calls } = recordingModel("v2");

    const error = await createAISDKProvider({ model })
      .chat(withToolAnswer([{ type: "image", url: "https://example.com/a.png" }]), undefined, "", {})
      .catch((caught: unknown) => caught);

    expect(isUnsupportedContentError(error)).toBe(true);
    expect(error).toMatchObject({ provider: "ai-sdk", part: "image", messageIndex: 2 });
    expect(String((error as Error).message)).toMatch(/^ai-sdk cannot take an image URL in messages\[2\]: /);
    expect(calls).toHaveLength(0);
  });

  it("asks for the loop's output schema as responseFormat, over llmOptions.responseFormat", async () => {
    const { model, calls } = recordingModel("v3");

    await createAISDKProvider({ model }).chat([{ role: "user", content: "SF weather?" }], undefined, "", {
      responseFormat: { type: "text" },
      output: { name: "location", schema },
    });

    expect(calls[0]?.responseFormat).toEqual({ type: "json", schema, name: "location" });
    expect(calls[0]).not.toHaveProperty("output");
  });

  it("@ai-sdk/openai sends it as response_format json_schema and reads the recorded JSON answer", async () => {
    const { server, model } = await replay([okSample("ai-sdk-openai-chat-response-json-schema.recorded.json")]);

    const response = await createAISDKProvider({ model }).chat(
      [{ role: "user", content: "What's the weather like in SF?" }],
      undefined,
      "",
      { output: { name: "location", schema } },
    );

    expect(body(server, 0).response_format).toMatchObject({
      type: "json_schema",
      json_schema: { name: "location", schema },
    });
    expect(JSON.parse(response.content)).toEqual({ city: "San Francisco", temperature: 65, units: "f" });
  });

  it("refuses an output that is not { name, schema } before doGenerate", async () => {
    const { model, calls } = recordingModel("v3");
    const pending = createAISDKProvider({ model }).chat([{ role: "user", content: "hi" }], undefined, "", {
      output: { schema },
    });
    await expect(pending).rejects.toThrow(/^AI SDK: llmOptions\.output must be \{ name: string, schema: object \}/);
    expect(calls).toHaveLength(0);
  });

  it("in the loop, a tool's mediaResult image reaches @ai-sdk/openai's Responses request as input_image", async () => {
    const server = await startServer([
      okSample("openai-responses-response-function-call.pydantic-ai.json"),
      okSample("openai-responses-followup-response.pydantic-ai.json"),
    ]);
    const model = createOpenAI({ apiKey: "test", baseURL: `${server.url}/v1` }).responses("gpt-4o");
    const map = defineTool({
      name: "get_capital",
      description: "The capital of a country, with a map",
      parameters: z.object({ country: z.string() }),
      execute: ({ country }) => mediaResult(`A map of ${country}.`, [pigPart]),
    });

    const result = await runToolLoop(
      { provider: createAISDKProvider({ model }), tools: registryOf(map), maxIterations: 3 },
      [{ role: "user", content: "What is the capital of PotatoLand?" }],
    );

    expect(result.content).toBe("The capital of PotatoLand is Potato City.");
    const input = (server.requests[1]?.body as { input?: Json[] } | undefined)?.input ?? [];
    expect(input.find((item) => item.type === "function_call_output")).toEqual({
      type: "function_call_output",
      call_id: "call_YfwRsW8sUxDKipwyhWTzOXCA",
      output: [
        { type: "input_text", text: "A map of PotatoLand." },
        { type: "input_image", image_url: `data:image/png;base64,${pig}` },
      ],
    });
  });
});
