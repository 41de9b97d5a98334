// `toolloop/otel` is the only entry that loads @opentelemetry/api (an optional peer dependency):
// every public entry's module graph, as a bundler follows it from the source (static imports,
// dynamic `import()` and `require()` alike), is read here. scripts/check-package.mjs checks the
// same on the built package at run time.
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import * as otel from "../../src/otel/index.js";
import tsupConfig from "../../tsup.config.js";

const entries = Object.entries((tsupConfig as { entry: Record<string, string> }).entry);

/** The packages a source entry imports, anywhere in its graph of src/ files. */
async function packagesOf(file: string): Promise<Set<string>> {
  const result = await build({
    entryPoints: [file],
    bundle: true,
    write: false,
    metafile: true,
    platform: "node",
    format: "esm",
    packages: "external",
    logLevel: "silent",
  });
  const packages = new Set<string>();
  for (const input of Object.values(result.metafile.inputs)) {
    for (const imported of input.imports) if (imported.external === true) packages.add(imported.path);
  }
  return packages;
}

describe("toolloop/otel", () => {
  it("exports tracing and bullmqTraceContext", () => {
    expect(Object.keys(otel).sort()).toEqual(["bullmqTraceContext", "tracing"]);
  });

  it("is the only entry whose module graph reaches @opentelemetry/api", async () => {
    expect(entries.map(([name]) => name)).toContain("otel/index");
    for (const [name, file] of entries) {
      const packages = [...(await packagesOf(file))];
      const opentelemetry = packages.filter((path) => path.startsWith("@opentelemetry/"));
      expect(opentelemetry, name).toEqual(name === "otel/index" ? ["@opentelemetry/api"] : []);
    }
  });
});
