import { GoogleGenAI } from "@google/genai";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import {
  createGeminiProvider,
  type GeminiClientLike,
  type GeminiGenerateContentResponse,
} from "../../../src/adapters/gemini/index.js";
import {
  type ContentPart,
  defineTool,
  isToolLoopError,
  isUnsupportedContentError,
  type Message,
  mediaResult,
  runToolLoop,
  streamToolLoop,
  type ToolLoopError,
  type ToolLoopEvent,
} from "../../../src/index.js";
import {
  abortOnceRequested,
  expectLoopRejectsUnreadable,
  expectUnreadable,
  registryOf,
  useReplayServers,
} from "../../helpers/adapter-fixtures.js";
import { type ReplayResponse, type ReplayServer, readSample, readSampleText } from "../../helpers/replay-server.js";

// The structural client type accepts the real client.
const _typeCheck: GeminiClientLike = new GoogleGenAI({ apiKey: "test" });
void _typeCheck;

type Json = Record<string, unknown>;

interface GeminiPartJson {
  text?: string;
  thoughtSignature?: string;
  functionCall?: Json;
  functionResponse?: { id?: string; name: string; response: Json; parts?: Json[] };
}
interface GeminiContentJson {
  role: string;
  parts: GeminiPartJson[];
}
interface GeminiRequestBody {
  contents: GeminiContentJson[];
  tools?: Array<{ functionDeclarations?: Json[]; [key: string]: unknown }>;
  systemInstruction?: Json;
  generationConfig?: Json;
  toolConfig?: Json;
  [key: string]: unknown;
}

const startServer = useReplayServers();

function clientFor(url: string): GoogleGenAI {
  return new GoogleGenAI({ apiKey: "test", httpOptions: { baseUrl: url } });
}

async function replay(script: Array<ReplayResponse | Json>) {
  const server = await startServer(
    script.map((step) => ("status" in step || "hang" in step || "body" in step ? step : { body: step })),
  );
  return { server, client: clientFor(server.url) };
}

function bodyOf(server: ReplayServer, index: number): GeminiRequestBody {
  return server.requests[index]?.body as GeminiRequestBody;
}

/** A `generateContent` answer whose only candidate holds these parts. */
function answer(parts: GeminiPartJson[], extra: Json = {}): Json {
  return {
    candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }],
    modelVersion: "gemini-2.5-flash",
    responseId: "resp1",
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    ...extra,
  };
}

const divide = defineTool({
  name: "customDivide",
  description: "Custom divide function",
  parameters: z.object({ numerator: z.number().optional(), denominator: z.number().optional() }),
  execute: ({ numerator = 0, denominator = 1 }) => String(numerator / denominator),
});

const finalAnswer = readSample<Json>("gemini-followup-response.json");

describe("createGeminiProvider with the real @google/genai client", () => {
  it("runs a full cycle; the follow-up request is the documented one", async () => {
    const sample = readSample<GeminiRequestBody>("gemini-followup-request-function-response.json");
    const declarations = readSample<GeminiRequestBody>("gemini-request-function-declarations.json");
    const { server, client } = await replay([readSample("gemini-response-function-call-2.json"), finalAnswer]);
    const provider = createGeminiProvider({ client, model: "gemini-2.0-flash" });

    const result = await runToolLoop({ provider, tools: registryOf(divide), maxIterations: 5 }, [
      { role: "user", content: "Divide 10 by 2 using the customDivide function" },
    ]);

    expect(result.content).toBe("I've divided 10 by 2 using the customDivide function, and the result is 42.\n");
    expect(result.iterations).toBe(2);
    expect(result.usage).toEqual({ promptTokens: 17 + 27, completionTokens: 6 + 25, totalTokens: 23 + 52 });
    expect(server.requests.map((request) => [request.method, request.url])).toEqual([
      ["POST", "/v1beta/models/gemini-2.0-flash:generateContent"],
      ["POST", "/v1beta/models/gemini-2.0-flash:generateContent"],
    ]);
    expect(server.requests[0]?.headers["x-goog-api-key"]).toBe("test");

    // The documented follow-up: the user turn, the model's functionCall echoed as it came, and
    // one user content with the functionResponse. Differences: `response` holds the tool's text
    // under `output` (the sample's tool returned the number 42), the schema goes in `parameters`
    // in Gemini's subset (as in the function-declarations sample) instead of
    // `parametersJsonSchema`, and no AFC `toolConfig` is added. (The SDK adds the empty
    // `generationConfig` itself, as in the sample.)
    const [user, model, answers] = sample.contents as [GeminiContentJson, GeminiContentJson, GeminiContentJson];
    const expectedAnswers = {
      ...answers,
      parts: [
        {
          functionResponse: { ...answers.parts[0]?.functionResponse, response: { output: "5" } },
        },
      ],
    };
    expect(bodyOf(server, 1)).toEqual({
      contents: [user, model, expectedAnswers],
      generationConfig: sample.generationConfig,
      tools: declarations.tools,
    });
    expect(bodyOf(server, 0)).toEqual({
      contents: [user],
      generationConfig: sample.generationConfig,
      tools: declarations.tools,
    });
  });

  it("sends the same declarations on every step, although the SDK rewrites the cached ones in place", async () => {
    const forecast = defineTool({
      name: "forecast",
      description: "Forecast for a city",
      parameters: z.object({
        city: z.string().min(1),
        unit: z.enum(["c", "f"]).nullable(),
        days: z.array(z.object({ offset: z.number().int().min(0), hourly: z.boolean().optional() })).optional(),
        mode: z.union([z.string(), z.number()]),
      }),
      execute: () => "sunny",
    });
    const call = (id: string) => answer([{ functionCall: { id, name: "forecast", args: { city: "Paris", mode: 1 } } }]);
    const { server, client } = await replay([call("c1"), call("c2"), finalAnswer]);

    const result = await runToolLoop(
      { provider: createGeminiProvider({ client }), tools: registryOf(forecast), maxIterations: 5 },
      [{ role: "user", content: "Forecast for Paris?" }],
    );

    expect(result.iterations).toBe(3);
    const [first, second, third] = server.requests.map((request) => (request.body as GeminiRequestBody).tools);
    expect(first?.[0]?.functionDeclarations).toHaveLength(1);
    expect(second).toEqual(first);
    expect(third).toEqual(first);
  });

  it("sends parallel answers in one user content and echoes the thoughtSignature on its call only", async () => {
    const sample = readSample<GeminiRequestBody>("gemini-followup-request-parallel-function-responses.json");
    const response = readSample<Json>("gemini-response-parallel-function-calls.json");
    const { server, client } = await replay([response, readSample("gemini-followup-response-parallel.json")]);
    const print = defineTool({
      name: "print",
      description: "Print text in a color",
      parameters: z.object({ text: z.string(), color: z.string().regex(/red|blue|green|white/) }),
      execute: ({ text }) => text,
    });
    const beep = defineTool({ name: "beep", description: "Beep", parameters: z.object({}), execute: () => "beep" });

    const result = await runToolLoop(
      { provider: createGeminiProvider({ client }), tools: registryOf(print, beep), maxIterations: 5 },
      [{ role: "user", content: "Use the printer to print a simple word: hello in blue, and beep with the beeper" }],
    );

    expect(result.content).toBe("hello \nbeep");
    const calls = result.messages[1]?.toolCalls ?? [];
    expect(calls.map((call) => [call.id, call.name, call.arguments])).toEqual([
      ["gemini_ezGtaKXGHZenjrEP2uWAEQ_0", "print", { color: "blue", text: "hello" }],
      ["gemini_ezGtaKXGHZenjrEP2uWAEQ_1", "beep", {}],
    ]);
    const signature = ((sample.contents[1] as GeminiContentJson).parts[0] as GeminiPartJson).thoughtSignature;
    expect(calls[0]?.providerMetadata).toEqual({ gemini: { thoughtSignature: signature } });
    expect(calls[1]?.providerMetadata).toBeUndefined();

    const followup = bodyOf(server, 1);
    // User turn and model turn exactly as in the sample (signature on the first part only).
    expect(followup.contents.slice(0, 2)).toEqual(sample.contents.slice(0, 2));
    // Both answers in ONE user content, in call order, paired by name.
    expect(followup.contents[2]).toEqual({
      role: "user",
      parts: [
        { functionResponse: { name: "print", response: { output: "hello" } } },
        { functionResponse: { name: "beep", response: { output: "beep" } } },
      ],
    });
    expect(followup.contents).toHaveLength(sample.contents.length);
    const sampleAnswers = sample.contents[2] as GeminiContentJson;
    expect(followup.contents[2]?.parts.map((part) => part.functionResponse?.name)).toEqual(
      sampleAnswers.parts.map((part) => part.functionResponse?.name),
    );
    // A tool without parameters gets no `parameters` (an OBJECT without properties is rejected).
    expect(followup.tools).toEqual([
      {
        functionDeclarations: [
          { name: "beep", description: "Beep" },
          {
            name: "print",
            description: "Print text in a color",
            parameters: {
              type: "OBJECT",
              properties: {
                text: { type: "STRING" },
                color: { type: "STRING", pattern: "red|blue|green|white" },
              },
              required: ["text", "color"],
            },
          },
        ],
      },
    ]);
  });

  it("round-trips a thoughtSignature byte for byte through the transcript (pydantic-ai capture)", async () => {
    const response = readSample<{ candidates: Array<{ content: GeminiContentJson }> }>(
      "gemini-response-function-call-finishmessage.pydantic-ai.json",
    );
    const sample = readSample<GeminiRequestBody>("gemini-followup-request-with-ids.pydantic-ai.json");
    const signature = response.candidates[0]?.content.parts[0]?.thoughtSignature as string;
    const { server, client } = await replay([response, finalAnswer]);
    const capital = defineTool({
      name: "get_capital",
      description: "Get the capital of a country.",
      parameters: z.object({ country: z.string().describe("The country name.") }),
      execute: () => "Paris",
    });

    const result = await runToolLoop(
      { provider: createGeminiProvider({ client }), tools: registryOf(capital), maxIterations: 5 },
      [{ role: "user", content: "What is the capital of France?" }],
    );

    // Kept on the call in the transcript (it survives a JSON round trip, e.g. a saved conversation).
    const saved = JSON.parse(JSON.stringify(result.messages)) as Message[];
    expect(saved[1]?.toolCalls?.[0]?.providerMetadata).toEqual({ gemini: { thoughtSignature: signature } });

    const followup = bodyOf(server, 1);
    const [user, model] = sample.contents as [GeminiContentJson, GeminiContentJson];
    expect(followup.contents[0]).toEqual(user);
    // The sample's client invented `pyd_ai_…` ids and re-encoded the signature; we send neither
    // an invented id nor a changed signature.
    const { id: _invented, ...call } = (model.parts[0] as GeminiPartJson).functionCall as Json;
    expect(followup.contents[1]).toEqual({
      role: "model",
      parts: [{ functionCall: call, thoughtSignature: signature }],
    });
    expect(followup.contents[2]).toEqual({
      role: "user",
      parts: [{ functionResponse: { name: "get_capital", response: { output: "Paris" } } }],
    });
  });

  it("continues a saved conversation: the signature is sent back from the transcript", async () => {
    const { server, client } = await replay([finalAnswer]);
    const provider = createGeminiProvider({ client });
    const transcript: Message[] = [
      { role: "user", content: "What is the capital of France?" },
      {
        role: "assistant",
        content: "",
        toolCalls: [
          {
            id: "x",
            name: "get_capital",
            arguments: { country: "France" },
            providerMetadata: { gemini: { thoughtSignature: "c2ln" } },
          },
        ],
      },
      { role: "tool", content: "Paris", toolCallId: "x", toolName: "get_capital" },
    ];

    await provider.chat(transcript, undefined, "gemini-2.5-flash", {});

    expect(bodyOf(server, 0).contents[1]).toEqual({
      role: "model",
      parts: [{ functionCall: { name: "get_capital", args: { country: "France" } }, thoughtSignature: "c2ln" }],
    });
  });

  it("keeps text that comes with calls, and leaves thought summaries out of the answer", async () => {
    const { server, client } = await replay([
      answer([
        { text: "**Planning** I will divide.", thought: true } as GeminiPartJson,
        { text: "Let me divide." },
        { functionCall: { name: "customDivide", args: { numerator: 10, denominator: 2 } } },
      ]),
      finalAnswer,
    ]);

    const result = await runToolLoop(
      { provider: createGeminiProvider({ client }), tools: registryOf(divide), maxIterations: 5 },
      [{ role: "user", content: "Divide 10 by 2" }],
    );

    expect(result.messages[1]).toMatchObject({ role: "assistant", content: "Let me divide." });
    expect(bodyOf(server, 1).contents[1]).toEqual({
      role: "model",
      parts: [
        { text: "Let me divide." },
        { functionCall: { name: "customDivide", args: { numerator: 10, denominator: 2 } } },
      ],
    });
  });

  it("passes `{}` to a call without args (Gemini 3 capture) and sends `args: {}` back", async () => {
    // Line 2 of the Vertex stream capture: a complete functionCall part with no `args`.
    const line = readSampleText("gemini-stream-no-args-function-call.vercel-ai.ndjson").split("\n")[1] as string;
    const chunk = JSON.parse(line) as { candidates: Array<{ content: GeminiContentJson }> };
    const part = chunk.candidates[0]?.content.parts[0] as GeminiPartJson;
    let received: unknown;
    const readTheme = defineTool({
      name: "read_theme",
      description: "Read the theme",
      parameters: z.object({}),
      execute: (args) => {
        received = args;
        return "dark";
      },
    });
    const { server, client } = await replay([answer([part]), finalAnswer]);

    await runToolLoop({ provider: createGeminiProvider({ client }), tools: registryOf(readTheme), maxIterations: 5 }, [
      { role: "user", content: "Read the theme" },
    ]);

    expect(received).toEqual({});
    expect(bodyOf(server, 1).contents[1]).toEqual({
      role: "model",
      parts: [{ functionCall: { name: "read_theme", args: {} }, thoughtSignature: part.thoughtSignature }],
    });
  });

  it.each([
    ["an array", ["France"], "must be a JSON object, got array"],
    ["a number", 7, "must be a JSON object, got number"],
    ["text that is not JSON", "France", "invalid JSON in arguments"],
  ])("tells the model when `args` is %s instead of running the tool with `{}`", async (_label, args, expected) => {
    let ran = false;
    const capital = defineTool({
      name: "get_capital",
      description: "The capital of a country",
      parameters: z.object({ country: z.string().optional() }),
      execute: () => {
        ran = true;
        return "Paris";
      },
    });
    const { server, client } = await replay([
      answer([{ functionCall: { name: "get_capital", args } as Json }]),
      finalAnswer,
    ]);

    await runToolLoop({ provider: createGeminiProvider({ client }), tools: registryOf(capital), maxIterations: 5 }, [
      { role: "user", content: "The capital of France?" },
    ]);

    expect(ran).toBe(false);
    expect(bodyOf(server, 1).contents[2]?.parts).toEqual([
      { functionResponse: { name: "get_capital", response: { error: expect.stringContaining(expected) } } },
    ]);
  });

  it("sends a tool failure as `response: { error }`", async () => {
    const broken = defineTool({
      name: "customDivide",
      description: "Custom divide function",
      parameters: z.object({ numerator: z.number(), denominator: z.number() }),
      execute: () => {
        throw new Error("division service down");
      },
    });
    const { server, client } = await replay([readSample("gemini-response-function-call-2.json"), finalAnswer]);

    await runToolLoop({ provider: createGeminiProvider({ client }), tools: registryOf(broken), maxIterations: 5 }, [
      { role: "user", content: "Divide 10 by 2" },
    ]);

    const parts = bodyOf(server, 1).contents[2]?.parts ?? [];
    expect(parts).toEqual([
      {
        functionResponse: {
          name: "customDivide",
          response: { error: expect.stringContaining("division service down") },
        },
      },
    ]);
  });

  it("rejects with ToolLoopError whose cause is the client's error on an API 400", async () => {
    const body = {
      error: {
        code: 400,
        message:
          "* GenerateContentRequest.tools[0].function_declarations[0].parameters.properties: should be non-empty for OBJECT type",
        status: "INVALID_ARGUMENT",
      },
    };
    const { client } = await replay([{ status: 400, body }]);

    const error = await runToolLoop(
      { provider: createGeminiProvider({ client }), tools: registryOf(divide), maxIterations: 3 },
      [{ role: "user", content: "hi" }],
    ).catch((caught: unknown) => caught);

    expect(isToolLoopError(error)).toBe(true);
    const cause = (error as Error).cause as Error & { status?: number };
    expect(cause.name).toBe("ApiError");
    expect(cause.status).toBe(400);
    expect(cause.message).toContain("should be non-empty for OBJECT type");
  });

  it("aborts mid-request: the client's request is closed", async () => {
    const { server, client } = await replay([{ hang: true }]);
    const { settled: run } = await abortOnceRequested(
      server,
      (signal) =>
        runToolLoop(
          { provider: createGeminiProvider({ client }), maxIterations: 3 },
          [{ role: "user", content: "hi" }],
          {
            signal,
          },
        ),
      new Error("user cancelled"),
    );

    const error = await run.catch((caught: unknown) => caught);
    expect(isToolLoopError(error)).toBe(true);
    expect(((error as Error).cause as Error).message).toBe("user cancelled");
    await server.waitForDisconnects(1);
  });

  it("does not call the server when the signal is already aborted", async () => {
    const { server, client } = await replay([finalAnswer]);
    await expect(
      createGeminiProvider({ client }).chat(
        [{ role: "user", content: "hi" }],
        undefined,
        "m",
        {},
        AbortSignal.abort(new Error("early")),
      ),
    ).rejects.toThrow("early");
    expect(server.requests).toHaveLength(0);
  });

  it("passes llmOptions through as GenerateContentConfig", async () => {
    const { server, client } = await replay([finalAnswer]);

    await runToolLoop(
      {
        provider: createGeminiProvider({ client }),
        tools: registryOf(divide),
        maxIterations: 1,
        llmOptions: {
          temperature: 0.2,
          max_tokens: 256,
          thinkingConfig: { thinkingBudget: 0 },
          toolConfig: { functionCallingConfig: { mode: "ANY" } },
          tools: [{ googleSearch: {} }],
        },
      },
      [{ role: "user", content: "hi" }],
    );

    const body = bodyOf(server, 0);
    expect(body.generationConfig).toEqual({
      temperature: 0.2,
      maxOutputTokens: 256,
      thinkingConfig: { thinkingBudget: 0 },
    });
    expect(body.toolConfig).toEqual({ functionCallingConfig: { mode: "ANY" } });
    expect(body.tools?.map((tool) => Object.keys(tool))).toEqual([["googleSearch"], ["functionDeclarations"]]);
  });

  it("sends system messages as systemInstruction, apart from the contents", async () => {
    const { server, client } = await replay([finalAnswer]);

    await createGeminiProvider({ client }).chat(
      [
        { role: "system", content: "Be brief." },
        { role: "user", content: "hi" },
        { role: "system", content: "Answer in French." },
      ],
      undefined,
      "m",
      {},
    );

    const body = bodyOf(server, 0);
    expect(body.systemInstruction).toEqual({ parts: [{ text: "Be brief." }, { text: "Answer in French." }] });
    expect(body.contents).toEqual([{ role: "user", parts: [{ text: "hi" }] }]);
    expect(body).not.toHaveProperty("tools");
  });

  it.each([
    ["the factory's model", "gemini-2.0-flash", undefined, "gemini-2.0-flash"],
    ["the loop's model over the factory's", "gemini-2.0-flash", "gemini-2.5-pro", "gemini-2.5-pro"],
    ["the default model", undefined, undefined, "gemini-2.5-flash"],
  ])("sends %s", async (_case, factoryModel, loopModel, expected) => {
    const { server, client } = await replay([finalAnswer]);
    const provider = createGeminiProvider({ client, ...(factoryModel === undefined ? {} : { model: factoryModel }) });

    await runToolLoop({ provider, maxIterations: 1, ...(loopModel === undefined ? {} : { model: loopModel }) }, [
      { role: "user", content: "hi" },
    ]);

    expect(provider.getDefaultModel()).toBe(factoryModel ?? "gemini-2.5-flash");
    expect(server.requests[0]?.url).toBe(`/v1beta/models/${expected}:generateContent`);
  });

  it("makes stable ids for id-less calls and pairs the answers by name", async () => {
    const parts = [
      { functionCall: { name: "customDivide", args: { numerator: 1, denominator: 2 } } },
      { functionCall: { name: "clock", args: {} } },
    ];
    const { server, client } = await replay([
      answer(parts),
      answer(parts),
      answer(parts, { responseId: undefined }),
      finalAnswer,
    ]);
    const provider = createGeminiProvider({ client });
    const ask = () => provider.chat([{ role: "user", content: "go" }], undefined, "m", {});

    const first = await ask();
    const second = await ask();
    const third = await ask();
    expect(first.toolCalls?.map((call) => call.id)).toEqual(["gemini_resp1_0", "gemini_resp1_1"]);
    expect(second.toolCalls?.map((call) => call.id)).toEqual(["gemini_resp1_0", "gemini_resp1_1"]);
    // Without a responseId: a per-provider counter keeps them apart.
    expect(third.toolCalls?.map((call) => call.id)).toEqual(["gemini_3_0", "gemini_3_1"]);

    // Answers carry the name of the call they answer, even without `toolName`.
    await provider.chat(
      [
        { role: "user", content: "go" },
        {
          role: "assistant",
          content: "",
          toolCalls: [
            { id: "gemini_resp1_0", name: "customDivide", arguments: { numerator: 1, denominator: 2 } },
            { id: "gemini_resp1_1", name: "clock", arguments: {} },
          ],
        },
        { role: "tool", content: "0.5", toolCallId: "gemini_resp1_0" },
        { role: "tool", content: "12:00", toolCallId: "gemini_resp1_1" },
      ],
      undefined,
      "m",
      {},
    );
    expect(bodyOf(server, 3).contents[2]).toEqual({
      role: "user",
      parts: [
        { functionResponse: { name: "customDivide", response: { output: "0.5" } } },
        { functionResponse: { name: "clock", response: { output: "12:00" } } },
      ],
    });
  });

  it("uses and echoes ids the API gives (functionCall.id → functionResponse.id)", async () => {
    const { server, client } = await replay([
      answer([{ functionCall: { id: "fc_7", name: "customDivide", args: { numerator: 9, denominator: 3 } } }]),
      finalAnswer,
    ]);

    const result = await runToolLoop(
      { provider: createGeminiProvider({ client }), tools: registryOf(divide), maxIterations: 5 },
      [{ role: "user", content: "Divide 9 by 3" }],
    );

    expect(result.messages[1]?.toolCalls?.[0]).toMatchObject({
      id: "fc_7",
      providerMetadata: { gemini: { id: "fc_7" } },
    });
    expect(bodyOf(server, 1).contents.slice(1)).toEqual([
      {
        role: "model",
        parts: [{ functionCall: { id: "fc_7", name: "customDivide", args: { numerator: 9, denominator: 3 } } }],
      },
      { role: "user", parts: [{ functionResponse: { id: "fc_7", name: "customDivide", response: { output: "3" } } }] },
    ]);
  });

  it.each([
    ["calls with STOP", [{ functionCall: { name: "clock", args: {} } }], "STOP", "tool_calls"],
    ["a final answer", [{ text: "Hi" }], "STOP", "stop"],
    ["MAX_TOKENS", [{ text: "Hi" }], "MAX_TOKENS", "length"],
    ["SAFETY", [], "SAFETY", "content_filter"],
    ["RECITATION", [], "RECITATION", "content_filter"],
    ["BLOCKLIST", [], "BLOCKLIST", "content_filter"],
    ["PROHIBITED_CONTENT", [], "PROHIBITED_CONTENT", "content_filter"],
    ["SPII", [], "SPII", "content_filter"],
    ["another reason", [], "LANGUAGE", "LANGUAGE"],
  ])("maps finishReason for %s", async (_case, parts, reason, expected) => {
    const body = answer(parts as GeminiPartJson[]);
    (body.candidates as Json[])[0] = { ...(body.candidates as Json[])[0], finishReason: reason };
    const { client } = await replay([body]);

    const response = await createGeminiProvider({ client }).chat([{ role: "user", content: "hi" }], undefined, "m", {});

    expect(response.finishReason).toBe(expected);
  });

  it("reports a blocked prompt (no candidates) as content_filter", async () => {
    const { client } = await replay([
      { promptFeedback: { blockReason: "SAFETY" }, usageMetadata: { promptTokenCount: 4 } },
    ]);

    const response = await createGeminiProvider({ client }).chat([{ role: "user", content: "hi" }], undefined, "m", {});

    expect(response).toEqual({
      content: "",
      toolCalls: [],
      finishReason: "content_filter",
      usage: { promptTokens: 4, completionTokens: 0, totalTokens: 4 },
    });
  });

  it("counts thinking tokens as completion tokens (and as reasoningTokens), and keeps the API's total", async () => {
    const { client } = await replay([readSample("gemini-response-parallel-function-calls.json")]);

    const response = await createGeminiProvider({ client }).chat([{ role: "user", content: "hi" }], undefined, "m", {});

    // promptTokenCount 80, candidatesTokenCount 26, thoughtsTokenCount 76, totalTokenCount 182.
    expect(response.usage).toEqual({
      promptTokens: 80,
      completionTokens: 26 + 76,
      totalTokens: 182,
      reasoningTokens: 76,
    });
  });

  it.each([
    ["no options", undefined, /^createGeminiProvider: options must be an object, got undefined$/],
    ["no client", {}, /client must be a GoogleGenAI client/],
    ["a client without models", { client: {} }, /client must be a GoogleGenAI client/],
    ["a non-string model", { client: new GoogleGenAI({ apiKey: "x" }), model: 3 }, /model must be a string/],
  ])("throws a TypeError for %s", (_case, options, message) => {
    expect(() => createGeminiProvider(options as never)).toThrow(message);
    expect(() => createGeminiProvider(options as never)).toThrow(TypeError);
  });
});

describe("createGeminiProvider with responses it cannot read (D06)", () => {
  const chat = (client: GoogleGenAI) =>
    createGeminiProvider({ client }).chat([{ role: "user", content: "hi" }], undefined, "m", {});
  const withCandidate = (candidate: Json): Json => ({ ...answer([]), candidates: [candidate] });

  it.each<[string, unknown, RegExp]>([
    ["an empty object", {}, /^Gemini: the response has no candidate \(candidates: undefined\)$/],
    ["an empty candidates list", { candidates: [] }, /^Gemini: the response has no candidate \(candidates: \[\]\)$/],
    [
      "an error body",
      { error: { code: 500, message: "Internal error encountered.", status: "INTERNAL" } },
      /^Gemini: the response (is an error \(INTERNAL: Internal error encountered\.\)|has no candidate \(candidates: undefined\))$/,
    ],
    // The SDK turns a null candidate into `{}`.
    ["a null candidate", { candidates: [null] }, /^Gemini: the first candidate has no content and no finishReason$/],
    ["an empty candidate", { candidates: [{}] }, /^Gemini: the first candidate has no content and no finishReason$/],
    [
      "a functionCall without a name",
      answer([{ functionCall: { args: { numerator: 1 } } }]),
      /^Gemini: a functionCall part has no name \(got undefined\)$/,
    ],
    [
      "a functionCall with an empty name",
      answer([{ text: "Dividing." }, { functionCall: { name: "", args: {} } }]),
      /^Gemini: a functionCall part has no name \(got ""\)$/,
    ],
    [
      "finishReason MALFORMED_FUNCTION_CALL",
      withCandidate({
        finishReason: "MALFORMED_FUNCTION_CALL",
        finishMessage: "Malformed function call: print(default_api.customDivide(numerator=1",
        index: 0,
      }),
      // @google/genai 2 drops finishMessage; see the test with a client that keeps it.
      /^Gemini: the model gave no usable answer \(finishReason MALFORMED_FUNCTION_CALL\)$/,
    ],
    [
      "finishReason MALFORMED_FUNCTION_CALL with text",
      withCandidate({
        content: { role: "model", parts: [{ text: "I will divide." }] },
        finishReason: "MALFORMED_FUNCTION_CALL",
      }),
      /^Gemini: the model gave no usable answer \(finishReason MALFORMED_FUNCTION_CALL\)$/,
    ],
    [
      "finishReason UNEXPECTED_TOOL_CALL",
      withCandidate({ finishReason: "UNEXPECTED_TOOL_CALL" }),
      /finishReason UNEXPECTED_TOOL_CALL/,
    ],
    [
      "finishReason TOO_MANY_TOOL_CALLS",
      withCandidate({ finishReason: "TOO_MANY_TOOL_CALLS" }),
      /finishReason TOO_MANY_TOOL_CALLS/,
    ],
  ])("rejects %s with status 200", async (_name, response, expected) => {
    const { client } = await replay([{ body: response }]);
    await expectUnreadable(chat(client), "Gemini", expected);
  });

  it("quotes the finishMessage when the client keeps it, and rejects a candidate that is not an object", async () => {
    const finishMessage = `Malformed function call: print(default_api.customDivide(${"x".repeat(1_000)}`;
    const client = (response: unknown): GeminiClientLike => ({
      models: { generateContent: async () => response as GeminiGenerateContentResponse },
    });
    const malformed = { candidates: [{ finishReason: "MALFORMED_FUNCTION_CALL", finishMessage }] };

    const error = await expectUnreadable(
      createGeminiProvider({ client: client(malformed) }).chat([{ role: "user", content: "hi" }], undefined, "m", {}),
      "Gemini",
      /^Gemini: the model gave no usable answer \(finishReason MALFORMED_FUNCTION_CALL: Malformed function call: print\(default_api\.customDivide\(x+ … \[\d+ more characters cut\]\)$/,
    );
    expect(error.message.length).toBeLessThan(400);
    await expectUnreadable(
      createGeminiProvider({ client: client({ candidates: ["text"] }) }).chat([], undefined, "m", {}),
      "Gemini",
      /^Gemini: the first candidate is not an object \(got string\)$/,
    );
    await expectUnreadable(
      createGeminiProvider({ client: client(null) }).chat([], undefined, "m", {}),
      "Gemini",
      /^Gemini: the response is not an object \(got null\)$/,
    );
    await expectUnreadable(
      createGeminiProvider({
        client: client({
          candidates: [{ content: { parts: [{ functionCall: "customDivide" }] }, finishReason: "STOP" }],
        }),
      }).chat([], undefined, "m", {}),
      "Gemini",
      /^Gemini: a functionCall part is not an object \(got string\)$/,
    );
  });

  it.each<[string, Json, string, string]>([
    ["text only", answer([{ text: "Hi" }]), "Hi", "stop"],
    ["an empty text", answer([{ text: "" }]), "", "stop"],
    ["a candidate without content (STOP)", withCandidate({ finishReason: "STOP" }), "", "stop"],
    ["a filtered candidate without content", withCandidate({ finishReason: "SAFETY" }), "", "content_filter"],
    ["a blocked prompt (no candidates)", { promptFeedback: { blockReason: "OTHER" } }, "", "content_filter"],
  ])("still reads %s as an answer", async (_name, response, content, finishReason) => {
    const { client } = await replay([response]);
    await expect(chat(client)).resolves.toMatchObject({ content, toolCalls: [], finishReason });
  });

  it("the loop rejects with ToolLoopError whose cause is the InvalidProviderResponseError, keeping the transcript", async () => {
    const { client } = await replay([
      readSample<Json>("gemini-response-function-call.json"),
      withCandidate({ finishReason: "MALFORMED_FUNCTION_CALL" }),
    ]);

    const run = runToolLoop(
      { provider: createGeminiProvider({ client }), tools: registryOf(divide), maxIterations: 3 },
      [{ role: "user", content: "What is 100 divided by 4?" }],
    );

    const error = await expectLoopRejectsUnreadable(run, "Gemini", [
      { role: "user" },
      { role: "assistant", toolCalls: [expect.objectContaining({ name: "customDivide" })] },
      { role: "tool", toolName: "customDivide", isError: false },
    ]);
    expect(error.iterations).toBe(2);
  });
});

/** Python's SDK sends bytes as base64url; a ContentPart (and @google/genai) holds standard base64. */
function standardBase64(data: string): string {
  return data.replaceAll("-", "+").replaceAll("_", "/");
}

type SampleContent = { role: string; parts: Array<Record<string, Json>> };

describe("createGeminiProvider: images, files and structured output", () => {
  const userPdf = readSample<{ contents: SampleContent[]; generationConfig: Json }>(
    "gemini-request-user-pdf-inline.pydantic-ai.json",
  );
  const samplePdf = userPdf.contents[0]?.parts[1]?.inlineData as { data: string; mimeType: string };
  const pdfData = standardBase64(samplePdf.data);
  const pdf: ContentPart = { type: "file", mediaType: "application/pdf", data: pdfData, filename: "dummy.pdf" };

  it("sends a user's PDF as the captured inlineData part and reads the answer", async () => {
    const { server, client } = await replay([readSample("gemini-response-user-pdf-inline.pydantic-ai.json")]);
    const provider = createGeminiProvider({ client, model: "gemini-2.0-flash" });

    const result = await provider.chat(
      [
        { role: "system", content: "You are a helpful chatbot." },
        { role: "user", content: [{ type: "text", text: "What is the main content on this document?" }, pdf] },
      ],
      undefined,
      "gemini-2.0-flash",
      {},
    );

    expect(result.content).toBe("The document appears to be a dummy PDF file.\n");
    const body = bodyOf(server, 0);
    // The capture's parts, its base64url turned into the standard base64 the SDK sends.
    const [text, part] = (userPdf.contents[0] as SampleContent).parts as [Json, { inlineData: Json }];
    expect(body.contents).toEqual([
      { role: "user", parts: [text, { inlineData: { ...part.inlineData, data: pdfData } }] },
    ]);
    expect(body.generationConfig).toEqual(userPdf.generationConfig);
  });

  it("sends an image, base64 and by URL, as inlineData and fileData", async () => {
    const { server, client } = await replay([finalAnswer]);
    const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    const fileUri = "https://generativelanguage.googleapis.com/v1beta/files/3qswqtk02p7x";

    await createGeminiProvider({ client }).chat(
      [
        {
          role: "user",
          content: [
            { type: "image", mediaType: "image/png", data: png },
            { type: "image", url: fileUri, mediaType: "image/jpeg" },
            {
              type: "file",
              mediaType: "audio/mpeg",
              data: "SUQzBAAAAAAAI1RTU0UAAAAPAAADTGF2ZjU4Ljc2LjEwMAAAAAAAAAAAAAAA",
            },
          ],
        },
      ],
      undefined,
      "gemini-2.5-flash",
      {},
    );

    expect(bodyOf(server, 0).contents).toEqual([
      {
        role: "user",
        parts: [
          { inlineData: { mimeType: "image/png", data: png } },
          // The shape of the fileData part in the gemini-2.5-flash capture (…tool-file-user-content…).
          { fileData: { fileUri, mimeType: "image/jpeg" } },
          {
            inlineData: {
              mimeType: "audio/mpeg",
              data: "SUQzBAAAAAAAI1RTU0UAAAAPAAADTGF2ZjU4Ljc2LjEwMAAAAAAAAAAAAAAA",
            },
          },
        ],
      },
    ]);
  });

  it("refuses a part Gemini cannot take before any request (UnsupportedContentError)", async () => {
    const { server, client } = await replay([finalAnswer]);
    const provider = createGeminiProvider({ client });
    const gif: ContentPart = { type: "image", mediaType: "image/gif", data: "R0lGODlh" };

    await expect(
      provider.chat(
        [
          { role: "user", content: "Look:" },
          { role: "user", content: [gif] },
        ],
        undefined,
        "m",
        {},
      ),
    ).rejects.toMatchObject({ code: "unsupported_content", provider: "gcp.gemini", part: "image", messageIndex: 1 });
    await expect(
      provider.chat(
        [{ role: "user", content: [{ type: "image", url: "https://example.com/cat" }] }],
        undefined,
        "m",
        {},
      ),
    ).rejects.toMatchObject({ code: "unsupported_content", messageIndex: 0 });
    expect(server.requests).toHaveLength(0);
  });

  it("a run given such a part rejects with provider_failed, the UnsupportedContentError as cause", async () => {
    const { server, client } = await replay([finalAnswer]);
    const messages: Message[] = [
      { role: "user", content: "Look:" },
      { role: "user", content: [{ type: "image", url: "https://example.com/cat" }] },
    ];

    const error = await runToolLoop({ provider: createGeminiProvider({ client }), maxIterations: 1 }, messages).catch(
      (caught: unknown) => caught,
    );

    expect(isToolLoopError(error)).toBe(true);
    expect((error as ToolLoopError).code).toBe("provider_failed");
    const cause = (error as ToolLoopError).cause;
    expect(isUnsupportedContentError(cause)).toBe(true);
    expect(cause).toMatchObject({ provider: "gcp.gemini", part: "image", messageIndex: 1 });
    expect(server.requests).toHaveLength(0);
  });

  describe("a tool's media", () => {
    const frSample = readSample<{ contents: SampleContent[] }>(
      "gemini-followup-request-function-response-parts-pdf.pydantic-ai.json",
    );
    const frFinal = readSample<Json>("gemini-followup-response-function-response-parts-pdf.pydantic-ai.json");
    const frText = "The document I retrieved is a single-page PDF file.";
    const callGetFile = answer([{ functionCall: { name: "get_file", args: {} } }]);
    /** The transcript of a run that called get_file, whose answer carries the PDF after its text. */
    const answered: Message[] = [
      {
        role: "user",
        content: "Use the get_file tool now to retrieve a document file, then describe what you received.",
      },
      {
        role: "assistant",
        content: "",
        toolCalls: [{ id: "gemini_resp1_0", type: "function", name: "get_file", arguments: {} }],
      },
      {
        role: "tool",
        content: [{ type: "text", text: "Here is the file." }, pdf],
        toolCallId: "gemini_resp1_0",
        toolName: "get_file",
      },
    ];

    /** The capture's functionResponse part (snake_case names, base64url) as @google/genai sends ours. */
    function capturedPdfPart(): { inlineData: Json } {
      const response = frSample.contents.at(-1)?.parts[0]?.functionResponse as { parts: Array<{ inline_data: Json }> };
      const [captured] = response.parts;
      return {
        inlineData: {
          mimeType: captured?.inline_data?.mime_type,
          data: standardBase64(String(captured?.inline_data?.data)),
        },
      };
    }

    it("Gemini 3: a transcript's tool PDF goes in functionResponse.parts, referred to from the response", async () => {
      const { server, client } = await replay([frFinal]);
      const provider = createGeminiProvider({ client, model: "gemini-3-flash-preview" });

      const result = await provider.chat(answered, undefined, "gemini-3-flash-preview", {});

      expect(result.content.startsWith(frText)).toBe(true);
      const contents = bodyOf(server, 0).contents;
      expect(contents.map((content) => content.role)).toEqual(
        frSample.contents.slice(-3).map((content) => content.role),
      );
      expect(contents[2]).toEqual({
        role: "user",
        parts: [
          {
            functionResponse: {
              name: "get_file",
              response: { output: "Here is the file.", media: [{ $ref: "media_1" }] },
              parts: [{ inlineData: { ...capturedPdfPart().inlineData, displayName: "media_1" } }],
            },
          },
        ],
      });
    });

    it("a loop whose tool returns mediaResult: the request carries the PDF in the function response", async () => {
      const { server, client } = await replay([callGetFile, frFinal]);
      const getFile = defineTool({
        name: "get_file",
        description: "Returns a document",
        parameters: z.object({}),
        execute: () => mediaResult("Here is the file.", [pdf]),
      });
      const provider = createGeminiProvider({ client, model: "gemini-3-flash-preview" });

      const result = await runToolLoop({ provider, tools: registryOf(getFile), maxIterations: 3 }, [
        {
          role: "user",
          content: "Use the get_file tool now to retrieve a document file, then describe what you received.",
        },
      ]);

      expect(result.content.startsWith(frText)).toBe(true);
      const answer = bodyOf(server, 1).contents[2]?.parts[0]?.functionResponse as Json;
      expect(answer.parts).toEqual([{ inlineData: { ...capturedPdfPart().inlineData, displayName: "media_1" } }]);
    });

    it("Gemini 2.5: a tool's image URL goes in a user content after the answers, as in the capture", async () => {
      const sample = readSample<{ contents: SampleContent[] }>(
        "gemini-followup-request-tool-file-user-content.pydantic-ai.json",
      );
      const { server, client } = await replay([
        readSample("gemini-followup-response-tool-file-user-content.pydantic-ai.json"),
      ]);
      const provider = createGeminiProvider({ client, model: "gemini-2.5-flash" });
      const fileUri = "https://generativelanguage.googleapis.com/v1beta/files/3qswqtk02p7x";
      const transcript: Message[] = [
        answered[0] as Message,
        answered[1] as Message,
        {
          role: "tool",
          content: [
            { type: "text", text: "See the image." },
            { type: "image", url: fileUri, mediaType: "image/jpeg" },
          ],
          toolCallId: "gemini_resp1_0",
          toolName: "get_file",
        },
      ];

      const result = await provider.chat(transcript, undefined, "gemini-2.5-flash", {});

      expect(result.content).toContain("kiwi");
      const contents = bodyOf(server, 0).contents;
      expect(contents.map((content) => content.role)).toEqual(sample.contents.map((content) => content.role));
      expect(contents[2]?.parts).toEqual([
        { functionResponse: { name: "get_file", response: { output: "See the image." } } },
      ]);
      // The capture introduces the file with its own text; ours names the call.
      const [, capturedFile] = (sample.contents[3] as SampleContent).parts as [Json, Json];
      expect(contents[3]?.parts).toEqual([{ text: "Returned by tool call gemini_resp1_0 (get_file):" }, capturedFile]);
    });

    it('toolMedia "auto" picks the function response from Gemini 3 on, and can be set either way', async () => {
      const { server, client } = await replay(Array.from({ length: 4 }, () => finalAnswer));
      const where = (index: number) =>
        bodyOf(server, index).contents[2]?.parts[0]?.functionResponse?.parts === undefined
          ? "user-message"
          : "function-response";

      await createGeminiProvider({ client }).chat(answered, undefined, "gemini-2.5-flash", {});
      await createGeminiProvider({ client }).chat(answered, undefined, "models/gemini-3.1-pro-preview", {});
      await createGeminiProvider({ client, toolMedia: "function-response" }).chat(
        answered,
        undefined,
        "gemini-2.5-flash",
        {},
      );
      await createGeminiProvider({ client, toolMedia: "user-message" }).chat(
        answered,
        undefined,
        "gemini-3-flash-preview",
        {},
      );

      expect([0, 1, 2, 3].map(where)).toEqual([
        "user-message",
        "function-response",
        "function-response",
        "user-message",
      ]);
      expect(() => createGeminiProvider({ client, toolMedia: "inline" as never })).toThrow(
        'createGeminiProvider: toolMedia must be "auto", "function-response" or "user-message", got "inline"',
      );
    });
  });

  describe("structured output", () => {
    const sample = readSample<{ contents: SampleContent[]; generationConfig: { responseJsonSchema: Json } }>(
      "gemini-request-response-json-schema.json",
    );
    const output = { name: "populated", schema: sample.generationConfig.responseJsonSchema };

    it("sends options.output as responseMimeType + responseJsonSchema, as in the capture, and reads the JSON", async () => {
      const { server, client } = await replay([readSample("gemini-response-json-schema.json")]);
      const provider = createGeminiProvider({ client, model: "gemini-2.5-flash" });

      const response = await provider.chat(
        [{ role: "user", content: "populate the following object" }],
        undefined,
        "gemini-2.5-flash",
        { output },
      );

      expect(bodyOf(server, 0)).toEqual({ contents: sample.contents, generationConfig: sample.generationConfig });
      expect(JSON.parse(response.content)).toMatchObject({ simpleString: "Hello", inner: { innerNumber: 100 } });
    });

    it("keeps the tools callable: declarations and output go together on every step of a run", async () => {
      const { server, client } = await replay([
        readSample("gemini-response-function-call-2.json"),
        readSample("gemini-response-json-schema.json"),
      ]);
      const provider = createGeminiProvider({ client, model: "gemini-3-flash-preview" });

      const result = await runToolLoop(
        {
          provider,
          tools: registryOf(divide),
          maxIterations: 3,
          llmOptions: { output, temperature: 0, responseSchema: { type: "OBJECT" } },
        },
        [{ role: "user", content: "Divide 10 by 2, then populate the object" }],
      );

      expect(result.iterations).toBe(2);
      expect(JSON.parse(result.content).simpleString).toBe("Hello");
      for (const index of [0, 1]) {
        const body = bodyOf(server, index);
        // The loop's schema replaces a responseSchema of llmOptions: the API takes one of the two.
        expect(body.generationConfig).toEqual({ temperature: 0, ...sample.generationConfig });
        expect(body.tools?.[0]?.functionDeclarations?.map((declaration) => declaration.name)).toEqual(["customDivide"]);
        expect(body).not.toHaveProperty("output");
      }
    });

    it("refuses an output that is not { name, schema }", async () => {
      const { server, client } = await replay([finalAnswer]);
      await expect(
        createGeminiProvider({ client }).chat([{ role: "user", content: "hi" }], undefined, "m", { output: "json" }),
      ).rejects.toThrow("Gemini: llmOptions.output must be { name: string, schema: object }");
      expect(server.requests).toHaveLength(0);
    });
  });
});

describe("createGeminiProvider streamed by the loop (chatStream)", () => {
  const streamed = (chunks: readonly Json[]): ReplayResponse => ({
    status: 200,
    contentType: "text/event-stream",
    raw: chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join(""),
  });
  const callChunks = readSample<Json[]>("gemini-stream-function-call.segments.json");
  const answerChunks: Json[] = [
    { candidates: [{ content: { role: "model", parts: [{ text: "Dividing.", thought: true }] } }], responseId: "r2" },
    { candidates: [{ content: { role: "model", parts: [{ text: "10 / 2 " }] } }], responseId: "r2" },
    {
      candidates: [{ content: { role: "model", parts: [{ text: "is 5." }] }, finishReason: "STOP" }],
      usageMetadata: { promptTokenCount: 30, candidatesTokenCount: 6, thoughtsTokenCount: 4, totalTokenCount: 40 },
      responseId: "r2",
    },
  ];
  /** The same two answers sent whole, as `chat` gets them. */
  const wholeAnswers: Json[] = [
    callChunks[0] as Json,
    {
      candidates: [
        {
          content: { role: "model", parts: [{ text: "Dividing.", thought: true }, { text: "10 / 2 is 5." }] },
          finishReason: "STOP",
        },
      ],
      usageMetadata: { promptTokenCount: 30, candidatesTokenCount: 6, thoughtsTokenCount: 4, totalTokenCount: 40 },
      responseId: "r2",
    },
  ];

  it("streamToolLoop yields reasoning, tool input and text deltas, and the result runToolLoop gives", async () => {
    const { server, client } = await replay([streamed(callChunks), streamed(answerChunks)]);
    const input: Message[] = [{ role: "user", content: "Divide 10 by 2 using the customDivide function" }];
    const run = streamToolLoop(
      {
        provider: createGeminiProvider({ client, model: "gemini-2.0-flash" }),
        tools: registryOf(divide),
        maxIterations: 5,
      },
      input,
    );
    const events: ToolLoopEvent[] = [];
    for await (const event of run) events.push(event);
    const result = await run.result;

    const id = "gemini_adSfaOfkBsmagbUPt96I0QI_0";
    const deltas = events.filter((event) =>
      ["text-delta", "reasoning-delta", "tool-input-start", "tool-input-delta"].includes(event.type),
    );
    expect(deltas).toEqual([
      { type: "tool-input-start", iteration: 1, toolCallId: id, toolName: "customDivide" },
      { type: "tool-input-delta", iteration: 1, toolCallId: id, delta: '{"denominator":2,"numerator":10}' },
      { type: "reasoning-delta", iteration: 2, delta: "Dividing." },
      { type: "text-delta", iteration: 2, delta: "10 / 2 " },
      { type: "text-delta", iteration: 2, delta: "is 5." },
    ]);
    expect(server.requests.map((request) => request.url)).toEqual([
      "/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse",
      "/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse",
    ]);

    const whole = await replay(wholeAnswers);
    const expected = await runToolLoop(
      {
        provider: createGeminiProvider({ client: whole.client, model: "gemini-2.0-flash" }),
        tools: registryOf(divide),
        maxIterations: 5,
      },
      input,
    );
    expect(result).toEqual(expected);
    expect(result.content).toBe("10 / 2 is 5.");
    expect(result.usage).toEqual({ promptTokens: 47, completionTokens: 16, totalTokens: 63, reasoningTokens: 4 });
    // The follow-up request the stream sent is the one chat sent.
    expect(server.requests[1]?.body).toEqual(whole.server.requests[1]?.body);
  });
});
