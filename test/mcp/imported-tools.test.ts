import { afterEach, describe, expect, it, vi } from "vitest";
import { resolveLogger } from "../../src/internal/logger.js";
import { ImportedTools } from "../../src/mcp/imported-tools.js";
import type { ServerTool, Work } from "../../src/mcp/list-server-tools.js";
import type { McpImportSettings } from "../../src/mcp/register-mcp-tools-options.js";
import { SchemaBudget } from "../../src/schema-budget.js";
import { ToolRegistry } from "../../src/tool-registry.js";
import { captureLogger } from "../helpers/capture-logger.js";

afterEach(() => {
  vi.useRealTimers();
});

/** A server tool as a listing reads it; `version` changes its fingerprint. */
function listed(name: string, version = 1): ServerTool {
  return {
    name,
    description: `[MCP:s] ${name} v${version}`,
    parameters: { type: "object" },
    fingerprint: `${version}`,
  };
}

function imports(registry = new ToolRegistry()) {
  const { logger, lines } = captureLogger();
  const settings: McpImportSettings = {
    registry,
    client: {} as McpImportSettings["client"],
    serverName: "s",
    registration: { hidden: false, budget: new SchemaBudget("MCP server s", 1) },
    timeout: 60_000,
    refreshInterval: 250,
    logger: resolveLogger(logger, "test"),
  };
  return { registry, lines, tools: new ImportedTools(settings) };
}

const apply = (tools: ImportedTools, listing: ServerTool[], signal = new AbortController().signal) => {
  const work: Work = { ms: 0 };
  return tools.apply(listing, work, signal).then(() => work);
};

describe("ImportedTools", () => {
  it("registers a listing, then follows the next: added, removed, changed; an unchanged tool stays the same object", async () => {
    const { registry, tools } = imports();
    await apply(tools, [listed("a"), listed("b"), listed("c")]);
    expect(tools.names).toEqual(["mcp_s_a", "mcp_s_b", "mcp_s_c"]);
    const a = registry.get("mcp_s_a");
    const b = registry.get("mcp_s_b");
    await apply(tools, [listed("a"), listed("b", 2), listed("d")]);
    expect(tools.names).toEqual(["mcp_s_a", "mcp_s_b", "mcp_s_d"]);
    expect(registry.list()).toEqual(["mcp_s_a", "mcp_s_b", "mcp_s_d"]);
    expect(registry.get("mcp_s_a")).toBe(a);
    expect(registry.get("mcp_s_b")).not.toBe(b);
    expect(registry.get("mcp_s_b")?.description).toBe("[MCP:s] b v2");
  });

  it("names a tool apart from another registration's tool, and removeAll() leaves that one alone", async () => {
    const registry = new ToolRegistry();
    const mine = { name: "mcp_s_a", description: "mine", parameters: {}, execute: () => "" };
    registry.register(mine);
    const { tools } = imports(registry);
    await apply(tools, [listed("a")]);
    expect(tools.names).toEqual([expect.stringMatching(/^mcp_s_a_[0-9a-f]{8}$/)]);
    tools.removeAll();
    expect(registry.list()).toEqual(["mcp_s_a"]);
    expect(registry.get("mcp_s_a")).toBe(mine);
    expect(tools.names).toEqual([]);
  });

  it("skips a tool the registry refuses, with a warning, and keeps the others", async () => {
    const { registry, tools, lines } = imports();
    const bad: ServerTool = { ...listed("bad"), parameters: { type: "object", properties: { p: { type: 12 } } } };
    await apply(tools, [listed("a"), bad]);
    expect(registry.list()).toEqual(["mcp_s_a"]);
    expect(lines.map((line) => line.msg)).toEqual(["MCP tool skipped: the registry refused it"]);
  });

  it("registers nothing more once its signal is aborted (close() during a refresh): it stops at the next slice", async () => {
    // A clock that stands still: the slice ends after its 50 tools, never because a loaded machine
    // made the first registration take longer than the slice's 20 ms.
    vi.useFakeTimers({ toFake: ["performance"] });
    const { registry, tools } = imports();
    const controller = new AbortController();
    controller.abort();
    await apply(
      tools,
      Array.from({ length: 200 }, (_, index) => listed(`t${index}`)),
      controller.signal,
    );
    expect(registry.count()).toBeGreaterThan(0);
    expect(registry.count()).toBeLessThanOrEqual(50);
  });

  it("adds the time its registrations took (schema compilations) to work", async () => {
    vi.useFakeTimers({ toFake: ["performance"] });
    class SlowRegistry extends ToolRegistry {
      override register(tool: Parameters<ToolRegistry["register"]>[0]): void {
        vi.advanceTimersByTime(7);
        super.register(tool);
      }
    }
    const { tools } = imports(new SlowRegistry());
    const work = await apply(tools, [listed("a"), listed("b"), listed("c")]);
    expect(work.ms).toBe(21);
    // Unchanged tools cost nothing.
    expect((await apply(tools, [listed("a"), listed("b"), listed("c")])).ms).toBe(0);
  });
});
