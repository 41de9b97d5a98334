import { contentText } from "../../content-part.js";
import { showValue } from "../../internal/describe.js";
import type { Message } from "../../provider.js";
import { openAICallOf } from "./convert-to-openai-chat-messages.js";

/** A Responses API input item as the adapter sends it (`ResponseInputItem` in the SDK). */
export type OpenAIResponsesInputItem =
  | {
      /** Who wrote the message. */
      role: "system" | "user" | "assistant";
      /** Its text. */
      content: string;
    }
  | {
      /** A call the model made. */
      type: "function_call";
      /** The call's id, answered by a `function_call_output` with the same `call_id`. */
      call_id: string;
      /** The tool's name. */
      name: string;
      /** The arguments as the JSON text the model sent. */
      arguments: string;
    }
  | {
      /** A tool's answer to one call. */
      type: "function_call_output";
      /** The id of the call it answers. */
      call_id: string;
      /** The tool's text (its error message when it failed). */
      output: string;
    };

/**
 * Converts a toolloop transcript to Responses API input items, statelessly (no
 * `previous_response_id`, no item ids): system, user and assistant text become messages (an
 * assistant turn's text comes before its calls, and is left out when empty); each call becomes a
 * `function_call` item and each `tool` message a `function_call_output` item, both keyed by
 * `call_id`, in transcript order.
 */
export function toOpenAIResponsesInput(messages: readonly Message[]): OpenAIResponsesInputItem[] {
  const input: OpenAIResponsesInputItem[] = [];
  for (const message of messages) {
    switch (message.role) {
      case "system":
      case "user":
        input.push({ role: message.role, content: contentText(message.content) });
        break;
      case "assistant": {
        const calls = message.toolCalls ?? [];
        if (calls.length === 0 || contentText(message.content) !== "")
          input.push({ role: "assistant", content: contentText(message.content) });
        for (const call of calls) input.push({ type: "function_call", call_id: call.id, ...openAICallOf(call) });
        break;
      }
      case "tool":
        input.push({
          type: "function_call_output",
          call_id: message.toolCallId ?? "",
          output: contentText(message.content),
        });
        break;
      default:
        throw new TypeError(`unsupported message role ${showValue((message as Message).role)}`);
    }
  }
  return input;
}
