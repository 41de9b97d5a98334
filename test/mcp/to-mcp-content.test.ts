import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import type { ContentPart } from "../../src/content-part.js";
import { toMcpContent } from "../../src/mcp/to-mcp-content.js";

describe("toMcpContent", () => {
  it.each([
    ["https://example.com/a/b.png", "b.png"],
    ["https://example.com", "example.com"],
    ["https://example.com/dir/", "image"],
    ["gs://bucket/photos/cat.webp#x", "cat.webp"],
  ])("an image URL %s is a resource_link named %j", (url, name) => {
    expect(toMcpContent([{ type: "image", url }])).toEqual([{ type: "resource_link", uri: url, name }]);
  });

  it("an audio type in any case is audio", () => {
    expect(toMcpContent([{ type: "file", mediaType: "Audio/OGG", data: "AAAA" }])).toEqual([
      { type: "audio", data: "AAAA", mimeType: "Audio/OGG" },
    ]);
  });

  it("a file of an image type is a resource (only image parts are MCP images)", () => {
    expect(toMcpContent([{ type: "file", mediaType: "image/bmp", data: "Qk0=" }])).toEqual([
      { type: "resource", resource: { uri: "toolloop:///parts/0/", mimeType: "image/bmp", blob: "Qk0=" } },
    ]);
  });

  it("what it makes passes the SDK's CallToolResult schema", () => {
    const parts: ContentPart[] = [
      { type: "image", mediaType: "image/gif", data: "R0lGODlh" },
      { type: "image", url: "https://example.com/x.png" },
      { type: "file", mediaType: "audio/mpeg", data: "AAAA" },
      { type: "file", mediaType: "application/zip", data: "UEsDBA==", filename: "a/b?.zip" },
    ];
    const content = toMcpContent(parts);
    expect(CallToolResultSchema.safeParse({ content }).success).toBe(true);
    expect(content[3]).toMatchObject({ resource: { uri: "toolloop:///parts/3/a%2Fb%3F.zip" } });
  });

  it.each<[string, unknown]>([
    ["not an array", "oops"],
    ["over 1,000 parts", Array.from({ length: 1_001 }, () => ({ type: "text", text: "" }))],
  ])("parts %s are one bounded text block", (_, parts) => {
    const content = toMcpContent(parts as ContentPart[]);
    expect(content).toHaveLength(1);
    expect(content[0]).toMatchObject({
      type: "text",
      text: expect.stringMatching(/^\[the result's parts were not sent: /),
    });
  });
});
