import { cutName, errorMessage } from "../internal/describe.js";
import { log } from "../internal/logger.js";
import { WorkMeter } from "../internal/work-meter.js";
import { REGISTERED_TOOL } from "../registry-symbols.js";
import type { Tool } from "../tool.js";
import { createServerTool } from "./call-server-tool.js";
import { registerImported } from "./import-budget.js";
import { type ServerTool, SLICES, type Work } from "./list-server-tools.js";
import { mcpToolNames } from "./mcp-tool-name.js";
import type { McpImportSettings } from "./register-mcp-tools-options.js";

/** One tool the import registered. */
interface Imported {
  /** Its registry name. */
  name: string;
  /** The tool registered under it (to tell it from another registration's). */
  tool: Tool;
  /** The fingerprint of the server's tool it was made of. */
  fingerprint: string;
}

/**
 * The tools one import holds in the registry, and how a listing brings them in step with the
 * server: added, removed, renamed and changed tools, each change in one step.
 */
export class ImportedTools {
  readonly #settings: McpImportSettings;
  /** By the tool's name on the server. */
  readonly #imported = new Map<string, Imported>();
  readonly #ownNames = new Set<string>();

  constructor(settings: McpImportSettings) {
    this.#settings = settings;
  }

  /** The registry names held now, sorted; a fresh array. */
  get names(): string[] {
    return [...this.#ownNames].sort();
  }

  /**
   * Brings the registry in step with a listing of the server: compiles what changed, in slices,
   * adding the time spent to `work`. Once `signal` is aborted (close()), it registers nothing more.
   */
  async apply(tools: readonly ServerTool[], work: Work, signal: AbortSignal): Promise<void> {
    const { registry, serverName, logger } = this.#settings;
    const imported = this.#imported;
    // A schema costs milliseconds to compile, and a server may list a thousand: the event loop
    // gets its turn between slices, so an import never blocks the process for long.
    const meter = new WorkMeter(SLICES);
    const names = mcpToolNames(
      serverName,
      tools.map((tool) => tool.name),
      (name) => registry.has(name) && !this.#ownNames.has(name),
    );
    // A tool whose name changes hands (renamed, or no longer listed) leaves it now — unless another
    // tool takes that name: then it is replaced at that tool's turn, in one step.
    const taken = new Set([...names.values()].filter((name) => name !== undefined));
    const displaced = new Map<string, Imported>();
    for (const [mcpName, entry] of imported) {
      if (names.get(mcpName) === entry.name) continue;
      imported.delete(mcpName);
      if (taken.has(entry.name)) displaced.set(entry.name, entry);
      else this.#remove(entry);
    }
    try {
      for (const tool of tools) {
        const current = imported.get(tool.name);
        if (current?.fingerprint === tool.fingerprint) continue;
        if (meter.tick()) {
          await meter.pause();
          if (signal.aborted) return;
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
          this.#remove(old);
        }
        if (registry.has(name) && !this.#ownNames.has(name))
          log(logger, "warn", fields, "MCP tool skipped: name taken meanwhile");
        else this.#add(name, tool);
      }
      meter.tick();
      work.ms += meter.spent;
    } finally {
      // A name whose new tool was not reached (close() during the refresh) is not left behind.
      for (const entry of displaced.values()) this.#remove(entry);
    }
  }

  /** Unregisters every tool held (those another registration has not replaced meanwhile). */
  removeAll(): void {
    for (const entry of this.#imported.values()) this.#remove(entry);
    this.#imported.clear();
  }

  #remove(entry: Imported): void {
    const { registry } = this.#settings;
    this.#ownNames.delete(entry.name);
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
  }

  #add(name: string, serverTool: ServerTool): void {
    const { registry, serverName, logger } = this.#settings;
    const tool = createServerTool(this.#settings, name, serverTool);
    // Whatever the registry refuses (an invalid or oversized schema, a lock, a duplicate with
    // onDuplicate "throw") costs this tool only: the others are imported.
    try {
      registerImported(registry, this.#settings.registration, tool);
    } catch (error) {
      const reason = errorMessage(error);
      const fields = () => ({ server: serverName, mcpTool: cutName(serverTool.name), tool: name, reason });
      log(logger, "warn", fields, "MCP tool skipped: the registry refused it");
      return;
    }
    // The allowlist may have skipped it without a word to us.
    if (!registry.has(name)) return;
    this.#imported.set(serverTool.name, { name, tool, fingerprint: serverTool.fingerprint });
    this.#ownNames.add(name);
  }
}
