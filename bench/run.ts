/**
 * `npm run bench`: runs every workload of issues 4 and 9, prints a table and rewrites the generated
 * part of docs/benchmarks.md.
 *
 *   npm run bench                      everything (~2–3 minutes on 2 cores)
 *   npm run bench -- --json            print the results as JSON on stdout (progress on stderr)
 *   npm run bench -- --no-write        do not touch docs/benchmarks.md
 *   npm run bench -- --only=loop,size  a subset: loop, dispatch, parallel, scaling, adapters, streaming, memory, size
 *   npm run bench -- --only=loop --no-write "--rows=toolloop,toolloop onEvent"
 *                                      workload 1 for some rows of LOOP_ROWS only (an A/B without the peers)
 *   npm run bench -- --profile         also write a V8 CPU profile of the timed workloads to .tmp/profiles/
 *
 * The measured code is the bench bundled by esbuild (plain JavaScript as dist/ ships it, not tsx's
 * transform), run in child processes that each load ONE library: workload 1 runs each row of
 * LOOP_ROWS in a process of its own, several times in turn, then each toolloop row beside the
 * minimal one in paired turns (the ratios its targets read); workloads 2–4 and 7 run in one process
 * per library; memory and cold-import measurements each get a fresh process.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { buildChild, buildEntryPoints, entrySizes, ROOT } from "./build.js";
import {
  IMPLEMENTATIONS,
  IN_FLIGHT_LOOPS,
  LOOP_ROWS,
  LOOP_STEPS,
  PEER_IN_FLIGHT_LOOPS,
  STEP_COUNTS,
  TIMING_WORKLOADS,
  WORKLOAD_LIBRARIES,
} from "./constants.js";
import { type Figure, scaled, summarize } from "./measure.js";
import { type BenchResults, evaluateTargets, markdownReport, mergeIntoDocument, terminalReport } from "./report.js";

const WORKLOADS = ["loop", "dispatch", "parallel", "scaling", "adapters", "streaming", "memory", "size"] as const;
type Workload = (typeof WORKLOADS)[number];

// Memory figures barely vary between runs; the peers' long loops are slow, so they run once.
const MEMORY_RUNS = 3;
const PEER_RETAINED_RUNS = 1;
const COLD_IMPORT_RUNS = 7;
// Workload 1: every row's process is started this many times, the rows taking turns, so that load
// from other processes on this shared machine hits all of them alike.
const LOOP_PROCESS_ROUNDS = 3;
// Workload 1's ratios to the minimal row: turns of the other row, each between two of the minimal one.
// 60 rather than 30: the medians of 30 moved by ±10 % between runs on this machine (2.50–3.14×).
const PAIRED_TURNS = 60;
// The toolloop rows with a target against the minimal one.
const PAIRED_VARIANTS: ReadonlySet<string> = new Set(["realistic", "middleware", "tracing"]);
const MEMORY_LIBRARIES = ["toolloop", "AI SDK", "Agents SDK"] as const;
const RETAINED_LIBRARIES = ["by hand", "toolloop", "AI SDK", "Agents SDK"] as const;

interface Flags {
  json: boolean;
  write: boolean;
  profile: boolean;
  only: Set<Workload>;
  /** Workload 1's rows to run; all of LOOP_ROWS by default. */
  rows: ReadonlySet<string>;
}

function parseFlags(argv: string[]): Flags {
  const flags: Flags = {
    json: false,
    write: true,
    profile: false,
    only: new Set(WORKLOADS),
    rows: new Set(LOOP_ROWS.map((row) => row.name)),
  };
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
    } else if (argument.startsWith("--rows=")) {
      const names = argument.slice("--rows=".length).split(",");
      const known: readonly string[] = LOOP_ROWS.map((row) => row.name);
      for (const name of names) {
        if (!known.includes(name)) {
          throw new TypeError(`--rows: unknown row ${JSON.stringify(name)}; expected ${known.join(", ")}`);
        }
      }
      flags.rows = new Set(names);
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

/** Workloads 2–4 and 7: one child process per library, the results merged. */
async function timedWorkloads(child: string, names: string[], nodeFlags: string[]): Promise<Partial<BenchResults>> {
  const results: Record<string, unknown> = {};
  for (const library of IMPLEMENTATIONS) {
    const mine = names.filter((name) =>
      (WORKLOAD_LIBRARIES as Record<string, readonly string[]>)[name]?.includes(library),
    );
    if (mine.length === 0) continue;
    log(`${mine.join(", ")}: ${library} (one process)`);
    const part = await childJson<Record<string, unknown>>(nodeFlags, child, ["timing", library, mine.join(",")]);
    for (const [name, value] of Object.entries(part)) {
      const existing = results[name];
      // parallel and scaling have one entry per library; dispatch and adapters come from one process.
      results[name] =
        name === "parallel" || name === "scaling" ? { ...(existing as object), ...(value as object) } : value;
    }
  }
  return results as Partial<BenchResults>;
}

/** Workload 1: each row in its own process, started {@link LOOP_PROCESS_ROUNDS} times in turn. */
async function loop(
  child: string,
  nodeFlags: string[],
  rows: ReadonlySet<string>,
): Promise<NonNullable<BenchResults["loop"]>> {
  const samples: Record<string, Record<string, number[]>> = {};
  for (let round = 0; round < LOOP_PROCESS_ROUNDS; round++) {
    log(`loop, round ${round + 1} of ${LOOP_PROCESS_ROUNDS} (one process per row)`);
    for (const row of LOOP_ROWS) {
      if (!rows.has(row.name)) continue;
      const part = await childJson<Record<string, number[]>>(nodeFlags, child, ["loop", row.name]);
      for (const [key, values] of Object.entries(part)) {
        const rows = samples[key] ?? {};
        rows[row.name] = [...(rows[row.name] ?? []), ...values];
        samples[key] = rows;
      }
    }
  }
  const results: NonNullable<BenchResults["loop"]> = {};
  for (const [key, rows] of Object.entries(samples)) {
    results[key] = {};
    for (const [name, values] of Object.entries(rows)) {
      const perLoop = summarize(values, "µs");
      (results[key] as Record<string, unknown>)[name] = { perLoop, perStep: scaled(perLoop, LOOP_STEPS + 1) };
    }
  }
  return results;
}

/** One row's child process in paired turns (`child turns <row>`), driven over IPC. */
class TurnTaker {
  readonly #child: ChildProcess;
  readonly #replies: Array<(message: { ready?: boolean; turn?: Record<string, number> }) => void> = [];
  readonly ready: Promise<unknown>;
  readonly #exited: Promise<void>;

  constructor(nodeFlags: string[], child: string, row: string) {
    this.#child = spawn(process.execPath, [...nodeFlags, child, "turns", row], {
      cwd: ROOT,
      stdio: ["ignore", "ignore", "inherit", "ipc"],
    });
    this.#exited = new Promise((resolve, reject) => {
      this.#child.on("error", reject);
      this.#child.on("exit", (code) => {
        if (code === 0) resolve();
        else reject(new Error(`the turns of ${row} exited with code ${code}`));
      });
    });
    this.#child.on("message", (message: { ready?: boolean; turn?: Record<string, number> }) => {
      this.#replies.shift()?.(message);
    });
    this.ready = Promise.race([this.#reply(), this.#exited]);
  }

  #reply(): Promise<{ ready?: boolean; turn?: Record<string, number> }> {
    return new Promise((resolve) => this.#replies.push(resolve));
  }

  /** Times each case once more; its median µs per loop by case. */
  async turn(): Promise<Record<string, number>> {
    const reply = this.#reply();
    this.#child.send({ measure: true });
    const message = await Promise.race([reply, this.#exited]);
    if (message === undefined || message.turn === undefined) throw new Error("a turn ended without figures");
    return message.turn;
  }

  done(): Promise<void> {
    this.#child.send({ done: true });
    return this.#exited;
  }
}

/**
 * Workload 1's ratios to the minimal row, robust to the machine's slow spells: the minimal row and
 * the other row each run in a process of their own (as in {@link loop}), started together, then
 * take turns — minimal, other, minimal, … — so that each turn of the other row is compared with
 * the two turns of the minimal row around it, a fraction of a second apart. Per K: every turn's
 * ratio, summarised (median, smallest, largest).
 */
async function pairedRatios(
  child: string,
  nodeFlags: string[],
  rows: ReadonlySet<string>,
): Promise<NonNullable<BenchResults["loopRatios"]>> {
  const ratios: NonNullable<BenchResults["loopRatios"]> = {};
  for (const row of LOOP_ROWS) {
    if (!PAIRED_VARIANTS.has(row.variant) || !rows.has(row.name) || !rows.has("toolloop")) continue;
    log(`loop, ${row.name} ÷ toolloop in ${PAIRED_TURNS} paired turns`);
    const minimal = new TurnTaker(nodeFlags, child, "toolloop");
    const other = new TurnTaker(nodeFlags, child, row.name);
    await Promise.all([minimal.ready, other.ready]);
    let before = await minimal.turn();
    const perKey: Record<string, number[]> = {};
    for (let turn = 0; turn < PAIRED_TURNS; turn++) {
      const mine = await other.turn();
      const after = await minimal.turn();
      for (const [key, value] of Object.entries(mine)) {
        const around = ((before[key] ?? Number.NaN) + (after[key] ?? Number.NaN)) / 2;
        perKey[key] = [...(perKey[key] ?? []), value / around];
      }
      before = after;
    }
    await Promise.all([minimal.done(), other.done()]);
    for (const [key, values] of Object.entries(perKey)) {
      const figure = summarize(values, "×");
      ratios[key] = { ...ratios[key], [row.name]: figure };
      log(`  ${key}: ${figure.median.toFixed(2)}× (median of ${values.length} turns)`);
    }
  }
  return ratios;
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
  const built = await buildEntryPoints();
  const entries = await entrySizes(built);
  // The core as it ships: dist/index.js and the chunks it imports.
  const core = pathToFileURL((built.find((entry) => entry.specifier === "toolloop") as { file: string }).file).href;
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
    abortSignalMicros: abortSignalMicros(),
  };
}

/**
 * What Node itself takes to make one `AbortSignal` (median of 5 rounds of 20,000, after a warm-up):
 * 2–4 µs on Node 20, 0.1–0.2 µs on Node 22. A caller's signal and the run's own are two per realistic
 * loop, so this figure says how much of that row is the runtime's.
 */
function abortSignalMicros(): number {
  const rounds: number[] = [];
  for (let round = 0; round < 6; round++) {
    const started = performance.now();
    // Each read of `signal` makes one (Node's getter), so nothing here can be optimized away.
    for (let index = 0; index < 20_000; index++) void new AbortController().signal;
    if (round > 0) rounds.push(((performance.now() - started) * 1000) / 20_000);
  }
  return summarize(rounds, "µs").median;
}

async function main(): Promise<void> {
  const flags = parseFlags(process.argv.slice(2));
  const started = performance.now();
  const results: BenchResults = { machine: machine() };
  const child = await buildChild();

  const profileFlags = flags.profile ? ["--cpu-prof", `--cpu-prof-dir=${join(ROOT, ".tmp", "profiles")}`] : [];
  if (flags.only.has("loop")) {
    results.loop = await loop(child, profileFlags, flags.rows);
    results.loopRatios = await pairedRatios(child, profileFlags, flags.rows);
  }
  const timed = TIMING_WORKLOADS.filter((name) => flags.only.has(name));
  if (timed.length > 0) Object.assign(results, await timedWorkloads(child, timed, profileFlags));
  if (flags.profile) log(`  CPU profiles written to ${join(ROOT, ".tmp", "profiles")}`);
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
