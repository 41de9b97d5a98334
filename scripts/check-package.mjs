#!/usr/bin/env node
// Packaging gate (GUIDE §13): pack the built package, lint the tarball with publint and
// @arethetypeswrong/cli, then install the tarball into an empty folder and both `import` and
// `require` every entry point. Run after `npm run build`.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { gzipSync } from "node:zlib";

const root = resolve(import.meta.dirname, "..");
const run = (command, args, options = {}) =>
  execFileSync(command, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"], encoding: "utf8", ...options });
const step = (text) => process.stdout.write(`check-package: ${text}\n`);

const packDir = join(root, ".tmp", "pack");
rmSync(packDir, { recursive: true, force: true });
mkdirSync(packDir, { recursive: true });
const [packed] = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", packDir]));
const tarball = join(packDir, packed.filename);
step(`packed ${packed.filename} (${packed.files.length} files, ${packed.size} bytes)`);

const bin = (name) => join(root, "node_modules", ".bin", name);
try {
  run(bin("publint"), ["run", tarball, "--strict"]);
  step("publint: ok");
  run(bin("attw"), [tarball, "--profile", "esm-only", "--no-emoji"]);
  step("attw (esm-only): ok");
} catch (error) {
  process.stderr.write(`${error.stdout ?? ""}${error.stderr ?? ""}`);
  throw error;
}

// Size budget of the core entry (issue 4): minified and gzipped, dependencies external.
const CORE_BUDGET_BYTES = 12 * 1024;
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
{
  const { build } = await import("esbuild");
  const external = [...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})];
  const bundle = await build({
    entryPoints: [join(root, "dist", "index.js")],
    bundle: true,
    minify: true,
    format: "esm",
    platform: "node",
    write: false,
    external: [...external, "node:*"],
    logLevel: "silent",
  });
  const gzipped = gzipSync(bundle.outputFiles[0].contents, { level: 9 }).length;
  if (gzipped > CORE_BUDGET_BYTES) {
    throw new Error(`core entry is ${gzipped} bytes min+gzip, over the budget of ${CORE_BUDGET_BYTES}`);
  }
  step(`core entry size: ${gzipped} bytes min+gzip (budget ${CORE_BUDGET_BYTES})`);
}
const entries = Object.keys(manifest.exports)
  .filter((key) => key !== "./package.json")
  .map((key) => (key === "." ? "toolloop" : `toolloop/${key.slice(2)}`));

const app = mkdtempSync(join(tmpdir(), "toolloop-smoke-"));
try {
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "smoke", private: true, version: "0.0.0" }));
  run("npm", ["install", tarball, "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], { cwd: app });
  const smoke = `
    const { ToolRegistry, runToolLoop, defineTool, newToolResult, isToolResult } = toolloop;
    const { ScriptedProvider, toolCallResponse, textResponse } = testing;
    const registry = new ToolRegistry();
    registry.register({ name: "ping", description: "ping", parameters: { type: "object", properties: { n: { type: "number" } } }, execute: () => newToolResult("pong") });
    registry.execute("ping", { n: "x" }).then((invalid) => { if (!invalid.isError) throw new Error("smoke: JSON Schema validation failed"); });
    const provider = new ScriptedProvider([toolCallResponse({ name: "ping" }), textResponse("done")]);
    runToolLoop({ provider, tools: registry, maxIterations: 3 }, [{ role: "user", content: "hi" }]).then((result) => {
      if (result.content !== "done" || result.messages[2].content !== "pong") throw new Error("smoke loop failed");
      if (typeof defineTool !== "function" || !isToolResult(newToolResult("x"))) throw new Error("smoke exports failed");
      process.stdout.write("ok");
    });`;
  const imports = entries.map((entry, index) => `import * as e${index} from "${entry}";`).join("\n");
  writeFileSync(
    join(app, "smoke.mjs"),
    `${imports}\nconst toolloop = e0; const testing = e${entries.indexOf("toolloop/testing")};\n${smoke}`,
  );
  const requires = entries.map((entry, index) => `const e${index} = require("${entry}");`).join("\n");
  writeFileSync(
    join(app, "smoke.cjs"),
    `${requires}\nconst toolloop = e0; const testing = e${entries.indexOf("toolloop/testing")};\n${smoke}`,
  );
  for (const file of ["smoke.mjs", "smoke.cjs"]) {
    const output = execFileSync(process.execPath, [file], {
      cwd: app,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
    if (output !== "ok") throw new Error(`${file}: unexpected output ${JSON.stringify(output)}`);
    step(`${file === "smoke.mjs" ? "import" : "require"} of ${entries.join(", ")} from the installed tarball: ok`);
  }
} finally {
  rmSync(app, { recursive: true, force: true });
}
