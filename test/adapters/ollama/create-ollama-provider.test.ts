import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ollama } from "ollama";
import { describe, expect, it, vi } from "vitest";
import * as z from "zod";
import {
  createOllamaProvider,
  type OllamaChatChunk,
  type OllamaChatStream,
  type OllamaClientLike,
} from "../../../src/adapters/ollama/index.js";
import {
  type ContentPart,
  defineTool,
  isToolLoopError,
  isUnsupportedContentError,
  type Message,
  mediaResult,
  runToolLoop,
  streamToolLoop,
  type ToolLoopEvent,
  type UnsupportedContentError,
} from "../../../src/index.js";
import {
  abortOnceRequested,
  expectLoopRejectsUnreadable,
  expectUnreadable,
  registryOf,
  useReplayServers,
} from "../../helpers/adapter-fixtures.js";
import { type ReplayResponse, type ReplayServer, readSample } from "../../helpers/replay-server.js";
import { collectStream } from "../../helpers/stream-parts.js";

// The structural client type accepts the real client.
const _typeCheck: OllamaClientLike = new Ollama();
void _typeCheck;

type Json = Record<string, unknown>;

interface OllamaRequestBody {
  model: string;
  messages: Json[];
  stream: boolean;
  tools?: Json[];
  options?: Json;
  [key: string]: unknown;
}

const startServer = useReplayServers();

async function replay(script: ReplayResponse[]) {
  const server = await startServer(script);
  const client = new Ollama({ host: server.url });
  return { server, client };
}

/** A streamed `/api/chat` answer: one JSON object per line, as Ollama sends it. */
function ndjson(...chunks: unknown[]): ReplayResponse {
  return { raw: `${chunks.map((chunk) => JSON.stringify(chunk)).join("\n")}\n`, contentType: "application/x-ndjson" };
}

const streamChunk = readSample<OllamaChatChunk & Json>("ollama-chat-stream-chunk-tool-calls.json");
const finalChunk = readSample<OllamaChatChunk & Json>("ollama-chat-stream-final-chunk.json");
const followupResponse = readSample<Json>("ollama-chat-followup-response.json");

/** The genuine tool-call chunk, carrying the given assistant message instead. */
function toolCallChunk(message: Json): Json {
  return { ...streamChunk, message };
}

function textChunk(content: string, done = false): Json {
  return { ...streamChunk, message: { role: "assistant", content }, done };
}

function bodyOf(server: ReplayServer, index: number): OllamaRequestBody {
  return server.requests[index]?.body as OllamaRequestBody;
}

/**
 * Wraps the real client's `chat`: spies on `abort()` of every stream it returns and tells when the
 * adapter has read a chunk. With `holdUntil`, the adapter gets each stream only once it settles,
 * as if the response headers came late.
 */
function watchStreams(client: Ollama, holdUntil?: Promise<void>) {
  const abort = vi.fn();
  let chunkRead = () => {};
  const firstChunkRead = new Promise<void>((resolve) => (chunkRead = resolve));
  const streams: Array<Promise<OllamaChatStream>> = [];
  const watched: OllamaClientLike = {
    chat(request) {
      const pending = (async (): Promise<OllamaChatStream> => {
        const stream = await client.chat(request);
        abort.mockImplementation(stream.abort.bind(stream));
        await holdUntil;
        return {
          abort: () => abort(),
          async *[Symbol.asyncIterator]() {
            for await (const chunk of stream) {
              chunkRead();
              yield chunk;
            }
          },
        };
      })();
      streams.push(pending);
      return pending;
    },
  };
  return { client: watched, abort, firstChunkRead, streams };
}

const weather = defineTool({
  name: "get_weather",
  description: "Get the weather in a given city",
  parameters: z.object({ city: z.string().describe("The city to get the weather for") }),
  execute: ({ city }) => (city === "Toronto" ? "11 degrees celsius" : "unknown"),
});

describe("createOllamaProvider with the real ollama client", () => {
  it("runs a full cycle; the follow-up request is the documented one", async () => {
    const sample = readSample<OllamaRequestBody>("ollama-chat-followup-request.json");
    const modelTurn = sample.messages[1] as Json;
    const { server, client } = await replay([ndjson(toolCallChunk(modelTurn), finalChunk), ndjson(followupResponse)]);
    const provider = createOllamaProvider({ client, model: "llama3.2" });

    const result = await runToolLoop({ provider, tools: registryOf(weather), maxIterations: 5 }, [
      sample.messages[0] as unknown as Message,
    ]);

    expect(result.content).toBe("The current temperature in Toronto is 11°C.");
    expect(result.stopReason).toBe("completed");
    expect(result.iterations).toBe(2);
    // Usage of both calls: 169 + 15 (stream) and 94 + 11 (follow-up).
    expect(result.usage).toEqual({
      promptTokens: 169 + 94,
      completionTokens: 15 + 11,
      totalTokens: 169 + 15 + 94 + 11,
    });
    expect(server.requests.map((request) => [request.method, request.url])).toEqual([
      ["POST", "/api/chat"],
      ["POST", "/api/chat"],
    ]);

    const first = bodyOf(server, 0);
    expect(first.stream).toBe(true);
    expect(first.messages).toEqual([sample.messages[0]]);

    // The documented follow-up, with our (documented) differences: the request is streamed, and
    // each call carries `type` and `function.index` (as in the with-index sample).
    const [user, assistant, tool] = sample.messages as [Json, Json, Json];
    const call = (assistant.tool_calls as Json[])[0] as { function: Json };
    expect(bodyOf(server, 1)).toEqual({
      ...sample,
      stream: true,
      messages: [
        user,
        { ...assistant, tool_calls: [{ type: "function", function: { index: 0, ...call.function } }] },
        tool,
      ],
    });
    const withIndex = readSample<OllamaRequestBody>("ollama-chat-followup-request-with-index.json");
    const indexed = (withIndex.messages[1] as { tool_calls: Json[] }).tool_calls[0] as Json;
    const sent = (bodyOf(server, 1).messages[1] as { tool_calls: Json[] }).tool_calls[0] as Json;
    expect(Object.keys(sent).sort()).toEqual(Object.keys(indexed).sort());
  });

  it("answers four parallel calls in call order, each with tool_name (the parallel sample)", async () => {
    const sample = readSample<OllamaRequestBody>("ollama-chat-parallel-followup-request.json");
    const request = readSample<OllamaRequestBody>("ollama-chat-parallel-request-tools.json");
    const answers: Record<string, string> = {
      "get_temperature New York": "22°C",
      "get_conditions New York": "Partly cloudy",
      "get_temperature London": "15°C",
      "get_conditions London": "Rainy",
    };
    const cityTool = (name: string, description: string) =>
      defineTool({
        name,
        description,
        parameters: z.object({ city: z.string().describe("The name of the city") }),
        // Later calls finish first: the answers must still follow call order.
        execute: async ({ city }) => {
          await new Promise((resolve) => setTimeout(resolve, city === "New York" ? 20 : 0));
          return answers[`${name} ${city}`] ?? "?";
        },
      });
    const { server, client } = await replay([
      ndjson(toolCallChunk({ role: "assistant", content: "", ...(sample.messages[1] as Json) }), finalChunk),
      ndjson(followupResponse),
    ]);
    const provider = createOllamaProvider({ client, model: "qwen3" });
    const registry = registryOf(
      cityTool("get_temperature", "Get the current temperature for a city"),
      cityTool("get_conditions", "Get the current weather conditions for a city"),
    );

    const result = await runToolLoop({ provider, tools: registry, maxIterations: 5 }, [
      sample.messages[0] as unknown as Message,
    ]);

    expect(result.stopReason).toBe("completed");
    const ids = result.messages[1]?.toolCalls?.map((call) => call.id) ?? [];
    expect(new Set(ids).size).toBe(4);
    expect(result.messages.slice(2, 6).map((message) => message.toolCallId)).toEqual(ids);

    const followup = bodyOf(server, 1);
    expect(followup.messages).toEqual(
      sample.messages.map((message) => (message.role === "assistant" ? { content: "", ...message } : message)),
    );
    // Definitions as the request sample lists them, sorted by name (the registry's order).
    const byName = (a: Json, b: Json) =>
      String((a.function as Json).name).localeCompare(String((b.function as Json).name));
    expect(followup.tools).toMatchObject([...(request.tools ?? [])].sort(byName));
  });

  it("keeps text that comes with tool calls, accumulated over the chunks", async () => {
    const { server, client } = await replay([
      ndjson(
        textChunk("Let me "),
        textChunk("check."),
        toolCallChunk({
          role: "assistant",
          content: "",
          tool_calls: [{ function: { name: "get_weather", arguments: { city: "Toronto" } } }],
        }),
        finalChunk,
      ),
      ndjson(followupResponse),
    ]);
    const provider = createOllamaProvider({ client });

    const result = await runToolLoop({ provider, tools: registryOf(weather), maxIterations: 5 }, [
      { role: "user", content: "what is the weather in Toronto?" },
    ]);

    expect(result.messages[1]).toMatchObject({ role: "assistant", content: "Let me check." });
    expect(bodyOf(server, 1).messages[1]).toMatchObject({ role: "assistant", content: "Let me check." });
    expect(bodyOf(server, 1).messages[2]).toEqual({
      role: "tool",
      content: "11 degrees celsius",
      tool_name: "get_weather",
    });
  });

  it("passes `{}` to a tool whose call has no arguments, and sends `{}` back", async () => {
    let received: unknown;
    const clock = defineTool({
      name: "clock",
      description: "Current time",
      parameters: z.object({}),
      execute: (args) => {
        received = args;
        return "12:00";
      },
    });
    const { server, client } = await replay([
      ndjson(
        toolCallChunk({ role: "assistant", content: "", tool_calls: [{ function: { name: "clock" } }] }),
        finalChunk,
      ),
      ndjson(followupResponse),
    ]);

    await runToolLoop({ provider: createOllamaProvider({ client }), tools: registryOf(clock), maxIterations: 5 }, [
      { role: "user", content: "time?" },
    ]);

    expect(received).toEqual({});
    const assistant = bodyOf(server, 1).messages[1] as { tool_calls: Json[] };
    expect(assistant.tool_calls).toEqual([{ type: "function", function: { index: 0, name: "clock", arguments: {} } }]);
    expect(bodyOf(server, 0).tools).toEqual([
      { type: "function", function: { name: "clock", description: "Current time", parameters: expect.any(Object) } },
    ]);
  });

  it("sends a tool failure as the tool message the model reads", async () => {
    const broken = defineTool({
      name: "get_weather",
      description: "Get the weather in a given city",
      parameters: z.object({ city: z.string() }),
      execute: () => {
        throw new Error("weather service unreachable");
      },
    });
    const { server, client } = await replay([
      ndjson(
        toolCallChunk({
          role: "assistant",
          content: "",
          tool_calls: [{ function: { name: "get_weather", arguments: { city: "Toronto" } } }],
        }),
        finalChunk,
      ),
      ndjson(followupResponse),
    ]);

    const result = await runToolLoop(
      { provider: createOllamaProvider({ client }), tools: registryOf(broken), maxIterations: 5 },
      [{ role: "user", content: "what is the weather in Toronto?" }],
    );

    expect(result.messages[2]).toMatchObject({ role: "tool", isError: true });
    const tool = bodyOf(server, 1).messages[2] as Json;
    expect(tool).toEqual({ role: "tool", tool_name: "get_weather", content: expect.any(String) });
    expect(tool.content).toContain("weather service unreachable");
  });

  it("rejects with ToolLoopError whose cause is the client's error on an API 400", async () => {
    const { client } = await replay([{ status: 400, body: { error: "model 'nope' not found" } }]);

    const error = await runToolLoop(
      { provider: createOllamaProvider({ client, model: "nope" }), tools: registryOf(weather), maxIterations: 3 },
      [{ role: "user", content: "hi" }],
    ).catch((caught: unknown) => caught);

    expect(isToolLoopError(error)).toBe(true);
    const cause = (error as Error).cause as Error & { status_code?: number };
    expect(cause.name).toBe("ResponseError");
    expect(cause.status_code).toBe(400);
    expect(cause.message).toBe("model 'nope' not found");
  });

  it("rejects with the error Ollama reports inside the stream", async () => {
    const { client } = await replay([ndjson(textChunk("Hel"), { error: "model runner has unexpectedly stopped" })]);

    const error = await runToolLoop({ provider: createOllamaProvider({ client }), maxIterations: 3 }, [
      { role: "user", content: "hi" },
    ]).catch((caught: unknown) => caught);

    expect(isToolLoopError(error)).toBe(true);
    expect(((error as Error).cause as Error).message).toBe("model runner has unexpectedly stopped");
  });

  it("aborts while the server has not answered yet", async () => {
    const { server, client } = await replay([{ hang: true }]);
    const { settled: run } = await abortOnceRequested(
      server,
      (signal) =>
        runToolLoop(
          { provider: createOllamaProvider({ client }), maxIterations: 3 },
          [{ role: "user", content: "hi" }],
          { signal },
        ),
      new Error("user cancelled"),
    );

    const error = await run.catch((caught: unknown) => caught);
    expect(isToolLoopError(error)).toBe(true);
    expect(((error as Error).cause as Error).message).toBe("user cancelled");
  });

  it("aborts a stream that never ends once a chunk is read: the stream's abort() closes the request", async () => {
    const { server, client } = await replay([{ ...ndjson(textChunk("The weather")), hang: true }]);
    const watched = watchStreams(client);
    const controller = new AbortController();
    const run = runToolLoop(
      { provider: createOllamaProvider({ client: watched.client }), maxIterations: 3 },
      [{ role: "user", content: "hi" }],
      { signal: controller.signal },
    );
    run.catch(() => {});

    await watched.firstChunkRead;
    controller.abort(new Error("stop"));

    const error = await run.catch((caught: unknown) => caught);
    expect(isToolLoopError(error)).toBe(true);
    expect(((error as Error).cause as Error).message).toBe("stop");
    expect(watched.abort).toHaveBeenCalledTimes(1);
    await server.waitForDisconnects(1);
  });

  it("aborts before the stream has started: the stream is aborted as soon as it arrives", async () => {
    // The request is on the wire, but the adapter gets the stream (its response headers) only after the abort.
    const { server, client } = await replay([{ ...ndjson(textChunk("The weather")), hang: true }]);
    let release = () => {};
    const watched = watchStreams(client, new Promise<void>((resolve) => (release = resolve)));
    const { settled: run } = await abortOnceRequested(
      server,
      (signal) =>
        runToolLoop(
          { provider: createOllamaProvider({ client: watched.client }), maxIterations: 3 },
          [{ role: "user", content: "hi" }],
          { signal },
        ),
      new Error("user cancelled"),
    );

    const error = await run.catch((caught: unknown) => caught);
    expect(((error as Error).cause as Error).message).toBe("user cancelled");
    expect(watched.abort).not.toHaveBeenCalled();

    release();
    // The adapter waited on this promise before the test did, so its handler has run by now.
    await watched.streams[0];
    expect(watched.abort).toHaveBeenCalledTimes(1);
    await server.waitForDisconnects(1);
  });

  it("does not call the server when the signal is already aborted", async () => {
    const { server, client } = await replay([ndjson(followupResponse)]);
    const provider = createOllamaProvider({ client });
    await expect(
      provider.chat([{ role: "user", content: "hi" }], undefined, "m", {}, AbortSignal.abort(new Error("early"))),
    ).rejects.toThrow("early");
    expect(server.requests).toHaveLength(0);
  });

  it("puts llmOptions where the API wants them", async () => {
    const { server, client } = await replay([ndjson(followupResponse)]);

    await runToolLoop(
      {
        provider: createOllamaProvider({ client }),
        maxIterations: 1,
        llmOptions: {
          temperature: 0.2,
          max_tokens: 128,
          seed: 7,
          options: { num_ctx: 8192 },
          keep_alive: "5m",
          think: false,
          format: "json",
        },
      },
      [{ role: "user", content: "hi" }],
    );

    expect(bodyOf(server, 0)).toEqual({
      model: "llama3.2",
      messages: [{ role: "user", content: "hi" }],
      stream: true,
      keep_alive: "5m",
      think: false,
      format: "json",
      options: { temperature: 0.2, num_predict: 128, seed: 7, num_ctx: 8192 },
    });
  });

  it.each([
    ["the factory's model", "qwen3", undefined, "qwen3"],
    ["the loop's model over the factory's", "qwen3", "llama3.1", "llama3.1"],
    ["the default model", undefined, undefined, "llama3.2"],
  ])("sends %s", async (_case, factoryModel, loopModel, expected) => {
    const { server, client } = await replay([ndjson(followupResponse)]);
    const provider = createOllamaProvider({ client, ...(factoryModel === undefined ? {} : { model: factoryModel }) });

    await runToolLoop({ provider, maxIterations: 1, ...(loopModel === undefined ? {} : { model: loopModel }) }, [
      { role: "user", content: "hi" },
    ]);

    expect(provider.getDefaultModel()).toBe(factoryModel ?? "llama3.2");
    expect(bodyOf(server, 0).model).toBe(expected);
  });

  it("makes stable ids for id-less calls and maps the answers back by position and name", async () => {
    const calls = {
      role: "assistant",
      content: "",
      tool_calls: [
        { function: { name: "get_weather", arguments: { city: "Toronto" } } },
        { function: { name: "get_weather", arguments: { city: "Paris" } } },
      ],
    };
    const { server, client } = await replay([
      ndjson(toolCallChunk(calls), finalChunk),
      ndjson(toolCallChunk(calls), finalChunk),
      ndjson(followupResponse),
    ]);
    const provider = createOllamaProvider({ client });
    const ask = () => provider.chat([{ role: "user", content: "weather?" }], undefined, "llama3.2", {});

    const first = await ask();
    const second = await ask();
    const ids = first.toolCalls?.map((call) => call.id) ?? [];
    expect(ids).toHaveLength(2);
    expect(ids[0]).toMatch(/^ollama_[a-z0-9]+_0$/);
    expect(ids[0]).not.toBe(ids[1]);
    // The same response (same created_at) gives the same ids.
    expect(second.toolCalls?.map((call) => call.id)).toEqual(ids);
    expect(first.toolCalls?.every((call) => call.providerMetadata === undefined)).toBe(true);

    // Answers given in a different order than the calls still go out under each call's name,
    // and no id is invented on the wire.
    const transcript: Message[] = [
      { role: "user", content: "weather?" },
      {
        role: "assistant",
        content: "",
        toolCalls: [
          { id: "a", name: "get_weather", arguments: { city: "Toronto" } },
          { id: "b", name: "clock", arguments: {} },
        ],
      },
      { role: "tool", content: "11 degrees celsius", toolCallId: "a" },
      { role: "tool", content: "12:00", toolCallId: "b" },
    ];
    await provider.chat(transcript, undefined, "llama3.2", {});
    expect(bodyOf(server, 2).messages.slice(2)).toEqual([
      { role: "tool", content: "11 degrees celsius", tool_name: "get_weather" },
      { role: "tool", content: "12:00", tool_name: "clock" },
    ]);
  });

  it("uses and echoes the ids newer servers give (tool_calls[].id, tool_call_id)", async () => {
    const { server, client } = await replay([
      ndjson(
        toolCallChunk({
          role: "assistant",
          content: "",
          tool_calls: [
            { id: "call_x1y2z3w4", function: { index: 0, name: "get_weather", arguments: { city: "Toronto" } } },
          ],
        }),
        finalChunk,
      ),
      ndjson(followupResponse),
    ]);

    const result = await runToolLoop(
      { provider: createOllamaProvider({ client }), tools: registryOf(weather), maxIterations: 5 },
      [{ role: "user", content: "what is the weather in Toronto?" }],
    );

    expect(result.messages[1]?.toolCalls?.[0]).toMatchObject({
      id: "call_x1y2z3w4",
      providerMetadata: { ollama: { id: "call_x1y2z3w4" } },
    });
    expect(bodyOf(server, 1).messages.slice(1)).toEqual([
      {
        role: "assistant",
        content: "",
        tool_calls: [
          {
            id: "call_x1y2z3w4",
            type: "function",
            function: { index: 0, name: "get_weather", arguments: { city: "Toronto" } },
          },
        ],
      },
      { role: "tool", content: "11 degrees celsius", tool_name: "get_weather", tool_call_id: "call_x1y2z3w4" },
    ]);
  });

  it.each([
    ["calls with done_reason stop", true, "stop", "tool_calls"],
    ["a final answer", false, "stop", "stop"],
    ["the output cap", false, "length", "length"],
    ["calls cut at the output cap", true, "length", "tool_calls"],
    ["an unknown reason", false, "unload", "stop"],
  ])("maps finishReason for %s", async (_case, withCalls, doneReason, expected) => {
    const message = withCalls
      ? { role: "assistant", content: "", tool_calls: [{ function: { name: "clock", arguments: {} } }] }
      : { role: "assistant", content: "Hi" };
    const { client } = await replay([ndjson(toolCallChunk(message), { ...finalChunk, done_reason: doneReason })]);

    const response = await createOllamaProvider({ client }).chat([{ role: "user", content: "hi" }], undefined, "m", {});

    expect(response.finishReason).toBe(expected);
    expect(response.usage).toEqual({ promptTokens: 169, completionTokens: 15, totalTokens: 184 });
  });

  it("sends system and user messages as they are", async () => {
    const { server, client } = await replay([ndjson(followupResponse)]);
    await createOllamaProvider({ client }).chat(
      [
        { role: "system", content: "Be brief." },
        { role: "user", content: "hi" },
      ],
      undefined,
      "m",
      {},
    );
    expect(bodyOf(server, 0).messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "hi" },
    ]);
    expect(bodyOf(server, 0)).not.toHaveProperty("tools");
  });

  it.each([
    ["no options", undefined, /^createOllamaProvider: options must be an object, got undefined$/],
    ["no client", {}, /client must be an Ollama client/],
    ["a client without chat", { client: {} }, /client must be an Ollama client/],
    ["a non-string model", { client: new Ollama(), model: 3 }, /model must be a string/],
  ])("throws a TypeError for %s", (_case, options, message) => {
    expect(() => createOllamaProvider(options as never)).toThrow(message);
    expect(() => createOllamaProvider(options as never)).toThrow(TypeError);
  });
});

describe("createOllamaProvider with responses it cannot read (D06)", () => {
  const chat = (client: OllamaClientLike) =>
    createOllamaProvider({ client }).chat([{ role: "user", content: "hi" }], undefined, "llama3.2", {});
  const { message: _message, ...doneWithoutMessage } = finalChunk as Json;

  it.each<[string, ReplayResponse, RegExp]>([
    [
      "an empty stream",
      { raw: "", contentType: "application/x-ndjson" },
      /^Ollama: the stream ended without any chunk$/,
    ],
    ["a stream of {}", ndjson({}), /^Ollama: the stream ended before its final chunk \(no chunk with done: true\)$/],
    [
      "a final chunk without a message",
      ndjson(doneWithoutMessage),
      /^Ollama: no chunk of the stream carries a message$/,
    ],
    [
      "chunks whose message is null",
      ndjson({ ...streamChunk, message: null }, { ...finalChunk, message: null }),
      /^Ollama: no chunk of the stream carries a message$/,
    ],
    [
      "a message that is text",
      ndjson({ ...finalChunk, message: "The weather is fine." }),
      /^Ollama: a chunk's message is not an object \(got string\)$/,
    ],
    [
      "a tool call without a function name",
      ndjson(
        toolCallChunk({ role: "assistant", content: "", tool_calls: [{ function: { arguments: {} } }] }),
        finalChunk,
      ),
      /^Ollama: a tool call has no function name \(got undefined\)$/,
    ],
    [
      "a tool call that is not an object",
      ndjson(toolCallChunk({ role: "assistant", content: "", tool_calls: ["get_weather"] }), finalChunk),
      /^Ollama: a tool call is not an object \(got string\)$/,
    ],
    [
      "tool_calls that are not an array",
      ndjson(
        toolCallChunk({ role: "assistant", content: "", tool_calls: { function: { name: "get_weather" } } }),
        finalChunk,
      ),
      /^Ollama: a chunk's tool_calls is not an array \(got object\)$/,
    ],
  ])("rejects %s", async (_name, response, expected) => {
    const { client } = await replay([response]);
    await expectUnreadable(chat(client), "Ollama", expected);
  });

  it("closes the request when a chunk mid-stream cannot be read", async () => {
    const bad = toolCallChunk({ role: "assistant", content: "", tool_calls: [{ function: {} }] });
    const { server, client } = await replay([{ ...ndjson(textChunk("Hi"), bad), hang: true }]);

    await expectUnreadable(chat(client), "Ollama", /no function name/);
    await server.waitForDisconnects(1);
  });

  it("keeps the client's own error as the cause when the stream ends early", async () => {
    const { client } = await replay([ndjson(textChunk("Hel"))]);
    const error = await expectUnreadable(chat(client), "Ollama", /ended before its final chunk/);
    expect((error.cause as Error).message).toBe("Did not receive done or success response in stream.");
    expect(error.body).toContain('"Hel"');
  });

  it.each<[string, unknown[], RegExp]>([
    ["no chunk", [], /^Ollama: the stream ended without any chunk$/],
    ["chunks but none with done: true", [textChunk("Hi")], /before its final chunk \(no chunk with done: true\)$/],
    [
      "a chunk that is not an object",
      [3, finalChunk],
      /^Ollama: a chunk of the stream is not an object \(got number\)$/,
    ],
  ])("rejects a custom client's stream with %s", async (_name, chunks, expected) => {
    const client: OllamaClientLike = {
      chat: async () => ({
        abort() {},
        async *[Symbol.asyncIterator]() {
          yield* chunks as OllamaChatChunk[];
        },
      }),
    };
    await expectUnreadable(chat(client), "Ollama", expected);
  });

  it.each<[string, ReplayResponse, string]>([
    ["an empty answer", ndjson(finalChunk), ""],
    [
      "text spread over chunks, the final one without text",
      ndjson(textChunk("Hi"), textChunk(" there"), finalChunk),
      "Hi there",
    ],
    ["a message only on the final chunk", ndjson({ model: "llama3.2", done: false }, textChunk("late", true)), "late"],
  ])("still reads %s", async (_name, response, content) => {
    const { client } = await replay([response]);
    await expect(chat(client)).resolves.toMatchObject({ content, toolCalls: [] });
  });

  it("the loop rejects with ToolLoopError whose cause is the InvalidProviderResponseError, keeping the transcript", async () => {
    const { client } = await replay([
      ndjson(
        toolCallChunk({
          role: "assistant",
          content: "",
          tool_calls: [{ function: { name: "get_weather", arguments: { city: "Toronto" } } }],
        }),
        finalChunk,
      ),
      ndjson(doneWithoutMessage),
    ]);

    const run = runToolLoop(
      { provider: createOllamaProvider({ client }), tools: registryOf(weather), maxIterations: 3 },
      [{ role: "user", content: "what is the weather in Toronto?" }],
    );

    const error = await expectLoopRejectsUnreadable(run, "Ollama", [
      { role: "user" },
      { role: "assistant", toolCalls: [expect.objectContaining({ name: "get_weather" })] },
      { role: "tool", content: "11 degrees celsius" },
    ]);
    expect(error.iterations).toBe(2);
  });
});

describe("createOllamaProvider: images and structured output", () => {
  const vision = readSample<OllamaRequestBody>("ollama-chat-request-images.json");
  const visionResponse = readSample<Json>("ollama-chat-response-images.json");
  const [visionMessage] = vision.messages as [{ role: string; content: string; images: string[] }];
  const [pig] = visionMessage.images as [string];
  const pigPart: ContentPart = { type: "image", mediaType: "image/png", data: pig };
  const structured = readSample<OllamaRequestBody & { format: Json }>("ollama-chat-request-structured-outputs.json");
  const structuredResponse = readSample<Json>("ollama-chat-response-structured-outputs.json");

  it("sends a user message's base64 image in `images` (the documented vision request)", async () => {
    const { server, client } = await replay([ndjson(visionResponse)]);

    const response = await createOllamaProvider({ client }).chat(
      [{ role: "user", content: [{ type: "text", text: visionMessage.content }, pigPart] }],
      undefined,
      "llava",
      {},
    );

    expect(bodyOf(server, 0)).toEqual({ ...vision, stream: true });
    expect(response.content).toBe((visionResponse.message as Json).content);
  });

  it("sends a tool's images in its own tool message, the text parts joined as its content", async () => {
    const { server, client } = await replay([ndjson(followupResponse)]);
    const messages: Message[] = [
      { role: "user", content: "Show me the pig." },
      { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "screenshot", arguments: {} }] },
      {
        role: "tool",
        content: [{ type: "text", text: "The screenshot." }, pigPart, { type: "text", text: "(1 of 1)" }],
        toolCallId: "c1",
        toolName: "screenshot",
      },
    ];

    await createOllamaProvider({ client }).chat(messages, undefined, "llava", {});

    expect(bodyOf(server, 0).messages[2]).toEqual({
      role: "tool",
      content: "The screenshot.\n(1 of 1)",
      images: [pig],
      tool_name: "screenshot",
    });
  });

  it("hands the client bytes, so it never reads base64 that names a file from disk", async () => {
    // The Node `ollama` client sends the file itself when an image string is an existing path.
    const directory = mkdtempSync(join(tmpdir(), "tl"));
    try {
      let path = join(directory, "secret");
      while (path.length % 4 !== 0) path += "A";
      expect(path).toMatch(/^[A-Za-z0-9+/]+$/);
      writeFileSync(path, "not an image: a secret");
      const { server, client } = await replay([ndjson(followupResponse)]);

      await createOllamaProvider({ client }).chat(
        [{ role: "user", content: [{ type: "image", mediaType: "image/png", data: path }] }],
        undefined,
        "llava",
        {},
      );

      expect(bodyOf(server, 0).messages[0]).toEqual({ role: "user", content: "", images: [path] });
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it.each<[string, ContentPart]>([
    ["an image URL", { type: "image", url: "https://example.com/pig.png" }],
    ["a PDF", { type: "file", mediaType: "application/pdf", data: "JVBERi0=" }],
    ["an audio clip", { type: "file", mediaType: "audio/wav", data: "UklGRg==" }],
  ])("refuses %s with UnsupportedContentError before any request", async (_case, part) => {
    const { server, client } = await replay([ndjson(followupResponse)]);
    const provider = createOllamaProvider({ client });
    const asUser: Message[] = [
      { role: "system", content: "Be brief." },
      { role: "user", content: [{ type: "text", text: "Look:" }, part] },
    ];
    const asTool: Message[] = [
      { role: "user", content: "Look." },
      { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "fetch", arguments: {} }] },
      { role: "tool", content: [{ type: "text", text: "Fetched." }, part], toolCallId: "c1", toolName: "fetch" },
    ];

    for (const [messages, messageIndex] of [
      [asUser, 1],
      [asTool, 2],
    ] as const) {
      const error = await provider.chat(messages, undefined, "llava", {}).catch((caught: unknown) => caught);
      expect(isUnsupportedContentError(error)).toBe(true);
      expect(error).toMatchObject({ code: "unsupported_content", provider: "ollama", part: part.type, messageIndex });
      expect((error as UnsupportedContentError).message).toMatch(
        new RegExp(`^ollama cannot take .+ in messages\\[${messageIndex}\\]: `),
      );
    }
    expect(server.requests).toHaveLength(0);
  });

  it("sends the loop's output schema as `format` (the documented structured-outputs request)", async () => {
    const { server, client } = await replay([ndjson(structuredResponse)]);

    const response = await createOllamaProvider({ client }).chat(
      structured.messages as unknown as Message[],
      undefined,
      "llama3.1",
      { output: { name: "person", schema: structured.format }, options: { temperature: 0 } },
    );

    expect(bodyOf(server, 0)).toEqual({ ...structured, stream: true });
    expect(JSON.parse(response.content)).toEqual({ age: 22, available: false });
  });

  it.each<[string, Json, boolean, unknown]>([
    ["the schema over llmOptions.format, without tools", { format: "json" }, false, "schema"],
    ["no format when tools are offered (the model could not call one)", {}, true, undefined],
    ["llmOptions.format as given when tools are offered", { format: "json" }, true, "json"],
  ])("sends %s", async (_case, llmOptions, withTools, expected) => {
    const { server, client } = await replay([ndjson(structuredResponse)]);
    const definitions = withTools ? registryOf(weather).getDefinitions() : undefined;

    await createOllamaProvider({ client }).chat([{ role: "user", content: "hi" }], definitions, "llama3.1", {
      ...llmOptions,
      output: { name: "person", schema: structured.format },
    });

    expect(bodyOf(server, 0).format).toEqual(expected === "schema" ? structured.format : expected);
    expect(bodyOf(server, 0)).not.toHaveProperty("output");
  });

  it("refuses an output that is not { name, schema } before any request", async () => {
    const { server, client } = await replay([ndjson(structuredResponse)]);
    const pending = createOllamaProvider({ client }).chat([{ role: "user", content: "hi" }], undefined, "m", {
      output: { name: "person" },
    });
    await expect(pending).rejects.toThrow(/^Ollama: llmOptions\.output must be \{ name: string, schema: object \}/);
    expect(server.requests).toHaveLength(0);
  });

  describe("in the loop", () => {
    const screenshot = (parts: ContentPart[]) =>
      defineTool({
        name: "screenshot",
        description: "Takes a screenshot",
        parameters: z.object({}),
        execute: () => mediaResult("The screenshot.", parts),
      });
    const callScreenshot = () =>
      ndjson(
        toolCallChunk({ role: "assistant", content: "", tool_calls: [{ function: { name: "screenshot" } }] }),
        finalChunk,
      );

    it("a tool's mediaResult image reaches Ollama in the tool message's images", async () => {
      const { server, client } = await replay([callScreenshot(), ndjson(visionResponse)]);

      const result = await runToolLoop(
        { provider: createOllamaProvider({ client }), tools: registryOf(screenshot([pigPart])), maxIterations: 3 },
        [{ role: "user", content: "What is on the screen?" }],
      );

      expect(result.content).toBe((visionResponse.message as Json).content);
      expect(bodyOf(server, 1).messages[2]).toEqual({
        role: "tool",
        content: "The screenshot.",
        images: [pig],
        tool_name: "screenshot",
      });
    });

    it("a tool's file rejects the run (provider_failed, UnsupportedContentError as cause) before the request", async () => {
      const pdf: ContentPart = { type: "file", mediaType: "application/pdf", data: "JVBERi0=" };
      const { server, client } = await replay([callScreenshot(), ndjson(followupResponse)]);

      const error = await runToolLoop(
        { provider: createOllamaProvider({ client }), tools: registryOf(screenshot([pdf])), maxIterations: 3 },
        [{ role: "user", content: "What is on the screen?" }],
      ).catch((caught: unknown) => caught);

      expect(isToolLoopError(error) && error.code).toBe("provider_failed");
      expect((error as { cause: unknown }).cause).toMatchObject({ provider: "ollama", part: "file", messageIndex: 2 });
      expect(server.requests).toHaveLength(1);
    });
  });
});

describe("createOllamaProvider chatStream (real ollama client over 127.0.0.1)", () => {
  const user: Message[] = [{ role: "user", content: "what is the weather in tokyo?" }];
  const tools = registryOf(weather).getDefinitions("ollama");
  const streamOf = (client: OllamaClientLike, options: Json = {}, signal?: AbortSignal) => {
    const provider = createOllamaProvider({ client });
    const { chatStream } = provider;
    if (chatStream === undefined) throw new Error("the provider has no chatStream");
    return { provider, stream: chatStream.call(provider, user, tools, "llama3.2", options, signal) };
  };
  const thinking = (text: string): Json => ({
    ...streamChunk,
    message: { role: "assistant", content: "", thinking: text },
  });

  it("streams the documented tool-call stream: the call's start and input under chat's id; the same answer as chat", async () => {
    const { server, client } = await replay([ndjson(streamChunk, finalChunk), ndjson(streamChunk, finalChunk)]);
    const { provider, stream } = streamOf(client);

    const { parts, response } = await collectStream(stream);
    const whole = await createOllamaProvider({ client }).chat(user, tools, "llama3.2", {});

    const id = response.toolCalls[0]?.id as string;
    expect(id).toMatch(/^ollama_[0-9a-z]+_0$/);
    expect(parts.slice(0, -1)).toEqual([
      { type: "tool-input-start", toolCallId: id, toolName: "get_weather" },
      { type: "tool-input-delta", toolCallId: id, delta: '{"city":"Tokyo"}' },
    ]);
    expect(response).toEqual(whole);
    // Ollama reports no cached or reasoning counts: they stay absent.
    expect(response.usage).toEqual({ promptTokens: 169, completionTokens: 15, totalTokens: 184 });
    expect(provider.providerName).toBe("ollama");
    expect(bodyOf(server, 0)).toEqual(bodyOf(server, 1));
    expect(bodyOf(server, 0).stream).toBe(true);
  });

  it("streams thinking as reasoning (not in the content) and text as text, with think passed on", async () => {
    const chunks = [thinking("The user "), thinking("asks."), textChunk("Sunny "), textChunk("in Tokyo."), finalChunk];
    const { server, client } = await replay([ndjson(...chunks), ndjson(...chunks)]);
    const { stream } = streamOf(client, { think: true });

    const { parts, response } = await collectStream(stream);

    expect(parts.slice(0, -1)).toEqual([
      { type: "reasoning-delta", delta: "The user " },
      { type: "reasoning-delta", delta: "asks." },
      { type: "text-delta", delta: "Sunny " },
      { type: "text-delta", delta: "in Tokyo." },
    ]);
    expect(response).toMatchObject({ content: "Sunny in Tokyo.", toolCalls: [], finishReason: "stop" });
    expect(response).toEqual(await createOllamaProvider({ client }).chat(user, tools, "llama3.2", { think: true }));
    expect(bodyOf(server, 0).think).toBe(true);
  });

  it("a stream cut off before its done chunk is an InvalidProviderResponseError, after the deltas that came", async () => {
    const { client } = await replay([ndjson(textChunk("Sunny "), textChunk("in"))]);
    const seen: string[] = [];
    const pending = (async () => {
      for await (const part of streamOf(client).stream) seen.push(part.type);
    })();
    const error = await expectUnreadable(
      pending,
      "Ollama",
      /ended before its final chunk \(no chunk with done: true\)/,
    );
    expect((error.cause as Error).message).toBe("Did not receive done or success response in stream.");
    expect(seen).toEqual(["text-delta", "text-delta"]);
  });

  it("a final line that is not JSON: the client drops it (with its own console warning), so the stream is cut off", async () => {
    const warn = vi.mocked(console.warn).mockImplementation(() => {});
    const raw = `${JSON.stringify(textChunk("Sunny"))}\n{"done": tru\n`;
    const { client } = await replay([{ raw, contentType: "application/x-ndjson" }]);
    await expectUnreadable(collectStream(streamOf(client).stream), "Ollama", /ended before its final chunk/);
    expect(warn.mock.calls).toEqual([["invalid json: ", '{"done": tru']]);
    warn.mockClear();
  });

  it("a chunk that cannot be read is an InvalidProviderResponseError, and the request is closed", async () => {
    const bad = toolCallChunk({ role: "assistant", content: "", tool_calls: [{ function: {} }] });
    const { server, client } = await replay([{ ...ndjson(textChunk("Hi"), bad), hang: true }]);
    await expectUnreadable(collectStream(streamOf(client).stream), "Ollama", /a tool call has no function name/);
    await server.waitForDisconnects(1);
  });

  it("a stream that stalls ends with the signal's reason when the run aborts, and the request is closed", async () => {
    const { server, client } = await replay([{ ...ndjson(textChunk("The weather")), hang: true }]);
    const controller = new AbortController();
    const iterator = streamOf(client, {}, controller.signal).stream[Symbol.asyncIterator]();
    expect(await iterator.next()).toEqual({ done: false, value: { type: "text-delta", delta: "The weather" } });
    const next = iterator.next();
    const reason = new Error("user cancelled");
    controller.abort(reason);
    await expect(next).rejects.toBe(reason);
    await server.waitForDisconnects(1);
  });

  it("an abort before the response headers ends with the signal's reason", async () => {
    const { server, client } = await replay([{ hang: true }]);
    const controller = new AbortController();
    const pending = collectStream(streamOf(client, {}, controller.signal).stream);
    pending.catch(() => {});
    await server.waitForRequests(1);
    const reason = new Error("user cancelled");
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });

  it("a consumer that stops iterating early closes the request", async () => {
    const { server, client } = await replay([{ ...ndjson(textChunk("The weather")), hang: true }]);
    for await (const part of streamOf(client).stream) {
      expect(part).toEqual({ type: "text-delta", delta: "The weather" });
      break;
    }
    await server.waitForDisconnects(1);
  });

  it("streamToolLoop yields the deltas and gives the result runToolLoop gives", async () => {
    const answer = [thinking("Tool said 11."), textChunk("It is 11 degrees "), textChunk("in Toronto."), finalChunk];
    const call = toolCallChunk({
      role: "assistant",
      content: "",
      tool_calls: [{ function: { name: "get_weather", arguments: { city: "Toronto" } } }],
    });
    const script = () => [ndjson(call, finalChunk), ndjson(...answer)];
    const { client } = await replay(script());
    const input: Message[] = [{ role: "user", content: "What is the weather in Toronto?" }];
    const config = { provider: createOllamaProvider({ client }), tools: registryOf(weather), maxIterations: 3 };

    const run = streamToolLoop(config, input);
    const events: ToolLoopEvent[] = [];
    for await (const event of run) events.push(event);
    const result = await run.result;

    const id = result.messages.find((message) => message.role === "assistant")?.toolCalls?.[0]?.id as string;
    expect(events.filter((event) => /-delta$|^tool-input-start$/.test(event.type))).toEqual([
      { type: "tool-input-start", iteration: 1, toolCallId: id, toolName: "get_weather" },
      { type: "tool-input-delta", iteration: 1, toolCallId: id, delta: '{"city":"Toronto"}' },
      { type: "reasoning-delta", iteration: 2, delta: "Tool said 11." },
      { type: "text-delta", iteration: 2, delta: "It is 11 degrees " },
      { type: "text-delta", iteration: 2, delta: "in Toronto." },
    ]);
    const whole = await replay(script());
    const expected = await runToolLoop({ ...config, provider: createOllamaProvider({ client: whole.client }) }, input);
    expect(result).toEqual(expected);
    expect(result.content).toBe("It is 11 degrees in Toronto.");
  });
});
