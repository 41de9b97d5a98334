import { readFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";

/** The folder of genuine provider payloads, copied into the repository with their attribution (`SOURCES.md`). */
export const WIRE_SAMPLES_DIR = fileURLToPath(new URL("../fixtures/wire-samples/", import.meta.url));

/** Reads a wire sample as text. */
export function readSampleText(file: string): string {
  return readFileSync(`${WIRE_SAMPLES_DIR}${file}`, "utf8");
}

/** Reads and parses a JSON wire sample. */
export function readSample<T = Record<string, unknown>>(file: string): T {
  return JSON.parse(readSampleText(file)) as T;
}

/** A request the local server received. */
export interface RecordedRequest {
  method: string;
  /** Path and query, e.g. `/v1/chat/completions`. */
  url: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body, or the raw text when it is not JSON. */
  body: unknown;
}

/** One scripted answer of the local server. */
export interface ReplayResponse {
  /** @default 200 */
  status?: number;
  /** Sent as JSON (ignored when `raw` is set). */
  body?: unknown;
  /** Sent verbatim, e.g. an SSE or NDJSON stream; give `contentType`. */
  raw?: string;
  /** @default "application/json" */
  contentType?: string;
  headers?: Record<string, string>;
  /**
   * Never finish the answer (until the client disconnects): for abort tests. With `raw`, the
   * status, headers and `raw` are sent first (a stream that never ends); without it, nothing is.
   */
  hang?: boolean;
}

export interface ReplayServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** Resolves when the server has seen `count` requests. */
  waitForRequests(count: number): Promise<void>;
  /** How many hanging answers the client closed (by aborting); `close()` does not count. */
  readonly disconnects: number;
  /** Resolves when the client has closed `count` hanging answers: proof that an abort reached the wire. */
  waitForDisconnects(count: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts an HTTP server on 127.0.0.1 (random port) that answers each request with the next
 * scripted response (or what `respond` returns) and records what the client sent.
 * Nothing leaves this machine.
 */
export async function startReplayServer(
  script: ReplayResponse[] | ((request: RecordedRequest, index: number) => ReplayResponse),
): Promise<ReplayServer> {
  const requests: RecordedRequest[] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const disconnectWaiters: Array<{ count: number; resolve: () => void }> = [];
  const open = new Set<ServerResponse>();
  let disconnects = 0;
  let closing = false;

  const release = (list: typeof waiters, reached: number) => {
    for (const waiter of [...list]) {
      if (reached >= waiter.count) {
        list.splice(list.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      let body: unknown = text;
      try {
        body = text === "" ? undefined : JSON.parse(text);
      } catch {
        // not JSON: keep the text
      }
      const request: RecordedRequest = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body };
      const index = requests.length;
      requests.push(request);
      release(waiters, requests.length);
      const reply = typeof script === "function" ? script(request, index) : script[index];
      if (reply === undefined) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: `replay server: no scripted response for request ${index + 1}` } }));
        return;
      }
      if (reply.hang) {
        open.add(res);
        res.on("close", () => {
          open.delete(res);
          if (closing) return;
          disconnects++;
          release(disconnectWaiters, disconnects);
        });
        if (reply.raw !== undefined) {
          res.writeHead(reply.status ?? 200, {
            "content-type": reply.contentType ?? "application/json",
            ...reply.headers,
          });
          res.write(reply.raw);
        }
        return;
      }
      res.writeHead(reply.status ?? 200, {
        "content-type": reply.contentType ?? "application/json",
        ...reply.headers,
      });
      res.end(reply.raw ?? JSON.stringify(reply.body ?? {}));
    });
  });

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    waitForRequests(count) {
      if (requests.length >= count) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
    get disconnects() {
      return disconnects;
    },
    waitForDisconnects(count) {
      if (disconnects >= count) return Promise.resolve();
      return new Promise((resolve) => disconnectWaiters.push({ count, resolve }));
    },
    close() {
      closing = true;
      for (const res of open) res.destroy();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** A 200 answer streaming the SSE wire sample `file` byte for byte (`text/event-stream`). */
export function sseSample(file: string): ReplayResponse {
  return { raw: readSampleText(file), contentType: "text/event-stream" };
}

/** One server-sent event: its `data` (JSON-serialised unless it is a string) and, optionally, its `event` name. */
export interface SseEvent {
  event?: string;
  data: unknown;
}

/** SSE text for `events`, as an API sends it: `event:` and `data:` lines, a blank line after each. */
export function sseText(events: readonly SseEvent[]): string {
  return events
    .map(({ event, data }) => {
      const text = typeof data === "string" ? data : JSON.stringify(data);
      return `${event === undefined ? "" : `event: ${event}\n`}data: ${text}\n\n`;
    })
    .join("");
}

/** A 200 answer streaming `events` as SSE (`text/event-stream`). */
export function sseResponse(events: readonly SseEvent[], extra: Omit<ReplayResponse, "raw"> = {}): ReplayResponse {
  return { contentType: "text/event-stream", ...extra, raw: sseText(events) };
}
