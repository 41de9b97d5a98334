import { describe, expect, it } from "vitest";
import { toGeminiMessages } from "../../../src/adapters/gemini/convert-to-gemini-messages.js";
import {
  type ContentPart,
  isUnsupportedContentError,
  type Message,
  type UnsupportedContentError,
} from "../../../src/index.js";

const PNG = "iVBORw0KGgo=";
const PDF = "JVBERi0xLjQK";
const png: ContentPart = { type: "image", mediaType: "image/png", data: PNG };
const pdf: ContentPart = { type: "file", mediaType: "application/pdf", data: PDF, filename: "report.pdf" };
const audio: ContentPart = { type: "file", mediaType: "audio/mpeg", data: "SUQz" };
const imageUrl: ContentPart = { type: "image", url: "https://example.com/cat.webp", mediaType: "image/webp" };

/** One call and its answer holding `parts` after its text. */
function toolTurn(parts: ContentPart[], extra: Partial<Message> = {}): Message[] {
  return [
    { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "shot", arguments: {} }] },
    {
      role: "tool",
      content: [{ type: "text", text: "took it" }, ...parts],
      toolCallId: "c1",
      toolName: "shot",
      ...extra,
    },
  ];
}

function unsupported(run: () => unknown): UnsupportedContentError {
  let caught: unknown;
  try {
    run();
  } catch (error) {
    caught = error;
  }
  expect(isUnsupportedContentError(caught), String(caught)).toBe(true);
  return caught as UnsupportedContentError;
}

describe("toGeminiMessages", () => {
  it("keeps system texts apart and turns assistant calls into functionCall parts with their kept id and signature", () => {
    const messages: Message[] = [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Weather?" },
      {
        role: "assistant",
        content: "Looking.",
        toolCalls: [
          {
            id: "gemini_r_0",
            name: "weather",
            arguments: { city: "Paris" },
            providerMetadata: { gemini: { thoughtSignature: "sig" } },
          },
          { id: "call-2", name: "time", arguments: {}, providerMetadata: { gemini: { id: "call-2" } } },
        ],
      },
    ];
    expect(toGeminiMessages(messages)).toEqual({
      system: ["Be brief."],
      contents: [
        { role: "user", parts: [{ text: "Weather?" }] },
        {
          role: "model",
          parts: [
            { text: "Looking." },
            { functionCall: { name: "weather", args: { city: "Paris" } }, thoughtSignature: "sig" },
            { functionCall: { id: "call-2", name: "time", args: {} } },
          ],
        },
      ],
    });
  });

  it("puts a turn's answers in one user content, named as their calls, with the API's ids echoed", () => {
    const messages: Message[] = [
      {
        role: "assistant",
        content: "",
        toolCalls: [
          { id: "a", name: "weather", arguments: {} },
          { id: "b", name: "time", arguments: {}, providerMetadata: { gemini: { id: "b" } } },
        ],
      },
      { role: "tool", content: "sunny", toolCallId: "a", toolName: "other-name" },
      { role: "tool", content: "boom", toolCallId: "b", isError: true },
      { role: "tool", content: "orphan", toolCallId: "z", toolName: "lost" },
      { role: "user", content: "thanks" },
    ];
    expect(toGeminiMessages(messages).contents).toEqual([
      {
        role: "model",
        parts: [{ functionCall: { name: "weather", args: {} } }, { functionCall: { id: "b", name: "time", args: {} } }],
      },
      {
        role: "user",
        parts: [
          { functionResponse: { name: "weather", response: { output: "sunny" } } },
          { functionResponse: { id: "b", name: "time", response: { error: "boom" } } },
          { functionResponse: { name: "lost", response: { output: "orphan" } } },
        ],
      },
      { role: "user", parts: [{ text: "thanks" }] },
    ]);
  });

  it("pairs each answer of a large turn with its own call", () => {
    const calls = Array.from({ length: 2_000 }, (_, index) => ({ id: `c${index}`, name: `t${index}`, arguments: {} }));
    const answers: Message[] = calls.map((call) => ({ role: "tool", content: "ok", toolCallId: call.id }));
    const { contents } = toGeminiMessages([{ role: "assistant", content: "", toolCalls: calls }, ...answers.reverse()]);
    const names = contents[1]?.parts?.map((part) => part.functionResponse?.name);
    expect(names).toEqual(calls.map((call) => call.name).reverse());
  });

  it("sends a user message's parts in order: text, inlineData for base64 images and files, fileData for URLs", () => {
    const messages: Message[] = [
      { role: "user", content: [{ type: "text", text: "What is in these?" }, png, pdf, audio, imageUrl] },
    ];
    expect(toGeminiMessages(messages).contents).toEqual([
      {
        role: "user",
        parts: [
          { text: "What is in these?" },
          { inlineData: { mimeType: "image/png", data: PNG } },
          // Gemini has no filename field outside server-side tools: the name is not sent.
          { inlineData: { mimeType: "application/pdf", data: PDF } },
          { inlineData: { mimeType: "audio/mpeg", data: "SUQz" } },
          { fileData: { mimeType: "image/webp", fileUri: "https://example.com/cat.webp" } },
        ],
      },
    ]);
  });

  it("joins the text parts of system and assistant messages", () => {
    const messages: Message[] = [
      {
        role: "system",
        content: [
          { type: "text", text: "Be brief." },
          { type: "text", text: "Use metric." },
        ],
      },
      { role: "assistant", content: [{ type: "text", text: "Hello" }] },
      { role: "user", content: [] },
    ];
    expect(toGeminiMessages(messages)).toEqual({
      system: ["Be brief.\nUse metric."],
      contents: [
        { role: "model", parts: [{ text: "Hello" }] },
        { role: "user", parts: [{ text: "" }] },
      ],
    });
  });

  it("refuses a GIF and an image URL without mediaType before anything is sent, naming the message", () => {
    const gif = unsupported(() =>
      toGeminiMessages([
        { role: "user", content: "hi" },
        { role: "user", content: [{ type: "image", mediaType: "image/gif", data: "R0lGODlh" }] },
      ]),
    );
    expect(gif).toMatchObject({ code: "unsupported_content", provider: "gcp.gemini", part: "image", messageIndex: 1 });
    expect(gif.message).toContain("image/gif");

    const url = unsupported(() =>
      toGeminiMessages([{ role: "user", content: [{ type: "image", url: "https://example.com/x" }] }]),
    );
    expect(url).toMatchObject({ part: "image", messageIndex: 0 });
    expect(url.message).toContain("mediaType");

    // A tool's GIF is refused too, with the index of its tool message.
    const fromTool = unsupported(() =>
      toGeminiMessages(toolTurn([{ type: "image", mediaType: "image/gif", data: "R0lGODlh" }])),
    );
    expect(fromTool.messageIndex).toBe(1);
  });

  it("puts a tool's images and documents in its functionResponse.parts, each referred to from response.media", () => {
    const { contents } = toGeminiMessages(toolTurn([png, pdf]), { toolMedia: "function-response" });
    expect(contents[1]).toEqual({
      role: "user",
      parts: [
        {
          functionResponse: {
            name: "shot",
            response: { output: "took it", media: [{ $ref: "media_1" }, { $ref: "media_2" }] },
            parts: [
              { inlineData: { mimeType: "image/png", data: PNG, displayName: "media_1" } },
              { inlineData: { mimeType: "application/pdf", data: PDF, displayName: "media_2" } },
            ],
          },
        },
      ],
    });
    expect(contents).toHaveLength(2);
  });

  it("sends what a function response cannot hold in one user content after the turn's answers", () => {
    const messages: Message[] = [
      {
        role: "assistant",
        content: "",
        toolCalls: [
          { id: "c1", name: "shot", arguments: {} },
          { id: "c2", name: "listen", arguments: {} },
        ],
      },
      { role: "tool", content: [{ type: "text", text: "one" }, png, imageUrl], toolCallId: "c1", toolName: "shot" },
      {
        role: "tool",
        content: [{ type: "text", text: "two" }, audio],
        toolCallId: "c2",
        toolName: "listen",
        isError: true,
      },
      { role: "user", content: "go on" },
    ];
    const { contents } = toGeminiMessages(messages, { toolMedia: "function-response" });
    expect(contents.slice(1)).toEqual([
      {
        role: "user",
        parts: [
          {
            functionResponse: {
              name: "shot",
              response: { output: "one", media: [{ $ref: "media_1" }] },
              parts: [{ inlineData: { mimeType: "image/png", data: PNG, displayName: "media_1" } }],
            },
          },
          { functionResponse: { name: "listen", response: { error: "two" } } },
        ],
      },
      {
        role: "user",
        parts: [
          { text: "Returned by tool call c1 (shot):" },
          { fileData: { mimeType: "image/webp", fileUri: "https://example.com/cat.webp" } },
          { text: "Returned by tool call c2 (listen):" },
          { inlineData: { mimeType: "audio/mpeg", data: "SUQz" } },
        ],
      },
      { role: "user", parts: [{ text: "go on" }] },
    ]);
  });

  it('with toolMedia "user-message", sends every media part in the user content and the answers as text', () => {
    const { contents } = toGeminiMessages(toolTurn([png, pdf]), { toolMedia: "user-message" });
    expect(contents.slice(1)).toEqual([
      { role: "user", parts: [{ functionResponse: { name: "shot", response: { output: "took it" } } }] },
      {
        role: "user",
        parts: [
          { text: "Returned by tool call c1 (shot):" },
          { inlineData: { mimeType: "image/png", data: PNG } },
          { inlineData: { mimeType: "application/pdf", data: PDF } },
        ],
      },
    ]);
  });

  it("keeps the displayNames unique over the whole request", () => {
    const first = toolTurn([png]);
    const second: Message[] = [
      { role: "assistant", content: "", toolCalls: [{ id: "c2", name: "shot", arguments: {} }] },
      { role: "tool", content: [{ type: "text", text: "again" }, png], toolCallId: "c2", toolName: "shot" },
    ];
    const { contents } = toGeminiMessages([...first, ...second], { toolMedia: "function-response" });
    const names = contents
      .flatMap((content) => content.parts ?? [])
      .flatMap((part) => part.functionResponse?.parts ?? [])
      .map((part) => part.inlineData?.displayName);
    expect(names).toEqual(["media_1", "media_2"]);
  });

  it("echoes a hostile mediaType bounded in the refusal", () => {
    const mediaType = `image/${"x".repeat(100_000)}\r\nX-Evil: 1`;
    const error = unsupported(() =>
      toGeminiMessages([{ role: "user", content: [{ type: "image", mediaType, data: "AAAA" }] }]),
    );
    expect(error.message.length).toBeLessThan(1_000);
    expect(error.message).not.toContain("\r\n");
  });
});
