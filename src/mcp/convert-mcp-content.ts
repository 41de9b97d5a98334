import { failure } from "../execute-tool-call.js";
import { boundText, isRecord, jsonText, quoteName } from "../internal/describe.js";
import { newToolResult, type ToolResult } from "../tool-result.js";

/** Longest URI, MIME type or name of a server's content echoed in a description. */
const MAX_FIELD_CHARS = 200;

/** A server-sent string field for a description, bounded; `undefined` when it is not a non-empty string. */
function field(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? boundText(value, MAX_FIELD_CHARS) : undefined;
}

/** Bytes that base64 text decodes to (padding and whitespace ignored), without decoding it. */
function base64Bytes(data: unknown): number {
  if (typeof data !== "string") return 0;
  let length = 0;
  for (let index = 0; index < data.length; index++) {
    const code = data.charCodeAt(index);
    // Letters, digits, + / - _ count; `=` padding and whitespace do not.
    if (code !== 0x3d && code !== 0x20 && code !== 0x0a && code !== 0x0d && code !== 0x09) length++;
  }
  return Math.floor((length * 3) / 4);
}

/** `[image: image/png, 1234 bytes]`: what the model reads instead of binary data. */
function describeBinary(kind: string, mimeType: unknown, bytes: number, extra?: string): string {
  const parts = [extra, field(mimeType) ?? "unknown MIME type", `${bytes} bytes`].filter((part) => part !== undefined);
  return `[${kind}: ${parts.join(", ")}]`;
}

/** One content block as text, or `undefined` for a block without any (then it is left out). */
function blockText(block: unknown): { text: string; isText: boolean } | undefined {
  if (!isRecord(block)) return undefined;
  switch (block.type) {
    case "text":
      return typeof block.text === "string" ? { text: block.text, isText: true } : undefined;
    case "image":
    case "audio":
      return { text: describeBinary(block.type, block.mimeType, base64Bytes(block.data)), isText: false };
    case "resource": {
      const resource = isRecord(block.resource) ? block.resource : {};
      const uri = field(resource.uri);
      if (typeof resource.text === "string") {
        // Text is text: the model reads it, after what it is.
        const bytes = Buffer.byteLength(resource.text, "utf8");
        return { text: `${describeBinary("resource", resource.mimeType, bytes, uri)}\n${resource.text}`, isText: true };
      }
      return { text: describeBinary("resource", resource.mimeType, base64Bytes(resource.blob), uri), isText: false };
    }
    case "resource_link": {
      const parts = [field(block.uri), field(block.mimeType), field(block.name) && `name ${quoteName(block.name)}`];
      if (typeof block.size === "number" && Number.isFinite(block.size)) parts.push(`${block.size} bytes`);
      return { text: `[resource link: ${parts.filter(Boolean).join(", ")}]`, isText: false };
    }
    default:
      return { text: `[${field(block.type) ?? "unknown"} content]`, isText: false };
  }
}

/**
 * An MCP `tools/call` result (a `CallToolResult`) as the text the model reads: text blocks as they
 * are, images and audio by type, MIME type and decoded size (the base64 data is never inlined),
 * embedded resources by URI, MIME type and size (the text of a text resource follows), resource
 * links by URI, MIME type and name; blocks joined by newlines. `structuredContent` is added as
 * JSON when no block holds text. `(no content)` when there is nothing at all.
 */
export function mcpResultText(result: Record<string, unknown>): string {
  const parts: string[] = [];
  let hasText = false;
  if (Array.isArray(result.content)) {
    for (const block of result.content) {
      const converted = blockText(block);
      if (converted === undefined) continue;
      parts.push(converted.text);
      hasText ||= converted.isText;
    }
  }
  if (!hasText && result.structuredContent !== undefined) {
    const json = jsonText(result.structuredContent);
    if (json !== undefined) parts.push(json);
  }
  return parts.length > 0 ? parts.join("\n") : "(no content)";
}

/**
 * Turns the server's `tools/call` result, as it came (not checked against the SDK's schema: a block
 * of a type this version does not know is described, never a failure), into the registry's result:
 * `isError: true` becomes an error result (code `tool_failed`) with the server's text; anything else
 * a result with that text.
 * The MCP result itself is kept as `data`, for your code or a UI (images included); the model
 * never reads it.
 * @param toolName the registry name of the tool, for `err.toolName`
 */
export function convertMcpResult(toolName: string, serverName: string, result: unknown): ToolResult {
  if (!isRecord(result)) {
    return failure(toolName, "tool_failed", `MCP server ${quoteName(serverName)} answered with no result object`);
  }
  const text = mcpResultText(result);
  const converted = result.isError === true ? failure(toolName, "tool_failed", text) : newToolResult(text);
  return converted.withData(result);
}
