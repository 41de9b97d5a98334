import { describe, expect, it } from "vitest";
import { toAISDKPrompt } from "../../../src/adapters/ai-sdk/index.js";
import { isUnsupportedContentError, type Message } from "../../../src/index.js";

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

  const imageAnswer: Message[] = [
    { role: "assistant", content: "", toolCalls: [{ id: "a", name: "shot", arguments: {} }] },
    {
      role: "tool",
      content: [
        { type: "text", text: "Shot." },
        { type: "image", mediaType: "image/png", data: "iVBORw==" },
      ],
      toolCallId: "a",
    },
  ];

  it("gives a tool's image in the spec v3 shape by default (a model that names no version)", () => {
    expect(toAISDKPrompt(imageAnswer)[1]?.content).toEqual([
      {
        type: "tool-result",
        toolCallId: "a",
        toolName: "shot",
        output: {
          type: "content",
          value: [
            { type: "text", text: "Shot." },
            { type: "image-data", data: "iVBORw==", mediaType: "image/png" },
          ],
        },
      },
    ]);
  });

  it("refuses an image URL that URL cannot parse, naming the message", () => {
    let error: unknown;
    try {
      toAISDKPrompt([
        { role: "system", content: "Be brief." },
        { role: "user", content: [{ type: "image", url: "https://[x" }] },
      ]);
    } catch (caught) {
      error = caught;
    }
    expect(isUnsupportedContentError(error)).toBe(true);
    expect(error).toMatchObject({ provider: "ai-sdk", part: "image", messageIndex: 1 });
  });
});
