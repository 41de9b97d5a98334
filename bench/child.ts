/**
 * Entry point of the child processes `bench/run.ts` starts (bundled first, so the code measured is
 * plain JavaScript as `dist/` ships it, not tsx's transform). Prints one JSON document to stdout.
 *
 *   child timing [workload,…]          workloads 1–4 in this one process
 *   child in-flight <library> <count>  heap per waiting loop (needs --expose-gc)
 *   child retained <library> <steps>   heap kept by a finished loop (needs --expose-gc)
 */
import { asImplementation } from "./cases.js";
import type { Implementation } from "./constants.js";

const TIMING_WORKLOADS = ["loop", "dispatch", "parallel", "scaling"] as const;
type TimingWorkload = (typeof TIMING_WORKLOADS)[number];

// The Agents SDK is measured last, in a second phase: once it has run it keeps an
// AsyncLocalStorage active, which slows every promise of the process (the by-hand floor and
// toolloop by 1.5–2×), so measuring it earlier would penalise everything measured after it.
const FIRST_PHASE: Implementation[] = ["by hand", "toolloop", "AI SDK"];
const SECOND_PHASE: Implementation[] = ["Agents SDK"];

async function runWorkload(name: TimingWorkload, implementations: Implementation[]): Promise<unknown> {
  const timing = await import("./timing.js");
  switch (name) {
    case "loop":
      return timing.loopOverhead(implementations);
    case "dispatch":
      return implementations.includes("toolloop") ? timing.dispatch() : undefined;
    case "parallel":
      return timing.parallel(implementations);
    case "scaling":
      return timing.scaling(implementations);
  }
}

/** Adds the second phase's entries to the first phase's result (one level deep for `loop`). */
function merge(first: unknown, second: unknown): unknown {
  if (first === undefined) return second;
  if (second === undefined) return first;
  const merged: Record<string, unknown> = { ...(first as Record<string, unknown>) };
  for (const [key, value] of Object.entries(second as Record<string, unknown>)) {
    const existing = merged[key];
    const nested = typeof existing === "object" && existing !== null && !("median" in existing);
    merged[key] = nested ? { ...existing, ...(value as Record<string, unknown>) } : value;
  }
  return merged;
}

async function timing(names: TimingWorkload[]): Promise<Record<string, unknown>> {
  const results: Record<string, unknown> = {};
  for (const phase of [FIRST_PHASE, SECOND_PHASE]) {
    for (const name of names) {
      const started = performance.now();
      process.stderr.write(`  — ${name} (${phase.join(", ")})\n`);
      results[name] = merge(results[name], await runWorkload(name, phase));
      process.stderr.write(`  (${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
    }
  }
  return results;
}

async function main(argv: string[]): Promise<unknown> {
  const [mode, first, second] = argv;
  if (mode === "timing") {
    const names = first === undefined || first === "" ? [...TIMING_WORKLOADS] : first.split(",");
    for (const name of names) {
      if (!(TIMING_WORKLOADS as readonly string[]).includes(name)) throw new Error(`unknown workload ${name}`);
    }
    return timing(names as TimingWorkload[]);
  }
  const memory = await import("./memory.js");
  if (mode === "in-flight") return memory.inFlight(asImplementation(first), Number(second));
  if (mode === "retained") return memory.retainedAfter(asImplementation(first), Number(second));
  throw new Error(`unknown mode ${mode}`);
}

main(process.argv.slice(2)).then(
  (result) => {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    // Waiting loops of the memory workloads hold nothing that keeps the process alive, but be explicit.
    process.exit(0);
  },
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
