import type { Next } from "./internal/compose.js";
import { errorMessage } from "./internal/describe.js";
import { log } from "./internal/logger.js";
import { FINAL_ANSWER_NOTE, FINAL_TURN_REFUSAL } from "./internal/loop-policies.js";
import type { LoopCall } from "./loop-call.js";
import type { LoopFeature, Stop } from "./loop-feature.js";
import type { LLMResponse, Message } from "./provider.js";
import { type RefusalTarget, refuseCall } from "./refuse-call.js";
import type { ModelCallRequest } from "./tool-loop-middleware.js";
import { errorResult, type ToolResult } from "./tool-result.js";

/** `llmOptions` without the options that only make sense with tools (for the final-answer call). */
function withoutToolOptions(options: Record<string, unknown>): Record<string, unknown> {
  const { tool_choice: _choice, toolChoice: _camel, parallel_tool_calls: _parallel, ...rest } = options;
  return rest;
}

/**
 * `finalAnswerOnMaxIterations`: at the cap, one more provider call, without tools and with a note
 * telling the model to answer with what it has. Calls it still makes are refused; when it fails,
 * the run resolves as it would have without the option.
 */
export class FinalAnswer implements LoopFeature {
  /** How many provider calls the loop may make: one more than `maxIterations` (none when that is 0). */
  readonly limit: number;
  readonly #maxIterations: number;
  readonly #target: RefusalTarget;

  constructor(maxIterations: number, target: RefusalTarget) {
    this.#maxIterations = maxIterations;
    this.#target = target;
    this.limit = maxIterations > 0 ? maxIterations + 1 : maxIterations;
  }

  /** The final call gets the note (sent, not recorded), no tools, and no tool options (providers reject them without tools). */
  wrapModelCall(request: ModelCallRequest, next: Next<ModelCallRequest, LLMResponse>): Promise<LLMResponse> {
    if (request.iteration <= this.#maxIterations) return next(request);
    const messages: Message[] = [...request.messages, { role: "system", content: FINAL_ANSWER_NOTE }];
    return next({ ...request, messages, tools: undefined, options: withoutToolOptions(request.options) });
  }

  /** A call made in the final turn is answered without running. */
  wrapToolCall(loopCall: LoopCall, next: Next<LoopCall, ToolResult>): Promise<ToolResult> {
    if (loopCall.iteration <= this.#maxIterations) return next(loopCall);
    return Promise.resolve(refuseCall(loopCall.normalized.call, errorResult(FINAL_TURN_REFUSAL), this.#target));
  }

  /** The final call failed: logged, and the run resolves `max_iterations` as without the option. */
  modelCallFailed(iteration: number, error: unknown): boolean {
    if (iteration <= this.#maxIterations) return false;
    log(this.#target.logger, "warn", () => ({ iteration, error: errorMessage(error) }), "final answer call failed");
    return true;
  }

  turnStop(iteration: number): Stop | undefined {
    return iteration > this.#maxIterations ? { reason: "max_iterations", content: "" } : undefined;
  }

  answered(_run: unknown, _transcript: Message[], iteration: number): "max_iterations" | undefined {
    return iteration > this.#maxIterations ? "max_iterations" : undefined;
  }
}
