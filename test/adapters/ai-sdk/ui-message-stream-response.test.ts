import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import {
  DefaultChatTransport,
  parseJsonEventStream,
  readUIMessageStream,
  type UIMessage,
  uiMessageChunkSchema,
} from "ai";
import { buildSync } from "esbuild";
import { afterEach, describe, expect, it } from "vitest";
import { toUIMessageStreamResponse } from "../../../src/adapters/ai-sdk/index.js";
import { isToolLoopError, type Message, streamToolLoop, type ToolLoopResult } from "../../../src/index.js";
import { ScriptedProvider, type ScriptStep, toolCallResponse } from "../../../src/testing/index.js";
import { registryOf, waitingTool, weatherTool } from "../../helpers/adapter-fixtures.js";

const user: Message[] = [{ role: "user", content: "Weather in Paris?" }];

const script = (): ScriptStep[] => [
  {
    ...toolCallResponse({ id: "call_a", name: "get_weather", arguments: { city: "Paris" } }),
    streamParts: [
      { type: "tool-input-start", toolCallId: "call_a", toolName: "get_weather" },
      { type: "tool-input-delta", toolCallId: "call_a", delta: '{"city":"Paris"}' },
    ],
  },
  { content: "Sunny in Paris.", textDeltas: ["Sunny ", "in Paris."] },
];

/** Writes a fetch-style Response to a node:http response; a client that goes away cancels its body. */
async function send(response: Response, res: ServerResponse): Promise<void> {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  res.on("close", () => void reader.cancel().catch(() => {}));
  for (let next = await reader.read(); !next.done; next = await reader.read()) res.write(next.value);
  res.end();
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A node:http chat endpoint on 127.0.0.1 that runs `steps` for each request and serves the run's UI message stream. */
async function chatServer(steps: () => ScriptStep[], tools = registryOf(weatherTool)) {
  const runs: Array<Promise<ToolLoopResult>> = [];
  const server = createServer((req, res) => {
    const run = streamToolLoop({ provider: new ScriptedProvider(steps()), tools, maxIterations: 4 }, user);
    run.result.catch(() => {});
    runs.push(run.result);
    req.resume();
    void send(toUIMessageStreamResponse(run), res);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/api/chat`, runs };
}

const transportRequest = (abortSignal?: AbortSignal) => ({
  trigger: "submit-message" as const,
  chatId: "chat-1",
  messageId: undefined,
  messages: [{ id: "u1", role: "user" as const, parts: [{ type: "text" as const, text: "Weather in Paris?" }] }],
  abortSignal,
});

describe("toUIMessageStreamResponse", () => {
  it("has the AI SDK's headers, init's own headers winning, and its status", () => {
    const response = toUIMessageStreamResponse(
      streamToolLoop({ provider: new ScriptedProvider([]), maxIterations: 1 }, user),
      {
        status: 201,
        statusText: "Created",
        headers: { "cache-control": "no-store", "x-run": "1" },
      },
    );
    expect(response.status).toBe(201);
    expect(response.statusText).toBe("Created");
    expect(Object.fromEntries(response.headers)).toEqual({
      "content-type": "text/event-stream",
      "cache-control": "no-store",
      connection: "keep-alive",
      "x-vercel-ai-ui-message-stream": "v1",
      "x-accel-buffering": "no",
      "x-run": "1",
    });
    void response.body?.cancel();
  });

  it("frames each chunk as an SSE data event, ends with [DONE], and ai's parser validates every chunk", async () => {
    const run = streamToolLoop(
      { provider: new ScriptedProvider(script()), tools: registryOf(weatherTool), maxIterations: 4 },
      user,
    );
    const response = toUIMessageStreamResponse(run);
    const [forText, forParser] = (response.body as ReadableStream<Uint8Array>).tee();
    const text = await new Response(forText).text();
    const events = text.split("\n\n");
    expect(events.at(-1)).toBe("");
    expect(events.at(-2)).toBe("data: [DONE]");
    for (const event of events.slice(0, -2)) expect(event).toMatch(/^data: \{.*\}$/);
    const parsed: unknown[] = [];
    for await (const result of parseJsonEventStream({ stream: forParser, schema: uiMessageChunkSchema })) {
      expect(result.success).toBe(true);
      if (result.success) parsed.push(result.value);
    }
    expect(parsed).toEqual(events.slice(0, -2).map((event) => JSON.parse(event.slice("data: ".length))));
    expect(parsed.at(-1)).toEqual({ type: "finish" });
  });

  it("served over node:http, useChat's DefaultChatTransport reads the whole message", async () => {
    const { url, runs } = await chatServer(script);
    const transport = new DefaultChatTransport<UIMessage>({ api: url });
    const stream = await transport.sendMessages(transportRequest());
    let message: UIMessage | undefined;
    for await (const state of readUIMessageStream({ stream })) message = state;
    expect(message?.parts).toMatchObject([
      { type: "step-start" },
      { type: "tool-get_weather", toolCallId: "call_a", state: "output-available", output: "sunny in Paris" },
      { type: "step-start" },
      { type: "text", text: "Sunny in Paris.", state: "done" },
    ]);
    await expect(runs[0]).resolves.toMatchObject({ content: "Sunny in Paris.", stopReason: "completed" });
  });

  it("a client that goes away aborts the run on the server", async () => {
    const { waits, started: toolStarted } = waitingTool();
    const { url, runs } = await chatServer(() => [toolCallResponse({ id: "w", name: "waits" })], registryOf(waits));
    const controller = new AbortController();
    const stream = await new DefaultChatTransport<UIMessage>({ api: url }).sendMessages(
      transportRequest(controller.signal),
    );
    const reading = (async () => {
      for await (const _chunk of stream);
    })();
    await toolStarted;
    controller.abort();
    await reading.catch(() => {});
    const failure = await (runs[0] as Promise<ToolLoopResult>).catch((error: unknown) => error);
    expect(isToolLoopError(failure) && failure.code).toBe("aborted");
  });

  it("loads nothing of ai or @ai-sdk/* at run time (their types only)", () => {
    const entry = fileURLToPath(new URL("../../../src/adapters/ai-sdk/index.ts", import.meta.url));
    const { metafile } = buildSync({
      entryPoints: [entry],
      bundle: true,
      write: false,
      format: "esm",
      platform: "node",
      packages: "external",
      metafile: true,
      logLevel: "silent",
    });
    const imports = Object.values(metafile.outputs).flatMap((output) => output.imports.map((i) => i.path));
    expect(imports.filter((path) => path === "ai" || path.startsWith("ai/") || path.startsWith("@ai-sdk/"))).toEqual(
      [],
    );
    // The bundle holds the files that name ai's types (the check is not vacuous).
    expect(Object.keys(metafile.inputs)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/ui-message-stream\.ts$/),
        expect.stringMatching(/convert-ai-sdk-stream\.ts$/),
      ]),
    );
  });
});
