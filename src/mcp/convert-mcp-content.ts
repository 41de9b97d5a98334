import { type ContentPart, MAX_CONTENT_PARTS } from "../content-part.js";
import { failure } from "../execute-tool-call.js";
import { boundText, isRecord, jsonText, quoteName } from "../internal/describe.js";
import { newToolResult, type ToolResult } from "../tool-result.js";
import { mcpBlockPart } from "./mcp-content-part.js";
import type { McpPartsOption } from "./register-mcp-tools-options.js";

/** Longest URI, MIME type or name of a server's content echoed in a description. */
const MAX_FIELD_CHARS = 200;
/** Most images and files one result passes on: its tool message holds them after its text part. */
const MAX_RESULT_PARTS = MAX_CONTENT_PARTS - 1;
/** Most blocks without text described one by one; the rest are counted in one line. */
const MAX_DESCRIBED_BLOCKS = 1_000;

/**
 * A server-sent string field for a description, bounded (and quoted when it holds control
 * characters: a line break in a MIME type never starts a line of its own); `undefined` when it is
 * not a non-empty string.
 */
function field(value: unknown): string | undefined {
  if (typeof value !== "string" || value === "") return undefined;
  const bounded = boundText(value, MAX_FIELD_CHARS);
  return /\p{Cc}/u.test(bounded) ? JSON.stringify(bounded) : bounded;
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

/** One block as the line the model reads. */
interface ConvertedBlock {
  text: string;
  isText: boolean;
  /** The block's data is binary: an image, audio or a blob. */
  media?: true;
}

/** One content block as text, or `undefined` for a block without any (then it is left out). */
function blockText(block: unknown): ConvertedBlock | undefined {
  if (!isRecord(block)) return undefined;
  switch (block.type) {
    case "text":
      return typeof block.text === "string" ? { text: block.text, isText: true } : undefined;
    case "image":
    case "audio":
      return { text: describeBinary(block.type, block.mimeType, base64Bytes(block.data)), isText: false, media: true };
    case "resource": {
      const resource = isRecord(block.resource) ? block.resource : {};
      const uri = field(resource.uri);
      if (typeof resource.text === "string") {
        // Text is text: the model reads it, after what it is.
        const bytes = Buffer.byteLength(resource.text, "utf8");
        return { text: `${describeBinary("resource", resource.mimeType, bytes, uri)}\n${resource.text}`, isText: true };
      }
      const text = describeBinary("resource", resource.mimeType, base64Bytes(resource.blob), uri);
      return { text, isText: false, media: true };
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

/** The text and the parts of a `tools/call` result. */
export interface McpResultContent {
  /** What the model reads: see {@link readMcpResult}. */
  text: string;
  /** The images, audio and blobs that are parts, in the order of the blocks. */
  parts: ContentPart[];
}

/** The part a media block carries, or its description with why it is not passed on. */
function mediaPart(
  block: Record<string, unknown>,
  converted: ConvertedBlock,
  parts: ContentPart[],
  kept: McpPartsOption,
): string {
  if (kept === "none") return converted.text;
  if (parts.length >= MAX_RESULT_PARTS) {
    return `${converted.text.slice(0, -1)}, not shown: over ${MAX_RESULT_PARTS} images and files in one result]`;
  }
  const outcome = mcpBlockPart(block);
  if ("problem" in outcome) return `${converted.text.slice(0, -1)}, not shown: ${outcome.problem}]`;
  if (kept === "all" || outcome.part.type === "image") parts.push(outcome.part);
  return converted.text;
}

/**
 * An MCP `tools/call` result (a `CallToolResult`) as the text the model reads and the parts it is
 * shown: text blocks as they are; images and audio by type, MIME type and decoded size (the base64
 * data is never inlined), each also a part (`image` with one of the four image types → an image
 * part, any other → a file part; `audio` → a file part); embedded resources by URI, MIME type and
 * size (the text of a text resource follows; a blob is a file part named after the URI's last
 * segment); resource links by URI, MIME type and name; blocks joined by newlines. A block whose
 * part would not pass `contentPartsProblem` (a bad MIME type, data that is not base64) is not
 * shown, and its line says why; at most 999 parts, and 1,000 blocks without text described (the
 * rest counted in one line). `structuredContent` is added as JSON when no block holds text, image,
 * audio or a blob (beside those it tends to repeat their base64).
 * `(no content)` when there is nothing at all. `kept` (the import's `parts`) leaves out all parts
 * but images, or all of them (the notes stay).
 */
export function readMcpResult(result: Record<string, unknown>, kept: McpPartsOption = "all"): McpResultContent {
  const lines: string[] = [];
  const parts: ContentPart[] = [];
  let hasText = false;
  let hasMedia = false;
  let described = 0;
  let skipped = 0;
  if (Array.isArray(result.content)) {
    for (const block of result.content) {
      const converted = blockText(block);
      if (converted === undefined) continue;
      hasText ||= converted.isText;
      hasMedia ||= converted.media === true;
      if (!converted.isText && ++described > MAX_DESCRIBED_BLOCKS) {
        skipped++;
        continue;
      }
      lines.push(
        converted.media ? mediaPart(block as Record<string, unknown>, converted, parts, kept) : converted.text,
      );
    }
  }
  if (skipped > 0) lines.push(`[${skipped} more content blocks left out: at most ${MAX_DESCRIBED_BLOCKS} are read]`);
  // Beside images or blobs, structuredContent tends to repeat them (server-filesystem's
  // read_media_file sends its content again there): their base64 is never inlined.
  if (!hasText && !hasMedia && result.structuredContent !== undefined) {
    const json = jsonText(result.structuredContent);
    if (json !== undefined) lines.push(json);
  }
  return { text: lines.length > 0 ? lines.join("\n") : "(no content)", parts };
}

/** The text of {@link readMcpResult}: what the model reads of a `tools/call` result. */
export function mcpResultText(result: Record<string, unknown>): string {
  return readMcpResult(result).text;
}

/**
 * Turns the server's `tools/call` result, as it came (not checked against the SDK's schema: a block
 * of a type this version does not know is described, never a failure), into the registry's result
 * (see {@link readMcpResult}): `isError: true` becomes an error result (code `tool_failed`) with the
 * server's text; anything else a result with that text. Images, audio and blobs are its `parts`
 * (also on an error result).
 * The MCP result itself is kept as `data`, for your code or a UI; the model never reads it.
 * @param toolName the registry name of the tool, for `err.toolName`
 * @param kept which media become parts (the import's `parts`)
 */
export function convertMcpResult(
  toolName: string,
  serverName: string,
  result: unknown,
  kept: McpPartsOption = "all",
): ToolResult {
  if (!isRecord(result)) {
    return failure(toolName, "tool_failed", `MCP server ${quoteName(serverName)} answered with no result object`);
  }
  const { text, parts } = readMcpResult(result, kept);
  const converted = result.isError === true ? failure(toolName, "tool_failed", text) : newToolResult(text);
  if (parts.length > 0) converted.parts = parts;
  return converted.withData(result);
}
