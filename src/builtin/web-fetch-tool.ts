import type { IncomingMessage } from "node:http";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { createRequire } from "node:module";
import { isIP } from "node:net";
import { Worker } from "node:worker_threads";
import { failure, isValidTimeout, TIMEOUT_EXPECTATION } from "../execute-tool-call.js";
import { raceAbort, subscribeAbort } from "../internal/abort.js";
import { boundText, errorMessage, isRecord, showValue } from "../internal/describe.js";
import { checkCount, optionError } from "../internal/options.js";
import type { Tool, ToolContext } from "../tool.js";
import { errorResult, newToolResult, type ToolResult } from "../tool-result.js";
import {
  BlockedAddressError,
  bareHostname,
  blockedHostReason,
  checkResolvedHost,
  guardedLookup,
} from "./address-guard.js";
import { prettyJson } from "./pretty-json.js";

/** Options of {@link createWebFetchTool}. */
export interface WebFetchToolOptions {
  /**
   * Most characters of content the model reads per call (after HTML → text); the model's
   * `max_chars` may ask for fewer, never more. Longer content is cut with a marker. @default 50000
   */
  maxChars?: number;
  /** Most bytes of a response body that are read; the rest is not downloaded. @default 10485760 (10 MiB) */
  maxBytes?: number;
  /**
   * Time for the whole call — every redirect, the body and the HTML conversion — in milliseconds;
   * `Infinity` for none. The call's own signal (`context.signal`) aborts it too. @default 30000
   */
  timeoutMs?: number;
  /**
   * Hosts exempt from the address guard, for tests and intranets: exact `host` or `host:port`
   * strings (`"127.0.0.1:8080"`, `"wiki.corp"`, `"[::1]:3000"`); without a port every port of that
   * host is exempt. No wildcards, no suffixes. A redirect from an exempt host to another host is
   * checked again. @default []
   */
  allowHosts?: string[];
  /**
   * A `fetch` to send the requests with instead of node:http/node:https. The URL checks and the
   * redirect checks still apply (requests use `redirect: "manual"`) and names are resolved and
   * checked before each request, but the connection itself is out of reach: a name that resolves
   * differently when `fetch` connects (DNS rebinding) is not caught, and a proxy your `fetch` uses
   * is its own business. See docs/builtin-tools.md#web_fetch.
   */
  fetch?: typeof fetch;
}

const NAME = "web_fetch";
const WHERE = "createWebFetchTool";
const DEFAULT_MAX_CHARS = 50_000;
const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 30_000;
/** Redirects followed per call; one more is an error. */
const MAX_REDIRECTS = 5;
/** Longest URL the model may send (and the schema's `maxLength`). */
const MAX_URL_CHARS = 8_192;
/** Most bytes of response headers node:http accepts (its default, set explicitly so a flag cannot raise it). */
const MAX_HEADER_BYTES = 16 * 1024;
/** The HTML converter's heap, so a hostile page cannot exhaust the process's memory. */
const CONVERTER_HEAP_MB = 256;
const USER_AGENT = "Mozilla/5.0 (compatible; toolloop-web-fetch/1.0)";
const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

interface AllowedHost {
  readonly hostname: string;
  /** `undefined`: every port. */
  readonly port: string | undefined;
}

interface Settings {
  readonly maxChars: number;
  readonly maxBytes: number;
  readonly timeoutMs: number;
  readonly allowHosts: readonly AllowedHost[];
  readonly fetch: typeof fetch | undefined;
}

/** A response, whichever client fetched it. */
interface Fetched {
  readonly status: number;
  readonly statusText: string;
  readonly location: string | undefined;
  readonly contentType: string;
  readonly contentEncoding: string;
  readonly body: AsyncIterable<Uint8Array>;
  /** Stops the download and frees the connection. */
  cancel(): void;
}

/** A failure whose message is written for the model, as opposed to a network error. */
class FetchProblem extends Error {}

/**
 * The `web_fetch` tool (picoclaw's `WebFetchTool`): `web_fetch { url, max_chars? }` fetches an
 * http(s) URL with GET and returns its content for the model to read — HTML as readable text,
 * JSON pretty-printed, other text as it is — after a short header (final URL, status, content
 * type). Private, loopback, link-local and other non-public addresses are refused before the
 * request, at connect time and on every redirect; see docs/builtin-tools.md#web_fetch for the whole
 * policy and its limits. Every refusal and failure is an error result.
 * @throws TypeError when an option has the wrong type or value
 * @example
 * ```ts
 * registry.register(createWebFetchTool({ maxChars: 20_000, timeoutMs: 10_000 }));
 * ```
 */
export function createWebFetchTool(options: WebFetchToolOptions = {}): Tool {
  const settings = webFetchSettings(options);
  return Object.freeze({
    name: NAME,
    description:
      "Fetch a public http(s) URL and read its content: HTML as readable text, JSON pretty-printed, " +
      "other text as is. Private and local network addresses are refused.",
    parameters: {
      type: "object",
      properties: {
        url: { type: "string", maxLength: MAX_URL_CHARS, description: "The http or https URL to fetch" },
        max_chars: {
          type: "integer",
          minimum: 1,
          description: `Optional: most characters of content to return (at most ${settings.maxChars})`,
        },
      },
      required: ["url"],
      additionalProperties: false,
    },
    execute: (args: Record<string, unknown>, context: ToolContext) => webFetch(settings, args, context),
  });
}

/** An `allowHosts` entry as hostname (as `URL.hostname` spells it) and optional port, or `undefined` when it is not `host[:port]`. */
function parseAllowedHost(entry: string): AllowedHost | undefined {
  if (entry === "" || /[\s/?#@\\]/.test(entry)) return undefined;
  let url: URL;
  try {
    url = new URL(`http://${entry}`);
  } catch {
    return undefined;
  }
  // URL drops a default port (":80"); read the port from the entry itself.
  const port = /:(\d+)$/.exec(entry)?.[1];
  return { hostname: url.hostname, port: port === undefined ? undefined : String(Number(port)) };
}

function checkAllowHosts(value: unknown): AllowedHost[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw optionError(WHERE, "allowHosts", "an array of host or host:port strings", value);
  return value.map((entry: unknown, index) => {
    const parsed = typeof entry === "string" ? parseAllowedHost(entry) : undefined;
    if (parsed === undefined) {
      throw optionError(WHERE, `allowHosts[${index}]`, 'a host or host:port ("127.0.0.1:8080", "[::1]")', entry);
    }
    return parsed;
  });
}

function webFetchSettings(options: WebFetchToolOptions): Settings {
  if (!isRecord(options)) throw optionError(WHERE, "options", "an object", options);
  const { timeoutMs = DEFAULT_TIMEOUT_MS } = options;
  if (!isValidTimeout(timeoutMs)) throw optionError(WHERE, "timeoutMs", TIMEOUT_EXPECTATION, timeoutMs);
  const fetchFunction: unknown = options.fetch;
  if (fetchFunction !== undefined && typeof fetchFunction !== "function") {
    throw optionError(WHERE, "fetch", "a function", fetchFunction);
  }
  return {
    maxChars: checkCount(WHERE, "maxChars", options.maxChars, DEFAULT_MAX_CHARS),
    maxBytes: checkCount(WHERE, "maxBytes", options.maxBytes, DEFAULT_MAX_BYTES),
    timeoutMs,
    allowHosts: checkAllowHosts(options.allowHosts),
    fetch: fetchFunction as typeof fetch | undefined,
  };
}

function isAllowedHost(settings: Settings, url: URL): boolean {
  const port = url.port !== "" ? url.port : url.protocol === "https:" ? "443" : "80";
  return settings.allowHosts.some(
    (allowed) => allowed.hostname === url.hostname && (allowed.port === undefined || allowed.port === port),
  );
}

/**
 * The Fetch standard's "bad ports" (https://fetch.spec.whatwg.org/#port-blocking), which browsers and
 * undici's fetch refuse too: an HTTP request sent there can speak to another protocol (SMTP, IRC,
 * SSH …) — cross-protocol request forgery on a public host.
 */
const BAD_PORTS: ReadonlySet<number> = new Set([
  0, 1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110,
  111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532,
  540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061,
  6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

/** Why `url` may not be requested (scheme, credentials, port, host), or `undefined`. */
function urlRefusal(settings: Settings, url: URL): string | undefined {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return `only http and https URLs are fetched, not ${url.protocol.slice(0, 40)}`;
  }
  // `http://trusted.example@evil.example/` reads as one host and goes to another; and the model has
  // no business sending credentials it read somewhere.
  if (url.username !== "" || url.password !== "") return "URLs with credentials (user:password@) are not fetched";
  if (url.port !== "" && BAD_PORTS.has(Number(url.port))) {
    return `port ${url.port} is refused (it serves another protocol than HTTP)`;
  }
  if (isAllowedHost(settings, url)) return undefined;
  return blockedHostReason(url.hostname);
}

async function webFetch(settings: Settings, args: Record<string, unknown>, context: ToolContext): Promise<ToolResult> {
  const { url, max_chars: maxChars } = args;
  if (typeof url !== "string" || url.trim() === "") return errorResult("url must be a non-empty string");
  if (url.length > MAX_URL_CHARS) return errorResult(`url is longer than ${MAX_URL_CHARS} characters`);
  if (maxChars !== undefined && !(typeof maxChars === "number" && Number.isSafeInteger(maxChars) && maxChars > 0)) {
    return errorResult(`max_chars must be an integer > 0, got ${showValue(maxChars)}`);
  }
  const limit = Math.min(maxChars ?? settings.maxChars, settings.maxChars);
  let start: URL;
  try {
    start = new URL(url);
  } catch {
    return errorResult(`${showValue(url)} is not a valid URL`);
  }
  const refusal = urlRefusal(settings, start);
  if (refusal !== undefined) return refused(`web_fetch refused ${showValue(url)}: ${refusal}`);
  // One controller for the whole call (every hop, the body, the HTML conversion), aborted by the
  // call's signal or the timeout. A timer and a subscription of our own, both ended below:
  // AbortSignal.any/timeout signals are held weakly in Node 20 and may never fire.
  const callSignal = context.signal;
  const controller = new AbortController();
  let timedOut = false;
  const timer =
    settings.timeoutMs === Number.POSITIVE_INFINITY
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          controller.abort(new DOMException(`web_fetch timed out after ${settings.timeoutMs} ms`, "TimeoutError"));
        }, settings.timeoutMs);
  let unsubscribe = () => {};
  if (callSignal.aborted) controller.abort(callSignal.reason);
  else unsubscribe = subscribeAbort(callSignal, (reason) => controller.abort(reason));
  const visited = { url: start };
  try {
    return await fetchFollowing(settings, visited, limit, controller.signal);
  } catch (error) {
    const where = showValue(visited.url.href);
    if (timedOut) return failure(NAME, "timeout", `web_fetch timed out after ${settings.timeoutMs} ms`, error);
    if (controller.signal.aborted) return failure(NAME, "aborted", "web_fetch was aborted", callSignal.reason);
    if (error instanceof BlockedAddressError) {
      return failure(NAME, "tool_failed", `web_fetch refused ${where}: ${error.message}`, error);
    }
    if (error instanceof FetchProblem) return failure(NAME, "tool_failed", error.message, error.cause);
    return failure(NAME, "tool_failed", `web_fetch could not fetch ${where}: ${networkProblem(error)}`, error);
  } finally {
    clearTimeout(timer);
    unsubscribe();
  }
}

/** Fetches `visited.url`, following redirects (each re-checked); `visited.url` is the URL of the last request. */
async function fetchFollowing(
  settings: Settings,
  visited: { url: URL },
  limit: number,
  signal: AbortSignal,
): Promise<ToolResult> {
  for (let redirects = 0; ; redirects++) {
    const current = visited.url;
    const response = await fetchOnce(settings, current, signal);
    const location = REDIRECT_STATUSES.has(response.status) ? response.location : undefined;
    if (location === undefined) return await readResponse(settings, current, response, limit, signal);
    response.cancel();
    if (redirects === MAX_REDIRECTS) {
      return errorResult(`web_fetch stopped after ${MAX_REDIRECTS} redirects (last at ${showValue(current.href)})`);
    }
    let next: URL;
    try {
      next = new URL(location, current);
    } catch {
      return errorResult(`web_fetch: ${showValue(current.href)} redirects to an invalid URL ${showValue(location)}`);
    }
    const refusal = urlRefusal(settings, next);
    if (refusal !== undefined) {
      return refused(
        `web_fetch refused the redirect from ${showValue(current.href)} to ${showValue(next.href)}: ${refusal}`,
      );
    }
    visited.url = next;
  }
}

/** An error result for a refusal decided before any request. */
function refused(message: string): ToolResult {
  return failure(NAME, "tool_failed", message);
}

// A Map: error codes come from the network stack or your `fetch`, never index an object with them.
const NETWORK_PROBLEMS: ReadonlyMap<string, string> = new Map([
  ["ENOTFOUND", "the host name does not resolve"],
  ["EAI_AGAIN", "the host name could not be resolved (temporary DNS failure)"],
  ["ECONNREFUSED", "the connection was refused"],
  ["ECONNRESET", "the connection was reset"],
  ["ETIMEDOUT", "the connection timed out"],
  ["EHOSTUNREACH", "the host is unreachable"],
  ["ENETUNREACH", "the network is unreachable"],
  ["HPE_HEADER_OVERFLOW", `the response headers are larger than ${MAX_HEADER_BYTES / 1024} KiB`],
]);

/**
 * A network error as a short text: a known code in words, another code as it is, else the bounded
 * message. Node's messages name the address it tried; the code alone does not.
 */
function networkProblem(error: unknown): string {
  const code = isRecord(error) && typeof error.code === "string" ? error.code : undefined;
  if (code !== undefined) return NETWORK_PROBLEMS.get(code) ?? boundText(code, 80);
  return boundText(errorMessage(error), 300);
}

/** One request, by node:http(s) with the connect-time guard, or by the caller's `fetch`. */
function fetchOnce(settings: Settings, url: URL, signal: AbortSignal): Promise<Fetched> {
  const exempt = isAllowedHost(settings, url);
  if (settings.fetch !== undefined) return fetchWithFunction(settings.fetch, url, exempt, signal);
  return fetchWithNode(url, exempt, signal);
}

const REQUEST_HEADERS = Object.freeze({
  "user-agent": USER_AGENT,
  accept: "text/html,application/xhtml+xml,application/json,text/plain;q=0.9,*/*;q=0.5",
  "accept-encoding": "identity",
});

function fetchWithNode(url: URL, exempt: boolean, signal: AbortSignal): Promise<Fetched> {
  const send = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const request = send({
      protocol: url.protocol,
      hostname: bareHostname(url.hostname),
      port: url.port === "" ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: "GET",
      headers: REQUEST_HEADERS,
      // A fresh agent per request: no pooled socket skips the lookup below, and no proxy is used —
      // node:http never reads HTTP_PROXY / HTTPS_PROXY, and this agent has no proxy (picoclaw #3078).
      agent: false,
      // Every address a name resolves to is checked when the socket connects (IP literals were
      // checked before the request: Node connects to them without a lookup).
      ...(exempt ? {} : { lookup: guardedLookup() }),
      maxHeaderSize: MAX_HEADER_BYTES,
      // Node's strict parser even if the process runs with --insecure-http-parser.
      insecureHTTPParser: false,
      signal,
    });
    // `on`, not `once`: a second error event without a listener would be an uncaught exception.
    request.on("error", reject);
    request.once("response", (response: IncomingMessage) => {
      // The body's errors reach whoever reads it (the async iterator); this listener only keeps an
      // error on a body nobody reads any more (cancelled, or between hops) from crashing the process.
      response.on("error", () => {});
      resolve({
        status: response.statusCode ?? 0,
        statusText: response.statusMessage ?? "",
        location: response.headers.location,
        contentType: response.headers["content-type"] ?? "",
        contentEncoding: response.headers["content-encoding"] ?? "",
        body: response,
        cancel: () => {
          response.destroy();
          request.destroy();
        },
      });
    });
    request.end();
  });
}

async function fetchWithFunction(
  fetchFunction: typeof fetch,
  url: URL,
  exempt: boolean,
  signal: AbortSignal,
): Promise<Fetched> {
  // The connection is the caller's fetch's: resolve and check the name here, before it (a
  // rebinding name can still answer differently when fetch resolves it again).
  const hostname = bareHostname(url.hostname);
  if (!exempt && isIP(hostname) === 0) await raceAbort(checkResolvedHost(hostname), signal);
  const response = await raceAbort(
    Promise.resolve(fetchFunction(url.href, { method: "GET", headers: REQUEST_HEADERS, redirect: "manual", signal })),
    signal,
  );
  if (response.redirected) {
    // It followed a redirect itself: the target was never checked, so nothing of it is read.
    response.body?.cancel().catch(() => {});
    throw new FetchProblem(
      'web_fetch: the fetch given in its options followed a redirect (it must honour redirect: "manual"); the response is not read',
    );
  }
  const reader = response.body?.getReader();
  return {
    status: response.status,
    statusText: response.statusText,
    location: response.headers.get("location") ?? undefined,
    contentType: response.headers.get("content-type") ?? "",
    // fetch decodes gzip, deflate and br itself.
    contentEncoding: "",
    body: readerChunks(reader, signal),
    cancel: () => {
      reader?.cancel().catch(() => {});
    },
  };
}

async function* readerChunks(
  reader: ReadableStreamDefaultReader<Uint8Array> | undefined,
  signal: AbortSignal,
): AsyncGenerator<Uint8Array> {
  if (reader === undefined) return;
  let finished = false;
  try {
    for (;;) {
      // A fetch that ignores its signal cannot hang the call.
      const { done, value } = await raceAbort(reader.read(), signal);
      if (done) {
        finished = true;
        return;
      }
      yield value;
    }
  } finally {
    // Left early (a limit, an abort): stop the download.
    if (!finished) reader.cancel().catch(() => {});
  }
}

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

async function readResponse(
  settings: Settings,
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
  const { pieces, head, bytes, cut } = await readBody(response, settings.maxBytes);
  if (kind === "unknown") kind = sniff(head);
  if (kind === "binary") {
    return errorResult(`web_fetch: ${where} returned binary content without a content type; it is not shown`);
  }
  const header = [`URL: ${boundText(url.href, 2_000)}`, `Status: ${status}`, `Content-Type: ${shownType}`];
  if (cut)
    header.push(
      `Note: the body is larger than ${settings.maxBytes} bytes; only the first ${settings.maxBytes} were read`,
    );
  let content: CutContent;
  // JSON is pretty-printed only as far as it is shown, from the pieces as they were decoded: a body
  // nested 500 deep would otherwise take gigabytes of indentation (and minutes of the event loop).
  const pretty = kind === "json" ? await prettyJson(pieces, limit + 1, signal) : undefined;
  if (pretty !== undefined) {
    const chars = pieces.reduce((sum, piece) => sum + piece.length, 0);
    content =
      pretty.cut || pretty.text.length > limit
        ? cutToLimit(pretty.text, limit, {
            inside: ` … [the pretty-printed JSON is cut at ${limit} characters; the body has ${chars}]`,
            header: `Note: the pretty-printed JSON is cut at ${limit} characters; the body has ${chars}`,
          })
        : { shown: pretty.text, cut: false };
  } else {
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
    if (converted.blank) content = { shown: "(empty body)", cut: false };
    else if (converted.length <= limit) content = { shown: converted.text, cut: false };
    else {
      content = cutToLimit(converted.text, limit, {
        // The marker's own length depends on the count; room is kept for the longest one.
        inside: ` … [${converted.length} more characters cut]`,
        count: (kept) => ` … [${converted.length - kept} more characters cut]`,
        header: `Note: the content has ${converted.length} characters; only the first ${limit} are shown`,
      });
    }
  }
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
  let keep = fits ? limit - marker.inside.length : limit;
  const last = text.charCodeAt(keep - 1);
  if (last >= 0xd800 && last <= 0xdbff) keep--; // never half a surrogate pair
  const kept = text.slice(0, keep);
  if (!fits) return { shown: kept, cut: true, note: marker.header };
  return { shown: `${kept}${marker.count?.(keep) ?? marker.inside}`, cut: true };
}

// The HTML converter runs in a worker thread: html-to-text's parser is quadratic in the nesting
// depth (200,000 nested <div>s — 2 MB — take about a minute), and a page is chosen by whoever the
// model fetches. In a worker it cannot block the event loop, it is stopped at the call's timeout
// or abort, and its heap is bounded. Its console is silenced (html-to-text may warn).
// Only as much of the text as can be shown is posted back, with its length: a page of nested lists
// indents every line by every list's prefix (a 103 KB page became 40 M characters), and receiving
// that string cost the event loop half a second and the process hundreds of MB.
const CONVERTER_SOURCE = `"use strict";
const { parentPort, workerData } = require("node:worker_threads");
for (const level of ["log", "info", "warn", "error", "debug", "trace"]) console[level] = () => {};
const { convert } = require(workerData.modulePath);
const text = convert(workerData.html, workerData.options);
const max = workerData.maxChars;
parentPort.postMessage({ text: text.length > max ? text.slice(0, max) : text, length: text.length, blank: !/\\S/.test(text) });
`;

let converterPath: string | undefined;

/** HTML converters running at once in this process, whatever the number of tools and calls. */
export const MAX_CONVERTERS = 2;
let converters = 0;
interface ConverterWaiter {
  start(): void;
  started: boolean;
  abandoned: boolean;
}
const converterQueue: ConverterWaiter[] = [];

/** Converters running now (for tests). @internal */
export function runningConverters(): number {
  return converters;
}

function releaseConverter(): void {
  for (let next = converterQueue.shift(); next !== undefined; next = converterQueue.shift()) {
    if (!next.abandoned) {
      next.start(); // the slot passes on: the count stays
      return;
    }
  }
  converters--;
}

/** What {@link htmlToText} gives back of a page. */
export interface ConvertedHtml {
  /** The first `maxChars` characters of the text (all of it when it is no longer). */
  readonly text: string;
  /** Characters of the whole text. */
  readonly length: number;
  /** `true` when the whole text is whitespace (or empty). */
  readonly blank: boolean;
}

/**
 * HTML as readable text (html-to-text: block structure kept, links as `text [href]`, no word
 * wrap), in a worker; at most {@link MAX_CONVERTERS} at once (each may hold a 256 MiB heap), the
 * others wait their turn or the call's end. Only the first `maxChars` characters leave the worker.
 */
export async function htmlToText(
  html: string,
  signal: AbortSignal,
  maxChars: number = Number.MAX_SAFE_INTEGER,
): Promise<ConvertedHtml> {
  if (converters < MAX_CONVERTERS) converters++;
  else {
    const waiter: ConverterWaiter = { start: () => {}, started: false, abandoned: false };
    const turn = new Promise<void>((resolve) => {
      waiter.start = () => {
        waiter.started = true;
        resolve();
      };
    });
    converterQueue.push(waiter);
    try {
      await raceAbort(turn, signal);
    } catch (error) {
      if (waiter.started) releaseConverter();
      else waiter.abandoned = true;
      throw error;
    }
  }
  try {
    return await convertInWorker(html, signal, maxChars);
  } finally {
    releaseConverter();
  }
}

async function convertInWorker(html: string, signal: AbortSignal, maxChars: number): Promise<ConvertedHtml> {
  converterPath ??= createRequire(import.meta.url).resolve("html-to-text");
  const worker = new Worker(CONVERTER_SOURCE, {
    eval: true,
    workerData: {
      modulePath: converterPath,
      html,
      maxChars,
      options: { wordwrap: false, limits: { maxInputLength: Number.MAX_SAFE_INTEGER } },
    },
    // Nothing of the process's: no flags, no environment (tokens), no console.
    execArgv: [],
    env: {},
    stdout: true,
    stderr: true,
    resourceLimits: { maxOldGenerationSizeMb: CONVERTER_HEAP_MB },
  });
  worker.stdout.resume();
  worker.stderr.resume();
  const converted = new Promise<ConvertedHtml>((resolve, reject) => {
    worker.once("message", (message: unknown) => {
      // Only our worker posts here; a message of another shape would be empty text.
      const { text, length, blank } = isRecord(message) ? message : {};
      resolve(
        typeof text === "string" && typeof length === "number" && typeof blank === "boolean"
          ? { text: text.slice(0, maxChars), length, blank }
          : { text: "", length: 0, blank: true },
      );
    });
    worker.on("error", reject);
    worker.once("exit", (code) => reject(new Error(`the HTML converter stopped (exit code ${code})`)));
  });
  try {
    return await raceAbort(converted, signal);
  } finally {
    worker.terminate().catch(() => {});
  }
}
