/**
 * Bundling: the benchmark child with esbuild (the bundler tsup uses), and the package built by tsup
 * for the size and cold-import workloads. Output goes to `node_modules/.cache/toolloop-bench/`, inside
 * the project so that its bare imports resolve to the project's `node_modules`.
 */
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { build } from "esbuild";
import { type Options, build as tsup } from "tsup";
import { entrySize } from "../scripts/entry-size.mjs";
import tsupConfig from "../tsup.config.js";

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

/** A public entry point: its import specifier and its file in the built package. */
export interface EntryPoint {
  specifier: string;
  file: string;
}

const DIST_DIR = join(CACHE_DIR, "dist");

/**
 * Builds the package as `npm run build` does (tsup.config.ts; no declarations or source maps) into
 * the cache, and returns every entry of package.json `exports` (but `./package.json`) with its file
 * there: what is measured is what ships, tsup's tree shaking included.
 */
export async function buildEntryPoints(): Promise<EntryPoint[]> {
  await tsup({
    ...(tsupConfig as Options),
    config: false,
    outDir: DIST_DIR,
    dts: false,
    sourcemap: false,
    silent: true,
  });
  const manifest = packageManifest();
  return Object.entries(manifest.exports)
    .filter(([key]) => key !== "./package.json")
    .map(([key, target]) => ({
      specifier: key === "." ? "toolloop" : `toolloop/${key.slice(2)}`,
      file: join(DIST_DIR, target.default.replace(/^\.\/dist\//, "")),
    }));
}

function packageManifest(): {
  exports: Record<string, { default: string }>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
} {
  return JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
}

/** Size of one entry point, measured as check-package measures the core's budget (scripts/entry-size.mjs). */
export interface EntrySize {
  specifier: string;
  minifiedBytes: number;
  gzipBytes: number;
}

/** Minified and min+gzip (level 9) size of each entry point of the built package. */
export async function entrySizes(entries: EntryPoint[]): Promise<EntrySize[]> {
  const manifest = packageManifest();
  const sizes: EntrySize[] = [];
  for (const entry of entries) {
    if (!existsSync(entry.file)) throw new Error(`${entry.specifier}: ${entry.file} was not built`);
    sizes.push({ specifier: entry.specifier, ...(await entrySize(entry.file, manifest)) });
  }
  return sizes;
}
