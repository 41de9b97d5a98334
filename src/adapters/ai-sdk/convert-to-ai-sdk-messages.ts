import { type ContentPart, contentText } from "../../content-part.js";
import { isPlainObject } from "../../internal/describe.js";
import type { Message } from "../../provider.js";
import { toolAnswerParts, unsupportedContent } from "../shared/content.js";
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

/** A `file` part of a user message: an image (`image/*`), a PDF, an audio clip …. */
export interface AISDKFilePart {
  /** Always `"file"`. */
  type: "file";
  /** The bytes as base64 text, or a `URL` the provider fetches (or passes on). */
  data: string | URL;
  /** The media type; `"image/*"` for an image URL whose type is not known. */
  mediaType: string;
  /** The file's name, when it has one. */
  filename?: string;
}

/**
 * One piece of a tool result's `content` output. Spec v3 has `image-data`, `image-url` and
 * `file-data`; spec v2 has `media` (base64, any media type) and no URLs.
 */
export type AISDKToolResultContentPart =
  | {
      /** The tool's text. */
      type: "text";
      /** The text. */
      text: string;
    }
  | {
      /** Base64 data (spec v2). */
      type: "media";
      /** The bytes, base64. */
      data: string;
      /** Its media type. */
      mediaType: string;
    }
  | {
      /** A base64 image (spec v3). */
      type: "image-data";
      /** The bytes, base64. */
      data: string;
      /** Its media type. */
      mediaType: string;
    }
  | {
      /** An image by URL (spec v3). */
      type: "image-url";
      /** The URL. */
      url: string;
    }
  | {
      /** A base64 file (spec v3). */
      type: "file-data";
      /** The bytes, base64. */
      data: string;
      /** Its media type. */
      mediaType: string;
      /** Its name, when it has one. */
      filename?: string;
    };

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
  /** The tool's text; with images or files, its text and them as `content`. */
  output:
    | {
        /** `"error-text"` when the tool failed, else `"text"`. */
        type: "text" | "error-text";
        /** The tool's text (its error message when it failed). */
        value: string;
      }
    | {
        /** A result with images or files. */
        type: "content";
        /** The tool's text, then its parts in order. */
        value: AISDKToolResultContentPart[];
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
      /** Its text and files, in order (a string message is one text part). */
      content: Array<AISDKTextPart | AISDKFilePart>;
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

/** The name in an {@link UnsupportedContentError}. */
const PROVIDER_ID = "ai-sdk";

/**
 * A user message's part as a prompt part: images and files are `file` parts, a URL as a `URL`.
 * @throws UnsupportedContentError for a URL that `URL` cannot parse (e.g. `https://[x`)
 */
function userPart(part: ContentPart, messageIndex: number): AISDKTextPart | AISDKFilePart {
  if (part.type === "text") return { type: "text", text: part.text };
  if ("url" in part) {
    if (!URL.canParse(part.url)) throw unsupportedContent(PROVIDER_ID, part, messageIndex, "its URL does not parse");
    return { type: "file", data: new URL(part.url), mediaType: part.mediaType ?? "image/*" };
  }
  const file: AISDKFilePart = { type: "file", data: part.data, mediaType: part.mediaType };
  if (part.type === "file" && part.filename !== undefined) file.filename = part.filename;
  return file;
}

function userMessage(message: Message, messageIndex: number): AISDKPromptMessage {
  const { content } = message;
  if (typeof content === "string") return { role: "user", content: [{ type: "text", text: content }] };
  return { role: "user", content: content.map((part) => userPart(part, messageIndex)) };
}

/**
 * A tool's image or file as a piece of a `content` output, in the spec version's shape.
 * @throws UnsupportedContentError for an image URL to a spec v2 model
 */
function toolResultPart(part: ContentPart, version: string, messageIndex: number): AISDKToolResultContentPart {
  if (part.type === "text") return { type: "text", text: part.text };
  if ("url" in part) {
    if (version === "v2")
      throw unsupportedContent(PROVIDER_ID, part, messageIndex, "spec v2 tool results take base64 media only");
    return { type: "image-url", url: part.url };
  }
  const { data, mediaType } = part;
  if (version === "v2") return { type: "media", data, mediaType };
  if (part.type === "image") return { type: "image-data", data, mediaType };
  return part.filename === undefined
    ? { type: "file-data", data, mediaType }
    : { type: "file-data", data, mediaType, filename: part.filename };
}

/** A tool message's output: its text, or — with images or files — its text and them as `content`. */
function toolOutput(message: Message, version: string, messageIndex: number): AISDKToolResultPart["output"] {
  const { text, media } = toolAnswerParts(message);
  // A failed tool's text keeps its error flag; parts, when a failure has any, are never dropped.
  if (media.length === 0) return { type: message.isError === true ? "error-text" : "text", value: text };
  const value: AISDKToolResultContentPart[] = text === "" ? [] : [{ type: "text", text }];
  for (const part of media) value.push(toolResultPart(part, version, messageIndex));
  return { type: "content", value };
}

/**
 * Converts a transcript to a LanguageModel prompt: system messages stay where they are, user
 * text becomes a text part and images and files `file` parts (base64 text, or a `URL`), assistant
 * messages become text then `tool-call` parts, and consecutive tool messages become one `tool`
 * message of `tool-result` parts (`error-text` when the result is an error; `content` — the text,
 * then `image-data`, `image-url` and `file-data` parts, or `media` for a spec v2 model — when the
 * tool returned images or files). An assistant message with neither text nor calls is left out.
 * @param specificationVersion the model's (`"v2"` or `"v3"`): the shape of tool results' media
 * @throws UnsupportedContentError for a tool's image URL to a spec v2 model, or an image URL that
 *   `URL` cannot parse, before any request
 */
export function toAISDKPrompt(messages: readonly Message[], specificationVersion = "v3"): AISDKPromptMessage[] {
  const prompt: AISDKPromptMessage[] = [];
  const toolNames = new Map<string, string>();
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index] as Message;
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
          output: toolOutput(message, specificationVersion, index),
        };
        const last = prompt.at(-1);
        if (last?.role === "tool") last.content.push(part);
        else prompt.push({ role: "tool", content: [part] });
        break;
      }
      default:
        prompt.push(userMessage(message, index));
    }
  }
  return prompt;
}
