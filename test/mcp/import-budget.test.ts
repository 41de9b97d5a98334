import { describe, expect, it } from "vitest";
import { newToolResult, type Tool, ToolRegistry } from "../../src/index.js";
import { checkRegistration } from "../../src/mcp/import-budget.js";
import { registerMcpTools } from "../../src/mcp/index.js";
import { captureLogger } from "../helpers/capture-logger.js";
import { startScriptedServer, toolList } from "../helpers/mcp-servers.js";

/** A schema of `count` keywords (vendor keywords: they cost nothing to compile), under 100,000 characters. */
function keywords(count: number): Record<string, unknown> {
  return { type: "object", ...Object.fromEntries(Array.from({ length: count - 1 }, (_, index) => [`k${index}`, 0])) };
}

function tool(name: string, parameters: Record<string, unknown>): Tool {
  return { name, description: `the ${name} tool`, parameters, execute: () => newToolResult("ran") };
}

/**
 * A server listing `count` tools of 9,093 keywords each, references followed (a definition of 100
 * keywords referred to by 90 properties, in 1.5 KB): 55 of them would fill a registry's 500,000.
 */
const HEAVY = {
  type: "object",
  $defs: { d: keywords(100) },
  properties: Object.fromEntries(Array.from({ length: 90 }, (_, index) => [`p${index}`, { $ref: "#/$defs/d" }])),
};

async function heavyServer(count: number) {
  return startScriptedServer({
    listTools: () => toolList(Array.from({ length: count }, (_, index) => ({ name: `t${index}`, inputSchema: HEAVY }))),
  });
}

describe("an MCP import's share of the registry's schema limits", () => {
  it("imports no more than its share (0.25 by default): the application's own tools still register", async () => {
    const { logger, lines } = captureLogger();
    const server = await heavyServer(60);
    try {
      const registry = new ToolRegistry();
      const handle = await registerMcpTools(registry, server.client, { serverName: "m", logger });
      // 0.25 of 500,000 keywords: 13 tools of 9,093.
      expect(handle.names).toHaveLength(13);
      const warnings = lines.filter((line) => line.msg === "MCP tool skipped: the registry refused it");
      expect(warnings).toHaveLength(47);
      expect(warnings[0]?.reason).toBe(
        'tool "mcp_m_t13": parameters is over the schema limits: with it, the schemas of MCP server "m" would have 127302 keywords (its $refs followed), at most 125000 (its share, 0.25, of the registry\'s; this one has 9093)',
      );
      // What the server could not take is left to the application (its own tools are not in any share).
      // 500,000 − 13 × 9,093 keywords left: room for 41 more such schemas of the application's own.
      for (let index = 0; index < 41; index++) registry.register(tool(`own${index}`, HEAVY));
      expect(() => registry.register(tool("own41", HEAVY))).toThrow(
        /the registry's schemas would have 500115 keywords/,
      );
      await handle.close();
      expect(registry.count()).toBe(41);
    } finally {
      server.disconnect();
    }
  });

  it("maxSchemaShare: 1 lets one import use the registry's whole total", async () => {
    const server = await heavyServer(60);
    try {
      const registry = new ToolRegistry();
      const handle = await registerMcpTools(registry, server.client, { serverName: "m", maxSchemaShare: 1 });
      expect(handle.names).toHaveLength(54);
      await handle.close();
    } finally {
      server.disconnect();
    }
  });

  it("each import has its own share, hidden or not", async () => {
    const first = await heavyServer(20);
    const second = await heavyServer(20);
    try {
      const registry = new ToolRegistry();
      const a = await registerMcpTools(registry, first.client, { serverName: "a", maxSchemaShare: 0.1 });
      const b = await registerMcpTools(registry, second.client, { serverName: "b", maxSchemaShare: 0.2, hidden: true });
      expect(a.names).toHaveLength(5);
      expect(b.names).toHaveLength(10);
      await Promise.all([a.close(), b.close()]);
    } finally {
      first.disconnect();
      second.disconnect();
    }
  });
});

describe("checkRegistration (the options hidden and maxSchemaShare)", () => {
  const registry = { register: () => {}, registerHidden: () => {} };

  it.each([
    [0, "0"],
    [1.01, "1.01"],
    [Number.NaN, "NaN"],
    ["0.5", '"0.5"'],
  ])("refuses maxSchemaShare %s", (share, shown) => {
    expect(() => checkRegistration("registerMcpTools", registry, { maxSchemaShare: share }, "s")).toThrow(
      `registerMcpTools: maxSchemaShare must be a number in (0, 1], got ${shown}`,
    );
  });

  it("makes the import's budget, named after the server (cut), 0.25 by default", () => {
    const { hidden, budget } = checkRegistration("registerMcpTools", registry, {}, "fs");
    expect(hidden).toBe(false);
    expect(budget).toMatchObject({ name: 'MCP server "fs"', share: 0.25 });
    const long = checkRegistration("w", registry, { maxSchemaShare: 1, hidden: true }, "s".repeat(500));
    expect(long.budget.name.length).toBeLessThan(200);
    expect(long.hidden).toBe(true);
  });

  it("refuses hidden: true with a registry that cannot hide", () => {
    expect(() => checkRegistration("w", { register: () => {} }, { hidden: true }, "s")).toThrow(
      "w: registry must be a ToolRegistry with registerHidden (for hidden: true)",
    );
  });
});
