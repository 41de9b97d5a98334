import { describe, expect, it } from "vitest";
import {
  contentPartBytes,
  contentPartsProblem,
  MAX_CONTENT_PARTS,
  MAX_RESULT_PARTS,
  resultPartsProblem,
} from "../src/content-part.js";
import { type ContentPart, contentText } from "../src/index.js";

const PNG = "iVBORw0KGgo=";

describe("contentPartsProblem: the shapes of a part", () => {
  it.each<[string, ContentPart]>([
    ["text", { type: "text", text: "hello" }],
    ["empty text", { type: "text", text: "" }],
    ["a base64 PNG", { type: "image", mediaType: "image/png", data: PNG }],
    ["a base64 JPEG", { type: "image", mediaType: "image/jpeg", data: "/9j/4AAQ" }],
    ["a GIF", { type: "image", mediaType: "image/gif", data: "R0lGODlh" }],
    ["a WebP", { type: "image", mediaType: "image/webp", data: "UklGRg==" }],
    ["an https image URL", { type: "image", url: "https://example.com/cat.png" }],
    ["an http image URL with a media type", { type: "image", url: "http://example.com/a", mediaType: "image/png" }],
    ["a gs: URL", { type: "image", url: "gs://bucket/cat.png" }],
    ["a PDF", { type: "file", mediaType: "application/pdf", data: "JVBERi0=", filename: "report.pdf" }],
    ["audio as a file", { type: "file", mediaType: "audio/wav", data: "UklGRg==" }],
    ["a vendor type", { type: "file", mediaType: "application/vnd.ms-excel+xml", data: "" }],
  ])("accepts %s", (_name, part) => {
    expect(contentPartsProblem([part])).toBeUndefined();
  });

  it.each<[string, unknown, string]>([
    ["a string", "text", "[0] must be a content part object, got string"],
    ["null", null, "[0] must be a content part object, got null"],
    ["an array", [], "[0] must be a content part object, got array"],
    ["a class instance", new Date(0), "[0] must be a content part object, got Date"],
    ["an unknown type", { type: "video", data: PNG }, '[0] type must be "text", "image" or "file"'],
    ["no type", { text: "x" }, '[0] type must be "text", "image" or "file"'],
    ["text that is not a string", { type: "text", text: 3 }, "[0] text must be a string, got number"],
    ["an unknown key", { type: "text", text: "x", extra: 1 }, '[0] has an unknown key "extra"'],
    [
      "an image type not in the list",
      { type: "image", mediaType: "image/svg+xml", data: PNG },
      "[0] an image's mediaType must be image/png, image/jpeg, image/gif or image/webp",
    ],
    [
      "an image URL with a bad media type",
      { type: "image", url: "https://example.com/a", mediaType: "image/bmp" },
      "[0] an image's mediaType must be image/png, image/jpeg, image/gif or image/webp",
    ],
    [
      "a data: prefix",
      { type: "image", mediaType: "image/png", data: `data:image/png;base64,${PNG}` },
      "[0] data must be base64 without a data: prefix",
    ],
    [
      "data that is not base64",
      { type: "image", mediaType: "image/png", data: "not base64!" },
      "[0] data is not base64",
    ],
    [
      "base64 without padding",
      { type: "image", mediaType: "image/png", data: "iVBORw0KGgo" },
      "[0] data is not base64",
    ],
    [
      "padding in the middle",
      { type: "image", mediaType: "image/png", data: "iV=ORw0KGgo=" },
      "[0] data is not base64",
    ],
    [
      "base64 with a line break",
      { type: "file", mediaType: "application/pdf", data: "JVBE\r\nRi0=" },
      "[0] data is not base64",
    ],
    [
      "data that is not a string",
      { type: "file", mediaType: "application/pdf", data: 1 },
      "[0] data must be a base64 string, got number",
    ],
    [
      "a media type with CRLF",
      { type: "file", mediaType: "application/pdf\r\nX-Injected: 1", data: "" },
      "[0] a file's mediaType must be a type/subtype token of at most 255 characters",
    ],
    [
      "a media type with a space",
      { type: "file", mediaType: "text/plain; charset=utf-8", data: "" },
      "[0] a file's mediaType must be a type/subtype token of at most 255 characters",
    ],
    [
      "a media type of 256 characters",
      { type: "file", mediaType: `application/${"x".repeat(244)}`, data: "" },
      "[0] a file's mediaType must be a type/subtype token of at most 255 characters",
    ],
    [
      "a media type that is not a string",
      { type: "file", mediaType: 7, data: "" },
      "[0] mediaType must be a string, got number",
    ],
    [
      "a file: URL",
      { type: "image", url: "file:///etc/passwd" },
      "[0] url must be an http:, https: or gs: URL of at most 8,192 characters",
    ],
    [
      "a javascript: URL",
      { type: "image", url: "javascript:alert(1)" },
      "[0] url must be an http:, https: or gs: URL of at most 8,192 characters",
    ],
    [
      "a URL with a line break",
      { type: "image", url: "https://example.com/\r\nHost: evil" },
      "[0] url must be an http:, https: or gs: URL of at most 8,192 characters",
    ],
    [
      "a URL of 8,193 characters",
      { type: "image", url: `https://example.com/${"a".repeat(8_173)}` },
      "[0] url must be an http:, https: or gs: URL of at most 8,192 characters",
    ],
    [
      "a file with a URL",
      { type: "file", url: "https://example.com/a.pdf", mediaType: "application/pdf" },
      '[0] has an unknown key "url"',
    ],
    [
      "a filename with a line break",
      { type: "file", mediaType: "application/pdf", data: "", filename: "a\nb.pdf" },
      "[0] filename must be 1 to 255 characters without control characters",
    ],
    [
      "an empty filename",
      { type: "file", mediaType: "application/pdf", data: "", filename: "" },
      "[0] filename must be 1 to 255 characters without control characters",
    ],
    [
      "a filename on an image",
      { type: "image", mediaType: "image/png", data: PNG, filename: "a.png" },
      '[0] has an unknown key "filename"',
    ],
  ])("refuses %s", (_name, part, problem) => {
    expect(contentPartsProblem([part])).toBe(problem);
  });

  it("names the index of the first bad part", () => {
    const parts = [
      { type: "text", text: "a" },
      { type: "text", text: "b" },
      { type: "image", mediaType: "image/png", data: "!" },
    ];
    expect(contentPartsProblem(parts)).toBe("[2] data is not base64");
  });

  it("refuses a __proto__ key (as JSON.parse makes it) and never touches Object.prototype", () => {
    const part = JSON.parse('{"type":"text","text":"x","__proto__":{"polluted":true}}') as unknown;
    expect(contentPartsProblem([part])).toBe('[0] has an unknown key "__proto__"');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("refuses a part whose prototype is not Object's (a __proto__ literal)", () => {
    const part = { __proto__: { type: "text", text: "inherited" } };
    expect(contentPartsProblem([part])).toBe("[0] must be a content part object, got Object");
  });

  it("quotes an unknown key cut to 40 characters", () => {
    const problem = contentPartsProblem([{ type: "text", text: "x", ["k".repeat(10_000)]: 1 }]) ?? "";
    expect(problem).toBe(`[0] has an unknown key "${"k".repeat(40)}"`);
  });

  it("textOnly refuses images and files (system and assistant messages)", () => {
    expect(contentPartsProblem([{ type: "text", text: "a" }], true)).toBeUndefined();
    expect(
      contentPartsProblem(
        [
          { type: "text", text: "a" },
          { type: "image", url: "https://a.example/b.png" },
        ],
        true,
      ),
    ).toBe("[1] must be a text part: only user and tool messages may hold images and files");
  });

  it(`allows ${MAX_CONTENT_PARTS} parts, not one more, without reading them`, () => {
    const parts = Array.from({ length: MAX_CONTENT_PARTS }, () => ({ type: "text", text: "x" }));
    expect(contentPartsProblem(parts)).toBeUndefined();
    let reads = 0;
    const many = new Proxy(new Array<unknown>(100_000).fill({ type: "text", text: "x" }), {
      get(target, key, receiver) {
        if (typeof key === "string" && /^\d+$/.test(key)) reads++;
        return Reflect.get(target, key, receiver);
      },
    });
    expect(contentPartsProblem(many)).toBe(" holds 100000 parts; at most 1000 are allowed");
    expect(reads).toBe(0);
  });

  it("checks megabytes of base64 and reports a bad character at their end", () => {
    const data = "A".repeat(8 * 1024 * 1024);
    expect(contentPartsProblem([{ type: "image", mediaType: "image/png", data }])).toBeUndefined();
    const bad = `${data.slice(4)}AA*=`;
    expect(contentPartsProblem([{ type: "image", mediaType: "image/png", data: bad }])).toBe("[0] data is not base64");
  });
});

describe("resultPartsProblem: a tool result's parts", () => {
  it.each<[unknown, string]>([
    ["x", " must be an array, got string"],
    [{ 0: { type: "text", text: "x" } }, " must be an array, got object"],
    [
      new Array(MAX_RESULT_PARTS + 1).fill({ type: "text", text: "x" }),
      ` holds ${MAX_RESULT_PARTS + 1} parts; at most ${MAX_RESULT_PARTS} are allowed`,
    ],
    [[{ type: "image", mediaType: "image/png", data: "%%%%" }], "[0] data is not base64"],
  ])("refuses %#", (parts, problem) => {
    expect(resultPartsProblem(parts)).toBe(problem);
  });

  it(`accepts ${MAX_RESULT_PARTS} parts: with its text, the tool message holds ${MAX_CONTENT_PARTS}`, () => {
    expect(resultPartsProblem(new Array(MAX_RESULT_PARTS).fill({ type: "text", text: "x" }))).toBeUndefined();
  });

  it("fills a snapshot with a copy of each part, checked as copied", () => {
    const part = { type: "image", mediaType: "image/png", data: PNG };
    const snapshot: ContentPart[] = [];
    expect(resultPartsProblem([part], snapshot)).toBeUndefined();
    expect(snapshot).toStrictEqual([part]);
    expect(snapshot[0]).not.toBe(part);
    const polluted = JSON.parse('{"type":"text","text":"x","__proto__":{"polluted":true}}') as unknown;
    expect(resultPartsProblem([polluted], [])).toBe('[0] has an unknown key "__proto__"');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("contentText", () => {
  it("is a string itself, or the text parts joined by a line break (images and files left out)", () => {
    expect(contentText("plain")).toBe("plain");
    expect(
      contentText([
        { type: "text", text: "a" },
        { type: "image", mediaType: "image/png", data: PNG },
        { type: "text", text: "b" },
      ]),
    ).toBe("a\nb");
    expect(contentText([])).toBe("");
    // A hand-made message (a middleware's, a custom provider's) may hold anything.
    expect(contentText(null as never)).toBe("");
    expect(contentText([null, { type: "text", text: "ok" }] as never)).toBe("ok");
  });
});

describe("contentPartBytes", () => {
  it.each<[ContentPart, number]>([
    [{ type: "text", text: "hello" }, 0],
    [{ type: "image", url: "https://example.com/a.png" }, 0],
    [{ type: "image", mediaType: "image/png", data: "" }, 0],
    [{ type: "image", mediaType: "image/png", data: "AAAA" }, 3],
    [{ type: "image", mediaType: "image/png", data: "AAA=" }, 2],
    [{ type: "file", mediaType: "application/pdf", data: "AA==" }, 1],
  ])("%j is %i bytes", (part, bytes) => {
    expect(contentPartBytes(part)).toBe(bytes);
  });

  it("counts the bytes Buffer decodes", () => {
    const bytes = Buffer.from(Array.from({ length: 1_001 }, (_, index) => index % 256));
    const data = bytes.toString("base64");
    expect(contentPartBytes({ type: "file", mediaType: "application/octet-stream", data })).toBe(1_001);
  });
});
