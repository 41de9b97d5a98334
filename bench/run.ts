/**
 * `npm run bench`: runs every workload of issue 4, prints a table and rewrites the generated part
 * of docs/benchmarks.md.
 *
 *   npm run bench                      everything (~2–3 minutes on 2 cores)
 *   npm run bench -- --json            print the results as JSON on stdout (progress on stderr)
 *   npm run bench -- --no-write        do not touch docs/benchmarks.md
 *   npm run bench -- --only=loop,size  a subset: loop, dispatch, parallel, scaling, memory, size
 *   npm run bench -- --profile         also write a V8 CPU profile of the timed workloads to .tmp/profiles/
 *
 * Workloads 1–4 run in ONE child process (the bench bundled by esbuild, so the measured code is
 * plain JavaScript as dist/ ships it, not tsx's transform); memory and cold-import measurements
 * each get a fresh child process.
 */
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { buildChild, buildCoreEntry, entrySizes, ROOT } from "./build.js";
import { IN_FLIGHT_LOOPS, PEER_IN_FLIGHT_LOOPS, STEP_COUNTS } from "./constants.js";
import { type Figure, summarize } from "./measure.js";
import { type BenchResults, evaluateTargets, markdownReport, mergeIntoDocument, terminalReport } from "./report.js";

const WORKLOADS = ["loop", "dispatch", "parallel", "scaling", "memory", "size"] as const;
type Workload = (typeof WORKLOADS)[number];

// Memory figures barely vary between runs; the peers' long loops are slow, so they run once.
const MEMORY_RUNS = 3;
const PEER_RETAINED_RUNS = 1;
const COLD_IMPORT_RUNS = 7;
const MEMORY_LIBRARIES = ["toolloop", "AI SDK", "Agents SDK"] as const;
const RETAINED_LIBRARIES = ["by hand", "toolloop", "AI SDK", "Agents SDK"] as const;

interface Flags {
  json: boolean;
  write: boolean;
  profile: boolean;
  only: Set<Workload>;
}

function parseFlags(argv: string[]): Flags {
  const flags: Flags = { json: false, write: true, profile: false, only: new Set(WORKLOADS) };
  for (const argument of argv) {
    if (argument === "--json") flags.json = true;
    else if (argument === "--no-write") flags.write = false;
    else if (argument === "--profile") flags.profile = true;
    else if (argument.startsWith("--only=")) {
      const names = argument.slice("--only=".length).split(",");
      for (const name of names) {
        if (!(WORKLOADS as readonly string[]).includes(name)) {
          throw new TypeError(`--only: unknown workload ${JSON.stringify(name)}; expected ${WORKLOADS.join(", ")}`);
        }
      }
      flags.only = new Set(names as Workload[]);
    } else throw new TypeError(`unknown flag ${JSON.stringify(argument)}`);
  }
  return flags;
}

function log(text: string): void {
  process.stderr.write(`${text}\n`);
}

/** Runs `node <args>` in the project folder; resolves to its stdout, progress goes to our stderr. */
function node(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
    let stdout = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolve(stdout);
      else reject(new Error(`node ${args.join(" ")} exited with code ${code}`));
    });
  });
}

async function childJson<T>(nodeFlags: string[], child: string, args: string[]): Promise<T> {
  const stdout = await node([...nodeFlags, child, ...args]);
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "null") as T;
}

async function memory(child: string): Promise<NonNullable<BenchResults["memory"]>> {
  const inFlight: Record<string, Figure> = {};
  for (const library of MEMORY_LIBRARIES) {
    const runs: number[] = [];
    for (let run = 0; run < MEMORY_RUNS; run++) {
      const count = library === "toolloop" ? IN_FLIGHT_LOOPS : PEER_IN_FLIGHT_LOOPS;
      runs.push(await childJson<number>(["--expose-gc"], child, ["in-flight", library, String(count)]));
    }
    inFlight[library] = summarize(runs, "B");
    log(`  in-flight ${library}: ${Math.round(inFlight[library].median)} B per waiting loop`);
  }
  const retained: Record<string, Record<string, Figure>> = {};
  for (const library of RETAINED_LIBRARIES) {
    const row: Record<string, Figure> = {};
    for (const steps of STEP_COUNTS) {
      const runs: number[] = [];
      const count = library === "toolloop" || library === "by hand" ? MEMORY_RUNS : PEER_RETAINED_RUNS;
      for (let run = 0; run < count; run++) {
        runs.push(await childJson<number>(["--expose-gc"], child, ["retained", library, String(steps)]));
      }
      row[`${steps} steps`] = summarize(runs, "B");
      log(`  retained ${library} ${steps} steps: ${Math.round((row[`${steps} steps`] as Figure).median)} B`);
    }
    retained[library] = row;
  }
  return { inFlightLoops: IN_FLIGHT_LOOPS, peerInFlightLoops: PEER_IN_FLIGHT_LOOPS, inFlight, retained };
}

const IMPORT_SCRIPT =
  "const t0 = performance.now(); await import(process.argv[1]); process.stdout.write(String(performance.now() - t0));";

async function size(): Promise<NonNullable<BenchResults["size"]>> {
  const entries = await entrySizes();
  const core = pathToFileURL(await buildCoreEntry()).href;
  const targets: Record<string, string> = { toolloop: core, ai: "ai", "@openai/agents": "@openai/agents" };
  const times: Record<string, number[]> = {};
  for (const name of Object.keys(targets)) times[name] = [];
  // One unmeasured round warms the file cache; then the libraries take turns.
  for (let run = -1; run < COLD_IMPORT_RUNS; run++) {
    for (const [name, specifier] of Object.entries(targets)) {
      const ms = Number(await node(["--input-type=module", "-e", IMPORT_SCRIPT, specifier]));
      if (run >= 0) (times[name] as number[]).push(ms);
    }
  }
  const coldImport: Record<string, Figure> = {};
  for (const [name, values] of Object.entries(times)) {
    coldImport[name] = summarize(values, "ms");
    log(`  cold import ${name}: ${coldImport[name].median.toFixed(1)} ms`);
  }
  return { entries, coldImport };
}

function machine(): BenchResults["machine"] {
  const cpuList = cpus();
  return {
    cpu: cpuList[0]?.model.trim() ?? "unknown CPU",
    cores: cpuList.length,
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    date: new Date().toISOString().slice(0, 10),
    loadAverage: loadavg().map((value) => Math.round(value * 100) / 100),
  };
}

async function main(): Promise<void> {
  const flags = parseFlags(process.argv.slice(2));
  const started = performance.now();
  const results: BenchResults = { machine: machine() };
  const child = await buildChild();

  const timed = (["loop", "dispatch", "parallel", "scaling"] as const).filter((name) => flags.only.has(name));
  if (timed.length > 0) {
    log(`workloads ${timed.join(", ")} (one process)`);
    const profileFlags = flags.profile ? ["--cpu-prof", `--cpu-prof-dir=${join(ROOT, ".tmp", "profiles")}`] : [];
    Object.assign(results, await childJson<Partial<BenchResults>>(profileFlags, child, ["timing", timed.join(",")]));
    if (flags.profile) log(`  CPU profile written to ${join(ROOT, ".tmp", "profiles")}`);
  }
  if (flags.only.has("memory")) {
    log("memory (one child process per measurement, --expose-gc)");
    results.memory = await memory(child);
  }
  if (flags.only.has("size")) {
    log("size and cold import");
    results.size = await size();
  }
  results.targets = evaluateTargets(results);
  log(`done in ${((performance.now() - started) / 1000).toFixed(0)} s`);

  if (flags.json) process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
  else process.stdout.write(`\n${terminalReport(results)}\n`);
  if (flags.write) {
    const path = join(ROOT, "docs", "benchmarks.md");
    let existing: string | undefined;
    try {
      existing = readFileSync(path, "utf8");
    } catch {
      existing = undefined;
    }
    writeFileSync(path, mergeIntoDocument(existing, markdownReport(results)));
    log(`wrote ${path}`);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
