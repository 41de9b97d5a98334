import { describe, expect, it } from "vitest";
import { toAISDKPrompt } from "../../../src/adapters/ai-sdk/index.js";

describe("toAISDKPrompt", () => {
  it("finds a tool message's tool name from its call when the message has none, and leaves out empty assistant turns", () => {
    expect(
      toAISDKPrompt([
        { role: "assistant", content: "" },
        { role: "assistant", content: "", toolCalls: [{ id: "a", name: "lookup", arguments: {} }] },
        { role: "tool", content: "r", toolCallId: "a" },
      ]),
    ).toEqual([
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "a", toolName: "lookup", input: {} }] },
      {
        role: "tool",
        content: [{ type: "tool-result", toolCallId: "a", toolName: "lookup", output: { type: "text", value: "r" } }],
      },
    ]);
  });
});
