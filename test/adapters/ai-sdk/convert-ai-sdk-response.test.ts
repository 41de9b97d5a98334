import { describe, expect, it } from "vitest";
import { fromAISDKResult, toAISDKPrompt } from "../../../src/adapters/ai-sdk/index.js";

type Json = Record<string, unknown>;

describe("fromAISDKResult", () => {
  const call = { type: "tool-call", toolCallId: "c", toolName: "t", input: "{}" };

  it.each<[unknown, Json[], string | undefined]>([
    ["tool-calls", [], "tool_calls"],
    [{ unified: "tool-calls", raw: "tool_use" }, [], "tool_calls"],
    ["stop", [call], "tool_calls"],
    ["stop", [], "stop"],
    [{ unified: "stop", raw: "end_turn" }, [], "stop"],
    ["length", [], "length"],
    [{ unified: "length", raw: "max_tokens" }, [], "length"],
    ["content-filter", [], "content_filter"],
    [{ unified: "content-filter", raw: "refusal" }, [], "content_filter"],
    // An error with nothing at all is refused (see "responses it cannot read"); with text, it is an answer.
    ["error", [{ type: "text", text: "partial" }], "error"],
    [{ unified: "other", raw: "pause_turn" }, [], "other"],
    ["unknown", [], "unknown"],
    [undefined, [], "stop"],
    [undefined, [call], "tool_calls"],
  ])("maps finish reason %j (content %j) to %s", (finishReason, content, expected) => {
    expect(fromAISDKResult({ content: content as never, finishReason: finishReason as never }).finishReason).toBe(
      expected,
    );
  });

  it.each<[string, unknown, unknown]>([
    [
      "v2 flat, with total",
      { inputTokens: 3, outputTokens: 4, totalTokens: 9 },
      { promptTokens: 3, completionTokens: 4, totalTokens: 9 },
    ],
    [
      "v2 flat, no total",
      { inputTokens: 3, outputTokens: 4, totalTokens: undefined },
      { promptTokens: 3, completionTokens: 4, totalTokens: 7 },
    ],
    [
      "v3 nested",
      { inputTokens: { total: 5 }, outputTokens: { total: 6 } },
      { promptTokens: 5, completionTokens: 6, totalTokens: 11 },
    ],
    [
      "v3 with unknown output",
      { inputTokens: { total: 5 }, outputTokens: { total: undefined } },
      { promptTokens: 5, completionTokens: 0, totalTokens: 5 },
    ],
    ["all unknown", { inputTokens: { total: undefined }, outputTokens: { total: undefined } }, undefined],
  ])("maps usage: %s", (_label, usage, expected) => {
    expect(fromAISDKResult({ content: [], usage: usage as never }).usage).toEqual(expected);
  });

  it.each<[string, unknown, unknown]>([
    ["JSON text (v2/v3)", '{"a":1}', '{"a":1}'],
    ["invalid JSON text, for the loop to report", "{oops", "{oops"],
    ["an empty string", "", ""],
    ["an object", { a: 1 }, { a: 1 }],
    ["absent", undefined, {}],
  ])("passes tool-call input that is %s on as arguments", (_label, input, expected) => {
    const { toolCalls } = fromAISDKResult({
      content: [{ type: "tool-call", toolCallId: "c", toolName: "t", input }] as never,
    });
    expect(toolCalls).toEqual([{ id: "c", type: "function", name: "t", arguments: expected }]);
  });

  it("keeps reasoning and provider metadata with prototype-named keys as own data, and replays them so (D02)", () => {
    const metadata = '{"openai":{"__proto__":{"polluted":1},"itemId":"x"}}';
    const result = JSON.parse(
      `{"content":[{"type":"reasoning","text":"…","providerMetadata":${metadata}},{"type":"tool-call","toolCallId":"c","toolName":"t","input":"{}","providerMetadata":${metadata}}],"finishReason":"tool-calls"}`,
    ) as Parameters<typeof fromAISDKResult>[0];

    const [call] = fromAISDKResult(result).toolCalls;
    const prompt = toAISDKPrompt([
      {
        role: "assistant",
        content: "",
        toolCalls: [{ id: "c", name: "t", arguments: {}, providerMetadata: call?.providerMetadata ?? {} }],
      },
    ]);
    const [reasoning, toolCall] = (prompt[0] as unknown as { content: Json[] }).content;
    for (const part of [reasoning, toolCall]) {
      expect(Object.getPrototypeOf(part)).toBe(Object.prototype);
      expect(JSON.stringify(part?.providerOptions)).toBe(metadata);
    }
    expect(({} as Json).polluted).toBeUndefined();
  });

  it("joins text parts and ignores sources, files and provider-executed calls", () => {
    const result = fromAISDKResult({
      content: [
        { type: "text", text: "a" },
        { type: "source", sourceType: "url", id: "s", url: "https://example.com" },
        { type: "tool-call", toolCallId: "x", toolName: "search", input: "{}", providerExecuted: true },
        { type: "text", text: "b" },
      ] as never,
      finishReason: "stop",
    });
    expect(result).toEqual({ content: "ab", toolCalls: [], finishReason: "stop" });
  });
});
