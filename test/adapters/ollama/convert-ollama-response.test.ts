import { describe, expect, it } from "vitest";
import { fromOllamaAnswer, OllamaStreamReader } from "../../../src/adapters/ollama/convert-ollama-response.js";
import { createOllamaProvider } from "../../../src/adapters/ollama/index.js";
import { isInvalidProviderResponseError } from "../../../src/index.js";
import { collectStream, countTextAssembly } from "../../helpers/stream-parts.js";

function read(...chunks: unknown[]) {
  const reader = new OllamaStreamReader();
  for (const chunk of chunks) reader.add(chunk);
  return reader.finish();
}

describe("OllamaStreamReader", () => {
  it("gathers the text and calls of the chunks, and keeps the final chunk", () => {
    const answer = read(
      { message: { content: "Let " }, done: false },
      {
        created_at: "2025-01-01T00:00:00Z",
        message: { content: "me.", tool_calls: [{ function: { name: "weather", arguments: { city: "Paris" } } }] },
        done: false,
      },
      { message: { content: "" }, done: true, done_reason: "stop", prompt_eval_count: 7, eval_count: 3 },
    );
    expect(answer).toEqual({
      content: "Let me.",
      calls: [{ function: { name: "weather", arguments: { city: "Paris" } } }],
      last: { message: { content: "" }, done: true, done_reason: "stop", prompt_eval_count: 7, eval_count: 3 },
      createdAt: "2025-01-01T00:00:00Z",
    });
  });

  it.each<[string, unknown[], RegExp]>([
    ["no chunk", [], /^Ollama: the stream ended without any chunk$/],
    ["no final chunk", [{ message: { content: "x" } }], /no chunk with done: true/],
    ["no message", [{ done: true }], /^Ollama: no chunk of the stream carries a message$/],
    ["a chunk that is not an object", ["x"], /a chunk of the stream is not an object \(got string\)/],
    ["a nameless call", [{ message: { tool_calls: [{ function: {} }] } }], /a tool call has no function name/],
  ])("refuses %s", (_name, chunks, message) => {
    let caught: unknown;
    try {
      read(...chunks);
    } catch (error) {
      caught = error;
    }
    expect(isInvalidProviderResponseError(caught)).toBe(true);
    expect((caught as Error).message).toMatch(message);
  });
});

describe("fromOllamaAnswer", () => {
  const answer = (calls: unknown[], last: Record<string, unknown> = { done: true, done_reason: "stop" }) => ({
    content: "",
    calls: calls as Array<{ id?: unknown; function: { name: string; arguments?: unknown } }>,
    last,
    createdAt: "t1",
  });

  it("makes stable ids for calls without one and keeps the server's ids", () => {
    const calls = [{ function: { name: "a", arguments: {} } }, { id: "call_9", function: { name: "b" } }];
    const first = fromOllamaAnswer({ answer: answer(calls), sequence: 1 });
    const again = fromOllamaAnswer({ answer: answer(calls), sequence: 2 });
    expect(first.toolCalls[0]?.id).toMatch(/^ollama_[0-9a-z]+_0$/);
    expect(again.toolCalls[0]?.id).toBe(first.toolCalls[0]?.id);
    expect(first.toolCalls[1]).toEqual({
      id: "call_9",
      type: "function",
      name: "b",
      arguments: {},
      providerMetadata: { ollama: { id: "call_9" } },
    });
    expect(first.finishReason).toBe("tool_calls");
  });

  it.each<[string | undefined, string]>([
    ["stop", "stop"],
    ["length", "length"],
    ["load", "stop"],
    [undefined, "stop"],
  ])("maps done_reason %j to %s", (doneReason, finishReason) => {
    expect(
      fromOllamaAnswer({ answer: answer([], { done: true, done_reason: doneReason }), sequence: 1 }).finishReason,
    ).toBe(finishReason);
  });

  it("reads usage from the final chunk's counts", () => {
    const last = { done: true, prompt_eval_count: 7, eval_count: 3 };
    expect(fromOllamaAnswer({ answer: answer([], last), sequence: 1 }).usage).toEqual({
      promptTokens: 7,
      completionTokens: 3,
      totalTokens: 10,
    });
    expect(fromOllamaAnswer({ answer: answer([]), sequence: 1 })).not.toHaveProperty("usage");
  });
});

describe("OllamaStreamReader deltas (what chatStream yields)", () => {
  it("returns each chunk's thinking, text and calls, the calls under the ids fromOllamaAnswer gives", () => {
    const reader = new OllamaStreamReader(3);
    const calls = [
      { function: { name: "a", arguments: { x: 1 } } },
      { id: "call_9", function: { name: "b" } },
      { function: { name: "c", arguments: "{broken" } },
    ];
    expect(reader.add({ message: { thinking: "hmm", content: "" } })).toEqual([
      { type: "reasoning-delta", delta: "hmm" },
    ]);
    const deltas = reader.add({ message: { content: "ok", tool_calls: calls } });
    reader.add({ message: { content: "" }, done: true });
    const response = fromOllamaAnswer({ answer: reader.finish(), sequence: 3 });
    const [a, b, c] = response.toolCalls.map((call) => call.id);
    expect(deltas).toEqual([
      { type: "text-delta", delta: "ok" },
      { type: "tool-input-start", toolCallId: a, toolName: "a" },
      { type: "tool-input-delta", toolCallId: a, delta: '{"x":1}' },
      { type: "tool-input-start", toolCallId: "call_9", toolName: "b" },
      { type: "tool-input-delta", toolCallId: "call_9", delta: "{}" },
      { type: "tool-input-start", toolCallId: c, toolName: "c" },
      { type: "tool-input-delta", toolCallId: c, delta: "{broken" },
    ]);
    expect(b).toBe("call_9");
    // No created_at: the ids come from the sequence, as in chat.
    expect(a).toBe(fromOllamaAnswer({ answer: { ...reader.finish(), createdAt: "" }, sequence: 3 }).toolCalls[0]?.id);
    expect(response.content).toBe("ok");
  });

  it("assembles a huge number of text deltas in linear time: each piece added once, the text joined once", async () => {
    const pieces = 20_000;
    function* chunks() {
      for (let index = 0; index < pieces; index++) yield { message: { content: "a" }, done: false };
      yield { message: { content: "" }, done: true, prompt_eval_count: 1, eval_count: pieces };
    }
    const client = {
      chat: async () => ({
        abort() {},
        async *[Symbol.asyncIterator]() {
          yield* chunks();
        },
      }),
    };
    const provider = createOllamaProvider({ client });
    const stream = provider.chatStream?.([{ role: "user", content: "hi" }], undefined, "llama3.2", {});
    if (stream === undefined) throw new Error("no chatStream");
    const { value, added, joinedChars } = await countTextAssembly(() => collectStream(stream));
    // Work, not time: N + 1 pieces (the last one empty), the text joined once; a join per delta
    // would copy about N²/2 = 2e8 characters.
    expect(added).toBe(pieces + 1);
    expect(joinedChars).toBe(pieces);
    expect(value.deltas).toHaveLength(pieces);
    expect(value.response.content).toHaveLength(pieces);
  });
});
