import { contentText } from "../../content-part.js";
import { isRecord, jsonText, showValue } from "../../internal/describe.js";
import type { Message, ToolCall } from "../../provider.js";

/** A Chat Completions message as the adapter sends it (`ChatCompletionMessageParam` in the SDK). */
export type OpenAIChatMessage =
  | {
      /** A system or user message. */
      role: "system" | "user";
      /** Its text. */
      content: string;
    }
  | {
      /** A turn of the model. */
      role: "assistant";
      /** Its text; `null` when a turn with calls has none. */
      content: string | null;
      /** The turn's calls, with their arguments as the JSON text the model sent. */
      tool_calls?: Array<{
        /** The call's id, answered by a `tool` message's `tool_call_id`. */
        id: string;
        /** Always `"function"`. */
        type: "function";
        /** The tool's name and the arguments as JSON text. */
        function: {
          /** The tool's name. */
          name: string;
          /** The arguments as JSON text. */
          arguments: string;
        };
      }>;
    }
  | {
      /** A tool's answer to one call. */
      role: "tool";
      /** The id of the call it answers. */
      tool_call_id: string;
      /** The tool's text (its error message when it failed). */
      content: string;
    };

/**
 * A transcript call as both OpenAI APIs replay it: its name, and its arguments as JSON text — the
 * text the model sent when the transcript kept it (`function.arguments`), else the parsed arguments
 * serialised.
 */
export function openAICallOf(call: ToolCall): { name: string; arguments: string } {
  return { name: call.name || (call.function?.name ?? ""), arguments: argumentsText(call) };
}

function argumentsText(call: ToolCall): string {
  const { arguments: parsed, function: sent } = call as { arguments?: unknown; function?: { arguments?: unknown } };
  if (typeof sent?.arguments === "string") return sent.arguments;
  return (isRecord(parsed) ? jsonText(parsed) : undefined) ?? "{}";
}

/**
 * Converts a toolloop transcript to Chat Completions messages: system, user and assistant text
 * as they are; an assistant turn with calls becomes one message with `tool_calls` (its text as
 * `content`, or `null` when there is none); each `tool` message becomes
 * `{ role: "tool", tool_call_id, content }`, in transcript order.
 */
export function toOpenAIChatMessages(messages: readonly Message[]): OpenAIChatMessage[] {
  return messages.map((message): OpenAIChatMessage => {
    switch (message.role) {
      case "system":
      case "user":
        return { role: message.role, content: contentText(message.content) };
      case "assistant": {
        const calls = message.toolCalls ?? [];
        if (calls.length === 0) return { role: "assistant", content: contentText(message.content) };
        return {
          role: "assistant",
          content: contentText(message.content) === "" ? null : contentText(message.content),
          tool_calls: calls.map((call) => ({ id: call.id, type: "function", function: openAICallOf(call) })),
        };
      }
      case "tool":
        return { role: "tool", tool_call_id: message.toolCallId ?? "", content: contentText(message.content) };
      default:
        throw new TypeError(`unsupported message role ${showValue((message as Message).role)}`);
    }
  });
}
