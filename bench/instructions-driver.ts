/**
 * What `bench/instructions.ts` runs under callgrind: one loop case, warmed up, then run `count`
 * times. Instructions per loop = (instructions at count N − at count 0) / N.
 *
 *   node instructions-driver.mjs <case> <count>
 *
 * Cases: `hand K=<k>` (the by-hand floor), `minimal K=<k>`, `events K=<k>` (the minimal case with an `onEvent` that does nothing),
 * `middleware K=<k>` (the minimal case with one pass-through middleware), `tracing K=<k>` (the
 * minimal case with `tracing()` and the no-op tracer),
 * `realistic K=<k>`, `realistic K=<k> -<part> -<part>…` leaving parts out (`adapter`, `signal`,
 * `timeout`, `logger`), or `realistic K=<k> only-<part>+<part>…`: the minimal case plus those parts.
 * Workload 8's cases count per stream: `stream client ×<n>`, `stream streamToolLoop ×<n>` and
 * `stream toUIMessageStream ×<n>` (stream-cases.ts; ×1 is the stream as recorded).
 */
import { LOOP_STEPS } from "./constants.js";
import { Counter, echoScript, echoTool, type LoopCase, verified } from "./scenario.js";
import { streamCases } from "./stream-cases.js";
import {
  ALL_PARTS,
  byHandCase,
  checkEventCount,
  type RealisticParts,
  realisticToolloopCase,
  toolloopCase,
} from "./toolloop-cases.js";

// Loops before counting, each time: a function called once per loop (the run's signal link, Node's
// AbortSignal and EventTarget code) is optimized only after a few hundred loops, so with 300 the
// counted runs still paid TurboFan for those (realistic K=1 counted 542K where 2,000 gives 415K).
const WARMUP = 2000;

declare const gc: (() => void) | undefined;

function collect(): void {
  if (typeof gc !== "function") throw new Error("run with node --expose-gc");
  gc();
}

export function parseCase(name: string): {
  callsPerStep: number;
  parts: RealisticParts | undefined;
  events: boolean;
  middleware: boolean;
  tracing: boolean;
  hand: boolean;
} {
  const match = /^(hand|minimal|events|middleware|tracing|realistic) K=(\d+)((?: -\w+)*| only-[\w+]+)$/.exec(name);
  if (match === null) throw new TypeError(`unknown case ${JSON.stringify(name)}`);
  const [, kind, k, spec = ""] = match;
  if (kind !== "realistic") {
    if (spec !== "") throw new TypeError(`parts apply to the realistic case only: ${JSON.stringify(name)}`);
    const flags = {
      events: kind === "events",
      middleware: kind === "middleware",
      tracing: kind === "tracing",
      hand: kind === "hand",
    };
    return { callsPerStep: Number(k), parts: undefined, ...flags };
  }
  const only = spec.startsWith(" only-");
  const named = (only ? spec.slice(" only-".length).split("+") : spec.split(" -").slice(1)) as string[];
  const parts: RealisticParts = only
    ? { adapter: false, signal: false, timeout: false, logger: false }
    : { ...ALL_PARTS };
  for (const part of named) {
    if (!(part in parts)) throw new TypeError(`unknown part ${JSON.stringify(part)} in ${JSON.stringify(name)}`);
    parts[part as keyof RealisticParts] = only;
  }
  return { callsPerStep: Number(k), parts, events: false, middleware: false, tracing: false, hand: false };
}

/** A case of workload 8 (`stream <case> ×<n>`), or undefined for a loop case. */
async function streamCase(name: string): Promise<LoopCase | undefined> {
  const match = /^stream (\w+) ×(\d+)$/.exec(name);
  if (match === null) return undefined;
  const [, which = "", times] = match;
  const { cases } = await streamCases(Number(times));
  const run = cases[which];
  if (run === undefined) throw new TypeError(`unknown stream case ${JSON.stringify(which)}`);
  return { run: async () => ({ text: String(await run()), result: undefined }) };
}

async function main(): Promise<void> {
  const [name = "", countText = "0"] = process.argv.slice(2);
  const loop = (await streamCase(name)) ?? (await loopCase(name));
  for (let index = 0; index < WARMUP; index++) await loop.run();
  // A full collection before and after the counted runs (node --expose-gc), so that whether a major
  // collection falls inside them does not depend on the case: it moved counts by up to ±20 %.
  collect();
  // That collection drops the optimized code of the whole loop ("weak objects"): warm up again, or
  // the counted runs pay for compiling it all again (TurboFan was ~80 % of a minimal loop's count).
  for (let index = 0; index < WARMUP; index++) await loop.run();
  const count = Number(countText);
  for (let index = 0; index < count; index++) await loop.run();
  collect();
}

/** A loop case, checked once. */
async function loopCase(name: string): Promise<LoopCase> {
  const { callsPerStep, parts, events, middleware, tracing, hand } = parseCase(name);
  const counter = new Counter();
  const script = echoScript(LOOP_STEPS, callsPerStep);
  const tools = [echoTool(counter)];
  if (events) await checkEventCount(script, [echoTool(new Counter())], callsPerStep);
  const loop = hand
    ? byHandCase(script, tools)
    : parts === undefined
      ? toolloopCase(script, tools, { events, middleware, tracing })
      : realisticToolloopCase(script, tools, parts);
  await verified(name, loop, counter, LOOP_STEPS * callsPerStep);
  return loop;
}

await main();
