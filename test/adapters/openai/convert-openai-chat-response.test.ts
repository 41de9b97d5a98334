import { describe, expect, it } from "vitest";
import { fromOpenAIChatCompletion } from "../../../src/adapters/openai/index.js";
import { readSample } from "../../helpers/replay-server.js";

type Json = Record<string, unknown>;

describe("fromOpenAIChatCompletion", () => {
  const completion = (message: Json, finish_reason: unknown, usage?: unknown) => ({
    choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason }],
    ...(usage === undefined ? {} : { usage }),
  });
  const call = { id: "call_1", type: "function", function: { name: "t", arguments: "{}" } };

  it.each<[string, unknown, string]>([
    ["a final answer", completion({ content: "Hi" }, "stop"), "stop"],
    ["a truncated answer", completion({ content: "Hi" }, "length"), "length"],
    ["a filtered answer", completion({ content: "" }, "content_filter"), "content_filter"],
    ["calls", completion({ content: null, tool_calls: [call] }, "tool_calls"), "tool_calls"],
    [
      "calls a compatible server reports as stop",
      completion({ content: null, tool_calls: [call] }, "stop"),
      "tool_calls",
    ],
    ["no finish_reason", completion({ content: "Hi" }, null), "stop"],
  ])("finishReason for %s", (_name, response, expected) => {
    expect(fromOpenAIChatCompletion(response).finishReason).toBe(expected);
  });

  it.each<[string, unknown, unknown]>([
    [
      "the API's counts",
      { prompt_tokens: 82, completion_tokens: 17, total_tokens: 99 },
      { promptTokens: 82, completionTokens: 17, totalTokens: 99 },
    ],
    [
      "the sum when total is missing",
      { prompt_tokens: 5, completion_tokens: 7 },
      { promptTokens: 5, completionTokens: 7, totalTokens: 12 },
    ],
    ["nothing when usage is absent", undefined, undefined],
    ["nothing when usage is null", null, undefined],
  ])("usage: %s", (_name, usage, expected) => {
    expect(fromOpenAIChatCompletion(completion({ content: "x" }, "stop", usage)).usage).toEqual(expected);
  });

  it("reads the official docs example: newline-formatted arguments stay raw text", () => {
    expect(fromOpenAIChatCompletion(readSample("openai-chat-response-tool-calls.json"))).toEqual({
      content: "",
      finishReason: "tool_calls",
      toolCalls: [
        {
          id: "call_abc123",
          type: "function",
          name: "get_current_weather",
          arguments: '{\n"location": "Boston, MA"\n}',
        },
      ],
      usage: { promptTokens: 82, completionTokens: 17, totalTokens: 99, reasoningTokens: 0 },
    });
  });

  it("shows a refusal as the content, and reads text given as content parts", () => {
    expect(
      fromOpenAIChatCompletion(completion({ content: null, refusal: "I can't help with that." }, "stop")).content,
    ).toBe("I can't help with that.");
    expect(
      fromOpenAIChatCompletion(
        completion(
          {
            content: [
              { type: "text", text: "a" },
              { type: "text", text: "b" },
            ],
          },
          "stop",
        ),
      ).content,
    ).toBe("ab");
  });

  it("passes arguments a compatible server sends as an object", () => {
    const response = completion(
      { tool_calls: [{ id: "c", type: "function", function: { name: "t", arguments: { a: 1 } } }] },
      "tool_calls",
    );
    expect(fromOpenAIChatCompletion(response).toolCalls).toEqual([
      { id: "c", type: "function", name: "t", arguments: { a: 1 } },
    ]);
  });

  it.each([
    ["no choices", { choices: [] }],
    ["not an object", "oops"],
    ["a choice without message", { choices: [{}] }],
  ])("throws a ToolloopBaseError for %s", (_name, response) => {
    expect(() => fromOpenAIChatCompletion(response)).toThrow(/no choice with a message/);
  });
});
