import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

// `gc` without starting the test process with --expose-gc: the flag set at run time, the function
// read from a new context (which V8 makes with the flag's globals).
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** Heap bytes in use after a full garbage collection. */
export function heapAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/**
 * How much more heap is in use, after a full collection, once `run` is done than before it —
 * what `run` left reachable (`keep` holds what the test itself keeps, so that it counts too).
 */
export async function retainedBytes(run: (keep: unknown[]) => unknown): Promise<number> {
  const keep: unknown[] = [];
  const before = heapAfterGc();
  await run(keep);
  const after = heapAfterGc();
  keep.length = 0;
  return after - before;
}
