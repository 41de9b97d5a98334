/**
 * Workload 8: the cost of streaming a provider call through the loop, per delta, on one genuine
 * recorded stream (OpenAI Chat Completions, `test/fixtures/wire-samples/`). The official `openai`
 * client reads it from memory (a `fetch` that answers with the recorded SSE body: no socket), so
 * the three cases parse the same bytes the same way:
 *
 * - `client`: iterating the client's stream directly (the floor);
 * - `streamToolLoop`: one step of `streamToolLoop` over `createOpenAIChatProvider` with that
 *   client, every event taken (the stream's call answered by a tool that returns a string, then
 *   the cap reached);
 * - `toUIMessageStream`: the same run read as the AI SDK's UI message stream.
 *
 * The recorded stream is short; the `×N` cases (STREAM_REPEATS) replay it with its argument pieces
 * repeated N times (the same frames, so the per-delta work dominates).
 */
import { readFileSync } from "node:fs";
import OpenAI from "openai";
import { toUIMessageStream } from "../src/adapters/ai-sdk/index.js";
import { createOpenAIChatProvider } from "../src/adapters/openai/index.js";
import { streamToolLoop, ToolRegistry } from "../src/index.js";

/** The recorded stream and its source. */
const RECORDING = "test/fixtures/wire-samples/openai-chat-stream-tool-call.recorded.sse";

/** The recorded SSE body, its argument frames repeated `times` times (1: as recorded). */
export function recordedStream(times: number): { body: string; frames: number } {
  // Relative to the repository: run.ts starts the children there (this module runs bundled elsewhere).
  const events = readFileSync(RECORDING, "utf8")
    .split("\n\n")
    .filter((event) => event.startsWith("data: "));
  const isArgumentPiece = (event: string) => event.includes('"arguments":"') && !event.includes('"id":"call_');
  const first = events.findIndex(isArgumentPiece);
  const last = events.findLastIndex(isArgumentPiece);
  const pieces = events.slice(first, last + 1);
  const repeated = [
    ...events.slice(0, first),
    ...Array.from({ length: times }, () => pieces).flat(),
    ...events.slice(last + 1),
  ];
  return { body: `${repeated.join("\n\n")}\n\n`, frames: repeated.filter((event) => event !== "data: [DONE]").length };
}

/** An `openai` client whose every request is answered from memory with `body` (SSE). */
function replayingClient(body: string): OpenAI {
  return new OpenAI({
    apiKey: "bench",
    baseURL: "http://127.0.0.1:9/v1",
    maxRetries: 0,
    fetch: async () => new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } }),
  });
}

const REQUEST = {
  model: "gpt-4o",
  messages: [{ role: "user" as const, content: "What is the weather in Paris?" }],
};

/** The three cases on the recorded stream repeated `times` times, each checked once before timing. */
export async function streamCases(
  times: number,
): Promise<{ cases: Record<string, () => Promise<unknown>>; frames: number }> {
  const { body, frames } = recordedStream(times);
  const client = replayingClient(body);
  const provider = createOpenAIChatProvider({ client });
  const tools = new ToolRegistry();
  tools.register({
    name: "get_weather",
    description: "The weather in a city",
    parameters: { type: "object", properties: { location: { type: "string" } } },
    execute: () => "sunny",
  });
  const direct = async () => {
    let chunks = 0;
    const stream = await client.chat.completions.create({ ...REQUEST, stream: true });
    for await (const _chunk of stream) chunks++;
    return chunks;
  };
  const loop = async () => {
    let events = 0;
    const stream = streamToolLoop({ provider, tools, maxIterations: 1 }, [...REQUEST.messages]);
    for await (const _event of stream) events++;
    await stream.result;
    return events;
  };
  const ui = async () => {
    let chunks = 0;
    const reader = toUIMessageStream(
      streamToolLoop({ provider, tools, maxIterations: 1 }, [...REQUEST.messages]),
    ).getReader();
    for (;;) {
      const { done } = await reader.read();
      if (done) return chunks;
      chunks++;
    }
  };
  if ((await direct()) !== frames) throw new Error(`stream: the client read ${await direct()} chunks, not ${frames}`);
  // Each argument piece is a tool-input-delta event and chunk (adapters that stream tool input).
  if ((await loop()) < times) throw new Error("stream: the loop emitted fewer events than argument pieces");
  if ((await ui()) < times) throw new Error("stream: the UI stream had fewer chunks than argument pieces");
  return { cases: { client: direct, streamToolLoop: loop, toUIMessageStream: ui }, frames };
}
