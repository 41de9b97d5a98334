import { describe, expect, it } from "vitest";
import { fromOllamaAnswer, OllamaStreamReader } from "../../../src/adapters/ollama/convert-ollama-response.js";
import { isInvalidProviderResponseError } from "../../../src/index.js";

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
