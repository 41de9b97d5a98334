/**
 * The timed workloads (1–4), run in ONE process so that their ratios are comparable.
 */
import * as z from "zod";
import { defineTool, ToolRegistry } from "../src/index.js";
import { caseMaker } from "./cases.js";
import {
  BOUNDED_CONCURRENCY,
  type Implementation,
  LOOP_CALLS,
  LOOP_STEPS,
  PARALLEL_CALLS,
  SCALING_TOOL_COUNTS,
  SLEEP_MS,
} from "./constants.js";
import { compare, type Figure, scaled } from "./measure.js";
import type { LoopFigures, ParallelFigure } from "./report.js";
import {
  Counter,
  echoScript,
  echoTool,
  fillerTools,
  type LoopCase,
  sleepScript,
  sleepTool,
  verified,
} from "./scenario.js";

/** Progress goes to stderr so that stdout stays machine-readable. */
export function progress(text: string): void {
  process.stderr.write(`  ${text}\n`);
}

const isCheap = (name: string) => name === "by hand" || name.startsWith("toolloop");

/** Workload 1: S=10 steps of K echo calls, then a final answer. */
export async function loopOverhead(
  implementations: readonly Implementation[],
): Promise<Record<string, Partial<Record<Implementation, LoopFigures>>>> {
  const results: Record<string, Partial<Record<Implementation, LoopFigures>>> = {};
  for (const callsPerStep of LOOP_CALLS) {
    const script = echoScript(LOOP_STEPS, callsPerStep);
    const cases: Record<string, () => Promise<unknown>> = {};
    for (const implementation of implementations) {
      const counter = new Counter();
      const make = await caseMaker(implementation);
      const loop = await verified(
        implementation,
        make(script, [echoTool(counter)]),
        counter,
        LOOP_STEPS * callsPerStep,
      );
      cases[implementation] = () => loop.run();
    }
    const figures = await compare(cases, {
      // The peers are ~100× slower per loop: fewer warm-up runs keep the whole run short.
      warmup: (name) => (isCheap(name) ? 500 : 20),
      rounds: 5,
      roundMs: 150,
      onSample: (name, round, median) => {
        if (round === 0) progress(`loop K=${callsPerStep} ${name}: ${median.toFixed(1)} µs/loop (round 1)`);
      },
    });
    const row: Partial<Record<Implementation, LoopFigures>> = {};
    for (const implementation of implementations) {
      const perLoop = figures[implementation] as Figure;
      row[implementation] = { perLoop, perStep: scaled(perLoop, LOOP_STEPS + 1) };
    }
    results[`K=${callsPerStep}`] = row;
  }
  return results;
}

/** Workload 2: one call through `registry.execute()` vs `fn(schema.parse(args))`. */
export async function dispatch(): Promise<{ direct: Figure; registry: Figure }> {
  const schema = z.object({ text: z.string() });
  const echo = ({ text }: { text: string }) => text;
  const registry = new ToolRegistry();
  registry.register(defineTool({ name: "echo", description: "Echo", parameters: schema, execute: echo }));
  const args: Record<string, unknown> = { text: "hello" };
  const check = await registry.execute("echo", args);
  if (check.isError || check.forLLM !== "hello") throw new Error(`dispatch: unexpected result ${check.forLLM}`);
  const figures = await compare(
    {
      direct: async () => echo(schema.parse(args)),
      registry: () => registry.execute("echo", args),
    },
    { warmup: 20_000, rounds: 5, roundMs: 100 },
  );
  const direct = figures.direct as Figure;
  const viaRegistry = figures.registry as Figure;
  progress(
    `dispatch: direct ${(direct.median * 1000).toFixed(0)} ns, registry ${(viaRegistry.median * 1000).toFixed(0)} ns`,
  );
  return { direct, registry: viaRegistry };
}

/** Workload 3: 16 calls of a 20 ms tool in one turn; wall time of the whole loop (2 model calls). */
export async function parallel(implementations: readonly Implementation[]): Promise<Record<string, ParallelFigure>> {
  const waves = Math.ceil(PARALLEL_CALLS / BOUNDED_CONCURRENCY);
  const unboundedIdeal = SLEEP_MS;
  const boundedIdeal = SLEEP_MS * waves;
  const cases: Record<string, () => Promise<unknown>> = {};
  const ideals: Record<string, number> = {};
  const add = async (name: string, implementation: Implementation, ideal: number, maxConcurrency?: number) => {
    const counter = new Counter();
    const make = await caseMaker(implementation);
    const loop: LoopCase = make(
      sleepScript(PARALLEL_CALLS, SLEEP_MS),
      [sleepTool(counter)],
      maxConcurrency === undefined ? {} : { maxConcurrency },
    );
    await verified(name, loop, counter, PARALLEL_CALLS);
    cases[name] = () => loop.run();
    ideals[name] = ideal;
  };
  const sleep = () => new Promise((resolve) => setTimeout(resolve, SLEEP_MS));

  if (implementations.includes("toolloop")) {
    // The timer floor: what the same sleeps take on this machine without any loop around them.
    cases["timers, all at once"] = () => Promise.all(Array.from({ length: PARALLEL_CALLS }, sleep));
    ideals["timers, all at once"] = unboundedIdeal;
    const wavesName = `timers, ${waves} waves of ${BOUNDED_CONCURRENCY}`;
    cases[wavesName] = async () => {
      for (let wave = 0; wave < waves; wave++) await Promise.all(Array.from({ length: BOUNDED_CONCURRENCY }, sleep));
    };
    ideals[wavesName] = boundedIdeal;
    await add("toolloop unbounded", "toolloop", unboundedIdeal);
    await add(`toolloop maxConcurrency ${BOUNDED_CONCURRENCY}`, "toolloop", boundedIdeal, BOUNDED_CONCURRENCY);
  }
  for (const implementation of implementations) {
    if (implementation === "AI SDK" || implementation === "Agents SDK") {
      await add(`${implementation} unbounded`, implementation, unboundedIdeal);
    }
  }
  const figures = await compare(cases, { unit: "ms", warmup: 2, rounds: 3, roundMs: 100, minSamples: 3 });
  const results: Record<string, ParallelFigure> = {};
  for (const [name, figure] of Object.entries(figures)) {
    results[name] = { ...figure, idealMs: ideals[name] as number };
    progress(`parallel ${name}: ${figure.median.toFixed(2)} ms`);
  }
  return results;
}

/** Workload 4: per-step cost of workload 1 (K=1) with 10 vs 1,000 registered tools. */
export async function scaling(
  implementations: readonly Implementation[],
): Promise<Partial<Record<Implementation, Record<string, Figure>>>> {
  const results: Partial<Record<Implementation, Record<string, Figure>>> = {};
  const script = echoScript(LOOP_STEPS, 1);
  for (const implementation of implementations) {
    if (implementation === "by hand") continue;
    const make = await caseMaker(implementation);
    const cases: Record<string, () => Promise<unknown>> = {};
    for (const toolCount of SCALING_TOOL_COUNTS) {
      const counter = new Counter();
      const tools = [echoTool(counter), ...fillerTools(toolCount - 1)];
      const loop = await verified(implementation, make(script, tools), counter, LOOP_STEPS);
      cases[`${toolCount} tools`] = () => loop.run();
    }
    // The peers convert every tool on every step: at 1,000 tools one of their loops takes 0.05–1 s.
    const cheap = isCheap(implementation);
    const figures = await compare(cases, {
      warmup: cheap ? 500 : 1,
      rounds: cheap ? 5 : 3,
      roundMs: cheap ? 150 : 1,
      minSamples: cheap ? 4 : 1,
    });
    const row: Record<string, Figure> = {};
    for (const [name, figure] of Object.entries(figures)) {
      row[name] = scaled(figure, LOOP_STEPS + 1);
      progress(`scaling ${implementation} ${name}: ${(figure.median / (LOOP_STEPS + 1)).toFixed(2)} µs/step`);
    }
    results[implementation] = row;
  }
  return results;
}
