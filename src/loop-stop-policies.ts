import { contentText } from "./content-part.js";
import { cutContent, RepeatedFailures } from "./internal/loop-policies.js";
import type { Answer, LoopFeature, Stop } from "./loop-feature.js";
import type { Message } from "./provider.js";

/**
 * `maxRepeatedFailures` and `maxResultChars`: each tool message's text is cut to fit (the
 * transcript's copy only; images and files are kept whole), and one tool failing the same way too
 * often gets a note and stops the run after its turn. Completions fed back as user messages are cut
 * too.
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
      if (max !== undefined) message.content = cutContent(message.content, max);
      return;
    }
    const failures = this.#failures;
    const whole = contentText(message.content);
    const note = failures?.record(answer.toolName, answer.result, whole);
    // The note comes after the cut, so the cut leaves room for it; images and files stay whole.
    if (max !== undefined || note !== undefined) message.content = cutContent(message.content, max, note);
    if (failures !== undefined && note !== undefined) {
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
