import type { IncomingMessage } from "node:http";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP } from "node:net";
import { raceAbort } from "../internal/abort.js";
import { boundText, errorMessage, isRecord } from "../internal/describe.js";
import { bareHostname, checkResolvedHost, guardedLookup } from "./address-guard.js";

/** Most bytes of response headers node:http accepts (its default, set explicitly so a flag cannot raise it). */
const MAX_HEADER_BYTES = 16 * 1024;
const USER_AGENT = "Mozilla/5.0 (compatible; toolloop-web-fetch/1.0)";

/** A response, whichever client fetched it. */
export interface Fetched {
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
export class FetchProblem extends Error {}

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
export function networkProblem(error: unknown): string {
  const code = isRecord(error) && typeof error.code === "string" ? error.code : undefined;
  if (code !== undefined) return NETWORK_PROBLEMS.get(code) ?? boundText(code, 80);
  return boundText(errorMessage(error), 300);
}

const REQUEST_HEADERS = Object.freeze({
  "user-agent": USER_AGENT,
  accept: "text/html,application/xhtml+xml,application/json,text/plain;q=0.9,*/*;q=0.5",
  "accept-encoding": "identity",
});

/** One GET by node:http(s); unless `exempt`, every address the name resolves to is checked at connect time. */
export function fetchWithNode(url: URL, exempt: boolean, signal: AbortSignal): Promise<Fetched> {
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

/** One GET by the caller's `fetch` (`redirect: "manual"`); unless `exempt`, the name is resolved and checked first. */
export async function fetchWithFunction(
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

/** The chunks of a fetch body, each read raced against `signal`; leaving early cancels the download. */
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
