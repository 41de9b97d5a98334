import { type ContentPart, contentText } from "../../content-part.js";
import { isRecord, jsonText, showValue } from "../../internal/describe.js";
import type { Message, ToolCall } from "../../provider.js";
import { dataUrl, type InlinePart, toolMediaMessage, unsupportedContent } from "../shared/content.js";

/** The provider's name in an `UnsupportedContentError` from the Chat Completions adapter. */
export const OPENAI_CHAT_CONTENT_PROVIDER = "openai";

/** A content part of a Chat Completions user message (`ChatCompletionContentPart` in the SDK). */
export type OpenAIChatContentPart =
  | {
      /** A piece of text. */
      type: "text";
      /** The text. */
      text: string;
    }
  | {
      /** An image. */
      type: "image_url";
      /** Where it is. */
      image_url: {
        /** An http(s) URL, or the image inline as a `data:` URL. */
        url: string;
      };
    }
  | {
      /** Audio (WAV or MP3 only). */
      type: "input_audio";
      /** The sound. */
      input_audio: {
        /** Base64. */
        data: string;
        /** `"wav"` or `"mp3"`. */
        format: "wav" | "mp3";
      };
    }
  | {
      /** A file, e.g. a PDF. */
      type: "file";
      /** Its bytes and name. */
      file: {
        /** The file as a `data:` URL. */
        file_data: string;
        /** Its name (`file.<subtype>` when the part has none). */
        filename: string;
      };
    };

/** A Chat Completions message as the adapter sends it (`ChatCompletionMessageParam` in the SDK). */
export type OpenAIChatMessage =
  | {
      /** A system message. */
      role: "system";
      /** Its text. */
      content: string;
    }
  | {
      /** A user message. */
      role: "user";
      /** Its text, or its parts when it has images, audio or files (or answers' media, see {@link toOpenAIChatMessages}). */
      content: string | OpenAIChatContentPart[];
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

/** Chat Completions' `input_audio` formats by media type; any other audio type has no Chat shape. */
const AUDIO_FORMATS: ReadonlyMap<string, "wav" | "mp3"> = new Map([
  ["audio/wav", "wav"],
  ["audio/x-wav", "wav"],
  ["audio/wave", "wav"],
  ["audio/mpeg", "mp3"],
  ["audio/mp3", "mp3"],
]);

/**
 * A file part's name as both OpenAI APIs take it: its own, else `file.<subtype>` (the API wants
 * one with `file_data`).
 */
export function openAIFilename(part: Extract<ContentPart, { type: "file" }>): string {
  if (part.filename !== undefined && part.filename !== "") return part.filename;
  const subtype = part.mediaType.slice(part.mediaType.indexOf("/") + 1).replace(/[^A-Za-z0-9.+-]/g, "");
  return `file.${subtype === "" ? "bin" : subtype}`;
}

/**
 * An image URL both OpenAI APIs can fetch (http or https).
 * @throws UnsupportedContentError for any other scheme (`gs://`)
 */
export function openAIImageUrl(
  provider: string,
  part: Extract<ContentPart, { url: string }>,
  messageIndex: number,
): string {
  if (/^https?:/i.test(part.url)) return part.url;
  throw unsupportedContent(provider, part, messageIndex, "only http and https image URLs are fetched");
}

/**
 * One part of a user message in the Chat Completions shape: text; an image as `image_url` (its
 * URL, or a `data:` URL); a WAV or MP3 file as `input_audio`; any other file as `file`
 * (`file_data` as a `data:` URL, and `filename`).
 * @throws UnsupportedContentError for audio other than WAV or MP3, and an image URL that is not http(s)
 */
function toChatPart(part: ContentPart, messageIndex: number): OpenAIChatContentPart {
  if (part.type === "text") return { type: "text", text: part.text };
  if ("url" in part) {
    return { type: "image_url", image_url: { url: openAIImageUrl(OPENAI_CHAT_CONTENT_PROVIDER, part, messageIndex) } };
  }
  if (part.type === "image") return { type: "image_url", image_url: { url: dataUrl(part) } };
  const mediaType = part.mediaType.toLowerCase();
  if (mediaType.startsWith("audio/")) {
    const format = AUDIO_FORMATS.get(mediaType);
    if (format === undefined) {
      throw unsupportedContent(
        OPENAI_CHAT_CONTENT_PROVIDER,
        part,
        messageIndex,
        `audio must be audio/wav or audio/mpeg (mp3), got ${showValue(part.mediaType)}`,
      );
    }
    return { type: "input_audio", input_audio: { data: part.data, format } };
  }
  return { type: "file", file: { file_data: dataUrl(part as InlinePart), filename: openAIFilename(part) } };
}

function toChatParts(parts: readonly ContentPart[], messageIndex: number): OpenAIChatContentPart[] {
  return parts.map((part) => toChatPart(part, messageIndex));
}

function toChatMessage(message: Message, index: number): OpenAIChatMessage {
  switch (message.role) {
    case "system":
      return { role: "system", content: contentText(message.content) };
    case "user":
      return {
        role: "user",
        content: typeof message.content === "string" ? message.content : toChatParts(message.content, index),
      };
    case "assistant": {
      const calls = message.toolCalls ?? [];
      const text = contentText(message.content);
      if (calls.length === 0) return { role: "assistant", content: text };
      return {
        role: "assistant",
        content: text === "" ? null : text,
        tool_calls: calls.map((call) => ({ id: call.id, type: "function", function: openAICallOf(call) })),
      };
    }
    case "tool":
      return { role: "tool", tool_call_id: message.toolCallId ?? "", content: contentText(message.content) };
    default:
      throw new TypeError(`unsupported message role ${showValue((message as Message).role)}`);
  }
}

/**
 * Converts a toolloop transcript to Chat Completions messages: system and assistant text as they
 * are; a user message's text as a string, its parts as content parts (`text`, `image_url`,
 * `input_audio`, `file`); an assistant turn with calls becomes one message with `tool_calls` (its
 * text as `content`, or `null` when there is none); each `tool` message becomes
 * `{ role: "tool", tool_call_id, content }` with the answer's text, in transcript order. Tool
 * messages hold text only, so the images and files of a turn's answers follow its last tool
 * message in one user message, each answer's parts after a text part naming its call
 * (`Returned by tool call <id> (<tool>):`).
 * @throws UnsupportedContentError (before any request) for a part Chat Completions cannot take:
 *   audio other than WAV or MP3, an image URL that is not http(s)
 */
export function toOpenAIChatMessages(messages: readonly Message[]): OpenAIChatMessage[] {
  // A loop with no closure, `Map` or object per message: the provider converts the whole
  // transcript at every step.
  const out: OpenAIChatMessage[] = [];
  // The first tool message of the turn being read, and whether an answer of it has parts (images
  // or files, maybe).
  let answersFrom = -1;
  let withParts = false;
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index] as Message;
    if (message.role === "tool") {
      if (answersFrom < 0) answersFrom = index;
      if (typeof message.content !== "string") withParts = true;
    } else if (answersFrom >= 0) {
      if (withParts) pushToolMedia(messages, answersFrom, index, out);
      answersFrom = -1;
      withParts = false;
    }
    out.push(toChatMessage(message, index));
  }
  if (withParts) pushToolMedia(messages, answersFrom, messages.length, out);
  return out;
}

/**
 * After a turn's tool messages (`from` to `to`), the user message with the images and files of
 * their answers, when any has some.
 */
function pushToolMedia(messages: readonly Message[], from: number, to: number, out: OpenAIChatMessage[]): void {
  const answers = messages.slice(from, to);
  const content = toolMediaMessage(answers);
  if (content === undefined) return;
  // Each answer's part → the index of its tool message, for an UnsupportedContentError's messageIndex.
  const answerIndex = new Map<ContentPart, number>();
  answers.forEach((answer, offset) => {
    if (typeof answer.content === "string") return;
    for (const part of answer.content) if (part.type !== "text") answerIndex.set(part, from + offset);
  });
  out.push({ role: "user", content: content.map((part) => toChatPart(part, answerIndex.get(part) ?? -1)) });
}
