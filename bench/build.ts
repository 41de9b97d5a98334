/**
 * Bundling with esbuild (the bundler tsup uses): the benchmark child, and each public entry point
 * for the size and cold-import workloads. Bundles go to `node_modules/.cache/toolloop-bench/`, inside
 * the project so that their bare imports resolve to the project's `node_modules`.
 */
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

export const ROOT = resolve(import.meta.dirname, "..");
export const CACHE_DIR = join(ROOT, "node_modules", ".cache", "toolloop-bench");

// Same settings as tsup.config.ts: ESM for Node 20, dependencies left external.
const COMMON = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  packages: "external",
  logLevel: "warning",
} as const;

/**
 * Bundles `bench/child.ts` (with toolloop's source) into plain JavaScript, split so that what a
 * child imports on demand is loaded only then; returns the entry's path.
 */
export async function buildChild(): Promise<string> {
  const outdir = join(CACHE_DIR, "child");
  rmSync(outdir, { recursive: true, force: true });
  await build({
    ...COMMON,
    entryPoints: { child: join(ROOT, "bench", "child.ts") },
    outdir,
    splitting: true,
    outExtension: { ".js": ".mjs" },
  });
  return join(outdir, "child.mjs");
}

/** A public entry point: its import specifier and its source file. */
export interface EntryPoint {
  specifier: string;
  source: string;
}

/** Every entry of package.json `exports` (but `./package.json`), mapped to its source file. */
export function entryPoints(): EntryPoint[] {
  const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { exports: Record<string, unknown> };
  return Object.keys(manifest.exports)
    .filter((key) => key !== "./package.json")
    .map((key) => {
      const name = key === "." ? "" : key.slice(2);
      const source =
        name === "" ? "src/index.ts" : name === "testing" ? "src/testing/index.ts" : `src/adapters/${name}/index.ts`;
      return { specifier: name === "" ? "toolloop" : `toolloop/${name}`, source };
    })
    .filter((entry) => existsSync(join(ROOT, entry.source)));
}

/** Size of one entry point bundled with its dependencies external. */
export interface EntrySize {
  specifier: string;
  minifiedBytes: number;
  gzipBytes: number;
}

/** Minified and min+gzip (level 9) size of each entry point. */
export async function entrySizes(): Promise<EntrySize[]> {
  const sizes: EntrySize[] = [];
  for (const entry of entryPoints()) {
    const result = await build({
      ...COMMON,
      entryPoints: [join(ROOT, entry.source)],
      minify: true,
      write: false,
      outfile: join(CACHE_DIR, "size.mjs"),
    });
    const code = (result.outputFiles[0] as { contents: Uint8Array }).contents;
    sizes.push({
      specifier: entry.specifier,
      minifiedBytes: code.byteLength,
      gzipBytes: gzipSync(code, { level: 9 }).byteLength,
    });
  }
  return sizes;
}

/** Bundles the core entry unminified (as dist ships it) for the cold-import workload; returns its path. */
export async function buildCoreEntry(): Promise<string> {
  const outfile = join(CACHE_DIR, "entries", "index.mjs");
  await build({ ...COMMON, entryPoints: [join(ROOT, "src", "index.ts")], outfile });
  return outfile;
}
