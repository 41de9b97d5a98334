// The size of a built entry point as a user's bundler ships it: bundled with esbuild, the package's
// dependencies, peer dependencies and Node's modules left external, minified, gzip level 9. One
// measure for check-package.mjs (the core entry's budget, package.json `config.coreBudgetBytes`) and
// the benchmark's size workload (bench/build.ts).
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

/**
 * @param {string} file a built entry point (`dist/index.js` …)
 * @param {{ dependencies?: Record<string, string>, peerDependencies?: Record<string, string> }} manifest package.json
 * @returns {Promise<{ minifiedBytes: number, gzipBytes: number }>}
 */
export async function entrySize(file, manifest) {
  const external = [...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})];
  const bundle = await build({
    entryPoints: [file],
    bundle: true,
    minify: true,
    format: "esm",
    platform: "node",
    write: false,
    external: [...external, "node:*"],
    logLevel: "silent",
  });
  const code = bundle.outputFiles[0].contents;
  return { minifiedBytes: code.byteLength, gzipBytes: gzipSync(code, { level: 9 }).byteLength };
}
