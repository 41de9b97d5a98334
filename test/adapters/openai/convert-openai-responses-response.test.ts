import { describe, expect, it } from "vitest";
import { fromOpenAIResponse } from "../../../src/adapters/openai/index.js";
import { readSample } from "../../helpers/replay-server.js";

type Json = Record<string, unknown>;

describe("fromOpenAIResponse", () => {
  const text = (value: string) => ({
    type: "message",
    role: "assistant",
    content: [{ type: "output_text", text: value }],
  });
  const call = { type: "function_call", call_id: "call_1", name: "t", arguments: "{}" };

  it.each<[string, Json, string]>([
    ["a completed answer", { status: "completed", output: [text("Hi")] }, "stop"],
    ["function calls", { status: "completed", output: [call] }, "tool_calls"],
    [
      "an answer cut at max_output_tokens",
      { status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, output: [text("Hi")] },
      "length",
    ],
    [
      "a filtered answer",
      { status: "incomplete", incomplete_details: { reason: "content_filter" }, output: [] },
      "content_filter",
    ],
    ["a response without status", { output: [text("Hi")] }, "stop"],
  ])("finishReason for %s", (_name, response, expected) => {
    expect(fromOpenAIResponse(response).finishReason).toBe(expected);
  });

  it("reads the official docs example: call_id is the id, arguments stay raw text, usage maps", () => {
    expect(fromOpenAIResponse(readSample("openai-responses-response-function-call.json"))).toEqual({
      content: "",
      finishReason: "tool_calls",
      toolCalls: [
        {
          id: "call_unLAR8MvFNptuiZK6K6HCy5k",
          type: "function",
          name: "get_current_weather",
          arguments: '{"location":"Boston, MA","unit":"celsius"}',
        },
      ],
      usage: { promptTokens: 291, completionTokens: 23, totalTokens: 314, reasoningTokens: 0 },
    });
  });

  it("joins the text of several parts and shows a refusal when there is no text", () => {
    expect(fromOpenAIResponse({ output: [text("a"), { type: "reasoning", summary: [] }, text("b")] }).content).toBe(
      "ab",
    );
    expect(
      fromOpenAIResponse({
        output: [{ type: "message", content: [{ type: "refusal", refusal: "I can't help with that." }] }],
      }).content,
    ).toBe("I can't help with that.");
  });

  it.each<[string, unknown, RegExp]>([
    [
      "a failed response",
      { status: "failed", error: { message: "server overloaded" }, output: [] },
      /failed: server overloaded/,
    ],
    ["a response without output", { status: "completed" }, /no output array/],
  ])("throws for %s", (_name, response, message) => {
    expect(() => fromOpenAIResponse(response)).toThrow(message);
  });
});
