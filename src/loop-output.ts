import { contentText } from "./content-part.js";
import { ToolLoopError } from "./errors.js";
import type { Next } from "./internal/compose.js";
import type { ResumeState } from "./internal/resume-state.js";
import type { FeatureRun, LoopFeature } from "./loop-feature.js";
import type { ResolvedOutput } from "./output-schema.js";
import type { LLMResponse, Message } from "./provider.js";
import type { ModelCallRequest } from "./tool-loop-middleware.js";
import type { ToolLoopResult } from "./tool-loop-result.js";

/**
 * `output`: every provider call is asked for the schema (`options.output`); a final answer is
 * parsed and validated — valid, it becomes the result's `output`; invalid, it stays in the
 * transcript and a user message with the problem asks again, up to `retries` times, then the run
 * rejects with `"invalid_output"`.
 */
export class StructuredOutput implements LoopFeature {
  readonly #output: ResolvedOutput;
  readonly #maxIterations: number;
  readonly #limit: number;
  #failures = 0;
  /** The last answer that validated, and its value. */
  #valid: { message: Message; value: unknown } | undefined;
  /** A resumed run whose checkpoint holds its final answer: that answer is checked when the result is made. */
  #resumedAnswer = false;

  constructor(output: ResolvedOutput, maxIterations: number, limit: number) {
    this.#output = output;
    this.#maxIterations = maxIterations;
    this.#limit = limit;
  }

  wrapModelCall(request: ModelCallRequest, next: Next<ModelCallRequest, LLMResponse>): Promise<LLMResponse> {
    return next({ ...request, options: { ...request.options, output: this.#output.request } });
  }

  begin(_signal: AbortSignal | undefined, resume: ResumeState | undefined): void {
    this.#resumedAnswer = resume?.finished === true;
  }

  /**
   * Checks the answer. Valid, or from `finalAnswerOnMaxIterations`'s call: the next feature decides.
   * Invalid: asked again while retries and iterations are left; no iteration left, the run stops
   * at the cap (`"max_iterations"`, the answer as `content`); no retry left, it rejects.
   */
  async answered(
    run: FeatureRun,
    transcript: Message[],
    iteration: number,
  ): Promise<"continue" | "max_iterations" | undefined> {
    const answer = transcript[transcript.length - 1] as Message;
    const checked = this.#output.check(contentText(answer.content));
    if (checked.success) {
      this.#valid = { message: answer, value: checked.data };
      return undefined;
    }
    this.#valid = undefined;
    if (iteration > this.#maxIterations) return undefined;
    if (this.#failures++ >= this.#output.retries) throw this.#invalid(checked.error, transcript, iteration);
    if (iteration >= this.#limit) return "max_iterations";
    const name = JSON.stringify(this.#output.request.name);
    const content = `Your answer was not accepted: ${checked.error}\nAnswer again with only a JSON value that matches the schema ${name}.`;
    const feedback: Message = { role: "user", content };
    transcript.push(feedback);
    await run.message(feedback, undefined);
    await run.checkpoint(transcript, iteration);
    run.check(transcript, iteration);
    return "continue";
  }

  /** The result gets `output` when it ends with the answer that validated (a resumed final answer is checked here). */
  result(result: ToolLoopResult): void {
    const { messages } = result;
    const last = messages[messages.length - 1];
    if (this.#resumedAnswer) {
      this.#resumedAnswer = false;
      if (last?.role !== "assistant") return;
      this.#failures++;
      const checked = this.#output.check(contentText(last.content));
      if (checked.success) result.output = checked.data;
      else if (result.stopReason === "completed") throw this.#invalid(checked.error, messages, result.iterations);
      return;
    }
    if (this.#valid !== undefined && this.#valid.message === last) result.output = this.#valid.value;
  }

  #invalid(problem: string, messages: Message[], iterations: number): ToolLoopError {
    const tries = this.#failures;
    return new ToolLoopError(
      `tool loop failed: the final answer does not match the output schema (${tries} ${tries === 1 ? "try" : "tries"}): ${problem}`,
      { messages, iterations, code: "invalid_output", cause: new Error(problem) },
    );
  }
}
