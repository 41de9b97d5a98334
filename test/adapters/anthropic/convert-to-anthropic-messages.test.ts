import { describe, expect, it } from "vitest";
import { toAnthropicMessages } from "../../../src/adapters/anthropic/index.js";
import { isUnsupportedContentError, type Message } from "../../../src/index.js";

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

  describe("images and files", () => {
    const PNG = "iVBORw0KGgo=";
    const utf8 = (text: string) => btoa(String.fromCharCode(...new TextEncoder().encode(text)));

    it("keeps a user message's parts in order: text, image (base64 and URL), PDF, plain text with its title, an image sent as a file", () => {
      const { messages } = toAnthropicMessages([
        {
          role: "user",
          content: [
            { type: "text", text: "look" },
            { type: "image", mediaType: "image/png", data: PNG },
            { type: "text", text: "" },
            { type: "image", url: "HTTPS://example.com/a.webp" },
            { type: "file", mediaType: "Application/PDF", data: PNG },
            { type: "file", mediaType: "text/plain", data: utf8("naïve – ✓"), filename: "notes.txt" },
            { type: "file", mediaType: "image/gif", data: PNG, filename: "a.gif" },
          ],
        },
      ]);
      expect(messages).toEqual([
        {
          role: "user",
          content: [
            { type: "text", text: "look" },
            { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
            { type: "image", source: { type: "url", url: "HTTPS://example.com/a.webp" } },
            { type: "document", source: { type: "base64", media_type: "application/pdf", data: PNG } },
            {
              type: "document",
              source: { type: "text", media_type: "text/plain", data: "naïve – ✓" },
              title: "notes.txt",
            },
            { type: "image", source: { type: "base64", media_type: "image/gif", data: PNG } },
          ],
        },
      ]);
    });

    it("puts a tool's parts inside its tool_result after its text (none when empty), keeping is_error, results first", () => {
      const { messages } = toAnthropicMessages([
        { role: "user", content: "go" },
        { role: "assistant", content: "", toolCalls: [call("a"), call("b")] },
        { role: "tool", toolCallId: "a", content: [{ type: "image", mediaType: "image/png", data: PNG }] },
        { role: "user", content: [{ type: "text", text: "and this" }] },
        {
          role: "tool",
          toolCallId: "b",
          isError: true,
          content: [
            { type: "text", text: "failed; screenshot:" },
            { type: "image", mediaType: "image/jpeg", data: PNG },
          ],
        },
      ]);
      expect(messages.at(-1)).toEqual({
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "a",
            content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: PNG } }],
          },
          {
            type: "tool_result",
            tool_use_id: "b",
            is_error: true,
            content: [
              { type: "text", text: "failed; screenshot:" },
              { type: "image", source: { type: "base64", media_type: "image/jpeg", data: PNG } },
            ],
          },
          { type: "text", text: "and this" },
        ],
      });
    });

    it("sends system and assistant text parts as text", () => {
      expect(
        toAnthropicMessages([
          { role: "system", content: [{ type: "text", text: "be brief" }] },
          { role: "user", content: "hi" },
          { role: "assistant", content: [{ type: "text", text: "hello" }] },
        ]),
      ).toEqual({
        system: "be brief",
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: "hello" },
        ],
      });
    });

    it.each<[string, Message[], number, string]>([
      ["a gs: URL", [{ role: "user", content: [{ type: "image", url: "gs://b/a.png" }] }], 0, "http: and https:"],
      [
        "an audio file",
        [
          { role: "user", content: "hi" },
          { role: "user", content: [{ type: "file", mediaType: "audio/wav", data: PNG }] },
        ],
        1,
        '"audio/wav"',
      ],
      [
        "an image in a system message",
        [{ role: "system", content: [{ type: "image", mediaType: "image/png", data: PNG }] }],
        0,
        "a system message holds text only",
      ],
    ])("refuses %s with UnsupportedContentError naming the message", (_label, messages, messageIndex, why) => {
      const error = (() => {
        try {
          toAnthropicMessages(messages);
        } catch (caught) {
          return caught;
        }
        return undefined;
      })();
      expect(isUnsupportedContentError(error)).toBe(true);
      expect(error).toMatchObject({ provider: "anthropic", messageIndex });
      expect((error as Error).message).toContain(`messages[${messageIndex}]`);
      expect((error as Error).message).toContain(why);
    });

    it("bounds the media type it shows and never shows the data", () => {
      const data = "A".repeat(4_000);
      const mediaType = `application/${"x".repeat(250)}`;
      expect(() => toAnthropicMessages([{ role: "user", content: [{ type: "file", mediaType, data }] }])).toThrow(
        expect.objectContaining({ message: expect.not.stringContaining("AAAA") }),
      );
    });
  });
});
