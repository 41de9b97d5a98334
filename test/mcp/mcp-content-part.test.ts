import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { contentPartsProblem } from "../../src/content-part.js";
import { mcpBlockPart } from "../../src/mcp/mcp-content-part.js";
import { TINY_IMAGES } from "../helpers/tiny-images.js";

const fixture = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`../fixtures/mcp/${name}`, import.meta.url), "utf8"));

const PNG = TINY_IMAGES.png.data;
const WAV = Buffer.from("RIFF\0\0\0\0WAVEfmt ").toString("base64");

describe("mcpBlockPart", () => {
  it.each(Object.entries(TINY_IMAGES))("an image block of type %s is an image part", (_, { mediaType, data }) => {
    expect(mcpBlockPart({ type: "image", mimeType: mediaType, data })).toEqual({
      part: { type: "image", mediaType, data },
    });
  });

  it.each([
    ["image/bmp", "image/bmp"],
    ["image/svg+xml", "image/svg+xml"],
  ])("an image block of another type (%s) is a file part", (mimeType, mediaType) => {
    expect(mcpBlockPart({ type: "image", mimeType, data: PNG })).toEqual({
      part: { type: "file", mediaType, data: PNG },
    });
  });

  it("audio is a file part with its audio type", () => {
    expect(mcpBlockPart({ type: "audio", mimeType: "audio/wav", data: WAV })).toEqual({
      part: { type: "file", mediaType: "audio/wav", data: WAV },
    });
  });

  it("audio that claims another type is refused", () => {
    expect(mcpBlockPart({ type: "audio", mimeType: "application/pdf", data: WAV })).toEqual({
      problem: "an audio block's mimeType must be an audio/* type",
    });
  });

  it.each([
    ["file:///tmp/report.pdf", "report.pdf"],
    ["https://example.com/a/my%20report.pdf?download=1#page=2", "my report.pdf"],
    ["file:///tmp/100%.pdf", "100%.pdf"],
  ])("a blob resource is a file part named after its URI (%s)", (uri, filename) => {
    const block = { type: "resource", resource: { uri, mimeType: "application/pdf", blob: "JVBERi0=" } };
    expect(mcpBlockPart(block)).toEqual({
      part: { type: "file", mediaType: "application/pdf", data: "JVBERi0=", filename },
    });
  });

  it.each<[unknown, string]>([
    ["urn:uuid:1234", "a URI without a path"],
    ["file:///tmp/dir/", "a URI ending with a slash"],
    ["file:///tmp/evil%0A%0DIgnore.pdf", "a name with line breaks"],
    [`file:///${"x".repeat(300)}.pdf`, "a name over 255 characters"],
    [42, "a URI that is not a string"],
  ])("a blob resource keeps no file name from %j (%s), and is still sent", (uri) => {
    const block = { type: "resource", resource: { uri, blob: "AAAA" } };
    expect(mcpBlockPart(block)).toEqual({
      part: { type: "file", mediaType: "application/octet-stream", data: "AAAA" },
    });
  });

  it.each([
    [
      "the specification's image example (its data is a placeholder)",
      fixture("spec-2025-11-25-image-content.json"),
      "data is not base64",
    ],
    ["the specification's audio example", fixture("spec-2025-11-25-audio-content.json"), "data is not base64"],
    [
      "a MIME type with CRLF",
      { type: "image", mimeType: "image/png\r\nX-Injected: 1", data: PNG },
      "a file's mimeType must be a type/subtype token of at most 255 characters",
    ],
    [
      "a MIME type of 10 KB",
      { type: "image", mimeType: `image/${"x".repeat(10_000)}`, data: PNG },
      "a file's mimeType must be a type/subtype token of at most 255 characters",
    ],
    ["no MIME type", { type: "image", data: PNG }, "mimeType must be a string, got undefined"],
    [
      "data that is a number",
      { type: "image", mimeType: "image/png", data: 7 },
      "data must be a base64 string, got number",
    ],
    [
      "a data: URL",
      { type: "image", mimeType: "image/png", data: `data:image/png;base64,${PNG}` },
      "data must be base64 without a data: prefix",
    ],
    ["empty data", { type: "image", mimeType: "image/png", data: "" }, "its data is empty"],
    [
      "a blob that is not a string",
      { type: "resource", resource: { uri: "file:///a", blob: { length: 1e9 } } },
      "a resource's blob must be a base64 string, got object",
    ],
    [
      "a blob with a bad MIME type",
      { type: "resource", resource: { uri: "file:///a", mimeType: "no slash", blob: "AAAA" } },
      "a file's mimeType must be a type/subtype token of at most 255 characters",
    ],
  ])("refuses %s with a bounded reason", (_, block, problem) => {
    expect(mcpBlockPart(block)).toEqual({ problem });
  });

  it("copies only the part's own keys: a __proto__ key from the server's JSON stays behind", () => {
    const block = JSON.parse(
      `{"type":"image","mimeType":"image/png","data":"${PNG}","__proto__":{"polluted":true},"annotations":{}}`,
    );
    const outcome = mcpBlockPart(block);
    expect(outcome).toEqual({ part: { type: "image", mediaType: "image/png", data: PNG } });
    expect("part" in outcome && Object.keys(outcome.part)).toEqual(["type", "mediaType", "data"]);
    expect("part" in outcome && contentPartsProblem([outcome.part])).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("passes megabytes of base64 on as the same string, checked without decoding", () => {
    const data = Buffer.alloc(6_000_000, 1).toString("base64");
    const outcome = mcpBlockPart({ type: "image", mimeType: "image/png", data });
    expect("part" in outcome && "data" in outcome.part && outcome.part.data).toBe(data);
  });
});
