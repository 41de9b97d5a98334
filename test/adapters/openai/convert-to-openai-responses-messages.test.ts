import { describe, expect, it } from "vitest";
import { toOpenAIResponsesInput } from "../../../src/adapters/openai/index.js";
import type { Message } from "../../../src/index.js";

describe("toOpenAIResponsesInput", () => {
  it("converts every role; calls without JSON text get their arguments serialised", () => {
    const messages: Message[] = [
      { role: "system", content: "S" },
      { role: "user", content: "U" },
      { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "a", arguments: { x: 1 } }] },
      { role: "tool", content: "r1", toolCallId: "c1", toolName: "a" },
      { role: "assistant", content: "done" },
    ];
    expect(toOpenAIResponsesInput(messages)).toEqual([
      { role: "system", content: "S" },
      { role: "user", content: "U" },
      { type: "function_call", call_id: "c1", name: "a", arguments: '{"x":1}' },
      { type: "function_call_output", call_id: "c1", output: "r1" },
      { role: "assistant", content: "done" },
    ]);
  });
});
