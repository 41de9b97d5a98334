import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createNetServer, type Server as NetServer, type Socket } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createWebFetchTool, type WebFetchToolOptions } from "../../src/builtin/index.js";
import { htmlToText, MAX_CONVERTERS, runningConverters } from "../../src/builtin/web-fetch-tool.js";
import { isToolExecutionError, type Tool, ToolRegistry, type ToolResult } from "../../src/index.js";
import { createToolContext } from "../../src/testing/index.js";

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

interface TestServer {
  readonly port: number;
  /** `host:port` for allowHosts. */
  readonly host: string;
  /** Paths requested so far. */
  readonly requests: string[];
  url(path?: string): string;
}

const servers: Array<Server | NetServer> = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    if ("closeAllConnections" in server) server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function listen(server: Server | NetServer): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

/** An HTTP server on 127.0.0.1 (the only address these tests contact). */
async function startServer(handler: Handler): Promise<TestServer> {
  const requests: string[] = [];
  const server = createServer((request, response) => {
    requests.push(request.url ?? "");
    handler(request, response);
  });
  const port = await listen(server);
  return { port, host: `127.0.0.1:${port}`, requests, url: (path = "/") => `http://127.0.0.1:${port}${path}` };
}

/** A server that writes `raw` bytes as its whole response (for responses node:http would not send). */
async function startRawServer(raw: string): Promise<TestServer> {
  const requests: string[] = [];
  const server = createNetServer((socket: Socket) => {
    socket.once("data", (data) => {
      requests.push(data.toString("latin1").split(" ")[1] ?? "");
      socket.end(raw);
    });
    socket.on("error", () => {});
  });
  const port = await listen(server);
  return { port, host: `127.0.0.1:${port}`, requests, url: (path = "/") => `http://127.0.0.1:${port}${path}` };
}

function send(contentType: string | undefined, body: string | Buffer, status = 200): Handler {
  return (_request, response) => {
    response.writeHead(status, contentType === undefined ? {} : { "content-type": contentType });
    response.end(body);
  };
}

function fetchWith(options: WebFetchToolOptions, args: Record<string, unknown>, signal?: AbortSignal) {
  const tool = createWebFetchTool(options);
  return tool.execute(args, createToolContext(signal === undefined ? {} : { signal })) as Promise<ToolResult>;
}

/** The text the model reads, with the random port replaced. */
function read(result: ToolResult, ...ports: number[]): string {
  let text = result.forLLM;
  for (const port of ports) text = text.replaceAll(String(port), "PORT");
  return text;
}

describe("createWebFetchTool: the tool", () => {
  it("is web_fetch { url*, max_chars? }", () => {
    const tool: Tool = createWebFetchTool();
    expect(tool.name).toBe("web_fetch");
    expect(tool.parameters).toMatchObject({
      type: "object",
      properties: { url: { type: "string", maxLength: 8192 }, max_chars: { type: "integer", minimum: 1 } },
      required: ["url"],
      additionalProperties: false,
    });
    expect(Object.isFrozen(tool)).toBe(true);
  });

  it.each([
    [[], "options must be an object, got []"],
    [{ maxChars: 0 }, "maxChars must be an integer > 0, got 0"],
    [{ maxChars: 1.5 }, "maxChars must be an integer > 0, got 1.5"],
    [{ maxBytes: -1 }, "maxBytes must be an integer > 0, got -1"],
    [{ maxBytes: "10" }, 'maxBytes must be an integer > 0, got "10"'],
    [{ timeoutMs: 0 }, "timeoutMs must be a number of milliseconds > 0"],
    [{ allowHosts: "127.0.0.1" }, 'allowHosts must be an array of host or host:port strings, got "127.0.0.1"'],
    [{ allowHosts: [42] }, "allowHosts[0] must be a host or host:port"],
    [
      { allowHosts: ["http://127.0.0.1"] },
      'allowHosts[0] must be a host or host:port ("127.0.0.1:8080", "[::1]"), got "http://127.0.0.1"',
    ],
    [{ allowHosts: ["127.0.0.1/path"] }, "allowHosts[0] must be a host or host:port"],
    [{ allowHosts: ["user@127.0.0.1"] }, "allowHosts[0] must be a host or host:port"],
    [{ allowHosts: ["::1"] }, "allowHosts[0] must be a host or host:port"],
    [{ allowHosts: ["127.0.0.1:99999"] }, "allowHosts[0] must be a host or host:port"],
    [{ allowHosts: [""] }, "allowHosts[0] must be a host or host:port"],
    [{ fetch: "fetch" }, 'fetch must be a function, got "fetch"'],
  ])("refuses options %j with a TypeError", (options, message) => {
    expect(() => createWebFetchTool(options as WebFetchToolOptions)).toThrow(TypeError);
    expect(() => createWebFetchTool(options as WebFetchToolOptions)).toThrow(`createWebFetchTool: ${message}`);
  });

  it.each([
    ["a number", { url: 42 }, "url must be a non-empty string"],
    ["blank", { url: "  " }, "url must be a non-empty string"],
    ["9,000 characters", { url: `http://example.com/${"a".repeat(9000)}` }, "url is longer than 8192 characters"],
    ["not a URL", { url: "not a url" }, '"not a url" is not a valid URL'],
    ["max_chars 0", { url: "http://example.com/", max_chars: 0 }, "max_chars must be an integer > 0, got 0"],
    ["max_chars 2.5", { url: "http://example.com/", max_chars: 2.5 }, "max_chars must be an integer > 0, got 2.5"],
    ["max_chars text", { url: "http://example.com/", max_chars: "9" }, 'max_chars must be an integer > 0, got "9"'],
  ])("answers bad arguments (%s) with an error result, before any request", async (_name, args, message) => {
    const result = await fetchWith({}, args);
    expect(result.isError).toBe(true);
    expect(result.forLLM).toBe(message);
  });
});

describe("web_fetch in a registry", () => {
  it("runs through the registry; its schema refuses extra keys and a non-integer max_chars", async () => {
    const server = await startServer(send("text/plain", "hello"));
    const registry = new ToolRegistry();
    registry.register(createWebFetchTool({ allowHosts: [server.host] }));
    const ok = await registry.execute("web_fetch", { url: server.url(), max_chars: 100 });
    expect(ok.forLLM.endsWith("\n\nhello")).toBe(true);
    const extra = await registry.execute("web_fetch", { url: server.url(), headers: { cookie: "x" } });
    expect(extra.isError).toBe(true);
    expect(extra.forLLM).toContain("invalid arguments");
    const fraction = await registry.execute("web_fetch", { url: server.url(), max_chars: 1.5 });
    expect(fraction.forLLM).toContain("invalid arguments");
    const refused = await registry.execute("web_fetch", { url: "file:///etc/passwd" });
    expect(refused.forLLM).toBe(
      'web_fetch refused "file:///etc/passwd": only http and https URLs are fetched, not file:',
    );
    expect(server.requests).toEqual(["/"]);
  });
});

describe("web_fetch: content", () => {
  it("converts HTML to readable text, after a header with the final URL, status and content type", async () => {
    const server = await startServer(
      send(
        "text/html; charset=utf-8",
        "<html><head><title>T</title><style>p{color:red}</style><script>alert(1)</script></head>" +
          "<body><h1>Hello</h1><p>A <a href='/next'>link</a> and &amp; text.</p><ul><li>one</li><li>two</li></ul></body></html>",
      ),
    );
    const result = await fetchWith({ allowHosts: [server.host] }, { url: server.url("/page") });
    expect(result.isError).toBe(false);
    expect(read(result, server.port)).toMatchInlineSnapshot(`
      "URL: http://127.0.0.1:PORT/page
      Status: 200 OK
      Content-Type: text/html; charset=utf-8

      HELLO

      A link [/next] and & text.

       * one
       * two"
    `);
    expect(result.data).toEqual({
      url: server.url("/page"),
      status: 200,
      contentType: "text/html; charset=utf-8",
      bytes: expect.any(Number),
      bodyCut: false,
      contentCut: false,
    });
  });

  it("pretty-prints JSON (also +json types); invalid JSON as it is", async () => {
    const server = await startServer((request, response) => {
      if (request.url === "/bad") send("application/json", "{not json")(request, response);
      else send("application/problem+json", '{"a":[1,2],"b":{"c":null}}')(request, response);
    });
    const result = await fetchWith({ allowHosts: [server.host] }, { url: server.url("/data") });
    expect(read(result, server.port)).toMatchInlineSnapshot(`
      "URL: http://127.0.0.1:PORT/data
      Status: 200 OK
      Content-Type: application/problem+json

      {
        "a": [
          1,
          2
        ],
        "b": {
          "c": null
        }
      }"
    `);
    const bad = await fetchWith({ allowHosts: [server.host] }, { url: server.url("/bad") });
    expect(bad.forLLM.endsWith("\n\n{not json")).toBe(true);
  });

  it("pretty-prints a JSON bomb (500 levels deep) only as far as it is shown", async () => {
    // 1.5 MB: pretty-printed whole, 750,000 values each behind 1,000 spaces — more than the longest
    // string V8 can make (it took 15 s and 1.4 GB at 300 levels and 4 MiB, 10 MiB ran out of heap).
    const body = `${"[".repeat(500)}${"1,".repeat(750_000)}1${"]".repeat(500)}`;
    const server = await startServer(send("application/json", body));
    const result = await fetchWith({ allowHosts: [server.host] }, { url: server.url() });
    const marker = ` … [the pretty-printed JSON is cut at 50000 characters; the body has ${body.length}]`;
    const levels = Array.from({ length: 500 }, (_, depth) => `${" ".repeat(2 * depth)}[`).join("\n");
    const content = `${levels.slice(0, 50_000 - marker.length)}${marker}`;
    expect(content.length).toBe(50_000);
    expect(read(result, server.port)).toBe(
      `URL: http://127.0.0.1:PORT/\nStatus: 200 OK\nContent-Type: application/json\n\n${content}`,
    );
    expect(result.data).toMatchObject({ bytes: body.length, bodyCut: false, contentCut: true });
    // max_chars asks for less: the same, shorter.
    const short = await fetchWith({ allowHosts: [server.host] }, { url: server.url(), max_chars: 200 });
    const shortMarker = ` … [the pretty-printed JSON is cut at 200 characters; the body has ${body.length}]`;
    expect(short.forLLM.endsWith(`\n\n${levels.slice(0, 200 - shortMarker.length)}${shortMarker}`)).toBe(true);
  });

  it("shows JSON that fits whole exactly as JSON.stringify(JSON.parse(body), null, 2), not cut", async () => {
    const value = { list: Array.from({ length: 40 }, (_, i) => ({ i, name: `item ${i}`, tags: [] })), ok: true };
    const whole = JSON.stringify(value, null, 2);
    const server = await startServer(send("application/json; charset=utf-8", JSON.stringify(value)));
    const result = await fetchWith({ allowHosts: [server.host], maxChars: whole.length }, { url: server.url() });
    expect(result.forLLM.endsWith(`\n\n${whole}`)).toBe(true);
    expect(result.data).toMatchObject({ contentCut: false });
    const cut = await fetchWith({ allowHosts: [server.host], maxChars: whole.length - 1 }, { url: server.url() });
    expect(cut.data).toMatchObject({ contentCut: true });
    expect(cut.forLLM).toContain(`the pretty-printed JSON is cut at ${whole.length - 1} characters`);
  });

  it("returns other text as it is, decoded with the declared charset", async () => {
    const server = await startServer(send("text/plain; charset=iso-8859-1", Buffer.from([0x63, 0x61, 0x66, 0xe9])));
    const result = await fetchWith({ allowHosts: [server.host] }, { url: server.url() });
    expect(result.forLLM.endsWith("\n\ncafé")).toBe(true);
  });

  it.each([
    ["image/png", Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0])],
    ["application/octet-stream", Buffer.from([1, 2, 3])],
    ["application/pdf", "%PDF-1.4"],
    ["video/mp4", "...."],
  ])("refuses binary content (%s) without reading it", async (type, body) => {
    const server = await startServer(send(type, body));
    const result = await fetchWith({ allowHosts: [server.host] }, { url: server.url("/file") });
    expect(result.isError).toBe(true);
    expect(read(result, server.port)).toBe(
      `web_fetch: "http://127.0.0.1:PORT/file" returned ${type} content (status 200 OK); only text, HTML and JSON are read`,
    );
  });

  it.each([
    ["<!DOCTYPE html><html><body><p>sniffed</p></body></html>", "sniffed", false],
    ['{"sniffed":true}', '{\n  "sniffed": true\n}', false],
    ["plain words", "plain words", false],
    ["bin\u0000ary", 'web_fetch: "URL" returned binary content without a content type; it is not shown', true],
  ])("without a content type, sniffs %j", async (body, expected, isError) => {
    const server = await startServer(send(undefined, body));
    const result = await fetchWith({ allowHosts: [server.host] }, { url: server.url() });
    expect(result.isError).toBe(isError);
    if (isError) expect(result.forLLM.replace(JSON.stringify(server.url()), '"URL"')).toBe(expected);
    else expect(result.forLLM.endsWith(`\n\n${expected}`)).toBe(true);
  });

  it("says so when the body is empty", async () => {
    const server = await startServer(send("text/plain", ""));
    const result = await fetchWith({ allowHosts: [server.host] }, { url: server.url() });
    expect(result.forLLM.endsWith("\n\n(empty body)")).toBe(true);
  });

  it("answers an HTTP error status with an error result that still shows the page", async () => {
    const server = await startServer(send("text/plain", "no such page", 404));
    const result = await fetchWith({ allowHosts: [server.host] }, { url: server.url("/missing") });
    expect(result.isError).toBe(true);
    expect(read(result, server.port)).toMatchInlineSnapshot(`
      "URL: http://127.0.0.1:PORT/missing
      Status: 404 Not Found
      Content-Type: text/plain

      no such page"
    `);
  });

  it("cuts the content at max_chars with a marker, and max_chars never beyond maxChars", async () => {
    const server = await startServer(send("text/plain", "x".repeat(5000)));
    const options = { allowHosts: [server.host], maxChars: 1000 };
    const small = await fetchWith(options, { url: server.url(), max_chars: 100 });
    const content = small.forLLM.split("\n\n")[1] ?? "";
    expect(content.length).toBeLessThanOrEqual(100);
    expect(content).toMatch(/^x+ … \[\d+ more characters cut]$/);
    expect(small.data?.contentCut).toBe(true);
    const large = await fetchWith(options, { url: server.url(), max_chars: 1_000_000 });
    const bounded = large.forLLM.split("\n\n")[1] ?? "";
    expect(bounded.length).toBeLessThanOrEqual(1000);
    expect(bounded).toMatch(/ … \[4\d\d\d more characters cut]$/);
  });

  it.each([
    ["text", "text/plain", "x".repeat(5_000), "Note: the content has 5000 characters; only the first 1 are shown", "x"],
    [
      "JSON",
      "application/json",
      JSON.stringify(["x".repeat(100)]),
      "Note: the pretty-printed JSON is cut at 2 characters; the body has 104",
      "[\n",
    ],
  ])(
    "keeps %s within a max_chars too small for the cut marker, and says so in the header",
    async (_, type, body, note, content) => {
      const server = await startServer(send(type, body));
      const max = content.length;
      const result = await fetchWith({ allowHosts: [server.host] }, { url: server.url(), max_chars: max });
      expect(read(result, server.port)).toBe(
        `URL: http://127.0.0.1:PORT/\nStatus: 200 OK\nContent-Type: ${type}\n${note}\n\n${content}`,
      );
      expect(result.data).toMatchObject({ contentCut: true });
    },
  );

  it("shows a page that converts to millions of characters (nested lists) cut, with the whole length", async () => {
    // Every line is indented by every list's prefix: 25 KB of HTML make 1 M characters of text.
    const page = `<html><body>${'<ol start="1.2345678901234567"><li>'.repeat(50)}${"x<br>".repeat(1_000)}</body></html>`;
    const server = await startServer(send("text/html", page));
    const result = await fetchWith({ allowHosts: [server.host] }, { url: server.url(), max_chars: 200 });
    const [, content = ""] = result.forLLM.split("\n\n");
    expect(content.length).toBeLessThanOrEqual(200);
    const more = Number(/ … \[(\d+) more characters cut]$/.exec(content)?.[1]);
    expect(more).toBeGreaterThan(1_000_000);
    expect(result.data).toMatchObject({ contentCut: true });
  });

  it("refuses a compressed body it did not ask for", async () => {
    const server = await startServer((_request, response) => {
      response.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" });
      response.end("not really gzip");
    });
    const result = await fetchWith({ allowHosts: [server.host] }, { url: server.url() });
    expect(result.isError).toBe(true);
    expect(result.forLLM).toContain("sent a gzip-compressed body although identity was asked for");
  });

  it("asks for identity encoding and sends no credentials or cookies of its own", async () => {
    let headers: IncomingMessage["headers"] = {};
    const server = await startServer((request, response) => {
      headers = request.headers;
      send("text/plain", "ok")(request, response);
    });
    await fetchWith({ allowHosts: [server.host] }, { url: server.url() });
    expect(headers["accept-encoding"]).toBe("identity");
    expect(headers.authorization).toBeUndefined();
    expect(headers.cookie).toBeUndefined();
    expect(headers["user-agent"]).toContain("toolloop-web-fetch");
  });
});

describe("web_fetch: URLs and the address guard", () => {
  it.each([
    ["file:///etc/passwd", "only http and https URLs are fetched, not file:"],
    ["data:text/plain,hello", "only http and https URLs are fetched, not data:"],
    ["ftp://example.com/file", "only http and https URLs are fetched, not ftp:"],
    ["javascript:alert(1)", "only http and https URLs are fetched, not javascript:"],
    ["gopher://example.com/", "only http and https URLs are fetched, not gopher:"],
  ])("refuses %s", async (url, reason) => {
    const result = await fetchWith({}, { url });
    expect(result.isError).toBe(true);
    expect(result.forLLM).toBe(`web_fetch refused ${JSON.stringify(url)}: ${reason}`);
    expect(isToolExecutionError(result.err) && result.err.code).toBe("tool_failed");
  });

  it("fetches a 127.0.0.1 server through allowHosts, and refuses the same server without it (no request made)", async () => {
    const server = await startServer(send("text/plain", "secret"));
    const allowed = await fetchWith({ allowHosts: [server.host] }, { url: server.url("/a") });
    expect(allowed.isError).toBe(false);
    const refused = await fetchWith({}, { url: server.url("/b") });
    expect(refused.isError).toBe(true);
    expect(read(refused, server.port)).toMatchInlineSnapshot(
      `"web_fetch refused "http://127.0.0.1:PORT/b": 127.0.0.1 is a loopback address"`,
    );
    expect(server.requests).toEqual(["/a"]);
  });

  it("matches allowHosts exactly: another port of the host is refused; an entry without a port allows every port", async () => {
    const server = await startServer(send("text/plain", "ok"));
    const otherPort = await fetchWith({ allowHosts: [`127.0.0.1:${server.port + 1}`] }, { url: server.url() });
    expect(otherPort.forLLM).toContain("127.0.0.1 is a loopback address");
    const otherHost = await fetchWith({ allowHosts: [`127.0.0.2:${server.port}`, "localhost"] }, { url: server.url() });
    expect(otherHost.forLLM).toContain("127.0.0.1 is a loopback address");
    const anyPort = await fetchWith({ allowHosts: ["127.0.0.1"] }, { url: server.url() });
    expect(anyPort.isError).toBe(false);
    // The entry is read like a URL host, so another spelling of the same address matches.
    const spelled = await fetchWith({ allowHosts: [`0x7f.0.0.1:${server.port}`] }, { url: server.url() });
    expect(spelled.isError).toBe(false);
    expect(server.requests).toEqual(["/", "/"]);
  });

  it.each([
    "http://2130706433:PORT/",
    "http://0x7f.1:PORT/",
    "http://0x7f000001:PORT/",
    "http://0177.0.0.1:PORT/",
    "http://127.1:PORT/",
    "http://[::ffff:7f00:1]:PORT/",
    "http://[::ffff:127.0.0.1]:PORT/",
    "http://[::1]:PORT/",
    "http://0:PORT/",
    "http://[::]:PORT/",
    "HTTP://127.0.0.1:PORT/",
  ])("refuses the numeric spelling %s of a local address (no request made)", async (spelling) => {
    const server = await startServer(send("text/plain", "secret"));
    const result = await fetchWith({}, { url: spelling.replace("PORT", String(server.port)) });
    expect(result.isError).toBe(true);
    expect(result.forLLM).toMatch(
      /^web_fetch refused .*: .* is (a loopback|an IPv4-mapped|an unspecified|the unspecified)/,
    );
    expect(server.requests).toEqual([]);
  });

  it("refuses a host name that resolves to the server at connect time (localhost, through the system resolver)", async () => {
    const server = await startServer(send("text/plain", "secret"));
    const result = await fetchWith({}, { url: `http://localhost:${server.port}/` });
    expect(result.isError).toBe(true);
    expect(read(result, server.port)).toMatch(
      /^web_fetch refused "http:\/\/localhost:PORT\/": localhost resolves to (127\.0\.0\.1|::1), a loopback address$/,
    );
    expect(server.requests).toEqual([]);
    // …and allowHosts exempts the name as well.
    const allowed = await fetchWith(
      { allowHosts: [`localhost:${server.port}`] },
      { url: `http://localhost:${server.port}/` },
    );
    expect(allowed.isError).toBe(false);
  });

  it("refuses credentials in the URL, even for an allowed host", async () => {
    const server = await startServer(send("text/plain", "ok"));
    const url = `http://user:pw@127.0.0.1:${server.port}/`;
    const result = await fetchWith({ allowHosts: [server.host] }, { url });
    expect(result.forLLM).toBe(
      `web_fetch refused ${JSON.stringify(url)}: URLs with credentials (user:password@) are not fetched`,
    );
    expect(server.requests).toEqual([]);
  });

  it("does not use an environment HTTP proxy (picoclaw #3078)", async () => {
    const proxy = await startServer(send("text/plain", "from the proxy"));
    const server = await startServer(send("text/plain", "from the server"));
    const names = [
      "HTTP_PROXY",
      "http_proxy",
      "HTTPS_PROXY",
      "https_proxy",
      "ALL_PROXY",
      "all_proxy",
      "NODE_USE_ENV_PROXY",
    ];
    const saved = names.map((name) => [name, process.env[name]] as const);
    try {
      for (const name of names) process.env[name] = name === "NODE_USE_ENV_PROXY" ? "1" : proxy.url();
      delete process.env.NO_PROXY;
      const result = await fetchWith({ allowHosts: [server.host] }, { url: server.url("/direct") });
      expect(result.forLLM.endsWith("from the server")).toBe(true);
      // A proxy would have been asked for the absolute URL: it saw nothing.
      expect(proxy.requests).toEqual([]);
      expect(server.requests).toEqual(["/direct"]);
    } finally {
      for (const [name, value] of saved) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});

describe("web_fetch: redirects", () => {
  it("follows a relative redirect on an allowed host and reports the final URL", async () => {
    const server = await startServer((request, response) => {
      if (request.url === "/old") {
        response.writeHead(301, { location: "/new?x=1" });
        response.end();
      } else send("text/plain", "moved here")(request, response);
    });
    const result = await fetchWith({ allowHosts: [server.host] }, { url: server.url("/old") });
    expect(result.forLLM.startsWith(`URL: ${server.url("/new?x=1")}\nStatus: 200 OK`)).toBe(true);
    expect(server.requests).toEqual(["/old", "/new?x=1"]);
  });

  it.each([301, 302, 303, 307, 308])(
    "re-checks a %i redirect from an allowed host to a private one that is not allowed",
    async (status) => {
      const inside = await startServer(send("text/plain", "internal secret"));
      const entry = await startServer((_request, response) => {
        response.writeHead(status, { location: inside.url("/admin") });
        response.end();
      });
      const result = await fetchWith({ allowHosts: [entry.host] }, { url: entry.url("/go") });
      expect(result.isError).toBe(true);
      expect(read(result, entry.port, inside.port)).toBe(
        'web_fetch refused the redirect from "http://127.0.0.1:PORT/go" to "http://127.0.0.1:PORT/admin": 127.0.0.1 is a loopback address',
      );
      expect(inside.requests).toEqual([]);
    },
  );

  it("re-checks a redirect to a host name that resolves to a private address (at connect time)", async () => {
    const entry = await startServer((_request, response) => {
      response.writeHead(302, { location: `http://localhost:${entry.port}/admin` });
      response.end();
    });
    const result = await fetchWith({ allowHosts: [entry.host] }, { url: entry.url("/go") });
    expect(result.isError).toBe(true);
    expect(read(result, entry.port)).toMatch(
      /^web_fetch refused "http:\/\/localhost:PORT\/admin": localhost resolves to/,
    );
    expect(entry.requests).toEqual(["/go"]);
  });

  it.each([
    ["file:///etc/passwd", "only http and https URLs are fetched, not file:"],
    ["http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a cloud metadata address"],
    ["http://metadata.google.internal/computeMetadata/v1/", "metadata.google.internal is a cloud metadata host name"],
    [
      "http://[::ffff:a9fe:a9fe]/",
      "::ffff:a9fe:a9fe is an IPv4-mapped form of 169.254.169.254, a cloud metadata address",
    ],
  ])("refuses a redirect to %s", async (location, reason) => {
    const server = await startServer((_request, response) => {
      response.writeHead(302, { location });
      response.end();
    });
    const result = await fetchWith({ allowHosts: [server.host] }, { url: server.url("/go") });
    expect(result.isError).toBe(true);
    expect(result.forLLM.endsWith(`: ${reason}`)).toBe(true);
    expect(server.requests).toEqual(["/go"]);
  });

  it("stops a redirect loop after 5 redirects", async () => {
    const server = await startServer((request, response) => {
      response.writeHead(302, { location: request.url === "/a" ? "/b" : "/a" });
      response.end();
    });
    const result = await fetchWith({ allowHosts: [server.host] }, { url: server.url("/a") });
    expect(result.isError).toBe(true);
    expect(read(result, server.port)).toBe('web_fetch stopped after 5 redirects (last at "http://127.0.0.1:PORT/b")');
    expect(server.requests).toHaveLength(6);
  });

  it("answers an unreadable Location with an error result", async () => {
    const server = await startRawServer(
      "HTTP/1.1 302 Found\r\nLocation: http://[oops/\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    );
    const result = await fetchWith({ allowHosts: [server.host] }, { url: server.url("/go") });
    expect(read(result, server.port)).toBe(
      'web_fetch: "http://127.0.0.1:PORT/go" redirects to an invalid URL "http://[oops/"',
    );
  });
});

describe("web_fetch: hostile servers and limits", () => {
  it("stops reading an endless body at maxBytes and says so", async () => {
    let closed = false;
    const server = await startServer((_request, response) => {
      response.writeHead(200, { "content-type": "text/plain" });
      const chunk = "y".repeat(4096);
      const pump = () => {
        while (!response.destroyed && response.write(chunk)) {}
        if (!response.destroyed) response.once("drain", pump);
      };
      response.on("close", () => {
        closed = true;
      });
      pump();
    });
    const result = await fetchWith({ allowHosts: [server.host], maxBytes: 10_000 }, { url: server.url() });
    expect(result.isError).toBe(false);
    expect(result.forLLM).toContain("Note: the body is larger than 10000 bytes; only the first 10000 were read");
    expect(result.forLLM.endsWith(`\n\n${"y".repeat(10_000)}`)).toBe(true);
    expect(result.data).toMatchObject({ bytes: 10_000, bodyCut: true });
    await vi.waitFor(() => expect(closed).toBe(true));
  });

  it("ends a slow drip at timeoutMs", async () => {
    const server = await startServer((_request, response) => {
      response.writeHead(200, { "content-type": "text/plain" });
      const timer = setInterval(() => response.write("."), 20);
      response.on("close", () => clearInterval(timer));
    });
    const started = performance.now();
    const result = await fetchWith({ allowHosts: [server.host], timeoutMs: 300 }, { url: server.url() });
    // The drip never ends: any bound shows timeoutMs ended it (generous for a busy machine).
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(result.isError).toBe(true);
    expect(result.forLLM).toBe("web_fetch timed out after 300 ms");
    expect(isToolExecutionError(result.err) && result.err.code).toBe("timeout");
  });

  it("ends a server that never answers at timeoutMs", async () => {
    const server = await startServer(() => {});
    const result = await fetchWith({ allowHosts: [server.host], timeoutMs: 200 }, { url: server.url() });
    expect(result.forLLM).toBe("web_fetch timed out after 200 ms");
  });

  it("stops when the call's signal aborts", async () => {
    const server = await startServer(() => {});
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("stop")), 50);
    const result = await fetchWith({ allowHosts: [server.host] }, { url: server.url() }, controller.signal);
    expect(result.forLLM).toBe("web_fetch was aborted");
    expect(isToolExecutionError(result.err) && result.err.code).toBe("aborted");
  });

  it("answers a connection cut in the middle of the body with an error result", async () => {
    const server = await startServer((_request, response) => {
      response.writeHead(200, { "content-type": "text/plain", "content-length": "1000" });
      response.write("partial");
      setTimeout(() => response.socket?.destroy(), 20);
    });
    const result = await fetchWith({ allowHosts: [server.host] }, { url: server.url() });
    expect(result.isError).toBe(true);
    expect(read(result, server.port)).toBe(
      'web_fetch could not fetch "http://127.0.0.1:PORT/": the connection was reset',
    );
  });

  it("refuses huge response headers", async () => {
    const server = await startRawServer(
      `HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Big: ${"h".repeat(64 * 1024)}\r\nContent-Length: 2\r\n\r\nok`,
    );
    const result = await fetchWith({ allowHosts: [server.host] }, { url: server.url() });
    expect(result.isError).toBe(true);
    expect(read(result, server.port)).toBe(
      'web_fetch could not fetch "http://127.0.0.1:PORT/": the response headers are larger than 16 KiB',
    );
  });

  it("names a refused connection without Node's message (which carries the address)", async () => {
    const server = await startServer(() => {});
    const port = server.port;
    const close = servers.pop() as Server;
    close.closeAllConnections();
    await new Promise((resolve) => close.close(resolve));
    const result = await fetchWith({ allowHosts: [`127.0.0.1:${port}`] }, { url: `http://127.0.0.1:${port}/` });
    expect(read(result, port)).toBe('web_fetch could not fetch "http://127.0.0.1:PORT/": the connection was refused');
  });

  it("converts deeply nested HTML off the event loop, bounded by timeoutMs", async () => {
    const depth = 200_000;
    const server = await startServer(send("text/html", `${"<div>".repeat(depth)}x${"</div>".repeat(depth)}`));
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);
    const started = performance.now();
    const result = await fetchWith({ allowHosts: [server.host], timeoutMs: 1_500 }, { url: server.url() });
    clearInterval(ticker);
    expect(result.forLLM).toBe("web_fetch timed out after 1500 ms");
    expect(performance.now() - started).toBeLessThan(10_000);
    // The event loop kept turning while the converter worked.
    expect(ticks).toBeGreaterThan(20);
  });
});

describe("htmlToText (the converter worker)", () => {
  it("runs at most MAX_CONVERTERS workers at once; waiting and aborted calls leak no slot", async () => {
    const deep = `${"<div>".repeat(100_000)}x${"</div>".repeat(100_000)}`;
    const controller = new AbortController();
    const pending = Array.from({ length: 5 }, () =>
      htmlToText(deep, controller.signal).catch((error: unknown) => error),
    );
    let most = 0;
    const watch = setInterval(() => {
      most = Math.max(most, runningConverters());
    }, 5);
    await new Promise((resolve) => setTimeout(resolve, 300));
    controller.abort(new Error("enough"));
    const outcomes = await Promise.all(pending);
    clearInterval(watch);
    expect(MAX_CONVERTERS).toBe(2);
    expect(most).toBe(2);
    expect(outcomes.every((outcome) => outcome instanceof Error && outcome.message === "enough")).toBe(true);
    expect(runningConverters()).toBe(0);
    // The slots are free again.
    expect(await htmlToText("<p>after</p>", new AbortController().signal)).toEqual({
      text: "after",
      length: 5,
      blank: false,
    });
    expect(runningConverters()).toBe(0);
  });

  it("gives the queued calls their turn in order", async () => {
    const signal = new AbortController().signal;
    const results = await Promise.all(["a", "b", "c", "d"].map((text) => htmlToText(`<b>${text}</b>`, signal)));
    expect(results.map((result) => result.text)).toEqual(["a", "b", "c", "d"]);
    expect(runningConverters()).toBe(0);
  });

  it("sends back only the first maxChars characters of the text, and its whole length", async () => {
    // 60 nested lists around 1,500 lines: 1.8 M characters of text, which the event loop once
    // received whole (40 M from a 100 KB page: 0.5 s of the loop, 333 MB) to show 50,000 of them.
    const page = `<html><body>${'<ol start="1.2345678901234567"><li>'.repeat(60)}${"x<br>".repeat(1_500)}</body></html>`;
    const converted = await htmlToText(page, new AbortController().signal, 1_000);
    expect(converted.text.length).toBe(1_000);
    expect(converted.text.startsWith(" 1.2345678901234567. 1.2345678901234567. ")).toBe(true);
    expect(converted.length).toBeGreaterThan(1_500_000);
    expect(converted.blank).toBe(false);
    expect(await htmlToText("<p> </p><div>\n</div>", new AbortController().signal, 1)).toEqual({
      text: "",
      length: 0,
      blank: true,
    });
  });
});

describe("web_fetch with options.fetch", () => {
  function fakeFetch(answer: (url: string, init: RequestInit | undefined) => Response) {
    return vi.fn(async (input: string | URL | Request, init?: RequestInit) => answer(String(input), init));
  }

  it.each([
    ["utf-8", "text/plain", Buffer.from("café 😀 ok")],
    ["utf-16le", "text/plain; charset=utf-16le", Buffer.from("café 😀 ok", "utf16le")],
  ])("decodes a %s body chunk by chunk, characters split across chunks included", async (_, type, bytes) => {
    // One byte per chunk: every multi-byte character arrives in pieces.
    const fetch = fakeFetch(() => {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          for (const byte of bytes) controller.enqueue(Uint8Array.of(byte));
          controller.close();
        },
      });
      return new Response(body, { status: 200, headers: { "content-type": type } });
    });
    const result = await fetchWith({ fetch, allowHosts: ["api.test"] }, { url: "https://api.test/t" });
    expect(result.forLLM.endsWith("\n\ncafé 😀 ok")).toBe(true);
    expect(result.data).toMatchObject({ bytes: bytes.length });
  });

  it("sends GET with redirect: manual and the call's signal, and reads the body", async () => {
    const fetch = fakeFetch(
      () => new Response('{"ok":true}', { status: 200, headers: { "content-type": "application/json" } }),
    );
    const result = await fetchWith({ fetch, allowHosts: ["api.test"] }, { url: "https://api.test/v1" });
    expect(result.forLLM).toBe(
      'URL: https://api.test/v1\nStatus: 200\nContent-Type: application/json\n\n{\n  "ok": true\n}',
    );
    expect(fetch).toHaveBeenCalledTimes(1);
    expect(fetch.mock.calls[0]?.[1]).toMatchObject({
      method: "GET",
      redirect: "manual",
      signal: expect.any(AbortSignal),
    });
  });

  it.each([
    "http://127.0.0.1/",
    "http://[::1]/",
    "http://169.254.169.254/latest/meta-data/",
    "http://[fd00:ec2::254]/latest/meta-data/",
    "http://metadata.google.internal/",
    "http://10.0.0.1/",
    "http://100.64.0.1/",
    "http://198.18.0.1/internal",
    "http://[2001:db8:1234::5efe:127.0.0.1]/canary",
    "http://[2606:4700::5efe:7f00:1]/",
    "http://[64:ff9b::7f00:1]/",
    "http://[2002:7f00:1::1]/",
    "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
  ])("refuses %s before calling fetch", async (url) => {
    const fetch = fakeFetch(() => new Response("should not happen"));
    const result = await fetchWith({ fetch }, { url });
    expect(result.isError).toBe(true);
    expect(result.forLLM).toMatch(/^web_fetch refused /);
    expect(fetch).not.toHaveBeenCalled();
  });

  it.each([
    ["http://example.com:25/", "port 25 is refused (it serves another protocol than HTTP)"],
    ["https://example.com:22/", "port 22 is refused (it serves another protocol than HTTP)"],
    ["http://example.com:6667/", "port 6667 is refused (it serves another protocol than HTTP)"],
    ["http://example.com:0/", "port 0 is refused (it serves another protocol than HTTP)"],
  ])("refuses %s (a Fetch-standard bad port), even for an allowed host", async (url, reason) => {
    const fetch = fakeFetch(() => new Response("should not happen"));
    const result = await fetchWith({ fetch, allowHosts: ["example.com"] }, { url });
    expect(result.forLLM).toBe(`web_fetch refused ${JSON.stringify(url)}: ${reason}`);
    expect(fetch).not.toHaveBeenCalled();
  });

  it("refuses a redirect to a bad port", async () => {
    const fetch = fakeFetch((url) =>
      url === "https://a.test/"
        ? new Response(null, { status: 301, headers: { location: "http://a.test:25/" } })
        : new Response("should not happen"),
    );
    const result = await fetchWith({ fetch, allowHosts: ["a.test"] }, { url: "https://a.test/" });
    expect(result.forLLM).toBe(
      'web_fetch refused the redirect from "https://a.test/" to "http://a.test:25/": port 25 is refused (it serves another protocol than HTTP)',
    );
  });

  it("resolves a host name and checks its addresses before calling fetch (localhost)", async () => {
    const fetch = fakeFetch(() => new Response("should not happen"));
    const result = await fetchWith({ fetch }, { url: "http://localhost:8080/" });
    expect(result.forLLM).toMatch(
      /^web_fetch refused "http:\/\/localhost:8080\/": localhost resolves to (127\.0\.0\.1|::1)/,
    );
    expect(fetch).not.toHaveBeenCalled();
  });

  it.each([
    ["[::1]:8080", "http://[::1]:8080/", true],
    ["[::1]:8080", "http://[::1]:8081/", false],
    ["[::ffff:127.0.0.1]", "http://[::ffff:7f00:1]/x", true],
    ["Wiki.Corp", "https://wiki.corp/page", true],
    // (no DNS in tests: the refused cases are refused before any lookup)
    ["google.internal", "http://metadata.google.internal/", false], // no suffix matching
    ["10.0.0.1", "http://10.0.0.2/", false],
    ["127.0.0.1:80", "http://127.0.0.1/", true],
    ["127.0.0.1:80", "https://127.0.0.1/", false],
    ["127.0.0.1:443", "https://127.0.0.1/", true],
  ])(
    "allowHosts %j exempts %s: %s (exact host, port when given, default ports counted)",
    async (entry, url, exempt) => {
      const fetch = fakeFetch(() => new Response("inside", { headers: { "content-type": "text/plain" } }));
      const result = await fetchWith({ fetch, allowHosts: [entry] }, { url });
      if (exempt) {
        expect(result.forLLM.endsWith("\n\ninside")).toBe(true);
        expect(fetch).toHaveBeenCalledTimes(1);
      } else {
        expect(result.forLLM).toMatch(/^web_fetch refused /);
        expect(fetch).not.toHaveBeenCalled();
      }
    },
  );

  it("follows redirects itself and re-checks every hop", async () => {
    const fetch = fakeFetch((url) =>
      url === "https://a.test/"
        ? new Response(null, { status: 302, headers: { location: "https://b.test/" } })
        : new Response(null, { status: 307, headers: { location: "http://192.168.0.1/router" } }),
    );
    const result = await fetchWith({ fetch, allowHosts: ["a.test", "b.test"] }, { url: "https://a.test/" });
    expect(result.forLLM).toBe(
      'web_fetch refused the redirect from "https://b.test/" to "http://192.168.0.1/router": 192.168.0.1 is a private address',
    );
    expect(fetch.mock.calls.map(([url]) => String(url))).toEqual(["https://a.test/", "https://b.test/"]);
  });

  it("refuses the response of a fetch that followed a redirect itself (ignoring redirect: manual)", async () => {
    const fetch = fakeFetch(() =>
      Object.defineProperty(new Response("internal secret"), "redirected", { value: true }),
    );
    const result = await fetchWith({ fetch, allowHosts: ["a.test"] }, { url: "https://a.test/" });
    expect(result.isError).toBe(true);
    expect(result.forLLM).toBe(
      'web_fetch: the fetch given in its options followed a redirect (it must honour redirect: "manual"); the response is not read',
    );
  });

  it("applies maxBytes to the body", async () => {
    const fetch = fakeFetch(() => new Response("z".repeat(5000), { headers: { "content-type": "text/plain" } }));
    const result = await fetchWith({ fetch, allowHosts: ["a.test"], maxBytes: 100 }, { url: "https://a.test/" });
    expect(result.forLLM.endsWith(`\n\n${"z".repeat(100)}`)).toBe(true);
    expect(result.data).toMatchObject({ bytes: 100, bodyCut: true });
  });

  it("stops an endless body stream at maxBytes and cancels it", async () => {
    let cancelled = false;
    let pulls = 0;
    const body = new ReadableStream<Uint8Array>({
      pull: (controller) => {
        pulls++;
        controller.enqueue(new Uint8Array(1000).fill(0x61));
      },
      cancel: () => {
        cancelled = true;
      },
    });
    const fetch = fakeFetch(() => new Response(body, { headers: { "content-type": "text/plain" } }));
    const result = await fetchWith({ fetch, allowHosts: ["a.test"], maxBytes: 2500 }, { url: "https://a.test/" });
    expect(result.data).toMatchObject({ bytes: 2500, bodyCut: true });
    await vi.waitFor(() => expect(cancelled).toBe(true));
    expect(pulls).toBeLessThan(10);
  });

  it("times out a fetch that ignores its signal", async () => {
    const fetch = vi.fn(() => new Promise<Response>(() => {}));
    const result = await fetchWith({ fetch, allowHosts: ["a.test"], timeoutMs: 100 }, { url: "https://a.test/" });
    expect(result.forLLM).toBe("web_fetch timed out after 100 ms");
  });

  it.each([
    ["constructor", "constructor"],
    ["__proto__", "__proto__"],
    ["X".repeat(500), expect.stringMatching(/^X+ … \[\d+ more characters cut]$/)],
  ])("names an unknown error code as it is, bounded (%s)", async (code, shown) => {
    const fetch = vi.fn(async () => {
      throw Object.assign(new Error("boom at 10.0.0.7"), { code });
    });
    const result = await fetchWith({ fetch, allowHosts: ["a.test"] }, { url: "https://a.test/" });
    const prefix = 'web_fetch could not fetch "https://a.test/": ';
    expect(result.forLLM.startsWith(prefix)).toBe(true);
    expect(result.forLLM.slice(prefix.length)).toEqual(shown);
  });

  it("answers a fetch that rejects with an error result", async () => {
    const fetch = vi.fn(async () => {
      throw new TypeError("fetch failed");
    });
    const result = await fetchWith({ fetch, allowHosts: ["a.test"] }, { url: "https://a.test/" });
    expect(result.forLLM).toBe('web_fetch could not fetch "https://a.test/": fetch failed');
  });
});
