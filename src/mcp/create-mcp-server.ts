import { createHmac, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  CallToolRequestParamsSchema,
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  type ListToolsResult,
  McpError,
  type ProgressToken,
  type ServerNotification,
} from "@modelcontextprotocol/sdk/types.js";
import PQueue from "p-queue";
import { type CheckedCall, checkTimeout } from "../execute-tool-call.js";
import { errorMessage, isRecord } from "../internal/describe.js";
import { checkCount, optionError } from "../internal/options.js";
import { PromotionScope, type PromotionView } from "../internal/promotion-scope.js";
import type { ProgressListener } from "../progress.js";
import type { ToolDefinition } from "../provider.js";
import { EXECUTE_CHECKED, VIEW_DEFINITIONS } from "../registry-symbols.js";
import { ToolRegistry } from "../tool-registry.js";
import type { ExecuteOptions } from "../tool-registry-options.js";
import type { ToolResult } from "../tool-result.js";
import { toMcpContent } from "./to-mcp-content.js";

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
  /**
   * Most tools one `tools/list` response lists: with more, it carries a `nextCursor` the client
   * sends back for the next page (MCP's pagination), so that no listing costs more than a page. A
   * cursor is signed for its connection: a made-up one, or another connection's, is `-32602`.
   * @default 100
   */
  pageSize?: number | undefined;
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
// schema judge) the same arguments as a direct registry call. Nor is `name` checked here: this
// schema's own failure would be answered -32603 (internal error). The SDK checks the request against
// its strict schema before the handler runs (a failure there is -32602, invalid params), so `name` is
// a string and `arguments` an object or absent in the handler.
const RawCallToolRequestSchema = CallToolRequestSchema.extend({
  params: CallToolRequestParamsSchema.omit({ arguments: true, name: true }).loose(),
});

type McpTool = ListToolsResult["tools"][number];

/** The MCP `tools/list` entry of a registry definition; `inputSchema` always has `type: "object"`, as MCP requires. */
function toMcpTool({ function: { name, description, parameters } }: ToolDefinition): McpTool {
  // The registry also accepts a schema without `type` (its `type`, when present, is "object").
  return Object.freeze({ name, description, inputSchema: { ...parameters, type: "object" as const } });
}

/** Longest cursor read: the base64url of a 64-character tool name, a dot and a 22-character MAC. */
const MAX_CURSOR_CHARS = 128;
/** Bytes of the MAC a cursor carries (128 bits). */
const CURSOR_MAC_BYTES = 16;

type CursorKey = Pick<Session, "cursorKey">;

/**
 * The cursor of the page after the one ending with `name`, for one session: the name (the page
 * after it starts at the first name after it, whatever changed in between) and its HMAC under the
 * session's own key, so that the server takes back only cursors it gave that session.
 */
function cursorAfter({ cursorKey }: CursorKey, name: string): string {
  const mac = createHmac("sha256", cursorKey).update(name).digest().subarray(0, CURSOR_MAC_BYTES);
  return `${Buffer.from(name).toString("base64url")}.${mac.toString("base64url")}`;
}

/** The name a cursor of this session ends at. @throws McpError -32602 for any other cursor */
function cursorName(session: CursorKey, cursor: unknown): string {
  if (typeof cursor === "string" && cursor.length <= MAX_CURSOR_CHARS) {
    const dot = cursor.indexOf(".");
    const name = Buffer.from(cursor.slice(0, Math.max(dot, 0)), "base64url").toString();
    const expected = Buffer.from(cursorAfter(session, name));
    const given = Buffer.from(cursor);
    // Compared in constant time: how much of a guess matched must not show in the time taken.
    if (dot > 0 && given.length === expected.length && timingSafeEqual(given, expected)) return name;
  }
  throw new McpError(ErrorCode.InvalidParams, "invalid cursor: send back the nextCursor of the previous page");
}

/** Where the page after `cursor` starts in `definitions` (sorted by name): the first name after its name. */
function pageStart(definitions: readonly ToolDefinition[], session: CursorKey, cursor: unknown): number {
  if (cursor === undefined) return 0;
  const after = cursorName(session, cursor);
  let low = 0;
  let high = definitions.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((definitions[middle] as ToolDefinition).function.name <= after) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * One client's connection: the ids of its calls and the hidden tools its searches promoted. Nothing
 * here is shared with another connection.
 */
interface Session {
  /** Random: JSON-RPC ids restart with every client, so a call's id needs the connection's. */
  readonly id: string;
  /** Its `tools/call` requests so far: a call's number is its turn, and the end of its id. */
  calls: number;
  readonly scope: PromotionScope;
  /** The promoted tools offered when the client was last told that its list changed. */
  announced: string;
  /** Signs this session's `tools/list` cursors: a cursor of another session, or made up, is refused. */
  readonly cursorKey: Buffer;
}

/**
 * What crosses the boundary of a result: the model's text (`contentForLLM`), its parts after it
 * (images, audio, files: {@link toMcpContent}) and `isError`, nothing else.
 */
function toCallToolResult(result: ToolResult): CallToolResult {
  const content: CallToolResult["content"] = [{ type: "text", text: result.contentForLLM() }];
  if (result.parts !== undefined && result.parts.length > 0) content.push(...toMcpContent(result.parts));
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
 * Tells the session's client that its tool list changed when the hidden tools offered to its next
 * call are not those offered when it was last told: a search promoted some, or their turns ran out.
 */
async function announce(
  session: Session,
  sendNotification: (notification: ServerNotification) => Promise<void>,
): Promise<void> {
  if (session.scope.size === 0 && session.announced === "") return;
  const offered = session.scope
    .offered(session.calls + 1)
    .sort()
    .join("\n");
  if (offered === session.announced) return;
  session.announced = offered;
  // A closed transport: the client lists again when it reconnects.
  await sendNotification({ method: "notifications/tools/list_changed" }).catch(() => {});
}

/**
 * Serves a registry as an MCP server (the SDK v1's `McpServer`; connect it to any transport with
 * `await server.connect(transport)`). `tools/list` lists the registry's visible tools — name,
 * description and `parameters` as `inputSchema` — read afresh on every request, in pages of
 * `options.pageSize` (100) with MCP's `nextCursor` (valid for that connection only: any other cursor
 * is `-32602`, invalid params); `tools/call` runs `registry.execute` under the
 * request's signal, so a client's cancellation (or its request timeout, or a closed connection)
 * aborts the tool's `context.signal`. Each call's `context.toolCallId` is `mcp-<connection>-<n>`:
 * unique per connection and across connections (JSON-RPC request ids restart with every client).
 *
 * Every outcome of a call is a result, never a JSON-RPC error: success → one text block with the
 * result's `contentForLLM()`, then its `parts` (an image → MCP `image`, an `audio/*` file → `audio`,
 * another file → an embedded `resource` blob, an image URL → a `resource_link`); an error result, invalid arguments, an unknown tool or a throw →
 * `isError: true` with the message the model would read. `forUser`, `silent`, `data`, `metadata`
 * and `err` never cross (`data` is for your code, not the model: there is no `structuredContent`).
 * Progress the tool reports goes to clients that sent a `progressToken`.
 *
 * Each connection is a session of its own: the hidden tools a client's search (the discovery tools
 * of `createToolSearchTools`) finds are offered to that client only, for its next `ttl` tool calls,
 * and run only once its `tools/list` showed them; the server sends that client
 * `notifications/tools/list_changed` when they come and go. No client changes what another sees.
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
  const { name, version, maxConcurrency, timeoutMs, pageSize } = checkServerArguments(registry, info, options);
  const server = new McpServer({ name, version });
  const served: Served = {
    registry,
    inView: registryView(registry),
    convert: converter(),
    sessionOf: sessions(server),
    slots: new PQueue({ concurrency: maxConcurrency }),
    timeoutMs,
    pageSize,
  };
  // Declared before any handler (the SDK checks) and before connect (it refuses later).
  server.server.registerCapabilities({ tools: { listChanged: true } });
  server.server.setRequestHandler(ListToolsRequestSchema, (request) => listTools(served, request.params?.cursor));
  server.server.setRequestHandler(RawCallToolRequestSchema, (request, extra) => callTool(served, request, extra));
  return server;
}

/** What the request handlers of one server share. */
interface Served {
  readonly registry: ToolRegistry;
  /** The per-session view of a registry of this copy, or `undefined` (one view for all). */
  readonly inView: RegistryView | undefined;
  /** A definition as its `tools/list` entry (converted once). */
  readonly convert: (definition: ToolDefinition) => McpTool;
  /** The session of the connection the request under way came on. */
  readonly sessionOf: () => Session;
  /** The call slots (`maxConcurrency`). */
  readonly slots: PQueue;
  readonly timeoutMs: number | undefined;
  readonly pageSize: number;
}

/** A registry's per-session definitions and its execution of a checked call, read through its symbols. */
interface RegistryView {
  readonly definitions: (...args: unknown[]) => unknown;
  readonly execute: (...args: unknown[]) => unknown;
}

/** Checks the arguments of {@link createMcpServer}, with their defaults. @throws TypeError echoing a bad one */
function checkServerArguments(registry: unknown, info: unknown, options: unknown) {
  const where = "createMcpServer";
  if (!isRecord(registry) || typeof registry.getDefinitions !== "function" || typeof registry.execute !== "function") {
    throw optionError(where, "registry", "a ToolRegistry", registry);
  }
  if (!isRecord(info)) throw optionError(where, "info", "an object { name, version }", info);
  const { name, version } = info;
  if (typeof name !== "string" || name === "") throw optionError(where, "info.name", "a non-empty string", name);
  if (typeof version !== "string") throw optionError(where, "info.version", "a string", version);
  if (!isRecord(options)) throw optionError(where, "options", "an object", options);
  return {
    name,
    version,
    maxConcurrency: checkCount(where, "options.maxConcurrency", options.maxConcurrency, 16),
    timeoutMs: checkTimeout(where, "options.timeoutMs", options.timeoutMs),
    pageSize: checkCount(where, "options.pageSize", options.pageSize, 100),
  };
}

/**
 * A registry of this copy serves each session its own view (its calls as the loop's: the server
 * made their options itself). One whose execute is overridden keeps getting every call, and
 * another copy's (or a stand-in) is served as one view for all, its searches promoting nothing.
 */
function registryView(registry: ToolRegistry): RegistryView | undefined {
  const { [VIEW_DEFINITIONS]: viewDefinitions, [EXECUTE_CHECKED]: executeChecked } = registry as unknown as Partial<
    Record<symbol, unknown>
  >;
  return typeof viewDefinitions === "function" &&
    typeof executeChecked === "function" &&
    registry.execute === ToolRegistry.prototype.execute &&
    registry.executeWithContext === ToolRegistry.prototype.executeWithContext
    ? {
        definitions: viewDefinitions as RegistryView["definitions"],
        execute: executeChecked as RegistryView["execute"],
      }
    : undefined;
}

/** Registry definitions are frozen and kept until the registry changes: each is converted once. */
function converter(): (definition: ToolDefinition) => McpTool {
  const converted = new WeakMap<ToolDefinition, McpTool>();
  return (definition) => {
    let tool = converted.get(definition);
    if (tool === undefined) {
      tool = toMcpTool(definition);
      converted.set(definition, tool);
    }
    return tool;
  };
}

/** One session per connection, keyed by its transport (a reconnection is a new session). */
function sessions(server: McpServer): () => Session {
  const byTransport = new WeakMap<object, Session>();
  const unconnected = {};
  return () => {
    const transport: object = server.server.transport ?? unconnected;
    let session = byTransport.get(transport);
    if (session === undefined) {
      session = { id: randomUUID(), calls: 0, scope: new PromotionScope(), announced: "", cursorKey: randomBytes(32) };
      byTransport.set(transport, session);
    }
    return session;
  };
}

/** `tools/list`: the page after `cursor` of what the session's next call may run. */
function listTools(served: Served, cursor: unknown): ListToolsResult {
  const { registry, inView, pageSize } = served;
  const session = served.sessionOf();
  // What the session's next call may run: the page shows those tools to the client's model.
  const view: PromotionView = { scope: session.scope, turn: session.calls + 1 };
  const definitions =
    inView === undefined
      ? registry.getDefinitions()
      : (inView.definitions.call(registry, view) as readonly ToolDefinition[]);
  const start = pageStart(definitions, session, cursor);
  const page = definitions.slice(start, start + pageSize);
  const names = page.map((definition) => definition.function.name);
  session.scope.show(names, view.turn);
  const result: ListToolsResult = { tools: page.map(served.convert) };
  if (start + pageSize < definitions.length) result.nextCursor = cursorAfter(session, names.at(-1) as string);
  return result;
}

/** What the SDK hands a request handler besides the request (its signal, `_meta`, `sendNotification`). */
type HandlerExtra = {
  signal: AbortSignal;
  _meta?: { progressToken?: ProgressToken | undefined } | undefined;
  sendNotification: (notification: ServerNotification) => Promise<void>;
};

/** `tools/call`: runs the tool through the registry in a slot; every outcome is a result. */
async function callTool(
  served: Served,
  request: { params: Record<string, unknown> },
  extra: HandlerExtra,
): Promise<CallToolResult> {
  const { registry, inView, slots, timeoutMs } = served;
  // The SDK checked `name` (a string) and `arguments` (an object, when present) before this runs.
  const { name: toolName, arguments: args = {} } = request.params as { name: string; arguments?: unknown };
  const session = served.sessionOf();
  const turn = ++session.calls;
  if (slots.size >= MAX_WAITING_CALLS) {
    const text = `MCP server busy: ${slots.pending} calls running and ${slots.size} waiting; try again later`;
    return { content: [{ type: "text", text }], isError: true };
  }
  try {
    const toolCallId = `mcp-${session.id}-${turn}`;
    const onProgress = forwardProgress(extra._meta?.progressToken, extra.sendNotification);
    let run: () => Promise<ToolResult>;
    if (inView === undefined) {
      const execute: ExecuteOptions = { signal: extra.signal, toolCallId, timeoutMs };
      if (onProgress !== undefined) execute.onProgress = onProgress;
      run = () => registry.execute(toolName, args as Record<string, unknown>, execute);
    } else {
      const call: CheckedCall = {
        name: toolName,
        args: args as Record<string, unknown>,
        channel: "",
        chatId: "",
        asyncCallback: undefined,
        signal: extra.signal,
        metadata: undefined,
        toolCallId,
        timeoutMs,
        onProgress,
      };
      const view: PromotionView = { scope: session.scope, turn };
      run = () => inView.execute.call(registry, call, view) as Promise<ToolResult>;
    }
    // A call cancelled while it waits for a slot never runs (p-queue rejects with the signal's reason).
    const result = await slots.add(run, { signal: extra.signal });
    await announce(session, extra.sendNotification);
    return toCallToolResult(result);
  } catch (error) {
    // The registry never rejects; a registry-like object or a result that cannot be read might.
    return { content: [{ type: "text", text: errorMessage(error) }], isError: true };
  }
}
