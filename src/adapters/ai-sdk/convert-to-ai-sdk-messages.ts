import { contentText } from "../../content-part.js";
import { isPlainObject } from "../../internal/describe.js";
import type { Message } from "../../provider.js";
import { argumentsObject, assistantTurnParts } from "../shared/transcript.js";

/** Provider-specific options of a prompt part, keyed by provider (`{ openai: { … } }`). */
export type AISDKPartProviderOptions = Record<string, Record<string, unknown>>;

/** A `text` part. */
export interface AISDKTextPart {
  /** Always `"text"`. */
  type: "text";
  /** The text. */
  text: string;
}

/** A `reasoning` part, replayed before a turn's tool calls when the model returned one. */
export interface AISDKReasoningPart {
  /** Always `"reasoning"`. */
  type: "reasoning";
  /** The reasoning text the model returned. */
  text: string;
  /** The part's `providerMetadata` from the model (e.g. Anthropic's thinking signature), sent back. */
  providerOptions?: AISDKPartProviderOptions;
}

/** A `tool-call` part of an assistant message; `input` is the arguments object. */
export interface AISDKToolCallPart {
  /** Always `"tool-call"`. */
  type: "tool-call";
  /** The call's id, answered by a `tool-result` part with the same `toolCallId`. */
  toolCallId: string;
  /** The tool's name. */
  toolName: string;
  /** The call's arguments, as an object. */
  input: Record<string, unknown>;
  /** The call's `providerMetadata` from the model, sent back (e.g. OpenAI Responses item ids). */
  providerOptions?: AISDKPartProviderOptions;
}

/** A `tool-result` part of a tool message. */
export interface AISDKToolResultPart {
  /** Always `"tool-result"`. */
  type: "tool-result";
  /** The id of the call it answers. */
  toolCallId: string;
  /** The name of the tool that answered. */
  toolName: string;
  /** The tool's text. */
  output: {
    /** `"error-text"` when the tool failed, else `"text"`. */
    type: "text" | "error-text";
    /** The tool's text (its error message when it failed). */
    value: string;
  };
}

/** One message of a LanguageModel prompt (spec v2 and v3) as this adapter builds it. */
export type AISDKPromptMessage =
  | {
      /** A system message, where it stands in the transcript. */
      role: "system";
      /** Its text. */
      content: string;
    }
  | {
      /** A user message. */
      role: "user";
      /** Its text, as one part. */
      content: AISDKTextPart[];
    }
  | {
      /** A turn of the model. */
      role: "assistant";
      /** Replayed reasoning, its text, then one part per call. */
      content: Array<AISDKTextPart | AISDKReasoningPart | AISDKToolCallPart>;
    }
  | {
      /** The answers to a turn's calls. */
      role: "tool";
      /** One part per answer, in call order. */
      content: AISDKToolResultPart[];
    };

/** What this adapter keeps on a `ToolCall`'s `providerMetadata.aiSdk` so it round-trips. */
export interface AISDKToolCallMetadata {
  /** The call's `providerMetadata` from the model, sent back as the part's `providerOptions`. */
  providerOptions?: AISDKPartProviderOptions;
  /** The turn's reasoning parts (first call only), replayed before the tool calls. */
  reasoning?: AISDKReasoningPart[];
}

/** The key of this adapter's data in `ToolCall.providerMetadata`. */
export const METADATA_KEY = "aiSdk";

function assistantMessage(message: Message): AISDKPromptMessage | undefined {
  const content = assistantTurnParts<AISDKTextPart | AISDKReasoningPart | AISDKToolCallPart>(message, {
    key: METADATA_KEY,
    replayed: "reasoning",
    text: (text) => ({ type: "text", text }),
    call: (call, kept) => {
      const part: AISDKToolCallPart = {
        type: "tool-call",
        toolCallId: call.id,
        toolName: call.name,
        input: argumentsObject(call),
      };
      // The call's providerMetadata from the model (e.g. OpenAI Responses item ids), sent back.
      if (isPlainObject(kept?.providerOptions)) part.providerOptions = kept.providerOptions as AISDKPartProviderOptions;
      return part;
    },
  });
  return content.length > 0 ? { role: "assistant", content } : undefined;
}

/**
 * Converts a transcript to a LanguageModel prompt: system messages stay where they are, user
 * text becomes a text part, assistant messages become text then `tool-call` parts, and
 * consecutive tool messages become one `tool` message of `tool-result` parts (`error-text` when
 * the result is an error). An assistant message with neither text nor calls is left out.
 */
export function toAISDKPrompt(messages: readonly Message[]): AISDKPromptMessage[] {
  const prompt: AISDKPromptMessage[] = [];
  const toolNames = new Map<string, string>();
  for (const message of messages) {
    switch (message.role) {
      case "system":
        prompt.push({ role: "system", content: contentText(message.content) });
        break;
      case "assistant": {
        for (const call of message.toolCalls ?? []) toolNames.set(call.id, call.name);
        const converted = assistantMessage(message);
        if (converted !== undefined) prompt.push(converted);
        break;
      }
      case "tool": {
        const toolCallId = message.toolCallId ?? "";
        const part: AISDKToolResultPart = {
          type: "tool-result",
          toolCallId,
          toolName: message.toolName ?? toolNames.get(toolCallId) ?? "",
          output: { type: message.isError === true ? "error-text" : "text", value: contentText(message.content) },
        };
        const last = prompt.at(-1);
        if (last?.role === "tool") last.content.push(part);
        else prompt.push({ role: "tool", content: [part] });
        break;
      }
      default:
        prompt.push({ role: "user", content: [{ type: "text", text: contentText(message.content) }] });
    }
  }
  return prompt;
}
