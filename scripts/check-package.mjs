#!/usr/bin/env node
// Packaging gate (GUIDE §13): pack the built package, check that the tarball holds every file the
// exports name, lint it with publint and @arethetypeswrong/cli, then install it into fresh projects:
// - a new `npm init -y` project (CommonJS) with zod 4, as the README tells a user: there it `import`s
//   and `require`s every entry point, and runs the README's example exactly as the README says;
// - a project with zod 3.25, where a zod 3 tool runs (the peer range installs, dist works with zod 3).
// Run after `npm run build` (it packs with --ignore-scripts, so the `prepare` build does not run twice).
import { execFile, execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { entrySize } from "./entry-size.mjs";
import { codeBlocks, section } from "./markdown.mjs";

const root = resolve(import.meta.dirname, "..");
const run = (command, args, options = {}) =>
  execFileSync(command, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"], encoding: "utf8", ...options });
const step = (text) => process.stdout.write(`check-package: ${text}\n`);

const packDir = join(root, ".tmp", "pack");
rmSync(packDir, { recursive: true, force: true });
mkdirSync(packDir, { recursive: true });
const [packed] = JSON.parse(run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", packDir]));
const tarball = join(packDir, packed.filename);
step(`packed ${packed.filename} (${packed.files.length} files, ${packed.size} bytes)`);

const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
{
  // Never an empty or partial tarball: every file the manifest points to is in it, and not empty.
  const targets = (value) =>
    typeof value === "string" ? [value] : Object.values(value ?? {}).flatMap((inner) => targets(inner));
  const required = new Set(["package.json", "README.md", "LICENSE"]);
  for (const target of [manifest.types, ...targets(manifest.exports)]) required.add(target.replace(/^\.\//, ""));
  const sizes = new Map(packed.files.map((file) => [file.path, file.size]));
  const missing = [...required].filter((path) => !(sizes.get(path) > 0));
  if (missing.length > 0) {
    throw new Error(`the tarball lacks (or has empty) ${missing.join(", ")}: run \`npm run build\` before this check`);
  }
  step(`tarball holds the ${required.size} files the manifest points to: ok`);
}

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

// Size budget of the core entry as entry-size.mjs measures it (the benchmark's workload 6a too):
// package.json `config.coreBudgetBytes`, also read by bench/report.ts (history in docs/benchmarks.md).
const CORE_BUDGET_BYTES = manifest.config.coreBudgetBytes;
{
  const { gzipBytes: gzipped } = await entrySize(join(root, "dist", "index.js"), manifest);
  if (gzipped > CORE_BUDGET_BYTES) {
    throw new Error(`core entry is ${gzipped} bytes min+gzip, over the budget of ${CORE_BUDGET_BYTES}`);
  }
  step(`core entry size: ${gzipped} bytes min+gzip (budget ${CORE_BUDGET_BYTES})`);
}

const exec = promisify(execFile);
// Runs a command in a project folder; on failure, its output goes to stderr before the error.
async function runIn(cwd, command, args) {
  try {
    const { stdout, stderr } = await exec(command, args, { cwd, encoding: "utf8", timeout: 180_000 });
    return { stdout, stderr };
  } catch (error) {
    process.stderr.write(`${cwd}$ ${command} ${args.join(" ")}\n${error.stdout ?? ""}${error.stderr ?? ""}`);
    throw error;
  }
}
const npmInstall = (cwd, specs) =>
  runIn(cwd, "npm", ["install", ...specs, "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"]);

// The README's own words: its example, what it prints, how to install and run it in a new project.
const readme = readFileSync(join(root, "README.md"), "utf8");
const readmeExample = (() => {
  const exampleBlocks = codeBlocks(section(readme, "Example"));
  const code = exampleBlocks.find((block) => block.language === "ts")?.code;
  const printed = exampleBlocks.find((block) => block.language === "text")?.code;
  const usage = section(readme, "Use it in your own project");
  const commands = codeBlocks(usage)
    .filter((block) => block.language === "sh")
    .flatMap((block) => block.code.split("\n"))
    .map((line) => line.replace(/#.*/, "").trim())
    .filter(Boolean);
  const install = commands
    .find((command) => command.startsWith("npm install "))
    ?.split(/\s+/)
    .slice(2);
  const fileName = /Save the example above as `([^`]+)`/.exec(usage)?.[1];
  const runCommand = commands.find((command) => command.startsWith("npx tsx "));
  if (code === undefined || printed === undefined)
    throw new Error("README: no ts example or no text block of its output");
  if (install === undefined || !install.includes("toolloop")) throw new Error("README: no `npm install toolloop …`");
  if (fileName === undefined || runCommand !== `npx tsx ${fileName}`) {
    throw new Error(`README: "Save the example above as \`<file>\`" and \`npx tsx <file>\` do not agree`);
  }
  return { code, printed, install, fileName };
})();

// A tool of the installed zod major through a registry: the JSON Schema the model gets is not empty,
// arguments are parsed with defaults, invalid ones give a clear message; zod-to-json-schema is loaded
// only for zod 3.
const zodToolScript = (major) => `
import { createRequire } from "node:module";
import { defineTool, ToolRegistry } from "toolloop";
import { z } from "zod";
const require = createRequire(import.meta.url);
const fail = (message) => { throw new Error("zod ${major}: " + message); };
const version = require("zod/package.json").version;
if (!version.startsWith("${major}.")) fail("installed zod is " + version);
const registry = new ToolRegistry();
registry.register(defineTool({
  name: "get_weather",
  description: "Current weather for a city",
  parameters: z.object({ city: z.string().min(1), unit: z.enum(["celsius", "fahrenheit"]).default("celsius") }),
  execute: ({ city, unit }) => city + " " + unit,
}));
const schema = JSON.stringify(registry.getDefinitions()[0].function.parameters);
if (!/"city":\\{"type":"string","minLength":1\\}/.test(schema) || !schema.includes('"required":["city"]')) fail("JSON Schema " + schema);
const valid = await registry.execute("get_weather", { city: "Paris" });
if (valid.forLLM !== "Paris celsius") fail("valid call gave " + JSON.stringify(valid));
const invalid = await registry.execute("get_weather", { unit: "kelvin" });
if (!invalid.isError || !/^invalid arguments for tool "get_weather": city: .+; unit: .+/.test(invalid.forLLM)) fail("invalid call gave " + invalid.forLLM);
const loaded = Object.keys(require.cache).some((path) => path.includes("zod-to-json-schema"));
if (loaded !== ${major === 3}) fail("zod-to-json-schema loaded: " + loaded);
process.stdout.write("ok");
`;

// The optional peer dependencies each subpath loads when it is imported (the others type theirs
// structurally and load nothing).
const SUBPATH_PEERS = {
  "toolloop/mcp": ["@modelcontextprotocol/sdk"],
  "toolloop/bullmq": ["bullmq", "ioredis"],
  "toolloop/otel": ["@opentelemetry/api"],
  "toolloop/restate": ["@restatedev/restate-sdk"],
};
const entries = Object.keys(manifest.exports)
  .filter((key) => key !== "./package.json")
  .map((key) => (key === "." ? "toolloop" : `toolloop/${key.slice(2)}`));
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

// Every entry but toolloop/otel imported (their peers installed, @opentelemetry/api too): nothing
// of OpenTelemetry is loaded; then toolloop/otel loads it. @opentelemetry/api's "default" export
// is CommonJS, so once loaded it is in require.cache (shared with ESM imports).
const otelLoadScript = `
import { createRequire } from "node:module";
const require = createRequire(import.meta.url);
const loaded = () => Object.keys(require.cache).some((path) => /[\\\\/]@opentelemetry[\\\\/]api[\\\\/]/.test(path));
for (const entry of ${JSON.stringify(entries.filter((entry) => entry !== "toolloop/otel"))}) await import(entry);
if (loaded()) throw new Error("@opentelemetry/api was loaded without toolloop/otel");
await import("toolloop/otel");
if (!loaded()) throw new Error("toolloop/otel did not load @opentelemetry/api");
process.stdout.write("ok");
`;

async function expectOk(app, file) {
  const { stdout } = await runIn(app, process.execPath, [file]);
  if (stdout !== "ok") throw new Error(`${file}: unexpected output ${JSON.stringify(stdout)}`);
}

// A new project as the README describes it: `npm init -y` (CommonJS), `npm install toolloop zod`.
async function checkNewProject(app) {
  await runIn(app, "npm", ["init", "-y"]);
  const type = JSON.parse(readFileSync(join(app, "package.json"), "utf8")).type ?? "commonjs";
  await npmInstall(
    app,
    readmeExample.install.map((spec) => (spec === "toolloop" ? tarball : spec)),
  );
  // Subpaths that load an optional peer at import need it, as their docs tell users to install it.
  const peers = Object.values(SUBPATH_PEERS).flat();
  await npmInstall(
    app,
    peers.map((name) => `${name}@${manifest.devDependencies[name]}`),
  );
  step(`installed the optional peers of subpaths (${peers.join(", ")})`);
  const imports = entries.map((entry, index) => `import * as e${index} from "${entry}";`).join("\n");
  const requires = entries.map((entry, index) => `const e${index} = require("${entry}");`).join("\n");
  const testing = `const toolloop = e0; const testing = e${entries.indexOf("toolloop/testing")};`;
  writeFileSync(join(app, "smoke.mjs"), `${imports}\n${testing}\n${smoke}`);
  writeFileSync(join(app, "smoke.cjs"), `${requires}\n${testing}\n${smoke}`);
  writeFileSync(join(app, "zod4.mjs"), zodToolScript(4));
  await expectOk(app, "smoke.mjs");
  step(`import of ${entries.join(", ")} from the installed tarball: ok`);
  await expectOk(app, "smoke.cjs");
  step(`require of ${entries.join(", ")} from the installed tarball: ok`);
  await expectOk(app, "zod4.mjs");
  step("a zod 4 tool (zod-to-json-schema not loaded): ok");
  writeFileSync(join(app, "otel.mjs"), otelLoadScript);
  await expectOk(app, "otel.mjs");
  step("@opentelemetry/api is loaded by toolloop/otel only: ok");

  // The README's example, verbatim, saved and run as the README says. `npx tsx` is replaced by
  // this repository's tsx binary, the same program, so that npx downloads nothing.
  writeFileSync(join(app, readmeExample.fileName), readmeExample.code);
  const { stdout, stderr } = await runIn(app, bin("tsx"), [readmeExample.fileName]);
  if (stdout !== readmeExample.printed || stderr !== "") {
    throw new Error(
      `README example in a new ${type} project printed ${JSON.stringify(stdout)} (stderr ${JSON.stringify(stderr)}), the README says ${JSON.stringify(readmeExample.printed)}`,
    );
  }
  step(
    `README example as ${readmeExample.fileName} in a new ${type} project with \`npx tsx\`: prints what the README says`,
  );
}

// zod 3: the peer range `^3.25.0 || ^4.0.0` installs without ERESOLVE, and dist works with zod 3 alone.
async function checkZod3Project(app) {
  await runIn(app, "npm", ["init", "-y"]);
  await npmInstall(app, [tarball, "zod@3.25"]);
  writeFileSync(join(app, "zod3.mjs"), zodToolScript(3));
  await expectOk(app, "zod3.mjs");
  step("installed with zod@3.25, a zod 3 tool: ok");
}

const apps = [mkdtempSync(join(tmpdir(), "toolloop-app-")), mkdtempSync(join(tmpdir(), "toolloop-zod3-"))];
try {
  // The two installs are independent: run them at the same time.
  const results = await Promise.allSettled([checkNewProject(apps[0]), checkZod3Project(apps[1])]);
  const failed = results.find((result) => result.status === "rejected");
  if (failed) throw failed.reason;
} finally {
  for (const app of apps) rmSync(app, { recursive: true, force: true });
}
