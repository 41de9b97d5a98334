import { describe, expect, it } from "vitest";
import { toOpenAIChatMessages } from "../../../src/adapters/openai/index.js";

describe("toOpenAIChatMessages", () => {
  it("converts every role, keeping call order and filling arguments for calls without their JSON text", () => {
    expect(
      toOpenAIChatMessages([
        { role: "system", content: "S" },
        { role: "user", content: "U" },
        { role: "assistant", content: "", toolCalls: [] },
        {
          role: "assistant",
          content: "A",
          toolCalls: [
            { id: "1", name: "a", arguments: { x: 1 } },
            { id: "2", name: "b", arguments: {}, function: { name: "b", arguments: "{}" } },
          ],
        },
        { role: "tool", content: "r1", toolCallId: "1", toolName: "a" },
        { role: "tool", content: "r2", toolCallId: "2", toolName: "b", isError: true },
      ]),
    ).toEqual([
      { role: "system", content: "S" },
      { role: "user", content: "U" },
      { role: "assistant", content: "" },
      {
        role: "assistant",
        content: "A",
        tool_calls: [
          { id: "1", type: "function", function: { name: "a", arguments: '{"x":1}' } },
          { id: "2", type: "function", function: { name: "b", arguments: "{}" } },
        ],
      },
      { role: "tool", tool_call_id: "1", content: "r1" },
      { role: "tool", tool_call_id: "2", content: "r2" },
    ]);
  });

  it("rejects an unknown role", () => {
    expect(() => toOpenAIChatMessages([{ role: "developer", content: "x" } as never])).toThrow(
      /unsupported message role "developer"/,
    );
  });
});
