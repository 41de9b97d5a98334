import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { isValidTimeout, MAX_TIMEOUT_MS, TIMEOUT_EXPECTATION } from "../execute-tool-call.js";
import { isRecord } from "../internal/describe.js";
import { type ResolvedLogger, resolveLogger } from "../internal/logger.js";
import { optionError } from "../internal/options.js";
import type { Logger } from "../logger.js";
import type { ToolRegistry } from "../tool-registry.js";
import { checkRegistration, type Registration, type SchemaShareOption } from "./import-budget.js";

/** Options of `registerMcpTools`. */
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
   * Least milliseconds between the starts of two listings after `notifications/tools/list_changed`:
   * notifications meanwhile are folded into one listing, so a server that notifies without pause is
   * listed at most once per interval (the first notification after the import is followed at once).
   * A listing also waits nine times as long as the one before took in work of its own (reading,
   * compiling schemas), so following a server costs at most a tenth of the process's time. `0`:
   * only that bound.
   * @default 250
   */
  refreshIntervalMs?: number | undefined;
  /**
   * Where the import says what it skipped or could not do (warn): a tool whose schema the registry
   * refuses, a name that stays taken, a listing cut at its bounds, a failed refresh after
   * `list_changed`. The registry has no public logger, so pass the same one here.
   * @default a silent pino logger
   */
  logger?: Logger | undefined;
  /**
   * Which of a result's images, audio and binary resources become its `parts`, shown to the model
   * after the text: `"all"`, `"images"` (image parts only: PNG, JPEG, GIF, WebP) or `"none"` (the
   * text's notes only, e.g. `[audio: audio/wav, 1234 bytes]`). A part the provider cannot take
   * makes its adapter throw an `UnsupportedContentError` and the run reject: `"images"` or `"none"`
   * for a provider that takes no audio or files.
   * @default "all"
   */
  parts?: McpPartsOption | undefined;
}

/** What `RegisterMcpToolsOptions.parts` passes on: every part, image parts only, or none. */
export type McpPartsOption = "all" | "images" | "none";
const PARTS_OPTIONS: ReadonlySet<unknown> = new Set(["all", "images", "none"]);

const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_REFRESH_INTERVAL_MS = 250;
/** The name in the import's TypeErrors and errors. */
export const WHERE = "registerMcpTools";

/** The options of one import, checked, with their defaults. */
export interface McpImportSettings {
  /** The registry the tools go to. */
  registry: ToolRegistry;
  /** The connected client the tools come from. */
  client: Client;
  /** `serverName`. */
  serverName: string;
  /** `hidden` and `maxSchemaShare`: how the tools are registered, against the import's budget. */
  registration: Registration;
  /** `timeoutMs`, `Infinity` as the longest timer. */
  timeout: number;
  /** `refreshIntervalMs`. */
  refreshInterval: number;
  /** `logger`, or the silent default. */
  logger: ResolvedLogger;
  /** `parts`; absent: `"all"`. */
  parts?: McpPartsOption;
}

/**
 * Checks the arguments of `registerMcpTools` and fills in the defaults.
 * @throws TypeError echoing the first bad one
 */
export function checkImportOptions(registry: unknown, client: unknown, options: unknown): McpImportSettings {
  if (!isRecord(registry) || typeof registry.register !== "function" || typeof registry.unregister !== "function") {
    throw optionError(WHERE, "registry", "a ToolRegistry", registry);
  }
  const methods = ["request", "setNotificationHandler", "removeNotificationHandler"];
  if (!isRecord(client) || methods.some((method) => typeof client[method] !== "function")) {
    throw optionError(WHERE, "client", "a connected Client of @modelcontextprotocol/sdk (v1)", client);
  }
  if (!isRecord(options)) throw optionError(WHERE, "options", "an object", options);
  const { serverName, timeoutMs = DEFAULT_TIMEOUT_MS, refreshIntervalMs = DEFAULT_REFRESH_INTERVAL_MS } = options;
  if (typeof serverName !== "string" || serverName === "") {
    throw optionError(WHERE, "serverName", "a non-empty string", serverName);
  }
  if (!isValidTimeout(timeoutMs)) throw optionError(WHERE, "timeoutMs", TIMEOUT_EXPECTATION, timeoutMs);
  if (typeof refreshIntervalMs !== "number" || !(refreshIntervalMs >= 0 && refreshIntervalMs <= MAX_TIMEOUT_MS)) {
    const expected = `a number of milliseconds ≥ 0 and ≤ ${MAX_TIMEOUT_MS}`;
    throw optionError(WHERE, "refreshIntervalMs", expected, refreshIntervalMs);
  }
  const { parts = "all" } = options;
  if (!PARTS_OPTIONS.has(parts)) throw optionError(WHERE, "parts", '"all", "images" or "none"', parts);
  return {
    parts: parts as McpPartsOption,
    registry: registry as unknown as ToolRegistry,
    client: client as unknown as Client,
    serverName,
    registration: checkRegistration(WHERE, registry, options, serverName),
    timeout: timeoutMs === Number.POSITIVE_INFINITY ? MAX_TIMEOUT_MS : timeoutMs,
    refreshInterval: refreshIntervalMs,
    logger: resolveLogger(options.logger, WHERE),
  };
}
