import { type ContentPart, contentText } from "../../content-part.js";
import { showValue } from "../../internal/describe.js";
import type { Message } from "../../provider.js";
import { dataUrl, toolAnswerParts, unsupportedContent } from "../shared/content.js";
import { openAICallOf, openAIFilename, openAIImageUrl } from "./convert-to-openai-chat-messages.js";

/** The provider's name in an `UnsupportedContentError` from the Responses adapter. */
export const OPENAI_RESPONSES_CONTENT_PROVIDER = "openai";

/**
 * A content part of a Responses API user message or `function_call_output`
 * (`ResponseInputContent` in the SDK).
 */
export type OpenAIResponsesContentPart =
  | {
      /** A piece of text. */
      type: "input_text";
      /** The text. */
      text: string;
    }
  | {
      /** An image. */
      type: "input_image";
      /** An http(s) URL, or the image inline as a `data:` URL. */
      image_url: string;
      /** Always `"auto"` (the SDK's type requires it). */
      detail: "auto";
    }
  | {
      /** A file, e.g. a PDF. */
      type: "input_file";
      /** The file as a `data:` URL. */
      file_data: string;
      /** Its name (`file.<subtype>` when the part has none). */
      filename: string;
    };

/** A Responses API input item as the adapter sends it (`ResponseInputItem` in the SDK). */
export type OpenAIResponsesInputItem =
  | {
      /** Who wrote the message. */
      role: "system" | "assistant";
      /** Its text. */
      content: string;
    }
  | {
      /** A user message. */
      role: "user";
      /** Its text, or its parts when it has images or files. */
      content: string | OpenAIResponsesContentPart[];
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
      /**
       * The tool's text (its error message when it failed); when the tool returned images or
       * files, parts: its text as `input_text`, then the images and files.
       */
      output: string | OpenAIResponsesContentPart[];
    };

/**
 * One part in the Responses shape: text as `input_text`; an image as `input_image` (its URL, or a
 * `data:` URL); a file as `input_file` (`file_data` as a `data:` URL, and `filename`).
 * @throws UnsupportedContentError for audio (the Responses API takes no audio input) and an image
 *   URL that is not http(s)
 */
function toResponsesPart(part: ContentPart, messageIndex: number): OpenAIResponsesContentPart {
  if (part.type === "text") return { type: "input_text", text: part.text };
  if ("url" in part) {
    return {
      type: "input_image",
      image_url: openAIImageUrl(OPENAI_RESPONSES_CONTENT_PROVIDER, part, messageIndex),
      detail: "auto",
    };
  }
  if (part.type === "image") return { type: "input_image", image_url: dataUrl(part), detail: "auto" };
  if (part.mediaType.toLowerCase().startsWith("audio/")) {
    throw unsupportedContent(
      OPENAI_RESPONSES_CONTENT_PROVIDER,
      part,
      messageIndex,
      `the Responses API takes no audio input (got ${showValue(part.mediaType)}); use the Chat Completions adapter`,
    );
  }
  return { type: "input_file", file_data: dataUrl(part), filename: openAIFilename(part) };
}

/** A tool answer's `output`: its text, or its text and parts when the tool returned images or files. */
function toolOutput(message: Message, index: number): string | OpenAIResponsesContentPart[] {
  const { text, media } = toolAnswerParts(message);
  if (media.length === 0) return text;
  const output = media.map((part) => toResponsesPart(part, index));
  return text === "" ? output : [{ type: "input_text", text }, ...output];
}

/**
 * Converts a toolloop transcript to Responses API input items, statelessly (no
 * `previous_response_id`, no item ids): system and assistant text become messages (an assistant
 * turn's text comes before its calls, and is left out when empty); a user message's text stays a
 * string, its parts become `input_text`, `input_image` and `input_file`; each call becomes a
 * `function_call` item and each `tool` message a `function_call_output` item, both keyed by
 * `call_id`, in transcript order — its `output` the answer's text, or, when the tool returned
 * images or files, an array: the text as `input_text`, then the parts.
 * @throws UnsupportedContentError (before any request) for audio and for an image URL that is not http(s)
 */
export function toOpenAIResponsesInput(messages: readonly Message[]): OpenAIResponsesInputItem[] {
  const input: OpenAIResponsesInputItem[] = [];
  messages.forEach((message, index) => {
    switch (message.role) {
      case "system":
        input.push({ role: "system", content: contentText(message.content) });
        break;
      case "user":
        input.push({
          role: "user",
          content:
            typeof message.content === "string"
              ? message.content
              : message.content.map((part) => toResponsesPart(part, index)),
        });
        break;
      case "assistant": {
        const calls = message.toolCalls ?? [];
        const text = contentText(message.content);
        if (calls.length === 0 || text !== "") input.push({ role: "assistant", content: text });
        for (const call of calls) input.push({ type: "function_call", call_id: call.id, ...openAICallOf(call) });
        break;
      }
      case "tool":
        input.push({
          type: "function_call_output",
          call_id: message.toolCallId ?? "",
          output: toolOutput(message, index),
        });
        break;
      default:
        throw new TypeError(`unsupported message role ${showValue((message as Message).role)}`);
    }
  });
  return input;
}
