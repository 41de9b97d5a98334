import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, ErrorCode, ListToolsResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { failure, isValidTimeout, MAX_TIMEOUT_MS, TIMEOUT_EXPECTATION } from "../execute-tool-call.js";
import { linkSignal } from "../internal/abort.js";
import { boundText, cutName, errorMessage, isRecord, jsonText, quoteName } from "../internal/describe.js";
import { log, type ResolvedLogger, resolveLogger } from "../internal/logger.js";
import { optionError } from "../internal/options.js";
import type { Logger } from "../logger.js";
import type { Tool, ToolContext } from "../tool.js";
import { REGISTERED_TOOL, type ToolRegistry } from "../tool-registry.js";
import type { ToolResult } from "../tool-result.js";
import { convertMcpResult } from "./convert-mcp-content.js";
import { mcpToolNames } from "./mcp-tool-name.js";
import { onToolListChanged } from "./tool-list-changed.js";

/** Options of {@link registerMcpTools}. */
export interface RegisterMcpToolsOptions {
  /**
   * Names the server in tool names (`mcp_<server>_<tool>`, sanitised), in descriptions
   * (`[MCP:<server>] …`, as given) and in error messages. Not empty.
   */
  serverName: string;
  /**
   * Register the tools with `registry.registerHidden`: the model finds them through the tool-search
   * tools (`createToolSearchTools`) instead of seeing them all in every request.
   * @default false
   */
  hidden?: boolean | undefined;
  /**
   * How long one `tools/call` (and each `tools/list` page) may take before the call becomes an
   * error result (code `timeout`) and the request is cancelled. `Infinity`: as long as the loop's
   * signal allows.
   * @default 60000
   */
  timeoutMs?: number | undefined;
  /**
   * Where the import says what it skipped or could not do (warn): a tool whose schema the registry
   * refuses, a name that stays taken, a listing cut at its bounds, a failed refresh after
   * `list_changed`. The registry has no public logger, so pass the same one here.
   * @default a silent pino logger
   */
  logger?: Logger | undefined;
}

/** What {@link registerMcpTools} resolves with: the imported tools, kept in step with the server. */
export interface RegisteredMcpTools {
  /** The registry names of the tools imported now (after every `list_changed` update), sorted; a fresh array. */
  readonly names: string[];
  /**
   * Stops following the server's `list_changed` and unregisters the imported tools (those another
   * registration has not replaced meanwhile). The client stays connected: close it yourself.
   * Idempotent.
   */
  close(): Promise<void>;
}

/** Most tools imported from one server: each costs a schema compilation and prompt space. */
const MAX_TOOLS = 1_000;
/** Most `tools/list` pages read in one listing (a server could hand out cursors forever). */
const MAX_PAGES = 100;
/** Longest description (after `[MCP:<server>] `) a tool gets: it is sent with every request. */
const MAX_DESCRIPTION_CHARS = 4_000;
/** Longest input schema, as JSON text, the import compiles. */
const MAX_SCHEMA_CHARS = 100_000;
/** Longest stretch of registrations (schema compilations) before the import yields to the event loop. */
const SLICE_MS = 20;
const DEFAULT_TIMEOUT_MS = 60_000;
const WHERE = "registerMcpTools";

/** One server tool as the import prepared it (everything read once, bounded, copied). */
interface ServerTool {
  /** The name on the server, used for `tools/call`. */
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  /** Description and schema text: a tool whose fingerprint changed is registered again. */
  fingerprint: string;
}

interface Imported {
  name: string;
  tool: Tool;
  fingerprint: string;
}

interface Settings {
  registry: ToolRegistry;
  client: Client;
  serverName: string;
  hidden: boolean;
  timeout: number;
  logger: ResolvedLogger;
}

function checkOptions(registry: unknown, client: unknown, options: unknown): Settings {
  if (!isRecord(registry) || typeof registry.register !== "function" || typeof registry.unregister !== "function") {
    throw optionError(WHERE, "registry", "a ToolRegistry", registry);
  }
  const methods = ["request", "setNotificationHandler", "removeNotificationHandler"];
  if (!isRecord(client) || methods.some((method) => typeof client[method] !== "function")) {
    throw optionError(WHERE, "client", "a connected Client of @modelcontextprotocol/sdk (v1)", client);
  }
  if (!isRecord(options)) throw optionError(WHERE, "options", "an object", options);
  const { serverName, hidden = false, timeoutMs = DEFAULT_TIMEOUT_MS } = options;
  if (typeof serverName !== "string" || serverName === "") {
    throw optionError(WHERE, "serverName", "a non-empty string", serverName);
  }
  if (typeof hidden !== "boolean") throw optionError(WHERE, "hidden", "a boolean", hidden);
  if (!isValidTimeout(timeoutMs)) throw optionError(WHERE, "timeoutMs", TIMEOUT_EXPECTATION, timeoutMs);
  if (hidden && typeof registry.registerHidden !== "function") {
    throw optionError(WHERE, "registry", "a ToolRegistry with registerHidden (for hidden: true)", registry);
  }
  return {
    registry: registry as unknown as ToolRegistry,
    client: client as unknown as Client,
    serverName,
    hidden,
    timeout: timeoutMs === Number.POSITIVE_INFINITY ? MAX_TIMEOUT_MS : timeoutMs,
    logger: resolveLogger(options.logger, WHERE),
  };
}

/** Reads one listed tool, or says why it cannot be imported. */
function readServerTool(settings: Settings, listed: unknown): ServerTool | string {
  if (!isRecord(listed) || typeof listed.name !== "string" || listed.name === "") return "it has no name";
  const { name, inputSchema = { type: "object" } } = listed;
  let text = typeof listed.description === "string" ? listed.description.trim() : "";
  if (text === "") text = typeof listed.title === "string" && listed.title !== "" ? listed.title : name;
  const description = `[MCP:${settings.serverName}] ${boundText(text, MAX_DESCRIPTION_CHARS)}`;
  if (!isRecord(inputSchema)) return "its inputSchema is not an object";
  // A copy made of plain JSON: no getters, no prototypes, nothing the server's object shares.
  const schemaText = jsonText(inputSchema);
  if (schemaText === undefined) return "its inputSchema has no JSON form";
  if (schemaText.length > MAX_SCHEMA_CHARS) {
    return `its inputSchema is ${schemaText.length} characters of JSON (at most ${MAX_SCHEMA_CHARS})`;
  }
  const parameters = JSON.parse(schemaText) as Record<string, unknown>;
  return { name, description, parameters, fingerprint: `${description}\u0000${schemaText}` };
}

/**
 * Every tool the server lists, page by page, within the import's bounds (`timeoutMs` for the whole
 * listing); `signal` cancels the listing.
 */
async function listServerTools(settings: Settings, signal: AbortSignal): Promise<ServerTool[]> {
  const { client, logger, serverName } = settings;
  const tools = new Map<string, ServerTool>();
  let cursor: string | undefined;
  let pages = 0;
  let listed = 0;
  // `timeoutMs` bounds the whole listing, not each page: a server answering every page just in
  // time could otherwise hold an import for 100 × timeoutMs.
  const deadline = Date.now() + settings.timeout;
  do {
    // A plain request, not `listTools`: that compiles every tool's `outputSchema` with the SDK's Ajv
    // (one the server got wrong fails the whole listing) and Ajv keeps each compiled copy, so every
    // `list_changed` would grow memory for good. Calls never use those validators (see below).
    const request =
      cursor === undefined ? { method: "tools/list" as const } : { method: "tools/list" as const, params: { cursor } };
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new Error(`the listing took longer than ${settings.timeout} ms (timeoutMs)`);
    const page = await client.request(request, ListToolsResultSchema, { timeout: remaining, signal });
    pages++;
    for (const entry of Array.isArray(page.tools) ? page.tools : []) {
      if (++listed > MAX_TOOLS) break;
      const tool = readServerTool(settings, entry);
      const shown = isRecord(entry) ? cutName(entry.name) : undefined;
      if (typeof tool === "string") {
        log(logger, "warn", () => ({ server: serverName, mcpTool: shown, reason: tool }), "MCP tool skipped");
      } else if (tools.has(tool.name)) {
        log(logger, "warn", () => ({ server: serverName, mcpTool: shown }), "MCP tool skipped: listed twice");
      } else {
        tools.set(tool.name, tool);
      }
    }
    cursor = typeof page.nextCursor === "string" ? page.nextCursor : undefined;
  } while (cursor !== undefined && listed <= MAX_TOOLS && pages < MAX_PAGES);
  if (listed > MAX_TOOLS || cursor !== undefined) {
    log(
      logger,
      "warn",
      () => ({ server: serverName, imported: tools.size, maxTools: MAX_TOOLS, maxPages: MAX_PAGES }),
      "MCP tool list cut: the server lists more tools or pages than the import reads",
    );
  }
  return [...tools.values()];
}

/** What a `tools/call` that did not resolve becomes: an error result naming the server. */
function callFailure(
  settings: Settings,
  name: string,
  mcpName: string,
  error: unknown,
  signal: AbortSignal,
): ToolResult {
  const where = `MCP server ${quoteName(settings.serverName)}`;
  if (signal.aborted) {
    return failure(name, "aborted", `tool ${quoteName(mcpName)} was aborted before ${where} answered`, error);
  }
  if (isRecord(error) && error.code === ErrorCode.RequestTimeout) {
    return failure(
      name,
      "timeout",
      `${where} did not answer tool ${quoteName(mcpName)} within ${settings.timeout} ms`,
      error,
    );
  }
  return failure(
    name,
    "tool_failed",
    `${where} failed to run tool ${quoteName(mcpName)}: ${errorMessage(error)}`,
    error,
  );
}

/** Calls the server's tool; every outcome is a result, never a rejection. */
async function callServerTool(
  settings: Settings,
  name: string,
  mcpName: string,
  args: Record<string, unknown>,
  context: ToolContext,
): Promise<ToolResult> {
  const { signal } = context;
  let result: unknown;
  try {
    // A plain request, not `callTool` (see `listServerTools`): that validates `structuredContent` against the server's
    // `outputSchema` with the SDK's Ajv, whose patterns backtrack (a hostile server could hold the
    // event loop for hours with one short string). The model reads the content, never validated output.
    const params = { name: mcpName, arguments: args };
    result = await settings.client.request({ method: "tools/call", params }, CallToolResultSchema, {
      signal,
      timeout: settings.timeout,
      onprogress: ({ progress, total, message }) =>
        context.reportProgress(total !== undefined && total > 0 ? progress / total : undefined, message),
    });
  } catch (error) {
    return callFailure(settings, name, mcpName, error, signal);
  }
  return convertMcpResult(name, settings.serverName, result);
}

function createServerTool(settings: Settings, name: string, serverTool: ServerTool): Tool {
  const { description, parameters } = serverTool;
  const mcpName = serverTool.name;
  return Object.freeze({
    name,
    description,
    parameters,
    execute: (args: Record<string, unknown>, context: ToolContext) =>
      callServerTool(settings, name, mcpName, args, context),
  });
}

/**
 * Imports every tool of a connected MCP server into `registry` as `mcp_<server>_<tool>` (lower-cased,
 * characters outside `[a-z0-9_-]` → `_`, at most 64 characters; see docs/mcp.md for collisions),
 * described `[MCP:<server>] <description>`, with the server's `inputSchema` as `parameters`, so the
 * registry validates arguments before a call reaches the server. A call passes the loop's signal
 * and `timeoutMs`; its content becomes text (binary content described, never inlined); `isError`,
 * a timeout, a transport error or a closed server become error results naming the server.
 *
 * The import follows `notifications/tools/list_changed`: added, removed and changed tools reach
 * the registry. Several imports may share one client; a `list_changed` handler set on the client
 * before is still called. A tool the registry refuses (its schema) is skipped with a warning
 * through `logger`, as are tools beyond the bounds (1,000 tools, 100 pages, schemas of 100,000
 * characters); descriptions are cut at 4,000 characters.
 *
 * @returns the imported names and `close()`, which unregisters them (the client stays open)
 * @throws TypeError (rejects) for a bad option, echoing it; rejects with an Error naming the
 * server when the first `tools/list` fails (nothing is registered then)
 * @example
 * ```ts
 * const client = new Client({ name: "my-agent", version: "1.0.0" });
 * await client.connect(new StdioClientTransport({ command: "mcp-server-filesystem", args: [dir] }));
 * const fs = await registerMcpTools(registry, client, { serverName: "fs" });
 * fs.names; // ["mcp_fs_create_directory", …, "mcp_fs_write_file"]
 * ```
 */
export async function registerMcpTools(
  registry: ToolRegistry,
  client: Client,
  options: RegisterMcpToolsOptions,
): Promise<RegisteredMcpTools> {
  const settings = checkOptions(registry, client, options);
  const { logger, serverName } = settings;
  /** By the tool's name on the server. */
  const imported = new Map<string, Imported>();
  const ownNames = new Set<string>();
  let closed = false;
  // Aborted by close(): a listing under way is cancelled rather than awaited for up to `timeoutMs`.
  const stop = new AbortController();

  const remove = (entry: Imported): void => {
    ownNames.delete(entry.name);
    // Leave a tool alone that another registration put under the name meanwhile, hidden or not. A
    // registry of another copy without the lookup: a hidden tool is "not found" by `get`, and is
    // taken to be ours.
    const lookup = (registry as Partial<Record<typeof REGISTERED_TOOL, unknown>>)[REGISTERED_TOOL];
    if (typeof lookup === "function") {
      if (lookup.call(registry, entry.name) === entry.tool) registry.unregister(entry.name);
      return;
    }
    const current = registry.get(entry.name);
    if (current === entry.tool || (current === undefined && registry.has(entry.name))) registry.unregister(entry.name);
  };

  const add = (name: string, serverTool: ServerTool): void => {
    const tool = createServerTool(settings, name, serverTool);
    try {
      if (settings.hidden) registry.registerHidden(tool);
      else registry.register(tool);
    } catch (error) {
      const reason = errorMessage(error);
      const fields = () => ({ server: serverName, mcpTool: cutName(serverTool.name), tool: name, reason });
      log(logger, "warn", fields, "MCP tool skipped: the registry refused it");
      return;
    }
    // The allowlist may have skipped it without a word to us.
    if (!registry.has(name)) return;
    imported.set(serverTool.name, { name, tool, fingerprint: serverTool.fingerprint });
    ownNames.add(name);
  };

  const refresh = async (): Promise<void> => {
    // A signal of this listing's own: the SDK leaves a listener on it per page (none on `stop`).
    const listing = linkSignal(stop.signal);
    let tools: ServerTool[];
    try {
      tools = await listServerTools(settings, listing.signal ?? stop.signal);
    } finally {
      listing.dispose();
    }
    if (closed) return;
    const names = mcpToolNames(
      serverName,
      tools.map((tool) => tool.name),
      (name) => registry.has(name) && !ownNames.has(name),
    );
    const listed = new Map(tools.map((tool) => [tool.name, tool]));
    for (const [mcpName, entry] of imported) {
      if (listed.get(mcpName)?.fingerprint !== entry.fingerprint || names.get(mcpName) !== entry.name) {
        remove(entry);
        imported.delete(mcpName);
      }
    }
    let slice = performance.now();
    for (const tool of tools) {
      if (imported.has(tool.name)) continue;
      // A schema costs milliseconds to compile, and a server may list a thousand: the event loop
      // gets its turn between slices, so an import never blocks the process for long.
      if (performance.now() - slice > SLICE_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        if (closed) return;
        slice = performance.now();
      }
      const name = names.get(tool.name);
      const fields = () => ({ server: serverName, mcpTool: cutName(tool.name), tool: name });
      if (name === undefined) log(logger, "warn", fields, "MCP tool skipped: no free name");
      else if (registry.has(name) && !ownNames.has(name))
        log(logger, "warn", fields, "MCP tool skipped: name taken meanwhile");
      else add(name, tool);
    }
  };

  // Refreshes run one at a time; notifications that arrive meanwhile make one more run.
  let running: Promise<void> | undefined;
  let again = false;
  const scheduleRefresh = (): void => {
    if (closed) return;
    if (running !== undefined) {
      again = true;
      return;
    }
    running = (async () => {
      do {
        again = false;
        try {
          await refresh();
        } catch (error) {
          const fields = () => ({ server: serverName, reason: errorMessage(error) });
          if (!closed)
            log(logger, "warn", fields, "MCP tool list not refreshed after list_changed: the tools stay as they were");
        }
      } while (again && !closed);
    })().finally(() => {
      running = undefined;
    });
  };

  // Listening first: a `list_changed` during the first listing makes one more.
  const unsubscribe = onToolListChanged(settings.client, scheduleRefresh);
  const first = refresh();
  running = first.then(
    () => undefined,
    () => undefined,
  );
  try {
    await first;
  } catch (error) {
    closed = true;
    unsubscribe();
    for (const entry of imported.values()) remove(entry);
    throw new Error(`${WHERE}: MCP server ${quoteName(serverName)} did not list its tools: ${errorMessage(error)}`, {
      cause: error,
    });
  } finally {
    running = undefined;
  }
  if (again) scheduleRefresh();

  let closing: Promise<void> | undefined;
  return {
    get names() {
      return [...ownNames].sort();
    },
    // Every call waits for the one closing: a second close() never resolves with the tools still there.
    close: () =>
      (closing ??= (async () => {
        closed = true;
        unsubscribe();
        // A refresh under way registers nothing more once closed; its listing is cancelled.
        stop.abort();
        await running;
        for (const entry of imported.values()) remove(entry);
        imported.clear();
      })()),
  };
}
