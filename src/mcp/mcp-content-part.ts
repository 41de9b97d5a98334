import { type ContentPart, contentPartsProblem } from "../content-part.js";
import { describeType, isRecord } from "../internal/describe.js";

/** What an MCP content block becomes beside its text: a part, or why it is none. */
export type McpPartOutcome = { part: ContentPart } | { problem: string };

/** A file part's media type when an embedded blob resource has none. */
const UNKNOWN_FILE_TYPE = "application/octet-stream";
/** Longest last segment of a resource URI read as a file name (percent-encoded: 255 characters, 3 each). */
const MAX_ENCODED_NAME = 765;

/**
 * The first candidate with one of {@link ContentPart}'s shapes (`contentPartsProblem`), or the
 * problem of the last: an image block is an image part when it can be one, else a file part.
 */
function firstFitting(candidates: readonly Record<string, unknown>[]): McpPartOutcome {
  // An empty image or file is no content a provider takes.
  if (candidates[0]?.data === "") return { problem: "its data is empty" };
  let problem = "";
  for (const candidate of candidates) {
    const found = contentPartsProblem([candidate]);
    if (found === undefined) return { part: candidate as ContentPart };
    // `[0] <problem>`: the index is always 0 here; MCP calls the media type `mimeType`.
    problem = found.replace(/^\[0\] /, "").replace(/\bmediaType\b/g, "mimeType");
  }
  return { problem };
}

/**
 * The file name a resource URI ends with (`file:///tmp/report.pdf` → `report.pdf`), percent-decoded;
 * `undefined` when it has none, or none a file part may carry (1 to 255 characters, no control
 * characters: `contentPartsProblem` checks).
 */
function uriFilename(uri: unknown): string | undefined {
  if (typeof uri !== "string") return undefined;
  const end = uri.search(/[?#]/);
  const path = end === -1 ? uri : uri.slice(0, end);
  const slash = path.lastIndexOf("/");
  if (slash === -1) return undefined;
  const segment = path.slice(slash + 1);
  if (segment === "" || segment.length > MAX_ENCODED_NAME) return undefined;
  try {
    return decodeURIComponent(segment);
  } catch {
    // A lone `%`: the segment as it is.
    return segment;
  }
}

/**
 * The content part an MCP `image`, `audio` or embedded blob `resource` block carries, checked as
 * any part is (`contentPartsProblem`), or why it carries none (a bounded sentence; never the
 * server's value). `image` with `image/png`, `image/jpeg`, `image/gif` or `image/webp` → an image
 * part, with another type → a file part; `audio` (an `audio/*` type) → a file part; a blob →
 * a file part with the resource's MIME type (`application/octet-stream` without one) and the last
 * segment of its URI as `filename`.
 */
export function mcpBlockPart(block: Record<string, unknown>): McpPartOutcome {
  if (block.type === "image") {
    const { mimeType: mediaType, data } = block;
    return firstFitting([
      { type: "image", mediaType, data },
      { type: "file", mediaType, data },
    ]);
  }
  if (block.type === "audio") {
    const { mimeType: mediaType, data } = block;
    if (typeof mediaType !== "string" || !mediaType.toLowerCase().startsWith("audio/")) {
      return { problem: "an audio block's mimeType must be an audio/* type" };
    }
    return firstFitting([{ type: "file", mediaType, data }]);
  }
  const resource = isRecord(block.resource) ? block.resource : {};
  if (typeof resource.blob !== "string") {
    return { problem: `a resource's blob must be a base64 string, got ${describeType(resource.blob)}` };
  }
  const part: Record<string, unknown> = {
    type: "file",
    mediaType: resource.mimeType ?? UNKNOWN_FILE_TYPE,
    data: resource.blob,
  };
  const filename = uriFilename(resource.uri);
  const named = filename === undefined ? undefined : firstFitting([{ ...part, filename }]);
  // A name no part may carry (a control character, too long) leaves the file unnamed, not unsent.
  return named !== undefined && "part" in named ? named : firstFitting([part]);
}
