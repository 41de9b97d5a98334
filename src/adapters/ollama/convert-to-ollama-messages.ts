import type { ContentPart } from "../../content-part.js";
import type { Message, ToolCall } from "../../provider.js";
import { base64Bytes, unsupportedContent } from "../shared/content.js";
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
  /** Its text (a tool's error message when it failed): the message's text parts joined by a line break. */
  content: string;
  /**
   * The message's base64 images, as bytes: the `ollama` client encodes bytes to base64 itself,
   * whereas it would read a base64 string that names an existing file from disk and send that file.
   */
  images?: Uint8Array[];
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

/** The name in an {@link UnsupportedContentError}. */
const PROVIDER_ID = "ollama";

/**
 * Each image part's bytes, decoded once: the loop sends the same part objects on every step, and
 * decoding 20 MB takes about half a second.
 */
const decoded = new WeakMap<object, Uint8Array>();

/** The bytes of a part's base64 `data` (already checked where the part was made). */
function imageBytes(part: { data: string }): Uint8Array {
  const known = decoded.get(part);
  if (known !== undefined) return known;
  const bytes = base64Bytes(part.data);
  decoded.set(part, bytes);
  return bytes;
}

/**
 * A message's `content` and `images`: its text parts joined by a line break, its base64 images as
 * bytes. Ollama takes images on a message of any role (`api.Message.Images`; the server tags them
 * into that message's text, tool answers included), but neither image URLs nor files.
 * @throws UnsupportedContentError for an image URL or a file
 */
function textAndImages(message: Message, messageIndex: number): Pick<OllamaMessage, "content" | "images"> {
  const { content } = message;
  if (typeof content === "string") return { content };
  let text = "";
  const images: Uint8Array[] = [];
  for (const part of content as readonly ContentPart[]) {
    if (part.type === "text") text = text === "" ? part.text : `${text}\n${part.text}`;
    else if (part.type === "image" && "data" in part) images.push(imageBytes(part));
    else {
      const why = part.type === "file" ? "it takes images only" : "it takes images as base64 data only";
      throw unsupportedContent(PROVIDER_ID, part, messageIndex, why);
    }
  }
  return images.length === 0 ? { content: text } : { content: text, images };
}

function assistantMessage(message: Message, messageIndex: number): OllamaMessage {
  const converted: OllamaMessage = { role: "assistant", ...textAndImages(message, messageIndex) };
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
 * answers by position and name) and the server's id as `tool_call_id` when there is one. A
 * message's text parts are joined into `content`, its base64 images go in its `images` (a tool's
 * images in its own tool message).
 * @throws UnsupportedContentError for an image URL or a file part, before anything is sent
 */
export function toOllamaMessages(messages: readonly Message[]): OllamaMessage[] {
  const result: OllamaMessage[] = [];
  let turnCalls: ReadonlyMap<string, ToolCall> = new Map();
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index] as Message;
    switch (message.role) {
      case "assistant":
        turnCalls = callsById(message.toolCalls ?? []);
        result.push(assistantMessage(message, index));
        break;
      case "tool": {
        // `toolCallId` may be missing from a hand-made transcript: a Map finds a call without id as a search would.
        const call = turnCalls.get(message.toolCallId as string);
        const converted: OllamaMessage = {
          role: "tool",
          ...textAndImages(message, index),
          tool_name: message.toolName ?? call?.name ?? "",
        };
        const id = serverId(call);
        if (id !== undefined) converted.tool_call_id = id;
        result.push(converted);
        break;
      }
      default:
        result.push({ role: message.role, ...textAndImages(message, index) });
    }
  }
  return result;
}
