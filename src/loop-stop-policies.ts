import { contentText } from "./content-part.js";
import { cutResult, RepeatedFailures } from "./internal/loop-policies.js";
import type { Answer, LoopFeature, Stop } from "./loop-feature.js";
import type { Message } from "./provider.js";

/**
 * `maxRepeatedFailures` and `maxResultChars`: each tool message is cut to fit (the transcript's copy
 * only), and one tool failing the same way too often gets a note and stops the run after its turn.
 * Completions fed back as user messages are cut too.
 */
export class StopPolicies implements LoopFeature {
  readonly #failures: RepeatedFailures | undefined;
  readonly #maxResultChars: number | undefined;
  /** Set by the first answer that reached the repeated-failure limit. */
  #stop: Stop | undefined;

  constructor(maxRepeatedFailures: number | undefined, maxResultChars: number | undefined) {
    this.#failures = maxRepeatedFailures === undefined ? undefined : new RepeatedFailures(maxRepeatedFailures);
    this.#maxResultChars = maxResultChars;
  }

  message(message: Message, answer: Answer | undefined): void {
    if (answer === undefined) return;
    const max = this.#maxResultChars;
    if (message.role !== "tool") {
      if (max !== undefined) message.content = cutResult(contentText(message.content), max);
      return;
    }
    const failures = this.#failures;
    const whole = contentText(message.content);
    const note = failures?.record(answer.toolName, answer.result, whole);
    // The note comes after the cut, so the cut leaves room for it.
    if (max !== undefined) message.content = cutResult(whole, max - (note?.length ?? 0));
    if (failures !== undefined && note !== undefined) {
      message.content += note;
      this.#stop ??= {
        reason: "repeated_failure",
        content: RepeatedFailures.content(answer.toolName, whole, failures.limit),
      };
    }
  }

  turnStop(): Stop | undefined {
    return this.#stop;
  }
}
