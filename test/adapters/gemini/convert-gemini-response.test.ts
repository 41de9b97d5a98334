import { describe, expect, it } from "vitest";
import { fromGeminiResponse } from "../../../src/adapters/gemini/convert-gemini-response.js";
import { isInvalidProviderResponseError } from "../../../src/index.js";

type Json = Record<string, unknown>;

const candidate = (parts: Json[], finishReason = "STOP"): Json => ({
  candidates: [{ content: { role: "model", parts }, finishReason }],
});

describe("fromGeminiResponse", () => {
  it("joins the text parts but not thought summaries, and makes ids from the responseId for calls without one", () => {
    const response = {
      ...candidate([
        { text: "thinking…", thought: true },
        { text: "Let me " },
        { text: "check." },
        { functionCall: { name: "weather", args: { city: "Paris" } }, thoughtSignature: "sig" },
        { functionCall: { id: "given", name: "time" } },
      ]),
      responseId: "resp7",
      usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 2, thoughtsTokenCount: 3, totalTokenCount: 9 },
    };
    expect(fromGeminiResponse({ response, sequence: 1 })).toEqual({
      content: "Let me check.",
      toolCalls: [
        {
          id: "gemini_resp7_0",
          type: "function",
          name: "weather",
          arguments: { city: "Paris" },
          providerMetadata: { gemini: { thoughtSignature: "sig" } },
        },
        { id: "given", type: "function", name: "time", arguments: {}, providerMetadata: { gemini: { id: "given" } } },
      ],
      finishReason: "tool_calls",
      usage: { promptTokens: 4, completionTokens: 5, totalTokens: 9, reasoningTokens: 3 },
    });
  });

  it("numbers the calls of a response without responseId by the sequence it is given", () => {
    const response = candidate([{ functionCall: { name: "a" } }, { functionCall: { name: "b" } }]);
    expect(fromGeminiResponse({ response, sequence: 4 }).toolCalls.map((call) => call.id)).toEqual([
      "gemini_4_0",
      "gemini_4_1",
    ]);
  });

  it.each<[string, Json, string]>([
    ["STOP", candidate([{ text: "x" }]), "stop"],
    ["MAX_TOKENS", candidate([{ text: "x" }], "MAX_TOKENS"), "length"],
    ["SAFETY", candidate([], "SAFETY"), "content_filter"],
    ["IMAGE_PROHIBITED_CONTENT", candidate([], "IMAGE_PROHIBITED_CONTENT"), "content_filter"],
    ["OTHER passed through", candidate([], "OTHER"), "OTHER"],
    ["a blocked prompt", { promptFeedback: { blockReason: "SAFETY" } }, "content_filter"],
  ])("maps %s", (_name, response, finishReason) => {
    expect(fromGeminiResponse({ response, sequence: 1 }).finishReason).toBe(finishReason);
  });

  it.each<[string, unknown, RegExp]>([
    ["not an object", "text", /^Gemini: the response is not an object \(got string\)$/],
    ["no candidate", {}, /^Gemini: the response has no candidate \(candidates: undefined\)$/],
    [
      "a malformed call",
      { candidates: [{ finishReason: "MALFORMED_FUNCTION_CALL", finishMessage: "bad" }] },
      /^Gemini: the model gave no usable answer \(finishReason MALFORMED_FUNCTION_CALL: bad\)$/,
    ],
    ["a nameless call", candidate([{ functionCall: { args: {} } }]), /^Gemini: a functionCall part has no name/],
  ])("refuses %s", (_name, response, message) => {
    let caught: unknown;
    try {
      fromGeminiResponse({ response, sequence: 1 });
    } catch (error) {
      caught = error;
    }
    expect(isInvalidProviderResponseError(caught)).toBe(true);
    expect((caught as Error).message).toMatch(message);
  });
});
