import { describe, expect, it } from "vitest";
import { toOpenAIChatMessages } from "../../../src/adapters/openai/index.js";
import { type ContentPart, isUnsupportedContentError, type Message } from "../../../src/index.js";

const png: ContentPart = { type: "image", mediaType: "image/png", data: "iVBORw0KGgo=" };
const pdf: ContentPart = { type: "file", mediaType: "application/pdf", data: "JVBERi0=", filename: "report.pdf" };

/** The error `toOpenAIChatMessages(messages)` throws. */
function thrown(messages: Message[]): unknown {
  try {
    toOpenAIChatMessages(messages);
  } catch (error) {
    return error;
  }
  throw new Error("nothing thrown");
}

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

  it("sends a user message's parts as text, image_url (data: URL or the URL as is), input_audio and file parts", () => {
    const wav: ContentPart = { type: "file", mediaType: "audio/wav", data: "UklGRg==" };
    const mp3: ContentPart = { type: "file", mediaType: "audio/mpeg", data: "SUQz" };
    const csv: ContentPart = { type: "file", mediaType: "text/csv", data: "YSxi" };
    expect(
      toOpenAIChatMessages([
        {
          role: "user",
          content: [
            { type: "text", text: "Look" },
            png,
            { type: "image", url: "https://x.test/a.jpg" },
            pdf,
            wav,
            mp3,
            csv,
          ],
        },
      ]),
    ).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "Look" },
          { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
          { type: "image_url", image_url: { url: "https://x.test/a.jpg" } },
          { type: "file", file: { file_data: "data:application/pdf;base64,JVBERi0=", filename: "report.pdf" } },
          { type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } },
          { type: "input_audio", input_audio: { data: "SUQz", format: "mp3" } },
          // A file without a name is named after its subtype: the API wants a filename with file_data.
          { type: "file", file: { file_data: "data:text/csv;base64,YSxi", filename: "file.csv" } },
        ],
      },
    ]);
  });

  it("keeps a string user message a string, and joins the text parts (by newlines) of system and assistant messages", () => {
    expect(
      toOpenAIChatMessages([
        {
          role: "system",
          content: [
            { type: "text", text: "S1" },
            { type: "text", text: "S2" },
          ],
        },
        { role: "user", content: "plain" },
        { role: "assistant", content: [{ type: "text", text: "A" }] },
      ]),
    ).toEqual([
      { role: "system", content: "S1\nS2" },
      { role: "user", content: "plain" },
      { role: "assistant", content: "A" },
    ]);
  });

  it("refuses audio other than WAV or MP3 and a gs:// image URL with UnsupportedContentError naming the message", () => {
    const ogg = thrown([
      { role: "user", content: "hi" },
      { role: "user", content: [{ type: "file", mediaType: "audio/ogg", data: "T2dn" }] },
    ]);
    expect(isUnsupportedContentError(ogg)).toBe(true);
    expect(ogg).toMatchObject({ provider: "openai", part: "file", messageIndex: 1 });
    expect((ogg as Error).message).toMatch(/audio\/wav or audio\/mpeg.*"audio\/ogg"/);
    expect(thrown([{ role: "user", content: [{ type: "image", url: "gs://bucket/a.png" }] }])).toMatchObject({
      code: "unsupported_content",
      provider: "openai",
      part: "image",
      messageIndex: 0,
    });
  });

  it("keeps tool messages text and sends a turn's tool media in one user message right after its last tool message", () => {
    const call = (id: string) => ({ id, name: "shot", arguments: {} });
    expect(
      toOpenAIChatMessages([
        { role: "user", content: "Take two screenshots" },
        { role: "assistant", content: "", toolCalls: [call("c1"), call("c2"), call("c3")] },
        { role: "tool", content: [{ type: "text", text: "first" }, png], toolCallId: "c1", toolName: "shot" },
        { role: "tool", content: "failed", toolCallId: "c2", toolName: "shot", isError: true },
        { role: "tool", content: [{ type: "text", text: "third" }, pdf], toolCallId: "c3", toolName: "shot" },
        { role: "assistant", content: "Done" },
      ]),
    ).toEqual([
      { role: "user", content: "Take two screenshots" },
      {
        role: "assistant",
        content: null,
        tool_calls: ["c1", "c2", "c3"].map((id) => ({
          id,
          type: "function",
          function: { name: "shot", arguments: "{}" },
        })),
      },
      { role: "tool", tool_call_id: "c1", content: "first" },
      { role: "tool", tool_call_id: "c2", content: "failed" },
      { role: "tool", tool_call_id: "c3", content: "third" },
      {
        role: "user",
        content: [
          { type: "text", text: "Returned by tool call c1 (shot):" },
          { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
          { type: "text", text: "Returned by tool call c3 (shot):" },
          { type: "file", file: { file_data: "data:application/pdf;base64,JVBERi0=", filename: "report.pdf" } },
        ],
      },
      { role: "assistant", content: "Done" },
    ]);
  });

  it("adds the media message at the end of a transcript that ends with tool answers, and none without media", () => {
    const out = toOpenAIChatMessages([
      { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "t", arguments: {} }] },
      { role: "tool", content: [{ type: "text", text: "r" }, png], toolCallId: "c1" },
    ]);
    expect(out.at(-1)).toEqual({
      role: "user",
      content: [
        { type: "text", text: "Returned by tool call c1:" },
        { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
      ],
    });
    expect(
      toOpenAIChatMessages([
        { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "t", arguments: {} }] },
        { role: "tool", content: [{ type: "text", text: "r" }], toolCallId: "c1" },
      ]),
    ).toHaveLength(2);
  });

  it("names the tool message whose part it cannot take", () => {
    const error = thrown([
      {
        role: "assistant",
        content: "",
        toolCalls: [
          { id: "c1", name: "t", arguments: {} },
          { id: "c2", name: "t", arguments: {} },
        ],
      },
      { role: "tool", content: [{ type: "text", text: "ok" }, png], toolCallId: "c1" },
      {
        role: "tool",
        content: [
          { type: "text", text: "x" },
          { type: "file", mediaType: "audio/flac", data: "ZkxhQw==" },
        ],
        toolCallId: "c2",
      },
    ]);
    expect(error).toMatchObject({ code: "unsupported_content", provider: "openai", part: "file", messageIndex: 2 });
  });
});
