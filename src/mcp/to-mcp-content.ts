import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { type ContentPart, contentPartsProblem } from "../content-part.js";

/** One MCP content block of a `tools/call` result. */
type McpContent = CallToolResult["content"][number];

/**
 * The URI an inline file is served under (an embedded resource needs one): a scheme of toolloop's
 * own, so that no client reads it as a path of its machine, ending with the file's name when it
 * has one (`toolloop:///parts/2/report.pdf`; `toolloop:///parts/2/` without), which
 * `registerMcpTools` reads back as `filename`.
 */
function partUri(index: number, filename: string | undefined): string {
  return `toolloop:///parts/${index}/${filename === undefined ? "" : encodeURIComponent(filename)}`;
}

/** The name of a resource link: the URL's last path segment, or `image`. */
function linkName(url: string): string {
  const path = url.replace(/[?#].*$/s, "");
  const name = path.slice(path.lastIndexOf("/") + 1);
  return name === "" ? "image" : name;
}

/** One content part as an MCP content block (see {@link toMcpContent}). */
function partContent(part: ContentPart, index: number): McpContent {
  if (part.type === "text") return { type: "text", text: part.text };
  if (part.type === "image") {
    if ("url" in part) {
      const link: McpContent = { type: "resource_link", uri: part.url, name: linkName(part.url) };
      return part.mediaType === undefined ? link : { ...link, mimeType: part.mediaType };
    }
    return { type: "image", data: part.data, mimeType: part.mediaType };
  }
  if (part.mediaType.toLowerCase().startsWith("audio/")) {
    return { type: "audio", data: part.data, mimeType: part.mediaType };
  }
  const uri = partUri(index, part.filename);
  return { type: "resource", resource: { uri, mimeType: part.mediaType, blob: part.data } };
}

/**
 * A result's parts as MCP content blocks (protocol 2025-11-25, the SDK's), to follow its text: an
 * inline image → `image`; an image URL → a `resource_link` (MCP's `https:` resources are fetched
 * by the client); an `audio/*` file → `audio`; any other file → an embedded `resource` with the
 * base64 as `blob` (see {@link partUri}); text → `text`. Parts not of {@link ContentPart}'s shapes
 * (a tool built its result by hand) are not sent: one text block says why instead.
 */
export function toMcpContent(parts: readonly ContentPart[]): McpContent[] {
  const problem = Array.isArray(parts) ? contentPartsProblem(parts) : " is not an array";
  if (problem !== undefined) return [{ type: "text", text: `[the result's parts were not sent: parts${problem}]` }];
  return parts.map(partContent);
}
