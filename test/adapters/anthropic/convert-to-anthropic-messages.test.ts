import { describe, expect, it } from "vitest";
import { toAnthropicMessages } from "../../../src/adapters/anthropic/index.js";
import type { Message } from "../../../src/index.js";

type Json = Record<string, unknown>;

describe("toAnthropicMessages", () => {
  const call = (id: string, args: Json = {}) => ({ id, name: "t", arguments: args });

  it.each<[string, Message[], unknown]>([
    [
      "merges consecutive user messages, tool_result blocks first even when text came before them",
      [
        { role: "user", content: "go" },
        { role: "assistant", content: "", toolCalls: [call("a"), call("b")] },
        { role: "tool", content: "A", toolCallId: "a" },
        { role: "user", content: "and hurry" },
        { role: "tool", content: "B", toolCallId: "b", isError: true },
      ],
      [
        { role: "user", content: "go" },
        {
          role: "assistant",
          content: [
            { type: "tool_use", id: "a", name: "t", input: {} },
            { type: "tool_use", id: "b", name: "t", input: {} },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "a", content: "A" },
            { type: "tool_result", tool_use_id: "b", content: "B", is_error: true },
            { type: "text", text: "and hurry" },
          ],
        },
      ],
    ],
    [
      "merges consecutive assistant messages and plain user texts",
      [
        { role: "user", content: "a" },
        { role: "user", content: "b" },
        { role: "assistant", content: "x" },
        { role: "assistant", content: "y", toolCalls: [call("c", { q: 1 })] },
      ],
      [
        {
          role: "user",
          content: [
            { type: "text", text: "a" },
            { type: "text", text: "b" },
          ],
        },
        {
          role: "assistant",
          content: [
            { type: "text", text: "x" },
            { type: "text", text: "y" },
            { type: "tool_use", id: "c", name: "t", input: { q: 1 } },
          ],
        },
      ],
    ],
    [
      "drops empty texts and leaves out empty tool content and a false is_error",
      [
        { role: "user", content: "" },
        { role: "user", content: "q" },
        { role: "assistant", content: "" },
        { role: "assistant", content: "", toolCalls: [call("d")] },
        { role: "tool", content: "", toolCallId: "d", isError: false },
      ],
      [
        { role: "user", content: "q" },
        { role: "assistant", content: [{ type: "tool_use", id: "d", name: "t", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "d" }] },
      ],
    ],
  ])("%s", (_label, messages, expected) => {
    expect(toAnthropicMessages(messages)).toEqual({ messages: expected });
  });

  it("hoists system messages from anywhere, joined by a blank line", () => {
    expect(
      toAnthropicMessages([
        { role: "system", content: "one" },
        { role: "user", content: "hi" },
        { role: "system", content: "two" },
      ]),
    ).toEqual({ system: "one\n\ntwo", messages: [{ role: "user", content: "hi" }] });
  });
});
