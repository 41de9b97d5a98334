import { ToolSchema } from "@modelcontextprotocol/sdk/types.js";
import { boundText, cutName, isRecord, jsonText } from "../internal/describe.js";
import { log } from "../internal/logger.js";
import { type WorkBudget, WorkMeter } from "../internal/work-meter.js";
import type { McpImportSettings } from "./register-mcp-tools-options.js";
import { RequestTimedOut, timedRequest } from "./timed-request.js";

/** Most tools imported from one server: each costs a schema compilation and prompt space. */
export const MAX_TOOLS = 1_000;
/** Most `tools/list` pages read in one listing (a server could hand out cursors forever). */
export const MAX_PAGES = 100;
/** Longest description (after `[MCP:<server>] `) a tool gets: it is sent with every request. */
const MAX_DESCRIPTION_CHARS = 4_000;
/** Longest input schema, as JSON text, the import compiles. */
const MAX_SCHEMA_CHARS = 100_000;
/** Longest reason a skipped tool's warning gives (it quotes the server's keys). */
const MAX_REASON_CHARS = 300;
/**
 * Slices of synchronous work: reading and compiling a thousand tools costs more than the event loop
 * should wait, so the work yields whenever a slice has lasted 20 ms or held 50 tools — a bound in
 * work too, so that it holds on a loaded machine as well. The time in slices is the listing's work.
 */
export const SLICES: WorkBudget = { maxMs: Number.POSITIVE_INFINITY, sliceMs: 20, sliceUnits: 50 };

/** What the listing needs of the import's settings. */
type ListingSettings = Pick<McpImportSettings, "client" | "serverName" | "timeout" | "logger">;

/** One server tool as the import prepared it (everything read once, bounded, copied). */
export interface ServerTool {
  /** The name on the server, used for `tools/call`. */
  name: string;
  /** `[MCP:<server>] <description>`, bounded. */
  description: string;
  /** The `inputSchema`, copied as plain JSON. */
  parameters: Record<string, unknown>;
  /** Description and schema text: a tool whose fingerprint changed is registered again. */
  fingerprint: string;
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
export function readServerTool(settings: Pick<McpImportSettings, "serverName">, listed: unknown): ServerTool | string {
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

/** Milliseconds of synchronous work a listing did, added up as it goes (see {@link SLICES}). */
export interface Work {
  /** Milliseconds so far. */
  ms: number;
}

/**
 * Every tool the server lists, page by page, within the import's bounds (`timeoutMs` for the whole
 * listing); `signal` cancels the listing. The time spent reading the pages is added to `work`.
 */
export async function listServerTools(
  settings: ListingSettings,
  signal: AbortSignal,
  work: Work,
): Promise<ServerTool[]> {
  const { client, logger, serverName } = settings;
  const tools = new Map<string, ServerTool>();
  let cursor: string | undefined;
  let pages = 0;
  let listed = 0;
  // `timeoutMs` bounds the whole listing, not each page: a server answering every page just in
  // time could otherwise hold an import for 100 × timeoutMs.
  const deadline = Date.now() + settings.timeout;
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
    // Each entry is checked against the MCP Tool shape and copied: for a thousand of them, that
    // takes a while. A meter per page: the wait for the next page is not work.
    const meter = new WorkMeter(SLICES);
    for (const entry of page.tools as unknown[]) {
      if (++listed > MAX_TOOLS) break;
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
      if (meter.tick()) await meter.pause(signal);
    }
    work.ms += meter.spent;
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
