// Registry A → createMcpServer → official v1 Client → registerMcpTools → registry B: calling
// `mcp_a_<tool>` on B gives what calling `<tool>` on A directly gives.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import type { ContentPart } from "../../src/content-part.js";
import { defineTool } from "../../src/define-tool.js";
import { createMcpServer } from "../../src/mcp/create-mcp-server.js";
import { type RegisteredMcpTools, registerMcpTools } from "../../src/mcp/register-mcp-tools.js";
import type { ProgressUpdate } from "../../src/progress.js";
import type { Tool } from "../../src/tool.js";
import { ToolRegistry } from "../../src/tool-registry.js";
import type { ExecuteOptions } from "../../src/tool-registry-options.js";
import { errorResult, mediaResult, userResult } from "../../src/tool-result.js";
import { TINY_IMAGES } from "../helpers/tiny-images.js";

let waitAborts = 0;

function tool(name: string, execute: Tool["execute"], parameters: Record<string, unknown> = { type: "object" }): Tool {
  return { name, description: `The ${name} tool`, parameters, execute };
}

function registryA(): ToolRegistry {
  const registry = new ToolRegistry();
  registry.register(
    tool("echo", (args) => `echo ${JSON.stringify(args)}`, {
      type: "object",
      properties: { text: { type: "string" }, nested: { type: "object" } },
      required: ["text"],
    }),
  );
  registry.register(tool("fail", () => errorResult("disk full")));
  registry.register(tool("empty_error", () => errorResult("").withError(new Error("the error's own message"))));
  registry.register(
    tool("boom", () => {
      throw new Error("kaput");
    }),
  );
  registry.register(
    tool("strict", (args) => `n=${String(args.n)}`, {
      type: "object",
      properties: { n: { type: "integer", minimum: 1 } },
      required: ["n"],
      additionalProperties: false,
    }),
  );
  // A check JSON Schema cannot say: registry B lets it through, registry A refuses it.
  registry.register(
    defineTool({
      name: "refined",
      description: "Takes a word starting with a",
      parameters: z.object({ word: z.string().refine((word) => word.startsWith("a"), "must start with a") }),
      execute: ({ word }) => `word ${word}`,
    }),
  );
  registry.register(tool("user", () => userResult("shown to both")));
  registry.register(tool("unicode", () => "é🙂\n".repeat(20_000)));
  registry.register(tool("gone", () => "still here"));
  registry.register(
    tool("wait", async (_args, context) => {
      await new Promise<void>((resolve) => context.signal.addEventListener("abort", () => resolve(), { once: true }));
      waitAborts++;
      return "never read";
    }),
  );
  registry.register(
    tool("progress", (_args, context) => {
      context.reportProgress(0.5, "half way");
      return "done";
    }),
  );
  registry.registerHidden(tool("hidden", () => "hidden ran"));
  return registry;
}

let a: ToolRegistry;
let b: ToolRegistry;
let imported: RegisteredMcpTools;
let closeAll: () => Promise<void>;

beforeEach(async () => {
  waitAborts = 0;
  a = registryA();
  b = new ToolRegistry();
  const server = createMcpServer(a, { name: "a", version: "1.0.0" });
  const client = new Client({ name: "b", version: "1.0.0" });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  await client.connect(clientTransport);
  imported = await registerMcpTools(b, client, { serverName: "a" });
  closeAll = async () => {
    await imported.close();
    await client.close();
    await server.close();
  };
  a.unregister("gone");
});

afterEach(async () => {
  await closeAll();
});

/** Per-call options, made fresh for each of the two calls. */
type MakeOptions = () => ExecuteOptions;
const none: MakeOptions = () => ({});
const abortAfter =
  (ms: number): MakeOptions =>
  () => ({ signal: AbortSignal.timeout(ms) });

describe("round trip: registry → createMcpServer → Client → registerMcpTools → registry", () => {
  it("imports every visible tool of A (not the hidden one) under mcp_a_<name>", () => {
    expect(imported.names).toEqual(
      ["boom", "echo", "empty_error", "fail", "gone", "progress", "refined", "strict", "unicode", "user", "wait"].map(
        (name) => `mcp_a_${name}`,
      ),
    );
    expect(b.get("mcp_a_echo")?.description).toBe("[MCP:a] The echo tool");
    expect(b.get("mcp_a_echo")?.parameters).toEqual(a.get("echo")?.parameters);
  });

  it.each<[string, string, Record<string, unknown>, MakeOptions, { isError: boolean; text: string | RegExp }]>([
    [
      "success",
      "echo",
      { text: "hi", nested: { x: [1, null] } },
      none,
      { isError: false, text: 'echo {"text":"hi","nested":{"x":[1,null]}}' },
    ],
    ["an error result", "fail", {}, none, { isError: true, text: "disk full" }],
    [
      "an error result whose text is its err's message",
      "empty_error",
      {},
      none,
      { isError: true, text: "the error's own message" },
    ],
    ["a throw", "boom", {}, none, { isError: true, text: 'tool "boom" failed: kaput' }],
    [
      "invalid arguments (caught by B's validation)",
      "strict",
      { n: 0, extra: true },
      none,
      { isError: true, text: /^invalid arguments for tool "strict": / },
    ],
    [
      "arguments of the wrong type",
      "echo",
      { text: 5 },
      none,
      { isError: true, text: /^invalid arguments for tool "echo": text: / },
    ],
    [
      "invalid arguments only A can see (a zod refinement)",
      "refined",
      { word: "banana" },
      none,
      { isError: true, text: /^invalid arguments for tool "refined": .*must start with a/ },
    ],
    ["valid arguments of a zod tool", "refined", { word: "apple" }, none, { isError: false, text: "word apple" }],
    ["forUser stays behind; forLLM crosses", "user", {}, none, { isError: false, text: "shown to both" }],
    ["long unicode text", "unicode", {}, none, { isError: false, text: "é🙂\n".repeat(20_000) }],
    [
      "a tool A removed after the import",
      "gone",
      {},
      none,
      { isError: true, text: /^tool "gone" not found\. Available tools: / },
    ],
    ["a timeout", "wait", {}, () => ({ timeoutMs: 50 }), { isError: true, text: 'tool "wait" timed out after 50 ms' }],
    ["an abort", "wait", {}, abortAfter(50), { isError: true, text: 'tool "wait" was aborted before it finished' }],
  ])("%s: the same forLLM and isError as calling A directly", async (_case, name, args, options, expected) => {
    const direct = await a.execute(name, args, options());
    const imported = `mcp_a_${name}`;
    const viaMcp = await b.execute(imported, args, options());

    expect({ isError: direct.isError, text: direct.contentForLLM() }).toEqual({
      isError: expected.isError,
      text: typeof expected.text === "string" ? expected.text : expect.stringMatching(expected.text),
    });
    // Messages made on B's side name the imported tool; otherwise the text is A's own.
    const text = viaMcp.contentForLLM().replaceAll(JSON.stringify(imported), JSON.stringify(name));
    expect({ isError: viaMcp.isError, text }).toEqual({ isError: direct.isError, text: direct.contentForLLM() });
    expect(viaMcp.forUser).toBe("");
  });

  it.each([
    ["a timeout", (): ExecuteOptions => ({ timeoutMs: 50 })],
    ["an abort", abortAfter(50)],
  ])("%s on B aborts the tool running on A (notifications/cancelled)", async (_case, options) => {
    const result = await b.execute("mcp_a_wait", {}, options());
    expect(result.isError).toBe(true);
    await vi.waitFor(() => expect(waitAborts).toBe(1));
  });

  it("a promoted hidden tool of A is imported, and removed once hidden again and list_changed sent", async () => {
    a.promoteTools(["hidden"], 1);
    const server = createMcpServer(a, { name: "a2", version: "1.0.0" });
    const client = new Client({ name: "b2", version: "1.0.0" });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    await server.connect(serverTransport);
    await client.connect(clientTransport);
    const second = await registerMcpTools(b, client, { serverName: "a2" });
    try {
      expect(second.names).toContain("mcp_a2_hidden");
      expect((await b.execute("mcp_a2_hidden", {})).forLLM).toBe("hidden ran");
      a.tickTTL();
      server.sendToolListChanged();
      await vi.waitFor(() => expect(second.names).not.toContain("mcp_a2_hidden"));
      expect(b.has("mcp_a2_hidden")).toBe(false);
    } finally {
      await second.close();
      await client.close();
      await server.close();
    }
  });

  it("progress A's tool reports reaches B's onProgress", async () => {
    const updates: ProgressUpdate[] = [];
    const result = await b.execute("mcp_a_progress", {}, { onProgress: (update) => void updates.push(update) });
    expect(result.forLLM).toBe("done");
    expect(updates.map(({ status, progress, message }) => ({ status, progress, message }))).toEqual([
      { status: "running", progress: 0.5, message: "half way" },
      { status: "completed", progress: undefined, message: undefined },
    ]);
  });
});

describe("round trip of a result's parts", () => {
  it("B's result carries A's images, audio and files as parts, each announced in its text", async () => {
    const png = TINY_IMAGES.png;
    const parts: ContentPart[] = [
      { type: "image", mediaType: png.mediaType, data: png.data },
      { type: "file", mediaType: "audio/wav", data: "UklGRg==" },
      { type: "file", mediaType: "application/pdf", data: "JVBERi0=", filename: "Q3 report.pdf" },
      { type: "file", mediaType: "text/csv", data: "YSxiCg==" },
    ];
    const source = new ToolRegistry();
    source.register(tool("chart", () => mediaResult("The chart:", parts)));
    const target = new ToolRegistry();
    const server = createMcpServer(source, { name: "src", version: "1.0.0" });
    const client = new Client({ name: "target", version: "1.0.0" });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    await server.connect(serverTransport);
    await client.connect(clientTransport);
    try {
      await registerMcpTools(target, client, { serverName: "src" });
      const result = await target.execute("mcp_src_chart", {});
      expect(result.parts).toEqual(parts);
      expect(result.forLLM).toBe(
        [
          "The chart:",
          "[image: image/png, 68 bytes]",
          "[audio: audio/wav, 4 bytes]",
          "[resource: toolloop:///parts/2/Q3%20report.pdf, application/pdf, 5 bytes]",
          "[resource: toolloop:///parts/3/, text/csv, 4 bytes]",
        ].join("\n"),
      );
    } finally {
      await client.close();
      await server.close();
    }
  });
});
