// MCP servers for tests: the two reference servers over stdio (child processes in a temporary
// directory, a minimal environment, no network), and a scripted in-process server that answers raw
// JSON-RPC text, to play a hostile or broken server.
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client, type ClientOptions } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  type JSONRPCRequest,
  LATEST_PROTOCOL_VERSION,
} from "@modelcontextprotocol/sdk/types.js";

const require = createRequire(import.meta.url);

/** The entry file of an installed reference server (run with `process.execPath`). */
function serverEntry(pkg: string): string {
  return require.resolve(`${pkg}/dist/index.js`);
}

/**
 * The child's whole environment: PATH only (the SDK adds its own short safe list: HOME, USER …),
 * never `process.env` with whatever secrets the test runner has.
 */
function minimalEnv(): Record<string, string> {
  return { PATH: process.env.PATH ?? "/usr/bin:/bin" };
}

/** A reference server running as a child process, with a connected official v1 client. */
export interface StdioServer {
  client: Client;
  transport: StdioClientTransport;
  /** The temporary directory (its real path), removed by `close()`. */
  dir: string;
  /** The child's process id. */
  pid: number;
  /** Closes the client (which ends the child) and removes the directory. */
  close(): Promise<void>;
}

async function startStdioServer(
  args: (dir: string) => string[],
  clientOptions: ClientOptions | undefined,
): Promise<StdioServer> {
  // server-filesystem compares real paths: /tmp may be a symlink.
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "toolloop-mcp-")));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: args(dir),
    cwd: dir,
    env: minimalEnv(),
    // The servers greet on stderr; the tests and the example print nothing of theirs.
    stderr: "ignore",
  });
  const client = new Client({ name: "toolloop-test", version: "0.0.0" }, clientOptions);
  try {
    await client.connect(transport);
  } catch (error) {
    await client.close();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const pid = transport.pid ?? -1;
  return {
    client,
    transport,
    dir,
    pid,
    close: async () => {
      await client.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * `@modelcontextprotocol/server-everything` over stdio in a temporary directory. Never call its
 * tools that fetch URLs (`gzip-file-as-resource`) or dump the environment (`get-env`).
 */
export function startEverythingServer(clientOptions?: ClientOptions): Promise<StdioServer> {
  const entry = serverEntry("@modelcontextprotocol/server-everything");
  return startStdioServer(() => [entry, "stdio"], clientOptions);
}

/**
 * `@modelcontextprotocol/server-filesystem` over stdio, allowed the temporary directory only. The
 * client declares no `roots` (the server would replace its allowed directories with them).
 */
export function startFilesystemServer(clientOptions?: ClientOptions): Promise<StdioServer> {
  const entry = serverEntry("@modelcontextprotocol/server-filesystem");
  return startStdioServer((dir) => [entry, dir], clientOptions);
}

/** What {@link startRawStdioServer}'s child answers: its tool list and, per tool name, a `tools/call` answer. */
export interface RawServerScript {
  /** The `tools` of every `tools/list` answer, sent as they are (malformed entries included). */
  tools: unknown[];
  /** The answer to `tools/call` of each tool: a result object or a JSON-RPC error. */
  calls?: Record<string, { result: unknown } | { error: { code: number; message: string } }>;
}

/**
 * A raw MCP server (no SDK: it sends whatever the script says, as a broken server would) as a
 * child process over stdio, with a connected official v1 client.
 */
export function startRawStdioServer(script: RawServerScript, clientOptions?: ClientOptions): Promise<StdioServer> {
  const entry = fileURLToPath(new URL("./mcp-raw-stdio-server.mjs", import.meta.url));
  return startStdioServer(() => [entry, JSON.stringify(script)], clientOptions);
}

/** What a scripted handler answers: a result object, its raw JSON text, a JSON-RPC error, or nothing (never answers). */
export type ScriptedAnswer =
  | { result: unknown }
  | { rawResult: string }
  | { error: { code: number; message: string } }
  | "never";

/** The requests a scripted server answers; anything else gets "method not found". */
export interface ScriptedServerHandlers {
  /** `tools/list` (with the request's params, e.g. a `cursor`). */
  listTools?: (params: Record<string, unknown> | undefined) => ScriptedAnswer | Promise<ScriptedAnswer>;
  /** `tools/call`. */
  callTool?: (params: Record<string, unknown> | undefined) => ScriptedAnswer | Promise<ScriptedAnswer>;
}

/** A scripted server connected to an official v1 client in memory. */
export interface ScriptedServer {
  client: Client;
  /** Every request the client sent, in order. */
  requests: JSONRPCRequest[];
  /** Every notification the client sent (e.g. `notifications/cancelled`). */
  notifications: JSONRPCMessage[];
  /** Sends `notifications/tools/list_changed` to the client. */
  toolsChanged(): void;
  /** The server goes away: pending requests fail with "Connection closed". */
  disconnect(): void;
}

/**
 * The server's side of an in-memory connection that answers with JSON text, parsed on the client's
 * side exactly as the stdio transport does (`JSON.parse`, then the SDK's message schema): what a
 * real server can send, `__proto__` keys included.
 */
class ScriptedTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly requests: JSONRPCRequest[] = [];
  readonly notifications: JSONRPCMessage[] = [];
  #open = true;

  constructor(private readonly handlers: ScriptedServerHandlers) {}

  async start(): Promise<void> {}

  async close(): Promise<void> {
    if (!this.#open) return;
    this.#open = false;
    this.onclose?.();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!this.#open) throw new Error("Not connected");
    if (!("method" in message)) return;
    if (!("id" in message)) {
      this.notifications.push(message);
      return;
    }
    const request = message as JSONRPCRequest;
    this.requests.push(request);
    const params = request.params as Record<string, unknown> | undefined;
    let answer: ScriptedAnswer;
    if (request.method === "initialize") {
      answer = {
        result: {
          protocolVersion: LATEST_PROTOCOL_VERSION,
          capabilities: { tools: { listChanged: true } },
          serverInfo: { name: "scripted", version: "0.0.0" },
        },
      };
    } else if (request.method === "tools/list" && this.handlers.listTools) {
      answer = await this.handlers.listTools(params);
    } else if (request.method === "tools/call" && this.handlers.callTool) {
      answer = await this.handlers.callTool(params);
    } else {
      answer = { error: { code: -32601, message: `Method not found: ${request.method}` } };
    }
    if (answer === "never") return;
    const id = JSON.stringify(request.id);
    let text: string;
    if ("error" in answer) text = `{"jsonrpc":"2.0","id":${id},"error":${JSON.stringify(answer.error)}}`;
    else if ("rawResult" in answer) text = `{"jsonrpc":"2.0","id":${id},"result":${answer.rawResult}}`;
    else text = `{"jsonrpc":"2.0","id":${id},"result":${JSON.stringify(answer.result)}}`;
    this.deliver(text);
  }

  /** Hands JSON text to the client as the stdio transport would (asynchronously). */
  deliver(text: string): void {
    setImmediate(() => {
      if (this.#open) this.onmessage?.(JSONRPCMessageSchema.parse(JSON.parse(text)));
    });
  }
}

/** A scripted server (see {@link ScriptedServerHandlers}) and a connected official v1 client. */
export async function startScriptedServer(
  handlers: ScriptedServerHandlers,
  clientOptions?: ClientOptions,
): Promise<ScriptedServer> {
  const transport = new ScriptedTransport(handlers);
  const client = new Client({ name: "toolloop-test", version: "0.0.0" }, clientOptions);
  await client.connect(transport);
  return {
    client,
    requests: transport.requests,
    notifications: transport.notifications,
    toolsChanged: () => transport.deliver('{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'),
    disconnect: () => void transport.close(),
  };
}

/** A `tools/list` answer holding these tools (each `{ name, description?, inputSchema? }`, schema defaulting to `{ type: "object" }`). */
export function toolList(tools: ReadonlyArray<Record<string, unknown>>): ScriptedAnswer {
  return { result: { tools: tools.map((tool) => ({ inputSchema: { type: "object" }, ...tool })) } };
}
