/**
 * What every implementation is asked to do, in neutral form: the model's script (which calls in
 * which step, then a final text) and the tools (zod schema + function). Each library's cases turn
 * these into its own objects once, before timing; nothing is copied per call.
 */
import * as z from "zod";

/** The final answer every script ends with. */
export const FINAL_TEXT = "done";

/** One call the scripted model makes; `arguments` is JSON text, as on the OpenAI wire. */
export interface ScriptedCall {
  id: string;
  name: string;
  arguments: string;
}

/** The calls of each tool step; every library's model answers `FINAL_TEXT` after the last step. */
export type Script = ScriptedCall[][];

/** A tool as every library defines it: a zod object schema and a function of the parsed arguments. */
export interface ToolSpec {
  name: string;
  description: string;
  schema: z.ZodObject;
  execute(args: Record<string, unknown>): string | Promise<string>;
}

/** Counts tool runs, so each case is checked to do the whole conversation before it is timed. */
export class Counter {
  value = 0;
}

/** S steps of K calls of `echo`, each with distinct arguments. */
export function echoScript(steps: number, callsPerStep: number): Script {
  return Array.from({ length: steps }, (_, step) =>
    Array.from({ length: callsPerStep }, (_, k) => ({
      id: `call_${step}_${k}`,
      name: "echo",
      arguments: JSON.stringify({ text: `hello ${step}.${k}` }),
    })),
  );
}

/** One step of `calls` calls of `sleep`. */
export function sleepScript(calls: number, ms: number): Script {
  const args = JSON.stringify({ ms });
  return [Array.from({ length: calls }, (_, index) => ({ id: `call_${index}`, name: "sleep", arguments: args }))];
}

/** `echo({ text })` resolves to the text: an async tool, as tools doing I/O are. */
export function echoTool(counter: Counter): ToolSpec {
  return {
    name: "echo",
    description: "Echo the text back",
    schema: z.object({ text: z.string() }),
    execute: async (args) => {
      counter.value++;
      return args.text as string;
    },
  };
}

/** `sleep({ ms })` resolves after `ms` milliseconds. */
export function sleepTool(counter: Counter): ToolSpec {
  return {
    name: "sleep",
    description: "Wait",
    schema: z.object({ ms: z.number() }),
    execute: async (args) => {
      await new Promise((resolve) => setTimeout(resolve, args.ms as number));
      counter.value++;
      return "slept";
    },
  };
}

/** Tools registered next to `echo` that are never called (nullable rather than optional: the Agents SDK's strict schemas need it). */
export function fillerTools(count: number): ToolSpec[] {
  return Array.from({ length: count }, (_, index) => ({
    name: `filler_${index}`,
    description: `Filler tool number ${index}`,
    schema: z.object({ text: z.string(), count: z.number().int().nullable() }),
    execute: (args) => args.text as string,
  }));
}

/** What one run of a conversation resolved to: the final text and the library's whole result. */
export interface LoopOutcome {
  text: string;
  result: unknown;
}

/** One conversation, ready to run again and again. */
export interface LoopCase {
  run(): Promise<LoopOutcome>;
}

/** Options some cases understand. */
export interface CaseOptions {
  /** Most calls of one turn running at once (toolloop only). */
  maxConcurrency?: number;
  /** Run as users run it (see `Variant` in constants.ts); toolloop and the AI SDK only. */
  realistic?: boolean;
  /** The minimal loop with an `onEvent` listener that does nothing (see `Variant`); toolloop only. */
  events?: boolean;
  /** The minimal loop with one pass-through middleware (see `Variant`); toolloop only. */
  middleware?: boolean;
  /** The minimal loop with `tracing()` and OpenTelemetry's no-op tracer (see `Variant`); toolloop only. */
  tracing?: boolean;
}

/** Makes a case of one implementation. */
export type CaseMaker = (script: Script, tools: ToolSpec[], options?: CaseOptions) => LoopCase;

/** Runs a case once and checks the final text and the number of tool runs; returns the case. */
export async function verified(
  name: string,
  loop: LoopCase,
  counter: Counter,
  expectedRuns: number,
): Promise<LoopCase> {
  const before = counter.value;
  const { text } = await loop.run();
  const ran = counter.value - before;
  if (text !== FINAL_TEXT || ran !== expectedRuns) {
    throw new Error(`${name}: expected "${FINAL_TEXT}" after ${expectedRuns} tool runs, got "${text}" after ${ran}`);
  }
  return loop;
}
