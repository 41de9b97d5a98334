/**
 * The timed workloads (1–4, 7). Each child process measures ONE library (see child.ts): once a
 * library has run in a process, its leftovers (an AsyncLocalStorage, megamorphic call sites in
 * shared dependencies such as zod) would slow whatever is measured after it.
 */
import * as z from "zod";
import { defineTool, ToolRegistry } from "../src/index.js";
import { caseMaker } from "./cases.js";
import {
  ADAPTERS,
  BOUNDED_CONCURRENCY,
  type Implementation,
  LOOP_CALLS,
  LOOP_ROWS,
  LOOP_STEPS,
  type LoopRowName,
  PARALLEL_CALLS,
  SCALING_TOOL_COUNTS,
  SLEEP_MS,
  STREAM_REPEATS,
} from "./constants.js";
import { compare, type Figure, sampleCases, scaled, summarize } from "./measure.js";
import type { ParallelFigure, StreamFigures } from "./report.js";
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

const isCheap = (implementation: Implementation) => implementation === "by hand" || implementation === "toolloop";

/** Rounds of workload 1 within one child process (run.ts starts several such processes in turn). */
const LOOP_ROUNDS_PER_PROCESS = 2;

/** Workload 1's cases of one row: K=1 and K=4, each checked once; `cheap` for toolloop and by hand. */
async function loopCases(
  rowName: LoopRowName,
): Promise<{ cases: Record<string, () => Promise<unknown>>; cheap: boolean }> {
  const row = LOOP_ROWS.find((candidate) => candidate.name === rowName);
  if (row === undefined) throw new Error(`unknown loop row ${rowName}`);
  const make = await caseMaker(row.implementation);
  const cases: Record<string, () => Promise<unknown>> = {};
  for (const callsPerStep of LOOP_CALLS) {
    const counter = new Counter();
    const loop = await verified(
      rowName,
      make(echoScript(LOOP_STEPS, callsPerStep), [echoTool(counter)], {
        realistic: row.variant === "realistic",
        events: row.variant === "events",
        middleware: row.variant === "middleware",
        tracing: row.variant === "tracing",
      }),
      counter,
      LOOP_STEPS * callsPerStep,
    );
    if (row.variant === "events") {
      // Loaded on demand, as cases.ts loads each library: only toolloop's processes load it.
      const { checkEventCount } = await import("./toolloop-cases.js");
      await checkEventCount(echoScript(LOOP_STEPS, callsPerStep), [echoTool(new Counter())], callsPerStep);
    }
    cases[`K=${callsPerStep}`] = () => loop.run();
  }
  return { cases, cheap: isCheap(row.implementation) };
}

/**
 * Warm-up runs of each loop case before anything is timed. toolloop's rows need about 2,000: a
 * function called once per loop (the run's setup, its signal link) is optimized only after many
 * hundreds of loops, and the realistic row, which has the most such code, was still settling after
 * 500 (timed right after 500, it read 1.5–2× its steady time on Node 22). The peers are ~100×
 * slower per loop: a few runs keep the whole run short.
 */
const loopWarmup = (cheap: boolean) => (cheap ? 2_000 : 20);

/**
 * Workload 1 for one row: S=10 steps of K echo calls, then a final answer; every sample (µs per
 * loop) of K=1 and K=4, which take turns within the process.
 */
export async function loopSamples(rowName: LoopRowName): Promise<Record<string, number[]>> {
  const { cases, cheap } = await loopCases(rowName);
  return sampleCases(cases, {
    warmup: loopWarmup(cheap),
    rounds: LOOP_ROUNDS_PER_PROCESS,
    roundMs: 150,
    onSample: (name, round, median) => {
      if (round === 0) progress(`loop ${name} ${rowName}: ${median.toFixed(1)} µs/loop`);
    },
  });
}

/** How long one turn of {@link loopTurns} times each case. */
const TURN_MS = 50;

/**
 * Workload 1 for one row, a turn at a time (the child's side of run.ts's paired turns): warms up,
 * tells the parent it is ready, then times each case for {@link TURN_MS} whenever the parent asks
 * (`{ measure: true }`) and answers with the median µs per loop of each; `{ done: true }` ends it.
 */
export async function loopTurns(rowName: LoopRowName): Promise<null> {
  const { cases, cheap } = await loopCases(rowName);
  const send = process.send?.bind(process);
  if (send === undefined) throw new Error("loop turns need an IPC channel to the parent");
  // Warm-up only: no round is timed before the parent asks.
  await sampleCases(cases, { warmup: loopWarmup(cheap), rounds: 0 });
  const turns: Array<{ measure?: boolean; done?: boolean }> = [];
  let wake: (() => void) | undefined;
  process.on("message", (message: { measure?: boolean; done?: boolean }) => {
    turns.push(message);
    wake?.();
  });
  send({ ready: true });
  for (;;) {
    if (turns.length === 0) await new Promise<void>((resolve) => (wake = resolve));
    const message = turns.shift() as { measure?: boolean; done?: boolean };
    if (message.done === true) break;
    const samples = await sampleCases(cases, { warmup: 0, rounds: 1, roundMs: TURN_MS });
    const medians: Record<string, number> = {};
    for (const [name, values] of Object.entries(samples)) medians[name] = summarize(values, "µs").median;
    send({ turn: medians });
  }
  process.disconnect();
  return null;
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

/**
 * Workload 3: 16 calls of a 20 ms tool in one turn; wall time of the whole loop (2 model calls).
 * The by-hand process measures the bare timers.
 */
export async function parallel(implementation: Implementation): Promise<Record<string, ParallelFigure>> {
  const waves = Math.ceil(PARALLEL_CALLS / BOUNDED_CONCURRENCY);
  const unboundedIdeal = SLEEP_MS;
  const boundedIdeal = SLEEP_MS * waves;
  const cases: Record<string, () => Promise<unknown>> = {};
  const ideals: Record<string, number> = {};
  const add = async (name: string, library: Implementation, ideal: number, maxConcurrency?: number) => {
    const counter = new Counter();
    const make = await caseMaker(library);
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

  if (implementation === "by hand") {
    // The timer floor: what the same sleeps take on this machine without any loop around them.
    cases["timers, all at once"] = () => Promise.all(Array.from({ length: PARALLEL_CALLS }, sleep));
    ideals["timers, all at once"] = unboundedIdeal;
    const wavesName = `timers, ${waves} waves of ${BOUNDED_CONCURRENCY}`;
    cases[wavesName] = async () => {
      for (let wave = 0; wave < waves; wave++) await Promise.all(Array.from({ length: BOUNDED_CONCURRENCY }, sleep));
    };
    ideals[wavesName] = boundedIdeal;
  } else if (implementation === "toolloop") {
    await add("toolloop unbounded", "toolloop", unboundedIdeal);
    await add(`toolloop maxConcurrency ${BOUNDED_CONCURRENCY}`, "toolloop", boundedIdeal, BOUNDED_CONCURRENCY);
  } else {
    await add(`${implementation} unbounded`, implementation, unboundedIdeal);
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
export async function scaling(implementation: Implementation): Promise<Record<string, Figure>> {
  const script = echoScript(LOOP_STEPS, 1);
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
  return row;
}

/**
 * Workload 7: one `provider.chat(transcript, definitions)` of each adapter with 10 and 1,000
 * registered tools, µs per step (see adapter-cases.ts); the two tool counts take turns.
 */
export async function adapters(): Promise<Record<string, Record<string, Figure>>> {
  const { adapterStep, secondStepInput } = await import("./adapter-cases.js");
  const { toolloopRegistry } = await import("./toolloop-cases.js");
  const inputs = new Map<number, Awaited<ReturnType<typeof secondStepInput>>>();
  for (const toolCount of SCALING_TOOL_COUNTS) {
    const tools = [echoTool(new Counter()), ...fillerTools(toolCount - 1)];
    inputs.set(toolCount, await secondStepInput(toolloopRegistry(tools)));
  }
  const results: Record<string, Record<string, Figure>> = {};
  for (const name of ADAPTERS) {
    const cases: Record<string, () => Promise<unknown>> = {};
    for (const [toolCount, input] of inputs) cases[`${toolCount} tools`] = await adapterStep(name, input);
    const figures = await compare(cases, { warmup: 50, rounds: 3, roundMs: 100 });
    results[name] = figures;
    const [few, many] = SCALING_TOOL_COUNTS.map((count) => (figures[`${count} tools`] as Figure).median);
    progress(`adapter ${name}: ${few?.toFixed(2)} / ${many?.toFixed(2)} µs per step`);
  }
  return results;
}

/**
 * Workload 8: one recorded OpenAI Chat stream read three ways (see stream-cases.ts) — the client's
 * stream directly, `streamToolLoop`, and `toUIMessageStream` — as recorded and with its argument
 * pieces repeated; µs per stream. The three cases take turns.
 */
export async function streaming(): Promise<Record<string, StreamFigures>> {
  const { streamCases } = await import("./stream-cases.js");
  const results: Record<string, StreamFigures> = {};
  for (const times of STREAM_REPEATS) {
    const { cases, frames } = await streamCases(times);
    const figures = await compare(cases, { warmup: 200, rounds: 5, roundMs: 150 });
    const name = times === 1 ? "as recorded" : `argument pieces ×${times}`;
    results[name] = { frames, figures };
    const median = (key: string) => (figures[key] as Figure).median.toFixed(1);
    progress(
      `streaming ${name} (${frames} chunks): client ${median("client")}, streamToolLoop ${median("streamToolLoop")}, ` +
        `toUIMessageStream ${median("toUIMessageStream")} µs`,
    );
  }
  return results;
}
