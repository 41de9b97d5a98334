import { describe, expect, it } from "vitest";
import { toLLMResponse } from "../../../src/adapters/shared/llm-response.js";

describe("toLLMResponse", () => {
  const call = { id: "c1", type: "function" as const, name: "t", arguments: "{}" };

  it("defaults the finish reason from the calls, and leaves out usage the API did not report", () => {
    expect(toLLMResponse({ content: "hi", toolCalls: [] })).toStrictEqual({
      content: "hi",
      toolCalls: [],
      finishReason: "stop",
    });
    expect(toLLMResponse({ content: "", toolCalls: [call], finishReason: undefined }).finishReason).toBe("tool_calls");
  });

  it("keeps the finish reason and usage it is given", () => {
    const usage = { promptTokens: 1, completionTokens: 2, totalTokens: 3 };
    expect(toLLMResponse({ content: "", toolCalls: [], finishReason: "length", usage })).toStrictEqual({
      content: "",
      toolCalls: [],
      finishReason: "length",
      usage,
    });
  });
});
