/** Shapes of the workloads, shared by the child processes and the report. */

/** Workload 1: tool steps per loop (each loop also makes one final model call). */
export const LOOP_STEPS = 10;
/** Workload 1: calls of the echo tool per step. */
export const LOOP_CALLS = [1, 4] as const;
/** The libraries measured, the first being the floor (done by hand). */
export const IMPLEMENTATIONS = ["by hand", "toolloop", "AI SDK", "Agents SDK"] as const;
export type Implementation = (typeof IMPLEMENTATIONS)[number];

/**
 * How a loop is run: `minimal` (no signal, no timeout, silent logging, a provider that hands out
 * the script), `realistic`, as users run it: a caller's `AbortSignal` and a 30 s tool/step
 * timeout, and for toolloop the OpenAI Chat adapter over an in-process fake client and an
 * `info`-level pino logger writing to a discarding stream; `events` (toolloop only): the
 * minimal loop with an `onEvent` listener that does nothing (issue 12's cost per event); or
 * `middleware` (toolloop only): the minimal loop with one middleware whose `wrapModelCall` and
 * `wrapToolCall` only call `next` (issue 27's cost of the seam); or `tracing` (toolloop only): the
 * minimal loop with `tracing()` from `toolloop/otel` and no tracer provider registered, so its
 * tracer is OpenTelemetry's no-op one (issue 29's cost of the spans' bookkeeping).
 */
export type Variant = "minimal" | "realistic" | "events" | "middleware" | "tracing";

/** The rows of workload 1, in table order: each runs in a child process of its own. */
export const LOOP_ROWS = [
  { name: "by hand", implementation: "by hand", variant: "minimal" },
  { name: "toolloop", implementation: "toolloop", variant: "minimal" },
  { name: "toolloop onEvent", implementation: "toolloop", variant: "events" },
  { name: "toolloop + pass-through middleware", implementation: "toolloop", variant: "middleware" },
  { name: "toolloop + tracing() (no-op tracer)", implementation: "toolloop", variant: "tracing" },
  { name: "toolloop realistic", implementation: "toolloop", variant: "realistic" },
  { name: "AI SDK", implementation: "AI SDK", variant: "minimal" },
  { name: "AI SDK realistic", implementation: "AI SDK", variant: "realistic" },
  { name: "Agents SDK", implementation: "Agents SDK", variant: "minimal" },
] as const satisfies ReadonlyArray<{ name: string; implementation: Implementation; variant: Variant }>;
export type LoopRowName = (typeof LOOP_ROWS)[number]["name"];

/** Timed workloads besides the loop, each run in one child process per library it measures. */
export const TIMING_WORKLOADS = ["dispatch", "parallel", "scaling", "adapters", "streaming"] as const;
export type TimingWorkload = (typeof TIMING_WORKLOADS)[number];

/** The libraries each workload of {@link TIMING_WORKLOADS} measures. */
export const WORKLOAD_LIBRARIES: Record<TimingWorkload, readonly Implementation[]> = {
  dispatch: ["toolloop"],
  parallel: ["by hand", "toolloop", "AI SDK", "Agents SDK"],
  scaling: ["toolloop", "AI SDK", "Agents SDK"],
  adapters: ["toolloop"],
  streaming: ["toolloop"],
};

/** Workload 8: the recorded stream as recorded, and with its argument pieces repeated this many times. */
export const STREAM_REPEATS = [1, 50] as const;

/**
 * Workload 1 (toolloop onEvent): events per loop of S steps of K calls. Each step: `step-start`,
 * the assistant's `message`, `step-end`, and per call `tool-call-start`, `tool-progress` (its
 * final update), `tool-call-end` and its tool `message`; the final answer: `step-start`,
 * `message`, `step-end`; then `loop-end`.
 */
export function eventsPerLoop(steps: number, callsPerStep: number): number {
  return steps * (3 + 4 * callsPerStep) + 3 + 1;
}

/** Workload 1 (realistic): the tool timeout (toolloop) and step timeout (AI SDK). */
export const REALISTIC_TIMEOUT_MS = 30_000;

/** Workload 3: calls in the one turn, how long each sleeps, and the bounded concurrency. */
export const PARALLEL_CALLS = 16;
export const SLEEP_MS = 20;
export const BOUNDED_CONCURRENCY = 4;

/** Workloads 4 and 7: registered tools. */
export const SCALING_TOOL_COUNTS = [10, 1000] as const;

/** Workload 7: the adapters whose conversion cost per step is measured, in table order. */
export const ADAPTERS = [
  "OpenAI Chat",
  "OpenAI Chat strict",
  "OpenAI Responses",
  "Anthropic",
  "Gemini",
  "Ollama",
  "AI SDK",
] as const;
export type AdapterName = (typeof ADAPTERS)[number];

/** Workload 5: loops waiting at once (fewer for the peers, whose loops are slow to start), and the loop lengths compared. */
export const IN_FLIGHT_LOOPS = 10_000;
export const PEER_IN_FLIGHT_LOOPS = 2_000;
export const STEP_COUNTS = [100, 1000] as const;
