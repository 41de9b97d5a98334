import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  CallToolRequestParamsSchema,
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type ListToolsResult,
  type ProgressToken,
  type ServerNotification,
} from "@modelcontextprotocol/sdk/types.js";
import PQueue from "p-queue";
import { checkTimeout } from "../execute-tool-call.js";
import { errorMessage, isRecord } from "../internal/describe.js";
import { checkCount, optionError } from "../internal/options.js";
import type { ProgressListener } from "../progress.js";
import type { ToolDefinition } from "../provider.js";
import type { ExecuteOptions, ToolRegistry } from "../tool-registry.js";
import type { ToolResult } from "../tool-result.js";

/** Options of {@link createMcpServer}: what one client may ask of the server at once. */
export interface McpServerOptions {
  /**
   * Most tool calls running at once; more wait for a slot (a client's cancellation takes a waiting
   * call out), and beyond 1,000 waiting a call is answered `isError` at once: a client cannot make
   * the server run or hold an unbounded number of calls.
   * @default 16
   */
  maxConcurrency?: number | undefined;
  /** A call still running after this many milliseconds is answered with a timeout error and its tool's signal aborted. @default no timeout (the client's own timeout or cancellation still aborts it) */
  timeoutMs?: number | undefined;
}

/** Calls that may wait for a slot before the server answers "busy". */
const MAX_WAITING_CALLS = 1_000;

/** Who the server says it is in the MCP `initialize` handshake (`serverInfo`). */
export interface McpServerInfo {
  /** The server's name, as MCP clients show it (e.g. in `[MCP:<name>]` descriptions). */
  name: string;
  /** The server's version. */
  version: string;
}

// `tools/call` as the SDK's schema, except that `arguments` is passed on exactly as the client sent
// it: the SDK's own record parse drops a top-level `__proto__` key, and a tool must see (and its
// schema judge) the same arguments as a direct registry call. The SDK still checks the request
// against its strict schema before the handler runs, so `arguments` is an object or absent here.
const RawCallToolRequestSchema = CallToolRequestSchema.extend({
  params: CallToolRequestParamsSchema.omit({ arguments: true }).loose(),
});

/** The MCP `tools/list` entry of a registry definition; `inputSchema` always has `type: "object"`, as MCP requires. */
function toMcpTool({ function: { name, description, parameters } }: ToolDefinition): ListToolsResult["tools"][number] {
  // The registry also accepts a schema without `type` (its `type`, when present, is "object").
  return { name, description, inputSchema: { ...parameters, type: "object" } };
}

/** What crosses the boundary of a result: the model's text (`contentForLLM`) and `isError`, nothing else. */
function toCallToolResult(result: ToolResult): CallToolResult {
  const content: CallToolResult["content"] = [{ type: "text", text: result.contentForLLM() }];
  return result.isError ? { content, isError: true } : { content };
}

/**
 * Forwards the call's progress as MCP `notifications/progress` when the client sent a
 * `progressToken`: `progress` is the tool's fraction with `total: 1`, plus its message. MCP requires
 * progress to increase with every notification, so reports that do not raise it (no number, or not
 * more than the last one sent) are not forwarded, nor the final update (the response ends the call).
 */
function forwardProgress(
  token: ProgressToken | undefined,
  sendNotification: (notification: ServerNotification) => Promise<void>,
): ProgressListener | undefined {
  if (token === undefined) return undefined;
  let last = Number.NEGATIVE_INFINITY;
  return (update) => {
    const { progress, message } = update;
    if (update.status !== "running" || progress === undefined || progress <= last) return;
    last = progress;
    const params =
      message === undefined
        ? { progressToken: token, progress, total: 1 }
        : { progressToken: token, progress, total: 1, message };
    // A closed transport: the call goes on (its abort comes from the request's signal).
    sendNotification({ method: "notifications/progress", params }).catch(() => {});
  };
}

/**
 * Serves a registry as an MCP server (the SDK v1's `McpServer`; connect it to any transport with
 * `await server.connect(transport)`). `tools/list` lists the registry's visible tools — name,
 * description and `parameters` as `inputSchema` — read afresh on every request; `tools/call` runs
 * `registry.execute` under the request's signal, so a client's cancellation (or its request timeout,
 * or a closed connection) aborts the tool's `context.signal`.
 *
 * Every outcome of a call is a result, never a JSON-RPC error: success → one text block with the
 * result's `contentForLLM()`; an error result, invalid arguments, an unknown tool or a throw →
 * `isError: true` with the message the model would read. `forUser`, `silent`, `data`, `metadata`
 * and `err` never cross (`data` is for your code, not the model: there is no `structuredContent`).
 * Progress the tool reports goes to clients that sent a `progressToken`.
 *
 * The registry has no change event: the server declares `tools.listChanged` and you call
 * `server.sendToolListChanged()` after registering, removing or promoting tools. Serve further tools
 * by registering them in the registry: `server.registerTool` throws, since the tool handlers are taken.
 * At most `options.maxConcurrency` calls run at once (16); `options.timeoutMs` bounds each.
 * @throws TypeError when `registry` is not a registry (`getDefinitions` and `execute`), `info` has
 * no string `name` and `version`, or an option has the wrong type
 * @example
 * ```ts
 * import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
 *
 * const server = createMcpServer(registry, { name: "my-tools", version: "1.0.0" });
 * await server.connect(new StdioServerTransport());
 * ```
 */
export function createMcpServer(
  registry: ToolRegistry,
  info: McpServerInfo,
  options: McpServerOptions = {},
): McpServer {
  if (!isRecord(registry) || typeof registry.getDefinitions !== "function" || typeof registry.execute !== "function") {
    throw optionError("createMcpServer", "registry", "a ToolRegistry", registry);
  }
  if (!isRecord(info)) throw optionError("createMcpServer", "info", "an object { name, version }", info);
  const { name, version } = info;
  if (typeof name !== "string" || name === "") {
    throw optionError("createMcpServer", "info.name", "a non-empty string", name);
  }
  if (typeof version !== "string") throw optionError("createMcpServer", "info.version", "a string", version);
  if (!isRecord(options)) throw optionError("createMcpServer", "options", "an object", options);
  const maxConcurrency = checkCount("createMcpServer", "options.maxConcurrency", options.maxConcurrency, 16);
  const timeoutMs = checkTimeout("createMcpServer", "options.timeoutMs", options.timeoutMs);
  const slots = new PQueue({ concurrency: maxConcurrency });

  const server = new McpServer({ name, version });
  // Declared before any handler (the SDK checks) and before connect (it refuses later).
  server.server.registerCapabilities({ tools: { listChanged: true } });
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: registry.getDefinitions().map(toMcpTool),
  }));
  server.server.setRequestHandler(RawCallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name: toolName, arguments: args = {} } = request.params;
    if (slots.size >= MAX_WAITING_CALLS) {
      const text = `MCP server busy: ${slots.pending} calls running and ${slots.size} waiting; try again later`;
      return { content: [{ type: "text", text }], isError: true };
    }
    try {
      const execute: ExecuteOptions = { signal: extra.signal, toolCallId: String(extra.requestId), timeoutMs };
      const onProgress = forwardProgress(extra._meta?.progressToken, extra.sendNotification);
      if (onProgress !== undefined) execute.onProgress = onProgress;
      // The SDK checked `arguments` against its strict schema (an object, when present). A call
      // cancelled while it waits for a slot never runs (p-queue rejects with the signal's reason).
      const result = await slots.add(() => registry.execute(toolName, args as Record<string, unknown>, execute), {
        signal: extra.signal,
      });
      return toCallToolResult(result);
    } catch (error) {
      // The registry never rejects; a registry-like object or a result that cannot be read might.
      return { content: [{ type: "text", text: errorMessage(error) }], isError: true };
    }
  });
  return server;
}
