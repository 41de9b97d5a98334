/**
 * Entry point of the child processes `bench/run.ts` starts (bundled first, so the code measured is
 * plain JavaScript as `dist/` ships it, not tsx's transform). Prints one JSON document to stdout.
 * Every child measures one library only.
 *
 *   child loop <row>                                workload 1 for one row of LOOP_ROWS: samples of K=1 and K=4
 *   child turns <row>                               workload 1 for one row, a turn whenever the parent asks (IPC)
 *   child timing <library> <workload,…>             workloads 2–4 and 7 of one library
 *   child in-flight <library> <count>               heap per waiting loop (needs --expose-gc)
 *   child retained <library> <steps>                heap kept by a finished loop (needs --expose-gc)
 */
import { asImplementation } from "./cases.js";
import {
  type Implementation,
  LOOP_ROWS,
  type LoopRowName,
  TIMING_WORKLOADS,
  type TimingWorkload,
  WORKLOAD_LIBRARIES,
} from "./constants.js";

async function timing(library: Implementation, names: TimingWorkload[]): Promise<Record<string, unknown>> {
  const workloads = await import("./timing.js");
  const results: Record<string, unknown> = {};
  for (const name of names) {
    if (!WORKLOAD_LIBRARIES[name].includes(library)) continue;
    const started = performance.now();
    process.stderr.write(`  — ${name} (${library})\n`);
    switch (name) {
      case "dispatch":
        results.dispatch = await workloads.dispatch();
        break;
      case "parallel":
        results.parallel = await workloads.parallel(library);
        break;
      case "scaling":
        results.scaling = { [library]: await workloads.scaling(library) };
        break;
      case "adapters":
        results.adapters = await workloads.adapters();
        break;
      case "streaming":
        results.streaming = await workloads.streaming();
        break;
    }
    process.stderr.write(`  (${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
  }
  return results;
}

function asRow(name: string | undefined): LoopRowName {
  const row = LOOP_ROWS.find((candidate) => candidate.name === name);
  if (row === undefined) throw new TypeError(`unknown loop row ${JSON.stringify(name)}`);
  return row.name;
}

async function main(argv: string[]): Promise<unknown> {
  const [mode, first, second] = argv;
  if (mode === "loop") return (await import("./timing.js")).loopSamples(asRow(first));
  if (mode === "turns") return (await import("./timing.js")).loopTurns(asRow(first));
  if (mode === "timing") {
    const names = (second ?? "").split(",").filter((name) => name !== "");
    for (const name of names) {
      if (!(TIMING_WORKLOADS as readonly string[]).includes(name)) throw new Error(`unknown workload ${name}`);
    }
    return timing(asImplementation(first), names as TimingWorkload[]);
  }
  const memory = await import("./memory.js");
  if (mode === "in-flight") return memory.inFlight(asImplementation(first), Number(second));
  if (mode === "retained") return memory.retainedAfter(asImplementation(first), Number(second));
  throw new Error(`unknown mode ${mode}`);
}

main(process.argv.slice(2)).then(
  (result) => {
    // Exit once the document is written (stdout is a pipe: writes are asynchronous). Waiting loops of
    // the memory workloads hold nothing that keeps the process alive, but be explicit.
    process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
  },
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
