import { boundText, errorMessage, showValue, wholeEnd } from "../internal/describe.js";
import { errorResult, newToolResult, type ToolResult } from "../tool-result.js";
import { htmlToText } from "./html-to-text.js";
import { prettyJson } from "./pretty-json.js";
import { type Fetched, FetchProblem } from "./web-request.js";

type Kind = "html" | "json" | "text" | "binary" | "unknown";

const TEXT_APPLICATION_TYPES: ReadonlySet<string> = new Set([
  "application/xml",
  "application/javascript",
  "application/ecmascript",
  "application/x-javascript",
  "application/yaml",
  "application/x-yaml",
  "application/toml",
  "application/x-ndjson",
  "application/x-www-form-urlencoded",
  "application/graphql",
  "application/sql",
]);

/** What to do with a content type (its essence, lower-cased). */
function kindOf(essence: string): Kind {
  if (essence === "") return "unknown";
  if (essence === "text/html" || essence === "application/xhtml+xml") return "html";
  if (essence === "application/json" || essence === "text/json" || essence.endsWith("+json")) return "json";
  if (essence.startsWith("text/") || essence.endsWith("+xml") || TEXT_APPLICATION_TYPES.has(essence)) return "text";
  return "binary";
}

/** A body without a content type, by its first bytes: binary with a NUL byte, HTML or JSON by its start, else text. */
function sniff(body: Uint8Array): Kind {
  const head = body.subarray(0, 1024);
  if (head.includes(0)) return "binary";
  const start = new TextDecoder().decode(head.subarray(0, 64)).trimStart().toLowerCase();
  if (start.startsWith("<!doctype html") || start.startsWith("<html")) return "html";
  if (start.startsWith("{") || start.startsWith("[")) return "json";
  return "text";
}

/** A streaming decoder for the `charset` of `contentType` (UTF-8 when there is none or it is unknown). */
function decoderFor(contentType: string) {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1];
  try {
    return new TextDecoder(charset ?? "utf-8");
  } catch {
    // An unknown charset label: read it as UTF-8 (bad bytes become U+FFFD).
    return new TextDecoder();
  }
}

/** Bytes of the body kept to sniff its kind. */
const SNIFF_BYTES = 1024;

/**
 * Reads at most `maxBytes` of the body, decoding each chunk as it arrives into `pieces` (so a
 * 10 MiB body is never copied or decoded in one go on the event loop); `cut` when there was more.
 * `head` is its first {@link SNIFF_BYTES} bytes.
 */
async function readBody(
  response: Fetched,
  maxBytes: number,
): Promise<{ pieces: string[]; head: Uint8Array; bytes: number; cut: boolean }> {
  const decoder = decoderFor(response.contentType);
  const pieces: string[] = [];
  const headChunks: Uint8Array[] = [];
  let headBytes = 0;
  let total = 0;
  let cut = false;
  try {
    for await (const chunk of response.body) {
      let part = chunk;
      if (total + chunk.length > maxBytes) {
        part = chunk.subarray(0, maxBytes - total);
        cut = true;
      }
      if (headBytes < SNIFF_BYTES) {
        const kept = part.subarray(0, SNIFF_BYTES - headBytes);
        headChunks.push(kept);
        headBytes += kept.length;
      }
      pieces.push(decoder.decode(part, { stream: true }));
      total += part.length;
      if (cut) break;
    }
  } finally {
    if (cut) response.cancel();
  }
  pieces.push(decoder.decode());
  return { pieces, head: Buffer.concat(headChunks, headBytes), bytes: total, cut };
}

/**
 * The tool's answer for a response that is not a redirect: a short header (URL, status, content
 * type, notes on what was cut) and the content as the model reads it — HTML as text, JSON
 * pretty-printed, other text as it is — at most `limit` characters of it, from at most `maxBytes`
 * of the body. Binary and compressed bodies are refused; a status ≥ 400 makes it an error result.
 */
export async function readResponse(
  maxBytes: number,
  url: URL,
  response: Fetched,
  limit: number,
  signal: AbortSignal,
): Promise<ToolResult> {
  const contentType = response.contentType;
  const essence = (contentType.split(";")[0] ?? "").trim().toLowerCase();
  const shownType = boundText(contentType === "" ? "(none)" : contentType, 200);
  const status = `${response.status}${response.statusText === "" ? "" : ` ${boundText(response.statusText, 100)}`}`;
  const where = showValue(url.href);
  let kind = kindOf(essence);
  if (kind === "binary") {
    response.cancel();
    return errorResult(
      `web_fetch: ${where} returned ${shownType} content (status ${status}); only text, HTML and JSON are read`,
    );
  }
  const encoding = response.contentEncoding.trim().toLowerCase();
  if (encoding !== "" && encoding !== "identity") {
    response.cancel();
    return errorResult(
      `web_fetch: ${where} sent a ${boundText(encoding, 40)}-compressed body although identity was asked for; it is not read`,
    );
  }
  const { pieces, head, bytes, cut } = await readBody(response, maxBytes);
  if (kind === "unknown") kind = sniff(head);
  if (kind === "binary") {
    return errorResult(`web_fetch: ${where} returned binary content without a content type; it is not shown`);
  }
  const header = [`URL: ${boundText(url.href, 2_000)}`, `Status: ${status}`, `Content-Type: ${shownType}`];
  if (cut) header.push(`Note: the body is larger than ${maxBytes} bytes; only the first ${maxBytes} were read`);
  const content = await showContent(pieces, kind, { limit, where, signal });
  if (content.note !== undefined) header.push(content.note);
  const forLLM = `${header.join("\n")}\n\n${content.shown}`;
  const result = response.status >= 400 ? errorResult(forLLM) : newToolResult(forLLM);
  return result.withData({
    url: url.href,
    status: response.status,
    contentType,
    bytes,
    bodyCut: cut,
    contentCut: content.cut,
  });
}

/**
 * The decoded body (`pieces`) as the model reads it, at most `limit` characters: JSON
 * pretty-printed, HTML converted to text (`where` names the page in a conversion failure), other
 * text — and JSON that does not parse — as it is.
 */
async function showContent(
  pieces: string[],
  kind: Kind,
  { limit, where, signal }: { limit: number; where: string; signal: AbortSignal },
): Promise<CutContent> {
  // JSON is pretty-printed only as far as it is shown, from the pieces as they were decoded: a body
  // nested 500 deep would otherwise take gigabytes of indentation (and minutes of the event loop).
  const pretty = kind === "json" ? await prettyJson(pieces, limit + 1, signal) : undefined;
  if (pretty !== undefined) {
    const chars = pieces.reduce((sum, piece) => sum + piece.length, 0);
    return pretty.cut || pretty.text.length > limit
      ? cutToLimit(pretty.text, limit, {
          inside: ` … [the pretty-printed JSON is cut at ${limit} characters; the body has ${chars}]`,
          header: `Note: the pretty-printed JSON is cut at ${limit} characters; the body has ${chars}`,
        })
      : { shown: pretty.text, cut: false };
  }
  const text = pieces.join("");
  // HTML comes back from the converter only as far as it can be shown, with its whole length.
  const converted =
    kind === "html"
      ? await htmlToText(text, signal, limit).catch((error: unknown) => {
          if (signal.aborted) throw error;
          throw new FetchProblem(`web_fetch could not convert the HTML of ${where} to text: ${errorMessage(error)}`, {
            cause: error,
          });
        })
      : { text, length: text.length, blank: text.trim() === "" }; // JSON that does not parse is shown as it is
  if (converted.blank) return { shown: "(empty body)", cut: false };
  if (converted.length <= limit) return { shown: converted.text, cut: false };
  return cutToLimit(converted.text, limit, {
    // The marker's own length depends on the count; room is kept for the longest one.
    inside: ` … [${converted.length} more characters cut]`,
    count: (kept) => ` … [${converted.length - kept} more characters cut]`,
    header: `Note: the content has ${converted.length} characters; only the first ${limit} are shown`,
  });
}

/** Content as shown: at most the limit in characters, and a note for the header when the cut marker did not fit. */
interface CutContent {
  readonly shown: string;
  readonly cut: boolean;
  readonly note?: string;
}

/**
 * `text` (at least its first `limit` characters) cut to `limit` characters: with the marker
 * `inside` at its end (counted in the limit; `count` gives its final wording from the characters
 * kept), or — when the marker alone is longer than the limit (`max_chars: 1`) — the first `limit`
 * characters, and the marker's words as a header note instead. Never half a surrogate pair. For
 * pretty-printed JSON the whole length is not known (it was not made): its marker gives the body's.
 */
function cutToLimit(
  text: string,
  limit: number,
  marker: { inside: string; count?: (kept: number) => string; header: string },
): CutContent {
  const fits = marker.inside.length <= limit;
  const keep = wholeEnd(text, fits ? limit - marker.inside.length : limit); // never half a surrogate pair
  const kept = text.slice(0, keep);
  if (!fits) return { shown: kept, cut: true, note: marker.header };
  return { shown: `${kept}${marker.count?.(keep) ?? marker.inside}`, cut: true };
}
