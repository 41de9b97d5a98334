/**
 * Workload 5, memory. Each measurement runs in its own `node --expose-gc` child so that one
 * library's leftovers never show up in another's heap; only the measured library is loaded.
 */
import { setImmediate as tick } from "node:timers/promises";
import { caseMaker, waiting } from "./cases.js";
import type { Implementation } from "./constants.js";
import { Counter, echoScript, echoTool, verified } from "./scenario.js";

declare const gc: (() => void) | undefined;

async function collectedHeap(): Promise<number> {
  if (typeof gc !== "function") throw new Error("memory workloads need node --expose-gc");
  // Let pending callbacks run first, so that nothing short-lived is still referenced from a job.
  for (let index = 0; index < 3; index++) await tick();
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

const CALM_BYTES = 8 * 1024;
const CALM_READINGS = 3;

/**
 * The heap after full collections, once it has settled: V8 frees some memory only after several
 * collections (code and feedback of functions no longer run), which moved single readings by up
 * to ±350 kB. Reads until three readings in a row agree within 8 kB (at most 20 readings).
 */
async function heapUsed(): Promise<number> {
  let previous = await collectedHeap();
  let calm = 0;
  for (let reading = 0; reading < 20 && calm < CALM_READINGS; reading++) {
    const current = await collectedHeap();
    calm = Math.abs(current - previous) < CALM_BYTES ? calm + 1 : 0;
    previous = current;
  }
  return previous;
}

// Warm-ups run in their own function: an async function's frame may keep temporaries alive across
// `await`, and a warm-up result still referenced at the baseline would be freed during the
// measurement and make it negative.
async function warmUp(library: Implementation, steps: number): Promise<void> {
  const counter = new Counter();
  const make = await caseMaker(library);
  await verified(library, make(echoScript(steps, 1), [echoTool(counter)]), counter, steps);
}

/** Heap bytes per loop while `count` loops wait on a model that never answers. */
export async function inFlight(library: Implementation, count: number): Promise<number> {
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`in-flight: bad loop count ${count}`);
  // One full loop first, so lazily created state (loggers, validators, caches) exists before the baseline.
  await warmUp(library, 1);
  const loops = await waiting(library, [echoTool(new Counter())], 11);
  const keep: unknown[] = [];
  const before = await heapUsed();
  for (let index = 0; index < count; index++) keep.push(loops.start());
  for (let index = 0; index < 5; index++) await tick();
  loops.forget();
  const after = await heapUsed();
  // Reading `keep` here also keeps the loops alive until after the measurement.
  if (loops.pending() !== count || keep.length !== count) {
    throw new Error(`${library}: ${loops.pending()} of ${count} loops reached the model`);
  }
  return (after - before) / count;
}

/** Heap retained by the whole result of one finished loop of `steps` steps (one echo call each). */
export async function retainedAfter(library: Implementation, steps: number): Promise<number> {
  if (!Number.isInteger(steps) || steps < 1) throw new RangeError(`retained: bad step count ${steps}`);
  // A warm-up loop of the same length (at most 100 steps for the slow peers), so that code and
  // lazily created state exist before the baseline.
  const cheap = library === "toolloop" || library === "by hand";
  await warmUp(library, cheap ? steps : Math.min(steps, 100));
  const counter = new Counter();
  const loop = (await caseMaker(library))(echoScript(steps, 1), [echoTool(counter)]);
  const before = await heapUsed();
  // Held until after the measurement: toolloop's transcript, the by-hand message list, the AI
  // SDK's GenerateTextResult, the Agents SDK's RunResult.
  const outcome = await loop.run();
  const after = await heapUsed();
  if (outcome.text !== "done" || counter.value !== steps) throw new Error(`${library}: the loop did not finish`);
  return after - before;
}
