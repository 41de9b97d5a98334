import { describe, expect, it } from "vitest";
import { isToolExecutionError } from "../../src/errors.js";
import { convertMcpResult, mcpResultText } from "../../src/mcp/convert-mcp-content.js";

const PNG_BASE64 = Buffer.alloc(1_000, 7).toString("base64");

describe("mcpResultText", () => {
  it.each([
    [
      "text blocks, joined by newlines",
      {
        content: [
          { type: "text", text: "one" },
          { type: "text", text: "two" },
        ],
      },
      "one\ntwo",
    ],
    [
      "an image, by MIME type and decoded size",
      { content: [{ type: "image", data: PNG_BASE64, mimeType: "image/png" }] },
      "[image: image/png, 1000 bytes]",
    ],
    [
      "audio",
      { content: [{ type: "audio", data: Buffer.alloc(10).toString("base64"), mimeType: "audio/wav" }] },
      "[audio: audio/wav, 10 bytes]",
    ],
    [
      "a blob resource",
      {
        content: [{ type: "resource", resource: { uri: "file:///a.bin", mimeType: "application/zip", blob: "AAAA" } }],
      },
      "[resource: file:///a.bin, application/zip, 3 bytes]",
    ],
    [
      "a text resource: described, then its text",
      { content: [{ type: "resource", resource: { uri: "file:///é.txt", mimeType: "text/plain", text: "héllo" } }] },
      "[resource: file:///é.txt, text/plain, 6 bytes]\nhéllo",
    ],
    [
      "a resource link",
      {
        content: [{ type: "resource_link", uri: "file:///r/1", name: "Resource 1", mimeType: "text/plain", size: 42 }],
      },
      '[resource link: file:///r/1, text/plain, name "Resource 1", 42 bytes]',
    ],
    ["an unknown block type", { content: [{ type: "hologram", data: "x" }] }, "[hologram content]"],
    [
      "structuredContent as JSON when no block holds text",
      { content: [], structuredContent: { temperature: 21, city: "Paris" } },
      '{"temperature":21,"city":"Paris"}',
    ],
    [
      "structuredContent left out when there is text",
      { content: [{ type: "text", text: "21 °C" }], structuredContent: { temperature: 21 } },
      "21 °C",
    ],
    [
      "structuredContent after a described image",
      { content: [{ type: "image", data: "", mimeType: "image/png" }], structuredContent: { ok: true } },
      '[image: image/png, 0 bytes]\n{"ok":true}',
    ],
    ["nothing at all", { content: [] }, "(no content)"],
    ["no content field", {}, "(no content)"],
    ["blocks that are not objects are skipped", { content: [null, 3, "x", { type: "text", text: "kept" }] }, "kept"],
    [
      "an image without a MIME type",
      { content: [{ type: "image", data: "AAAA" }] },
      "[image: unknown MIME type, 3 bytes]",
    ],
  ])("%s", (_, result, expected) => {
    expect(mcpResultText(result)).toBe(expected);
  });

  it("never inlines base64 data: a 3 MB image is one short line", () => {
    const data = Buffer.alloc(3_000_000, 1).toString("base64");
    const text = mcpResultText({
      content: [
        { type: "image", data, mimeType: "image/png" },
        { type: "resource", resource: { uri: "file:///big", blob: data } },
      ],
    });
    expect(text).toBe("[image: image/png, 3000000 bytes]\n[resource: file:///big, unknown MIME type, 3000000 bytes]");
  });

  it("bounds the server's URIs, MIME types and names in descriptions", () => {
    const huge = "x".repeat(100_000);
    const text = mcpResultText({
      content: [{ type: "resource_link", uri: huge, name: huge, mimeType: huge }, { type: huge }],
    });
    expect(text.length).toBeLessThan(1_000);
    expect(text).toMatch(/more characters cut/);
  });

  it("survives structuredContent with no JSON form", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(mcpResultText({ structuredContent: cyclic, content: [] })).toBe("(no content)");
  });
});

describe("convertMcpResult", () => {
  it("makes a result with the text and keeps the MCP result as data", () => {
    const mcp = { content: [{ type: "text", text: "3" }] };
    const result = convertMcpResult("mcp_s_add", "s", mcp);
    expect(result.isError).toBe(false);
    expect(result.forLLM).toBe("3");
    expect(result.data).toBe(mcp);
  });

  it("makes isError: true an error result with the server's text", () => {
    const result = convertMcpResult("mcp_s_add", "s", { isError: true, content: [{ type: "text", text: "bad a" }] });
    expect(result.isError).toBe(true);
    expect(result.forLLM).toBe("bad a");
    expect(isToolExecutionError(result.err) && result.err.code).toBe("tool_failed");
    expect(isToolExecutionError(result.err) && result.err.toolName).toBe("mcp_s_add");
  });

  it.each([null, "text", 42, []])("makes a non-object answer (%j) an error result naming the server", (answer) => {
    const result = convertMcpResult("mcp_s_add", "s", answer);
    expect(result.isError).toBe(true);
    expect(result.forLLM).toMatchInlineSnapshot(`"MCP server "s" answered with no result object"`);
  });
});
