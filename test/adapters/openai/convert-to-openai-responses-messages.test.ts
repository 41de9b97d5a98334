import { describe, expect, it } from "vitest";
import { toOpenAIResponsesInput } from "../../../src/adapters/openai/index.js";
import { type ContentPart, isUnsupportedContentError, type Message } from "../../../src/index.js";

const png: ContentPart = { type: "image", mediaType: "image/png", data: "iVBORw0KGgo=" };
const pdf: ContentPart = { type: "file", mediaType: "application/pdf", data: "JVBERi0=", filename: "report.pdf" };

/** The error `toOpenAIResponsesInput(messages)` throws. */
function thrown(messages: Message[]): unknown {
  try {
    toOpenAIResponsesInput(messages);
  } catch (error) {
    return error;
  }
  throw new Error("nothing thrown");
}

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

  it("sends a user message's parts as input_text, input_image (data: URL or the URL) and input_file", () => {
    expect(
      toOpenAIResponsesInput([
        {
          role: "user",
          content: [
            { type: "text", text: "Look" },
            png,
            { type: "image", url: "https://x.test/a.jpg" },
            pdf,
            { type: "file", mediaType: "text/plain", data: "aGk=" },
          ],
        },
      ]),
    ).toEqual([
      {
        role: "user",
        content: [
          { type: "input_text", text: "Look" },
          { type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgo=", detail: "auto" },
          { type: "input_image", image_url: "https://x.test/a.jpg", detail: "auto" },
          { type: "input_file", file_data: "data:application/pdf;base64,JVBERi0=", filename: "report.pdf" },
          { type: "input_file", file_data: "data:text/plain;base64,aGk=", filename: "file.plain" },
        ],
      },
    ]);
  });

  it("sends a tool's media in its function_call_output: output is its text as input_text, then the parts", () => {
    expect(
      toOpenAIResponsesInput([
        {
          role: "assistant",
          content: "",
          toolCalls: [
            { id: "c1", name: "shot", arguments: {} },
            { id: "c2", name: "shot", arguments: {} },
          ],
        },
        { role: "tool", content: [{ type: "text", text: "the chart" }, png, pdf], toolCallId: "c1", toolName: "shot" },
        { role: "tool", content: "text only", toolCallId: "c2", toolName: "shot" },
      ]).slice(2),
    ).toEqual([
      {
        type: "function_call_output",
        call_id: "c1",
        output: [
          { type: "input_text", text: "the chart" },
          { type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgo=", detail: "auto" },
          { type: "input_file", file_data: "data:application/pdf;base64,JVBERi0=", filename: "report.pdf" },
        ],
      },
      { type: "function_call_output", call_id: "c2", output: "text only" },
    ]);
  });

  it("refuses audio (the Responses API has no audio input) and a gs:// URL, naming the message", () => {
    const audio = thrown([
      { role: "user", content: "hi" },
      { role: "user", content: [{ type: "file", mediaType: "audio/wav", data: "UklGRg==" }] },
    ]);
    expect(isUnsupportedContentError(audio)).toBe(true);
    expect(audio).toMatchObject({ provider: "openai", part: "file", messageIndex: 1 });
    expect((audio as Error).message).toMatch(/no audio input/);
    expect(
      thrown([
        { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "t", arguments: {} }] },
        {
          role: "tool",
          content: [
            { type: "text", text: "x" },
            { type: "image", url: "gs://b/a.png" },
          ],
          toolCallId: "c1",
        },
      ]),
    ).toMatchObject({ code: "unsupported_content", provider: "openai", part: "image", messageIndex: 1 });
  });
});
