import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { linkSignal } from "../internal/abort.js";
import { errorMessage, quoteName } from "../internal/describe.js";
import { log } from "../internal/logger.js";
import type { ToolRegistry } from "../tool-registry.js";
import { ImportedTools } from "./imported-tools.js";
import { listServerTools, type ServerTool, type Work } from "./list-server-tools.js";
import { RefreshSchedule } from "./refresh-schedule.js";
import { checkImportOptions, type RegisterMcpToolsOptions, WHERE } from "./register-mcp-tools-options.js";
import { onToolListChanged } from "./tool-list-changed.js";

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

/** Most share of the time the listings after `list_changed` may spend on their own work. */
const REFRESH_WORK_SHARE = 0.1;

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
 * or the new version, never "not found"). Notifications are coalesced and listings rate-limited
 * (`refreshIntervalMs`, and a tenth of the time for their own work), so a server that notifies
 * without pause cannot keep the process compiling. Several imports may share one client; a
 * `list_changed` handler set on the client before is still called. A listed entry that is not an MCP `Tool` (no
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
  const settings = checkImportOptions(registry, client, options);
  const { logger, serverName } = settings;
  const tools = new ImportedTools(settings);
  // Aborted by close(): a listing under way is cancelled rather than awaited for up to `timeoutMs`.
  const stop = new AbortController();

  /** Lists the server's tools and brings the registry in step; the listing's own work goes to `work`. */
  const refresh = async (work: Work): Promise<void> => {
    // A signal of this listing's own: the SDK leaves a listener on it per page (none on `stop`).
    const listing = linkSignal(stop.signal);
    let listed: ServerTool[];
    try {
      listed = await listServerTools(settings, listing.signal ?? stop.signal, work);
    } finally {
      listing.dispose();
    }
    if (!stop.signal.aborted) await tools.apply(listed, work, stop.signal);
  };

  /** A refresh after `list_changed`: a failure keeps the tools as they were, with a warning. */
  const followed = async (): Promise<number> => {
    const work: Work = { ms: 0 };
    try {
      await refresh(work);
    } catch (error) {
      const fields = () => ({ server: serverName, reason: errorMessage(error) });
      if (!stop.signal.aborted)
        log(logger, "warn", fields, "MCP tool list not refreshed after list_changed: the tools stay as they were");
    }
    return work.ms;
  };
  const { refreshInterval: intervalMs } = settings;
  const schedule = new RefreshSchedule({ intervalMs, workShare: REFRESH_WORK_SHARE, run: followed });

  // Listening first: a `list_changed` during the first listing makes one more.
  const unsubscribe = onToolListChanged(settings.client, () => schedule.request());
  try {
    const work: Work = { ms: 0 };
    await schedule.first(() => refresh(work).then(() => work.ms));
  } catch (error) {
    stop.abort();
    unsubscribe();
    await schedule.close();
    tools.removeAll();
    throw new Error(`${WHERE}: MCP server ${quoteName(serverName)} did not list its tools: ${errorMessage(error)}`, {
      cause: error,
    });
  }

  let closing: Promise<void> | undefined;
  return {
    get names() {
      return tools.names;
    },
    // Every call waits for the one closing: a second close() never resolves with the tools still there.
    close: () =>
      (closing ??= (async () => {
        unsubscribe();
        // A waiting refresh is dropped; one under way registers nothing more, its listing is cancelled.
        const ended = schedule.close();
        stop.abort();
        await ended;
        tools.removeAll();
      })()),
  };
}
