import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ErrorCode, McpError, ToolSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod/v4";
import { failure, isValidTimeout, MAX_TIMEOUT_MS, TIMEOUT_EXPECTATION } from "../execute-tool-call.js";
import { linkSignal, subscribeAbort } from "../internal/abort.js";
import { boundText, cutName, errorMessage, isRecord, jsonText, quoteName } from "../internal/describe.js";
import { log, type ResolvedLogger, resolveLogger } from "../internal/logger.js";
import { optionError } from "../internal/options.js";
import type { Logger } from "../logger.js";
import type { Tool, ToolContext } from "../tool.js";
import { REGISTERED_TOOL, type ToolRegistry } from "../tool-registry.js";
import type { ToolResult } from "../tool-result.js";
import { convertMcpResult } from "./convert-mcp-content.js";
import { checkRegistration, type Registration, registerImported, type SchemaShareOption } from "./import-budget.js";
import { mcpToolNames } from "./mcp-tool-name.js";
import { onToolListChanged } from "./tool-list-changed.js";

/** Options of {@link registerMcpTools}. */
export interface RegisterMcpToolsOptions extends SchemaShareOption {
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
   * How long one `tools/call` (and a whole `tools/list` listing, all its pages) may take before the
   * call becomes an error result (code `timeout`) and the request is cancelled. Only this timer
   * makes a `timeout`: a JSON-RPC error from the server (its code -32001 "Request timed out"
   * included) is the server's error (code `tool_failed`). `Infinity`: as long as the loop's signal
   * allows.
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
/** Most tools read or registered before the import yields to the event loop, however fast they go. */
const SLICE_TOOLS = 50;
/** Longest reason a skipped tool's warning gives (it quotes the server's keys). */
const MAX_REASON_CHARS = 300;
/** Longest error message of the server's that a result echoes. */
const MAX_SERVER_MESSAGE_CHARS = 1_000;
/**
 * The result schema of our requests: anything. The SDK's own schemas (`ListToolsResultSchema`,
 * `CallToolResultSchema`) refuse a whole answer for one bad part — a malformed tool fails the
 * listing, an unknown content type the call, with a dump of zod issues — so each answer is read
 * here, part by part, and what cannot be used is skipped or described.
 */
const ANY_RESULT = z.unknown();

const DEFAULT_TIMEOUT_MS = 60_000;
const WHERE = "registerMcpTools";

/**
 * Slices of synchronous work: reading and compiling a thousand tools costs more than the event
 * loop should wait, so the work yields (`setImmediate`) whenever a slice has lasted `SLICE_MS` or
 * held `SLICE_TOOLS` tools — a bound in work too, so that it holds on a loaded machine as well.
 */
interface Slices {
  /** Counts one more tool; `true` when the current slice is over (then call {@link pause}). */
  due(): boolean;
  /** Yields to the event loop and starts a new slice. */
  pause(): Promise<void>;
}

function slices(): Slices {
  let start = performance.now();
  let tools = 0;
  return {
    due: () => ++tools > SLICE_TOOLS || performance.now() - start > SLICE_MS,
    pause: async () => {
      await new Promise((resolve) => setImmediate(resolve));
      start = performance.now();
      tools = 1;
    },
  };
}

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
  registration: Registration;
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
  const { serverName, timeoutMs = DEFAULT_TIMEOUT_MS } = options;
  if (typeof serverName !== "string" || serverName === "") {
    throw optionError(WHERE, "serverName", "a non-empty string", serverName);
  }
  if (!isValidTimeout(timeoutMs)) throw optionError(WHERE, "timeoutMs", TIMEOUT_EXPECTATION, timeoutMs);
  return {
    registry: registry as unknown as ToolRegistry,
    client: client as unknown as Client,
    serverName,
    registration: checkRegistration(WHERE, registry, options, serverName),
    timeout: timeoutMs === Number.POSITIVE_INFINITY ? MAX_TIMEOUT_MS : timeoutMs,
    logger: resolveLogger(options.logger, WHERE),
  };
}

/** Why `listed` is not an MCP `Tool` (the first issue of the SDK's own schema), or `undefined` when it is one. */
function toolShapeIssue(listed: unknown): string | undefined {
  const parsed = ToolSchema.safeParse(listed);
  if (parsed.success) return undefined;
  const issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }> = parsed.error.issues;
  const [first] = issues;
  if (first === undefined) return "it is not an MCP tool";
  // Paths hold the server's keys: each is cut, and so is the whole reason.
  const path = first.path.map((key) => cutName(String(key))).join(".");
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : "";
  return boundText(`it is not an MCP tool: ${path === "" ? "" : `${path}: `}${first.message}${more}`, MAX_REASON_CHARS);
}

/** Reads one listed tool, or says why it cannot be imported. */
function readServerTool(settings: Settings, listed: unknown): ServerTool | string {
  // The MCP `Tool` shape first (what `Client.listTools` checks for the whole list at once): a name,
  // an `inputSchema` (and any `outputSchema`) of type "object", boolean hints …
  const issue = toolShapeIssue(listed);
  if (issue !== undefined) return issue;
  if (!isRecord(listed) || typeof listed.name !== "string" || listed.name === "") return "it has no name";
  const { name, inputSchema } = listed;
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

/** A request that ran out of its `timeoutMs`: our own timer fired, whatever the server said. */
class RequestTimedOut extends Error {}

/**
 * Sends one request and resolves with its result, unchecked (see {@link ANY_RESULT}). Rejects with
 * {@link RequestTimedOut} only when our own timer fired after `ms`: the SDK's timeout and a
 * server's error share the code -32001 (`RequestTimeout`), so the SDK's is never armed (the longest
 * `setTimeout`) and a server's -32001 stays the server's error. `signal` or the timer cancels the
 * request (`notifications/cancelled`).
 */
async function timedRequest(
  client: Client,
  request: Parameters<Client["request"]>[0],
  ms: number,
  signal: AbortSignal,
  onprogress?: (progress: { progress: number; total?: number | undefined; message?: string | undefined }) => void,
): Promise<unknown> {
  // A controller per request: the SDK leaves its abort listener on the signal it is given.
  const controller = new AbortController();
  let timedOut = false;
  let unsubscribe = () => {};
  if (signal.aborted) controller.abort(signal.reason);
  else unsubscribe = subscribeAbort(signal, (reason) => controller.abort(reason));
  const timer = setTimeout(() => {
    timedOut = true;
    // What the server reads in `notifications/cancelled`, as with the SDK's own timeout.
    controller.abort(new McpError(ErrorCode.RequestTimeout, "Request timed out", { timeout: ms }));
  }, ms);
  try {
    return await client.request(request, ANY_RESULT, {
      signal: controller.signal,
      timeout: MAX_TIMEOUT_MS,
      ...(onprogress === undefined ? {} : { onprogress }),
    });
  } catch (error) {
    if (timedOut && !signal.aborted) throw new RequestTimedOut(`no answer within ${ms} ms`, { cause: error });
    throw error;
  } finally {
    clearTimeout(timer);
    unsubscribe();
  }
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
  // Each entry is checked against the MCP Tool shape and copied: for a thousand of them, that takes a while.
  const slice = slices();
  do {
    // A plain request, not `listTools`: that validates the whole list with zod (one malformed tool
    // fails it all), and compiles every tool's `outputSchema` with the SDK's Ajv (one the server got
    // wrong fails the listing too) and Ajv keeps each compiled copy, so every `list_changed` would
    // grow memory for good. Calls never use those validators (see below).
    const request = { method: "tools/list" as const, ...(cursor === undefined ? {} : { params: { cursor } }) };
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new Error(`the listing took longer than ${settings.timeout} ms (timeoutMs)`);
    let page: unknown;
    try {
      page = await timedRequest(client, request, remaining, signal);
    } catch (error) {
      if (error instanceof RequestTimedOut) {
        throw new Error(`the listing took longer than ${settings.timeout} ms (timeoutMs)`, { cause: error });
      }
      throw error;
    }
    pages++;
    // A malformed page is a failed listing, not an empty one: a refresh must not unregister every tool.
    if (!isRecord(page) || !Array.isArray(page.tools)) throw new Error("the tools/list answer has no tools array");
    for (const entry of page.tools as unknown[]) {
      if (++listed > MAX_TOOLS) break;
      if (slice.due()) {
        await slice.pause();
        signal.throwIfAborted();
      }
      const tool = readServerTool(settings, entry);
      // Named in the warning only when it has a usable name.
      const shown = isRecord(entry) && typeof entry.name === "string" ? cutName(entry.name) : undefined;
      if (typeof tool === "string") {
        log(logger, "warn", () => ({ server: serverName, mcpTool: shown, reason: tool }), "MCP tool skipped");
      } else if (tools.has(tool.name)) {
        log(logger, "warn", () => ({ server: serverName, mcpTool: shown }), "MCP tool skipped: listed twice");
      } else {
        tools.set(tool.name, tool);
      }
    }
    if (page.nextCursor !== undefined && page.nextCursor !== null && typeof page.nextCursor !== "string") {
      throw new Error("the tools/list answer's nextCursor is not a string");
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
  // Only our own timer: a server's error -32001 ("Request timed out") is the server's error.
  if (error instanceof RequestTimedOut) {
    return failure(
      name,
      "timeout",
      `${where} did not answer tool ${quoteName(mcpName)} within ${settings.timeout} ms`,
      error,
    );
  }
  // `MCP error <code>: <the server's message>` for a JSON-RPC error; the message is the server's: bounded.
  const message = boundText(errorMessage(error), MAX_SERVER_MESSAGE_CHARS);
  return failure(name, "tool_failed", `${where} failed to run tool ${quoteName(mcpName)}: ${message}`, error);
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
    // A plain request, not `callTool` (see `listServerTools`): that validates the result with zod
    // (an unknown content type fails the call with a dump of zod issues) and `structuredContent`
    // against the server's `outputSchema` with the SDK's Ajv, whose patterns backtrack (a hostile
    // server could hold the event loop for hours with one short string). The model reads the
    // content, converted block by block, never validated output.
    const params = { name: mcpName, arguments: args };
    result = await timedRequest(
      settings.client,
      { method: "tools/call" as const, params },
      settings.timeout,
      signal,
      ({ progress, total, message }) =>
        context.reportProgress(total !== undefined && total > 0 ? progress / total : undefined, message),
    );
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
 * the registry; a changed tool is replaced in one step (a call meanwhile is answered by the old
 * or the new version, never "not found"). Several imports may share one client; a `list_changed`
 * handler set on the client before is still called. A listed entry that is not an MCP `Tool` (no
 * name, an `inputSchema` or `outputSchema` whose type is not `"object"`, a hint that is not a
 * boolean …) and a tool the registry refuses (its schema) are skipped with a warning through
 * `logger`, as are tools beyond the bounds (1,000 tools, 100 pages, schemas of 100,000
 * characters); the others are imported. Descriptions are cut at 4,000 characters.
 *
 * @returns the imported names and `close()`, which unregisters them (the client stays open)
 * @throws TypeError (rejects) for a bad option, echoing it; rejects with an Error naming the
 * server when the first `tools/list` fails (nothing is registered then)
 * @example
 * ```ts
 * const server = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-filesystem/dist/index.js");
 * const client = new Client({ name: "my-agent", version: "1.0.0" });
 * await client.connect(new StdioClientTransport({ command: process.execPath, args: [server, dir] }));
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
    // Whatever the registry refuses (an invalid or oversized schema, a lock, a duplicate with
    // onDuplicate "throw") costs this tool only: the others are imported.
    try {
      registerImported(registry, settings.registration, tool);
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
    // A tool whose name changes hands (renamed, or no longer listed) leaves it now — unless another
    // tool takes that name: then it is replaced at that tool's turn, in one step.
    const taken = new Set([...names.values()].filter((name) => name !== undefined));
    const displaced = new Map<string, Imported>();
    for (const [mcpName, entry] of imported) {
      if (names.get(mcpName) === entry.name) continue;
      imported.delete(mcpName);
      if (taken.has(entry.name)) displaced.set(entry.name, entry);
      else remove(entry);
    }
    try {
      const slice = slices();
      for (const tool of tools) {
        const current = imported.get(tool.name);
        if (current?.fingerprint === tool.fingerprint) continue;
        // A schema costs milliseconds to compile, and a server may list a thousand: the event loop
        // gets its turn between slices, so an import never blocks the process for long.
        if (slice.due()) {
          await slice.pause();
          if (closed) return;
        }
        const name = names.get(tool.name);
        const fields = () => ({ server: serverName, mcpTool: cutName(tool.name), tool: name });
        if (name === undefined) {
          log(logger, "warn", fields, "MCP tool skipped: no free name");
          continue;
        }
        // The old tool out and the new one in with no await between: a call during the refresh is
        // answered by the one or the other, never "not found".
        const old = current ?? displaced.get(name);
        if (old !== undefined) {
          imported.delete(tool.name);
          displaced.delete(name);
          remove(old);
        }
        if (registry.has(name) && !ownNames.has(name))
          log(logger, "warn", fields, "MCP tool skipped: name taken meanwhile");
        else add(name, tool);
      }
    } finally {
      // A name whose new tool was not reached (close() during the refresh) is not left behind.
      for (const entry of displaced.values()) remove(entry);
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
