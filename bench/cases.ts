/**
 * The implementations by name, each loaded on demand: a child process only loads the libraries it
 * measures (and the Agents SDK only once nothing else is left to measure).
 */
import type { Implementation } from "./constants.js";
import type { CaseMaker, ToolSpec } from "./scenario.js";

/** Loops that wait on the model forever, for the memory workload. */
export interface Waiting {
  /** Starts one loop. */
  start(): Promise<unknown>;
  /** How many loops reached the model. */
  pending(): number;
  /** Drops what a test double recorded (a real provider records nothing). */
  forget(): void;
}

/** The case maker of one implementation. */
export async function caseMaker(implementation: Implementation): Promise<CaseMaker> {
  switch (implementation) {
    case "by hand":
      return (await import("./toolloop-cases.js")).byHandCase;
    case "toolloop":
      return (await import("./toolloop-cases.js")).toolloopCase;
    case "AI SDK":
      return (await import("./ai-sdk-cases.js")).aiSdkCase;
    case "Agents SDK":
      return (await import("./agents-sdk-cases.js")).agentsCase;
  }
}

/** Loops of one library that wait on the model forever. */
export async function waiting(library: Implementation, tools: ToolSpec[], maxSteps: number): Promise<Waiting> {
  switch (library) {
    case "toolloop":
      return (await import("./toolloop-cases.js")).toolloopWaiting(tools, maxSteps);
    case "AI SDK":
      return (await import("./ai-sdk-cases.js")).aiSdkWaiting(tools, maxSteps);
    case "Agents SDK":
      return (await import("./agents-sdk-cases.js")).agentsWaiting(tools, maxSteps);
    default:
      throw new Error(`no waiting loops for ${library}`);
  }
}

/** `name` as an implementation, or a TypeError. */
export function asImplementation(name: string | undefined): Implementation {
  if (name === "by hand" || name === "toolloop" || name === "AI SDK" || name === "Agents SDK") return name;
  throw new TypeError(`unknown implementation ${JSON.stringify(name)}`);
}
