/** Shapes of the workloads, shared by the child processes and the report. */

/** Workload 1: tool steps per loop (each loop also makes one final model call). */
export const LOOP_STEPS = 10;
/** Workload 1: calls of the echo tool per step. */
export const LOOP_CALLS = [1, 4] as const;
/** The implementations of workload 1, the first being the floor. */
export const LOOP_IMPLEMENTATIONS = ["by hand", "toolloop", "AI SDK", "Agents SDK"] as const;
export type Implementation = (typeof LOOP_IMPLEMENTATIONS)[number];

/** Workload 3: calls in the one turn, how long each sleeps, and the bounded concurrency. */
export const PARALLEL_CALLS = 16;
export const SLEEP_MS = 20;
export const BOUNDED_CONCURRENCY = 4;

/** Workload 4: registered tools. */
export const SCALING_TOOL_COUNTS = [10, 1000] as const;

/** Workload 5: loops waiting at once (fewer for the peers, whose loops are slow to start), and the loop lengths compared. */
export const IN_FLIGHT_LOOPS = 10_000;
export const PEER_IN_FLIGHT_LOOPS = 2_000;
export const STEP_COUNTS = [100, 1000] as const;
