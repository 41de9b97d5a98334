import { describe, expect, it } from "vitest";
import {
  contentParts,
  dataUrl,
  toolAnswerParts,
  toolMediaMessage,
  unsupportedContent,
} from "../../../src/adapters/shared/content.js";
import type { ContentPart, Message } from "../../../src/index.js";
import { isUnsupportedContentError, UnsupportedContentError } from "../../../src/index.js";

const png: ContentPart = { type: "image", mediaType: "image/png", data: "iVBORw0KGgo=" };
const pdf: ContentPart = { type: "file", mediaType: "application/pdf", data: "JVBERi0=", filename: "a.pdf" };
const url: ContentPart = { type: "image", url: "https://example.com/a.png" };

describe("dataUrl", () => {
  it("puts the media type and the base64 data in a data: URL", () => {
    expect(dataUrl({ type: "image", mediaType: "image/png", data: "iVBORw0KGgo=" })).toBe(
      "data:image/png;base64,iVBORw0KGgo=",
    );
    expect(dataUrl({ type: "file", mediaType: "application/pdf", data: "JVBERi0=" })).toBe(
      "data:application/pdf;base64,JVBERi0=",
    );
  });
});

describe("contentParts", () => {
  it("makes a string one text part, an empty string none, and returns parts as they are", () => {
    expect(contentParts("hi")).toEqual([{ type: "text", text: "hi" }]);
    expect(contentParts("")).toEqual([]);
    const parts = [png];
    expect(contentParts(parts)).toBe(parts);
  });
});

describe("toolAnswerParts", () => {
  it("splits a tool message into its text (text parts joined by newlines) and its media, in order", () => {
    const message: Message = {
      role: "tool",
      content: [{ type: "text", text: "one" }, png, { type: "text", text: "two" }, pdf],
      toolCallId: "c1",
    };
    expect(toolAnswerParts(message)).toEqual({ text: "one\ntwo", media: [png, pdf] });
  });

  it("takes a string content as the text, with no media", () => {
    expect(toolAnswerParts({ role: "tool", content: "plain", toolCallId: "c1" })).toEqual({ text: "plain", media: [] });
  });
});

describe("toolMediaMessage", () => {
  it("gathers a turn's media, each answer's after a text part naming its call and tool", () => {
    const answers: Message[] = [
      { role: "tool", content: [{ type: "text", text: "chart" }, png], toolCallId: "c1", toolName: "chart" },
      { role: "tool", content: "no media", toolCallId: "c2", toolName: "echo" },
      { role: "tool", content: [{ type: "text", text: "doc" }, pdf, url], toolCallId: "c3" },
    ];
    expect(toolMediaMessage(answers)).toEqual([
      { type: "text", text: "Returned by tool call c1 (chart):" },
      png,
      { type: "text", text: "Returned by tool call c3:" },
      pdf,
      url,
    ]);
  });

  it("is undefined when no answer has media", () => {
    expect(toolMediaMessage([{ role: "tool", content: "x", toolCallId: "c1" }])).toBeUndefined();
    expect(toolMediaMessage([])).toBeUndefined();
  });
});

describe("unsupportedContent", () => {
  it("names the provider, the kind of part and the message index, with the reason", () => {
    const error = unsupportedContent("ollama", url, 3, "Ollama takes inline images only");
    expect(error).toBeInstanceOf(UnsupportedContentError);
    expect(isUnsupportedContentError(error)).toBe(true);
    expect(error).toMatchObject({ code: "unsupported_content", provider: "ollama", part: "image", messageIndex: 3 });
    expect(error.message).toBe("ollama cannot take an image URL in messages[3]: Ollama takes inline images only");
    expect(unsupportedContent("x", png, 0, "why").message).toBe("x cannot take an image in messages[0]: why");
    expect(unsupportedContent("x", pdf, 1, "why")).toMatchObject({
      part: "file",
      message: "x cannot take a file in messages[1]: why",
    });
  });
});
