import { DELIVERED, type Deliveries } from "./internal/deliveries.js";
import type { Answer, LoopFeature } from "./loop-feature.js";
import type { Message } from "./provider.js";
import type { ToolLoopConfig } from "./tool-loop-config.js";
import type { ToolResult } from "./tool-result.js";

/** `ToolLoopConfig.onUserMessage`'s listener. */
export type UserMessageListener = NonNullable<ToolLoopConfig["onUserMessage"]>;

/**
 * `onUserMessage`: each result's `forUser` that is not empty on a result that is not `silent`, in
 * call order after its message, delivered in order with the run's other listeners.
 */
export class UserMessages implements LoopFeature {
  readonly #listener: UserMessageListener;
  readonly #deliveries: Deliveries;

  constructor(listener: UserMessageListener, deliveries: Deliveries) {
    this.#listener = listener;
    this.#deliveries = deliveries;
  }

  /** A tool's answer (or an async completion fed back) was appended: its `forUser`, if any. */
  message(_message: Message, answer: Answer | undefined): Promise<void> {
    return answer === undefined ? DELIVERED : this.deliver(answer.result, answer.toolName, answer.toolCallId);
  }

  /** Queues a result's `forUser` delivery in order with the run's other deliveries. */
  deliver(result: ToolResult, toolName: string, toolCallId: string): Promise<void> {
    const delivery = this.delivery(result, toolName, toolCallId);
    return delivery === undefined ? DELIVERED : this.#deliveries.enqueue("onUserMessage", delivery);
  }

  /** The listener's call a result asks for (`forUser` not empty, not `silent`), or `undefined`. */
  delivery(result: ToolResult, toolName: string, toolCallId: string): (() => unknown) | undefined {
    if (result.silent === true || typeof result.forUser !== "string" || result.forUser === "") return undefined;
    const message = { content: result.forUser, toolName, toolCallId };
    const listener = this.#listener;
    return () => listener(message);
  }
}
