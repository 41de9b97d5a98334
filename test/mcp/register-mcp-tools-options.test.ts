import { describe, expect, it } from "vitest";
import { checkImportOptions } from "../../src/mcp/register-mcp-tools-options.js";
import { ToolRegistry } from "../../src/tool-registry.js";

/** Enough of a client for the check: the three methods the import calls. */
const client = { request: () => {}, setNotificationHandler: () => {}, removeNotificationHandler: () => {} };

describe("checkImportOptions", () => {
  it("fills in the defaults", () => {
    const settings = checkImportOptions(new ToolRegistry(), client, { serverName: "s" });
    expect(settings).toMatchObject({ serverName: "s", timeout: 60_000, refreshInterval: 250 });
    expect(settings.registration.hidden).toBe(false);
    expect(settings.registration.budget.share).toBe(0.25);
    expect(settings.parts).toBe("all");
  });

  it.each(["all", "images", "none"] as const)("takes parts %j", (parts) => {
    expect(checkImportOptions(new ToolRegistry(), client, { serverName: "s", parts }).parts).toBe(parts);
  });

  it("takes timeoutMs Infinity as the longest timer and refreshIntervalMs 0 as no interval", () => {
    const settings = checkImportOptions(new ToolRegistry(), client, {
      serverName: "s",
      timeoutMs: Number.POSITIVE_INFINITY,
      refreshIntervalMs: 0,
    });
    expect(settings).toMatchObject({ timeout: 2_147_483_647, refreshInterval: 0 });
  });

  it.each([
    [
      "a registry without registerHidden for hidden: true",
      { register() {}, unregister() {} },
      { hidden: true },
      /registry must be a ToolRegistry with registerHidden/,
    ],
    [
      "a negative refreshIntervalMs",
      new ToolRegistry(),
      { refreshIntervalMs: -5 },
      /refreshIntervalMs must be a number of milliseconds ≥ 0 and ≤ 2147483647, got -5/,
    ],
    [
      "a refreshIntervalMs string",
      new ToolRegistry(),
      { refreshIntervalMs: "5" },
      /refreshIntervalMs must be .*, got "5"/,
    ],
    ["parts true", new ToolRegistry(), { parts: true }, /parts must be "all", "images" or "none", got true/],
  ])("refuses %s with a TypeError echoing it", (_, registry, options, message) => {
    expect(() => checkImportOptions(registry, client, { serverName: "s", ...options })).toThrow(TypeError);
    expect(() => checkImportOptions(registry, client, { serverName: "s", ...options })).toThrow(message);
  });
});
