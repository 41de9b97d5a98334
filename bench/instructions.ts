/**
 * Instructions per loop of toolloop's loop cases, counted by valgrind's callgrind: repeatable
 * within about ±10 % where wall-clock medians on this shared machine move by ±30 %, so A/B
 * comparisons of a change are made with it.
 *
 *   npx tsx bench/instructions.ts [--runs=300] [--from=0] [--rev=<git revision> | --src=<folder>] "<case>" …
 *
 * Instructions per loop = (count at `--runs` − count at `--from`) / (runs − from). With `--from=0`
 * (the default) that includes whatever still settles in the first counted loops; `--from=2000
 * --runs=6000` counts the margin between two lengths, the steadiest figure (session 23: realistic
 * K=1 420K from 0 to 2,000, 365K from 2,000 to 6,000).
 *
 * Cases as in instructions-driver.ts (`minimal K=1`, `realistic K=4 -logger` …); default: minimal
 * and realistic at K=1 and K=4. With `--rev`, `src/` of that revision is measured (exported with
 * `git archive` to a temporary folder), with `--src` the `src/` in that folder (a copy with a
 * change undone, say), both with this bench's driver. Prints instructions per loop.
 *
 * V8 runs with --predictable --single-threaded (no compiler or GC threads), so two runs of the same
 * bundle agree within about ±1 %; compare bundles built from the same tree, not runs hours apart
 * while others change src/.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { CACHE_DIR, ROOT } from "./build.js";

const DEFAULT_CASES = ["minimal K=1", "realistic K=1", "minimal K=4", "realistic K=4"];

interface Options {
  runs: number;
  from: number;
  rev: string | undefined;
  src: string | undefined;
  cases: string[];
}

function options(argv: string[]): Options {
  const parsed: Options = { runs: 300, from: 0, rev: undefined, src: undefined, cases: [] };
  for (const argument of argv) {
    if (argument.startsWith("--runs=")) parsed.runs = Number(argument.slice("--runs=".length));
    else if (argument.startsWith("--from=")) parsed.from = Number(argument.slice("--from=".length));
    else if (argument.startsWith("--rev=")) parsed.rev = argument.slice("--rev=".length);
    else if (argument.startsWith("--src=")) parsed.src = argument.slice("--src=".length);
    else parsed.cases.push(argument);
  }
  if (parsed.cases.length === 0) parsed.cases = DEFAULT_CASES;
  if (
    !(Number.isInteger(parsed.from) && parsed.from >= 0 && Number.isInteger(parsed.runs) && parsed.runs > parsed.from)
  ) {
    throw new TypeError(
      `--runs must be an integer above --from (an integer ≥ 0): got ${parsed.runs} and ${parsed.from}`,
    );
  }
  return parsed;
}

/** The root to bundle from: this checkout, or `src/` of `rev` (or of the folder `src`) beside this bench. */
function sourceRoot({ rev, src }: Options): { root: string; cleanup(): void } {
  if (rev === undefined && src === undefined) return { root: ROOT, cleanup: () => {} };
  const root = mkdtempSync(join(tmpdir(), "toolloop-instructions-"));
  if (src !== undefined) cpSync(join(src, "src"), join(root, "src"), { recursive: true });
  else {
    const archive = execFileSync("git", ["archive", rev as string, "src"], { cwd: ROOT, maxBuffer: 1 << 28 });
    execFileSync("tar", ["-x", "-C", root], { input: archive });
  }
  cpSync(join(ROOT, "bench"), join(root, "bench"), { recursive: true });
  symlinkSync(join(ROOT, "node_modules"), join(root, "node_modules"));
  return { root, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

// Per invocation, so that two measurements can run at once.
const WORK_DIR = join(CACHE_DIR, "instructions", String(process.pid));

async function bundle(root: string): Promise<string> {
  const outfile = join(WORK_DIR, "driver.mjs");
  await build({
    entryPoints: [join(root, "bench", "instructions-driver.ts")],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    outfile,
    logLevel: "warning",
  });
  return outfile;
}

/** Total instructions of one run of the driver under callgrind. */
function instructions(driver: string, name: string, count: number): number {
  const out = join(WORK_DIR, "callgrind.out");
  const result = spawnSync(
    "valgrind",
    // --predictable and --single-threaded: no compiler or GC threads, whose work would be counted at random.
    [
      "--tool=callgrind",
      `--callgrind-out-file=${out}`,
      process.execPath,
      "--predictable",
      "--single-threaded",
      "--expose-gc",
      driver,
      name,
      String(count),
    ],
    { cwd: ROOT, encoding: "utf8" },
  );
  if (result.status !== 0) throw new Error(`valgrind failed (${result.status}): ${result.stderr.slice(-2000)}`);
  const summary = /^summary: (\d+)/m.exec(readFileSync(out, "utf8"));
  if (summary === null) throw new Error("no summary line in the callgrind output");
  return Number(summary[1]);
}

async function main(): Promise<void> {
  const parsed = options(process.argv.slice(2));
  const { runs, from, cases } = parsed;
  const source = sourceRoot(parsed);
  try {
    const driver = await bundle(source.root);
    for (const name of cases) {
      const base = instructions(driver, name, from);
      const total = instructions(driver, name, runs);
      const perLoop = Math.round((total - base) / (runs - from));
      process.stdout.write(
        `${name.padEnd(28)} ${perLoop.toLocaleString("en-US").padStart(12)} instructions per loop\n`,
      );
    }
  } finally {
    source.cleanup();
    rmSync(WORK_DIR, { recursive: true, force: true });
  }
}

await main();
