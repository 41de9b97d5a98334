import { contentText } from "../../content-part.js";
import type { Message, ToolCall } from "../../provider.js";
import { callsById, providerMetadataOf } from "../shared/transcript.js";

/** A tool call in an Ollama message (`id` and `function.index` are sent by newer servers only). */
export interface OllamaToolCall {
  /** The id the server gave the call, echoed back (newer servers only). */
  id?: string;
  /** Always `"function"` as the adapter sends it. */
  type?: string;
  /** The function called. */
  function: {
    /** The call's position in the turn. */
    index?: number;
    /** The tool's name. */
    name: string;
    /** The call's arguments, as an object. */
    arguments: Record<string, unknown>;
  };
}

/** A message of Ollama's `/api/chat`, as this adapter sends it. */
export interface OllamaMessage {
  /** `"system"`, `"user"`, `"assistant"` or `"tool"`. */
  role: string;
  /** Its text (a tool's error message when it failed). */
  content: string;
  /** An assistant turn's calls. */
  tool_calls?: OllamaToolCall[];
  /** On a tool answer: the tool's name (Ollama pairs answers with calls by position and name). */
  tool_name?: string;
  /** On a tool answer: the id the server gave the call, when it gave one. */
  tool_call_id?: string;
}

/** The key under which the id an Ollama server gave a call is kept in `ToolCall.providerMetadata`. */
export const METADATA_KEY = "ollama";

/** The id the server gave a call, kept in `providerMetadata.ollama.id`. */
function serverId(call: ToolCall | undefined): string | undefined {
  const id = providerMetadataOf(call, METADATA_KEY)?.id;
  return typeof id === "string" ? id : undefined;
}

function assistantMessage(message: Message): OllamaMessage {
  const converted: OllamaMessage = { role: "assistant", content: contentText(message.content) };
  const calls = message.toolCalls ?? [];
  if (calls.length > 0) {
    converted.tool_calls = calls.map((call, index) => {
      const id = serverId(call);
      return {
        ...(id === undefined ? {} : { id }),
        type: "function",
        function: { index, name: call.name, arguments: call.arguments ?? {} },
      };
    });
  }
  return converted;
}

/**
 * Converts a transcript to `/api/chat` messages: system and user messages as they are; an
 * assistant turn with its calls as `tool_calls` (`function.index` in call order, and the id the
 * server gave, if any); each answer as a `role: "tool"` message with `tool_name` (Ollama matches
 * answers by position and name) and the server's id as `tool_call_id` when there is one.
 */
export function toOllamaMessages(messages: readonly Message[]): OllamaMessage[] {
  const result: OllamaMessage[] = [];
  let turnCalls: ReadonlyMap<string, ToolCall> = new Map();
  for (const message of messages) {
    switch (message.role) {
      case "assistant":
        turnCalls = callsById(message.toolCalls ?? []);
        result.push(assistantMessage(message));
        break;
      case "tool": {
        // `toolCallId` may be missing from a hand-made transcript: a Map finds a call without id as a search would.
        const call = turnCalls.get(message.toolCallId as string);
        const converted: OllamaMessage = {
          role: "tool",
          content: contentText(message.content),
          tool_name: message.toolName ?? call?.name ?? "",
        };
        const id = serverId(call);
        if (id !== undefined) converted.tool_call_id = id;
        result.push(converted);
        break;
      }
      default:
        result.push({ role: message.role, content: contentText(message.content) });
    }
  }
  return result;
}
