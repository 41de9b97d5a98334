import { GoogleGenAI } from "@google/genai";
import { describe, expect, it } from "vitest";
import { createGeminiProvider, fromGeminiStream } from "../../../src/adapters/gemini/index.js";
import type { LLMProvider, Message, ToolDefinition } from "../../../src/index.js";
import { expectUnreadable, useReplayServers } from "../../helpers/adapter-fixtures.js";
import {
  type ReplayResponse,
  type ReplayServer,
  readSample,
  readSampleText,
  sseResponse,
  sseText,
} from "../../helpers/replay-server.js";
import { collectStream, countTextAssembly, eventsOf } from "../../helpers/stream-parts.js";

type Json = Record<string, unknown>;

const PROVIDER = "Gemini";
const MODEL = "gemini-2.5-flash";
const startServer = useReplayServers();
const user: Message[] = [{ role: "user", content: "Divide 10 by 2 using the customDivide function" }];
const divide: ToolDefinition = {
  type: "function",
  function: {
    name: "customDivide",
    description: "Custom divide function",
    parameters: { type: "object", properties: { numerator: { type: "number" }, denominator: { type: "number" } } },
  },
};

async function replay(script: ReplayResponse[]): Promise<{ server: ReplayServer; provider: LLMProvider }> {
  const server = await startServer(script);
  const client = new GoogleGenAI({ apiKey: "test", httpOptions: { baseUrl: server.url } });
  return { server, provider: createGeminiProvider({ client, model: MODEL }) };
}

function streamOf(provider: LLMProvider, signal?: AbortSignal, tools: ToolDefinition[] | undefined = [divide]) {
  const { chatStream } = provider;
  if (chatStream === undefined) throw new Error("the provider has no chatStream");
  return chatStream.call(provider, user, tools, MODEL, {}, signal);
}

/** The recorded chunks, streamed as the API sends them (`data: {…}` events). */
const chunksResponse = (chunks: readonly Json[]): ReplayResponse => sseResponse(chunks.map((data) => ({ data })));
/** Vercel's recording holds one chunk per line (`data: ` stripped). */
const ndjsonChunks = (file: string): Json[] =>
  readSampleText(file)
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Json);

/** The parts of a chunk's first candidate. */
function partsOf(chunk: Json | undefined): Json[] {
  const [first] = (chunk?.candidates ?? []) as Array<{ content: { parts: Json[] } }>;
  return first?.content.parts ?? [];
}

const textChunk = (parts: Json[], extra: Json = {}): Json => ({
  candidates: [{ content: { role: "model", parts }, index: 0 }],
  modelVersion: MODEL,
  responseId: "resp1",
  ...extra,
});
const finalChunk = (parts: Json[], usageMetadata: Json, finishReason = "STOP"): Json => ({
  candidates: [{ content: { role: "model", parts }, finishReason, index: 0 }],
  usageMetadata,
  modelVersion: MODEL,
  responseId: "resp1",
});

describe("Gemini chatStream over the real @google/genai client, on recorded streams", () => {
  it("streams the official recording's call and answers as chat does for the same exchange; same request", async () => {
    const chunks = readSample<Json[]>("gemini-stream-function-call.segments.json");
    const [only] = chunks as [Json];
    const { server, provider } = await replay([chunksResponse(chunks), { body: only }]);

    const { parts, response } = await collectStream(streamOf(provider));
    const whole = await provider.chat(user, [divide], MODEL, {});

    const id = "gemini_adSfaOfkBsmagbUPt96I0QI_0";
    expect(parts.slice(0, -1)).toEqual([
      { type: "tool-input-start", toolCallId: id, toolName: "customDivide" },
      { type: "tool-input-delta", toolCallId: id, delta: '{"denominator":2,"numerator":10}' },
    ]);
    expect(response).toEqual(whole);
    expect(response.toolCalls).toEqual([
      { id, type: "function", name: "customDivide", arguments: { denominator: 2, numerator: 10 } },
    ]);
    expect(response.usage).toEqual({ promptTokens: 17, completionTokens: 6, totalTokens: 23 });
    // One request shape for both: only the method differs.
    expect(server.requests.map((request) => request.url)).toEqual([
      `/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`,
      `/v1beta/models/${MODEL}:generateContent`,
    ]);
    expect(server.requests[0]?.body).toEqual(server.requests[1]?.body);
  });

  it("streams Vercel's Gemini 3 recording: the thought as reasoning, four calls (three with streamed arguments), usage in detail", async () => {
    const chunks = ndjsonChunks("gemini-stream-no-args-function-call.vercel-ai.ndjson");
    const { provider } = await replay([chunksResponse(chunks)]);

    const { reasoning, deltas, toolInputs, response } = await collectStream(streamOf(provider));

    const thought = partsOf(chunks[0])[0]?.text;
    expect(reasoning).toEqual([thought]);
    expect(deltas).toEqual([]);
    const prefix = "gemini__vr4aYiWEJnYodAPkujX0QM";
    expect([...toolInputs]).toEqual([
      [`${prefix}_0`, { toolName: "read_theme", input: "{}" }],
      [`${prefix}_1`, { toolName: "read_screen", input: '{"id":"A"}' }],
      [`${prefix}_2`, { toolName: "read_screen", input: '{"id":"B"}' }],
      [`${prefix}_3`, { toolName: "read_screen", input: '{"id":"C"}' }],
    ]);
    expect(response.content).toBe("");
    expect(response.finishReason).toBe("tool_calls");
    expect(response.toolCalls.map((call) => [call.id, call.name, call.arguments])).toEqual([
      [`${prefix}_0`, "read_theme", {}],
      [`${prefix}_1`, "read_screen", { id: "A" }],
      [`${prefix}_2`, "read_screen", { id: "B" }],
      [`${prefix}_3`, "read_screen", { id: "C" }],
    ]);
    const signature = partsOf(chunks[1])[0]?.thoughtSignature;
    expect(response.toolCalls[0]?.providerMetadata).toEqual({ gemini: { thoughtSignature: signature } });
    expect(response.toolCalls[1]?.providerMetadata).toBeUndefined();
    // Thinking tokens are output: candidates 58 + thoughts 183; the total is the API's.
    expect(response.usage).toEqual({
      promptTokens: 249,
      completionTokens: 241,
      totalTokens: 490,
      reasoningTokens: 183,
    });
  });

  it("gives what chat gives for the same answer sent whole (thought, calls, signature, usage)", async () => {
    const chunks = ndjsonChunks("gemini-stream-no-args-function-call.vercel-ai.ndjson");
    const last = chunks[chunks.length - 1] as Json;
    const call = (id: string) => ({ functionCall: { name: "read_screen", args: { id } } });
    const whole = {
      ...last,
      candidates: [
        {
          content: {
            role: "model",
            parts: [...partsOf(chunks[0]), ...partsOf(chunks[1]), call("A"), call("B"), call("C")],
          },
          finishReason: "STOP",
        },
      ],
    };
    const { provider } = await replay([chunksResponse(chunks), { body: whole }]);
    const { response } = await collectStream(streamOf(provider));
    expect(response).toEqual(await provider.chat(user, [divide], MODEL, {}));
  });

  it("assembles the official Vertex AI recording of streamed arguments (partialArgs)", async () => {
    const chunks = readSample<Json[]>("gemini-vertex-stream-partial-args.segments.json");
    const { provider } = await replay([chunksResponse(chunks)]);
    const { toolInputs, response } = await collectStream(streamOf(provider));
    const args = { country: "USA", location: "NewYorkCity", purpose: "to know what to wear today", unit: "C" };
    const id = "gemini_gQ8uafuZPJ6Z4_UP_vnfsQY_0";
    expect([...toolInputs]).toEqual([[id, { toolName: "getCurrentWeather", input: JSON.stringify(args) }]]);
    expect(response.toolCalls).toMatchObject([{ id, name: "getCurrentWeather", arguments: args }]);
    expect(response.toolCalls[0]?.providerMetadata?.gemini).toHaveProperty("thoughtSignature");
    expect(response.usage).toEqual({ promptTokens: 36, completionTokens: 126, totalTokens: 162, reasoningTokens: 93 });
  });
});

describe("Gemini chatStream: text, thoughts and usage", () => {
  it("streams text and thought summaries apart; the content has no thought; cached and reasoning counts", async () => {
    const { provider } = await replay([
      chunksResponse([
        textChunk([{ text: "Thinking about ", thought: true }]),
        textChunk([{ text: "division.", thought: true }]),
        textChunk([{ text: "10 / 2 " }]),
        finalChunk([{ text: "is 5." }], {
          promptTokenCount: 120,
          cachedContentTokenCount: 100,
          candidatesTokenCount: 6,
          thoughtsTokenCount: 0,
          totalTokenCount: 126,
        }),
      ]),
    ]);
    const { parts, response } = await collectStream(streamOf(provider));
    expect(parts.slice(0, -1)).toEqual([
      { type: "reasoning-delta", delta: "Thinking about " },
      { type: "reasoning-delta", delta: "division." },
      { type: "text-delta", delta: "10 / 2 " },
      { type: "text-delta", delta: "is 5." },
    ]);
    // A reported 0 is kept; cached tokens are part of the prompt tokens, as Gemini counts them.
    expect(response).toEqual({
      content: "10 / 2 is 5.",
      toolCalls: [],
      finishReason: "stop",
      usage: { promptTokens: 120, completionTokens: 6, totalTokens: 126, cachedInputTokens: 100, reasoningTokens: 0 },
    });
  });

  it("takes the finish reason and usage of the last chunk that has them", async () => {
    const { provider } = await replay([
      chunksResponse([
        textChunk([{ text: "a" }], { usageMetadata: { promptTokenCount: 1, totalTokenCount: 1 } }),
        finalChunk([{ text: "b" }], { promptTokenCount: 5, candidatesTokenCount: 2, totalTokenCount: 7 }, "MAX_TOKENS"),
        { usageMetadata: { trafficType: "ON_DEMAND" }, responseId: "resp1" },
      ]),
    ]);
    const { response } = await collectStream(streamOf(provider));
    expect(response).toMatchObject({ content: "ab", finishReason: "length" });
    expect(response.usage).toEqual({ promptTokens: 5, completionTokens: 2, totalTokens: 7 });
  });

  it("ids calls without responseId by the provider's response count, as chat does", async () => {
    const call = { functionCall: { name: "customDivide", args: { numerator: 1 } } };
    const usage = { promptTokenCount: 1, totalTokenCount: 1 };
    const { provider } = await replay([
      chunksResponse([{ candidates: [{ content: { parts: [call] }, finishReason: "STOP" }], usageMetadata: usage }]),
      { body: { candidates: [{ content: { parts: [call] }, finishReason: "STOP" }], usageMetadata: usage } },
    ]);
    const { toolInputs, response } = await collectStream(streamOf(provider));
    expect([...toolInputs.keys()]).toEqual(["gemini_1_0"]);
    expect(response.toolCalls[0]?.id).toBe("gemini_1_0");
    // chat counts the same responses: its answer is the second.
    expect((await provider.chat(user, [divide], MODEL, {})).toolCalls[0]?.id).toBe("gemini_2_0");
  });

  it("a blocked prompt is an answer (content_filter), as in chat", async () => {
    const { provider } = await replay([
      chunksResponse([{ promptFeedback: { blockReason: "SAFETY" }, usageMetadata: { promptTokenCount: 3 } }]),
    ]);
    const { response } = await collectStream(streamOf(provider));
    expect(response).toMatchObject({ content: "", toolCalls: [], finishReason: "content_filter" });
  });

  it("providerName is gcp.gemini, or gcp.vertex_ai for a Vertex AI client", () => {
    const gemini = createGeminiProvider({ client: new GoogleGenAI({ apiKey: "test" }) });
    const vertex = createGeminiProvider({
      client: new GoogleGenAI({ vertexai: true, project: "p", location: "us-central1", apiKey: "test" }),
    });
    expect(gemini.providerName).toBe("gcp.gemini");
    expect(vertex.providerName).toBe("gcp.vertex_ai");
  });

  it("a client without generateContentStream gives a provider without chatStream", () => {
    const provider = createGeminiProvider({ client: { models: { generateContent: async () => ({}) } } });
    expect(provider.chatStream).toBeUndefined();
  });
});

describe("Gemini chatStream failures (real client over 127.0.0.1)", () => {
  it("a stream that ends before any finishReason is an InvalidProviderResponseError, not a half answer", async () => {
    const { provider } = await replay([chunksResponse([textChunk([{ text: "It is " }]), textChunk([{ text: "5" }])])]);
    const parts: string[] = [];
    const pending = (async () => {
      for await (const part of streamOf(provider)) parts.push(part.type);
    })();
    const error = await expectUnreadable(pending, PROVIDER, /the stream ended without a finishReason/);
    expect(parts).toEqual(["text-delta", "text-delta"]);
    expect(error.body).toContain("It is 5");
  });

  it("a connection closed mid-chunk is an InvalidProviderResponseError with the client's error as cause", async () => {
    const raw = `${sseText([{ data: textChunk([{ text: "It is " }]) }])}data: {"candidates": [{"content"`;
    const { provider } = await replay([{ raw, contentType: "text/event-stream" }]);
    const error = await expectUnreadable(collectStream(streamOf(provider)), PROVIDER, /could not be read to its end/);
    expect(error.cause).toBeInstanceOf(Error);
  });

  it("a malformed chunk is an InvalidProviderResponseError", async () => {
    const raw = `${sseText([{ data: textChunk([{ text: "It is " }]) }])}data: {not json}\n\n`;
    const { provider } = await replay([{ raw, contentType: "text/event-stream" }]);
    await expectUnreadable(collectStream(streamOf(provider)), PROVIDER, /the stream sent an event that is not JSON/);
  });

  it.each([
    ["candidates that is not an array", { candidates: { text: "x" } }, /a chunk's candidates is not an array/],
    [
      "a call without a name",
      finalChunk([{ functionCall: { args: {} } }], { promptTokenCount: 1 }),
      /a functionCall part has no name/,
    ],
    [
      "an unusable finish reason",
      finalChunk([{ text: "cut" }], { promptTokenCount: 1 }, "MALFORMED_FUNCTION_CALL"),
      /no usable answer \(finishReason MALFORMED_FUNCTION_CALL/,
    ],
  ])("a chunk with %s is an InvalidProviderResponseError", async (_label, chunk, message) => {
    const { provider } = await replay([chunksResponse([textChunk([{ text: "a" }]), chunk])]);
    await expectUnreadable(collectStream(streamOf(provider)), PROVIDER, message);
  });

  it("an error status rejects with the client's own error, as in chat", async () => {
    const { provider } = await replay([
      { status: 400, body: { error: { code: 400, message: "bad", status: "INVALID_ARGUMENT" } } },
    ]);
    const error = await collectStream(streamOf(provider)).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: "ApiError", status: 400 });
  });

  it("a stream that stalls ends with the signal's reason when the run aborts, and the request is closed", async () => {
    const raw = sseText([{ data: textChunk([{ text: "It is " }]) }]);
    const { server, provider } = await replay([{ hang: true, raw, contentType: "text/event-stream" }]);
    const controller = new AbortController();
    const iterator = streamOf(provider, controller.signal)[Symbol.asyncIterator]();
    expect(await iterator.next()).toEqual({ done: false, value: { type: "text-delta", delta: "It is " } });
    const next = iterator.next();
    const reason = new Error("user cancelled");
    controller.abort(reason);
    await expect(next).rejects.toBe(reason);
    await server.waitForDisconnects(1);
  });

  it("an abort before the response headers ends with the signal's reason", async () => {
    const { server, provider } = await replay([{ hang: true }]);
    const controller = new AbortController();
    const pending = collectStream(streamOf(provider, controller.signal));
    pending.catch(() => {});
    await server.waitForRequests(1);
    const reason = new Error("user cancelled");
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });

  it("a consumer that stops iterating early closes the request", async () => {
    const raw = sseText([{ data: textChunk([{ text: "It is " }]) }]);
    const { server, provider } = await replay([{ hang: true, raw, contentType: "text/event-stream" }]);
    for await (const part of streamOf(provider)) {
      expect(part).toEqual({ type: "text-delta", delta: "It is " });
      break;
    }
    await server.waitForDisconnects(1);
  });
});

describe("fromGeminiStream (exported for custom providers)", () => {
  it("assembles a huge number of deltas in linear time: each piece added once, each text joined once", async () => {
    const pieces = 20_000;
    function* chunks() {
      yield textChunk([{ functionCall: { name: "t", willContinue: true } }]);
      for (let index = 0; index < pieces; index++) {
        yield textChunk([{ text: "a" }]);
        yield textChunk([
          {
            functionCall: {
              partialArgs: [{ jsonPath: "$.b", stringValue: "b", willContinue: true }],
              willContinue: true,
            },
          },
        ]);
      }
      yield textChunk([{ functionCall: { partialArgs: [{ jsonPath: "$.b", stringValue: "" }] } }]);
      yield finalChunk([], { promptTokenCount: 1 });
    }
    const { value, added, joinedChars } = await countTextAssembly(() =>
      collectStream(fromGeminiStream({ stream: eventsOf(chunks()) })),
    );
    // Work, not time: 2N + 1 pieces, the text and the argument joined once each (about 2N
    // characters); joining on every delta would copy about N² = 4e8.
    expect(added).toBe(2 * pieces + 1);
    expect(joinedChars).toBeLessThanOrEqual(2 * pieces);
    expect(value.deltas).toHaveLength(pieces);
    expect(value.response.content).toHaveLength(pieces);
    expect(value.response.toolCalls[0]?.arguments).toEqual({ b: "b".repeat(pieces) });
  });

  it("builds streamed arguments at nested paths, keeps __proto__ as a key, and refuses a path that does not fit", async () => {
    const piece = (jsonPath: string, value: Json, willContinue = true) => ({
      functionCall: { partialArgs: [{ jsonPath, ...value }], willContinue },
    });
    const stream = eventsOf([
      textChunk([{ functionCall: { name: "t", willContinue: true } }]),
      textChunk([piece("$.a.b[0]", { numberValue: 1 })]),
      textChunk([piece("$.a.b[1]", { boolValue: true })]),
      textChunk([piece("$['__proto__']", { stringValue: "x" })]),
      textChunk([piece("$.n", { nullValue: "NULL_VALUE" }, false)]),
      finalChunk([], { promptTokenCount: 1 }),
    ]);
    const { response } = await collectStream(fromGeminiStream({ stream }));
    const args = response.toolCalls[0]?.arguments as Json;
    expect(Object.getPrototypeOf(args)).toBe(Object.prototype);
    expect(Object.keys(args)).toEqual(["a", "__proto__", "n"]);
    expect(JSON.stringify(args)).toBe('{"a":{"b":[1,true]},"__proto__":"x","n":null}');

    const gap = eventsOf([
      textChunk([{ functionCall: { name: "t", willContinue: true } }]),
      textChunk([piece("$.a[5]", { numberValue: 1 })]),
      finalChunk([], { promptTokenCount: 1 }),
    ]);
    await expectUnreadable(collectStream(fromGeminiStream({ stream: gap })), PROVIDER, /does not fit the arguments/);
    const unreadablePath = eventsOf([
      textChunk([{ functionCall: { name: "t", willContinue: true } }]),
      textChunk([piece("a.b", { numberValue: 1 })]),
    ]);
    await expectUnreadable(
      collectStream(fromGeminiStream({ stream: unreadablePath })),
      PROVIDER,
      /jsonPath cannot be read \(got "a.b"\)/,
    );
  });

  it("refuses a value that is no stream, a chunk or first candidate that is not an object, and an error body", async () => {
    await expectUnreadable(collectStream(fromGeminiStream({ stream: {} })), PROVIDER, /did not return a stream/);
    await expectUnreadable(collectStream(fromGeminiStream({ stream: eventsOf([7]) })), PROVIDER, /not an object/);
    // (The SDK drops such a candidate itself; a custom client may not.)
    const candidate = eventsOf([{ candidates: ["x"] }]);
    await expectUnreadable(
      collectStream(fromGeminiStream({ stream: candidate })),
      PROVIDER,
      /a chunk's first candidate is not an object \(got string\)/,
    );
    const errorBody = { error: { code: 500, status: "INTERNAL", message: "boom" } };
    await expectUnreadable(
      collectStream(fromGeminiStream({ stream: eventsOf([errorBody]) })),
      PROVIDER,
      /the response is an error \(500: boom\)|the response is an error \(INTERNAL: boom\)/,
    );
  });
});
