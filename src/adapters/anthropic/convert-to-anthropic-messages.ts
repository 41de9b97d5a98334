import { type ContentPart, contentText, IMAGE_MEDIA_TYPES } from "../../content-part.js";
import type { Message } from "../../provider.js";
import { base64Bytes, toolAnswerParts, unsupportedContent } from "../shared/content.js";
import { argumentsObject, assistantTurnParts } from "../shared/transcript.js";

/** A `text` content block. */
export interface AnthropicTextBlockParam {
  /** Always `"text"`. */
  type: "text";
  /** The text; never empty (the API rejects empty text blocks). */
  text: string;
}

/** A `tool_use` content block of an assistant turn in the history. */
export interface AnthropicToolUseBlockParam {
  /** Always `"tool_use"`. */
  type: "tool_use";
  /** The call's id, answered by a `tool_result` block's `tool_use_id`. */
  id: string;
  /** The tool's name. */
  name: string;
  /** The call's arguments, as an object. */
  input: Record<string, unknown>;
  /** Echoed from the response (`{ type: "direct" }` …) when the API sent one. */
  caller?: unknown;
}

/** An `image` content block: an image part, given inline (`base64`) or as a URL the API fetches. */
export interface AnthropicImageBlockParam {
  /** Always `"image"`. */
  type: "image";
  /** Where the image comes from. */
  source:
    | {
        /** The bytes are inline. */
        type: "base64";
        /** `image/png`, `image/jpeg`, `image/gif` or `image/webp`. */
        media_type: string;
        /** The image's bytes, base64. */
        data: string;
      }
    | {
        /** The API fetches the image. */
        type: "url";
        /** An `http:` or `https:` URL. */
        url: string;
      };
}

/** A `document` content block: a PDF (`base64` source) or a plain text file (`text` source). */
export interface AnthropicDocumentBlockParam {
  /** Always `"document"`. */
  type: "document";
  /** The document's content. */
  source:
    | {
        /** A PDF, inline. */
        type: "base64";
        /** Always `"application/pdf"`. */
        media_type: "application/pdf";
        /** The PDF's bytes, base64. */
        data: string;
      }
    | {
        /** A plain text document. */
        type: "text";
        /** Always `"text/plain"`. */
        media_type: "text/plain";
        /** The file's text (its bytes decoded as UTF-8). */
        data: string;
      };
  /** The part's `filename`, shown to the model as the document's title. */
  title?: string;
}

/** A block a `tool_result` may hold besides text: an image or a document. */
export type AnthropicMediaBlockParam = AnthropicImageBlockParam | AnthropicDocumentBlockParam;

/** A `tool_result` content block: the answer to one `tool_use`. */
export interface AnthropicToolResultBlockParam {
  /** Always `"tool_result"`. */
  type: "tool_result";
  /** The id of the `tool_use` block it answers. */
  tool_use_id: string;
  /**
   * The tool's text as a string; with images or files (`ToolResult.parts`), the blocks: the text
   * first (when not empty), then one `image` or `document` block per part. Left out when there is
   * nothing (the API rejects empty text).
   */
  content?: string | Array<AnthropicTextBlockParam | AnthropicMediaBlockParam>;
  /** `true` when the tool failed (`Message.isError`). */
  is_error?: boolean;
}

/** A `thinking` or `redacted_thinking` block, replayed unchanged before the turn's tool calls. */
export interface AnthropicThinkingBlockParam {
  /** The block's type; its other fields are the API's, kept as they came. */
  type: "thinking" | "redacted_thinking";
  [key: string]: unknown;
}

/** The content blocks this adapter sends. */
export type AnthropicContentBlockParam =
  | AnthropicTextBlockParam
  | AnthropicImageBlockParam
  | AnthropicDocumentBlockParam
  | AnthropicToolUseBlockParam
  | AnthropicToolResultBlockParam
  | AnthropicThinkingBlockParam;

/** One message of `messages[]` as this adapter sends it. */
export interface AnthropicMessageParam {
  /** `"user"` (also for tool results) or `"assistant"`. */
  role: "user" | "assistant";
  /** One text as a string, else the blocks. */
  content: string | AnthropicContentBlockParam[];
}

/** What this adapter keeps on a `ToolCall`'s `providerMetadata.anthropic` so it round-trips. */
export interface AnthropicToolCallMetadata {
  /** The `caller` of the `tool_use` block, echoed back in the history. */
  caller?: unknown;
  /**
   * `thinking` / `redacted_thinking` blocks of the turn (on its first call only): with extended
   * thinking the API requires them back, unchanged, before the turn's `tool_use` blocks.
   */
  thinking?: AnthropicThinkingBlockParam[];
}

/** @internal The API's name in error messages (and an `UnsupportedContentError`'s `provider`). */
/** The provider named by an `UnsupportedContentError` (its OpenTelemetry GenAI name). */
const CONTENT_PROVIDER = "anthropic";

export const PROVIDER = "Anthropic";

/** The key of this adapter's data in `ToolCall.providerMetadata`. */
export const METADATA_KEY = "anthropic";

function assistantBlocks(message: Message): AnthropicContentBlockParam[] {
  return assistantTurnParts<AnthropicContentBlockParam>(message, {
    key: METADATA_KEY,
    replayed: "thinking",
    text: (text) => ({ type: "text", text }),
    call: (call, kept) => {
      const block: AnthropicToolUseBlockParam = {
        type: "tool_use",
        id: call.id,
        name: call.name,
        input: argumentsObject(call),
      };
      // The `caller` the API gave the block, echoed as the SDK's own tool runner does.
      if (kept?.caller !== undefined) block.caller = kept.caller;
      return block;
    },
  });
}

/** A plain text file's base64 bytes as text (UTF-8; invalid sequences become U+FFFD). */
function decodedText(data: string): string {
  return new TextDecoder().decode(base64Bytes(data));
}

/**
 * The `image` or `document` block for an image or file part of the message at `messageIndex`.
 * @throws UnsupportedContentError for what the API cannot take: an image URL that is not
 *   `http:`/`https:`, a file that is neither a PDF, plain text nor an image (audio included)
 */
function mediaBlock(part: ContentPart, messageIndex: number): AnthropicMediaBlockParam {
  if (part.type === "image" && "url" in part) {
    if (/^https?:/i.test(part.url)) return { type: "image", source: { type: "url", url: part.url } };
    throw unsupportedContent(CONTENT_PROVIDER, part, messageIndex, "the API fetches http: and https: URLs only");
  }
  if (part.type === "text") throw new TypeError("mediaBlock: a text part is not media");
  const mediaType = part.mediaType.toLowerCase();
  // The API reads the image types a part may have: a `file` part of one of them is sent as an image.
  if (IMAGE_MEDIA_TYPES.has(mediaType)) {
    return { type: "image", source: { type: "base64", media_type: mediaType, data: part.data } };
  }
  if (part.type === "file" && (mediaType === "application/pdf" || mediaType === "text/plain")) {
    const block: AnthropicDocumentBlockParam =
      mediaType === "application/pdf"
        ? { type: "document", source: { type: "base64", media_type: "application/pdf", data: part.data } }
        : { type: "document", source: { type: "text", media_type: "text/plain", data: decodedText(part.data) } };
    if (part.filename !== undefined) block.title = part.filename;
    return block;
  }
  // Shown at most 255 characters of a media type the loop checked; never the data.
  const shown = JSON.stringify(part.mediaType.slice(0, 255));
  throw unsupportedContent(
    CONTENT_PROVIDER,
    part,
    messageIndex,
    `documents are application/pdf or text/plain and images png, jpeg, gif or webp, got ${shown}`,
  );
}

/** A user message's blocks, in order: its text parts (empty ones left out) and its media. */
function userBlocks(content: string | readonly ContentPart[], messageIndex: number): AnthropicContentBlockParam[] {
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  const blocks: AnthropicContentBlockParam[] = [];
  for (const part of content) {
    if (part.type !== "text") blocks.push(mediaBlock(part, messageIndex));
    else if (part.text !== "") blocks.push({ type: "text", text: part.text });
  }
  return blocks;
}

/** A system or assistant message's text. @throws UnsupportedContentError for an image or file in it */
function textOnly(message: Message, messageIndex: number): string {
  if (typeof message.content !== "string") {
    const media = message.content.find((part) => part.type !== "text");
    if (media !== undefined) {
      throw unsupportedContent(CONTENT_PROVIDER, media, messageIndex, `a ${message.role} message holds text only`);
    }
  }
  return contentText(message.content);
}

function toolResultBlock(message: Message, messageIndex: number): AnthropicToolResultBlockParam {
  const block: AnthropicToolResultBlockParam = { type: "tool_result", tool_use_id: message.toolCallId ?? "" };
  const { text, media } = toolAnswerParts(message);
  if (media.length === 0) {
    // An empty `content` is left out: the API rejects empty text.
    if (text !== "") block.content = text;
  } else {
    const blocks: Array<AnthropicTextBlockParam | AnthropicMediaBlockParam> = [];
    if (text !== "") blocks.push({ type: "text", text });
    for (const part of media) blocks.push(mediaBlock(part, messageIndex));
    block.content = blocks;
  }
  if (message.isError === true) block.is_error = true;
  return block;
}

function blocksOf(
  message: Message,
  messageIndex: number,
): { role: "user" | "assistant"; blocks: AnthropicContentBlockParam[] } {
  if (message.role === "assistant") {
    textOnly(message, messageIndex);
    return { role: "assistant", blocks: assistantBlocks(message) };
  }
  if (message.role === "tool") return { role: "user", blocks: [toolResultBlock(message, messageIndex)] };
  return { role: "user", blocks: userBlocks(message.content, messageIndex) };
}

function finish(role: "user" | "assistant", blocks: AnthropicContentBlockParam[]): AnthropicMessageParam {
  const [first] = blocks;
  if (blocks.length === 1 && first?.type === "text") return { role, content: first.text };
  if (role === "user") {
    // The API requires a turn's tool_result blocks first in the user message; text goes after.
    const results = blocks.filter((block) => block.type === "tool_result");
    const others = blocks.filter((block) => block.type !== "tool_result");
    return { role, content: [...results, ...others] };
  }
  return { role, content: blocks };
}

/**
 * Converts a transcript to the Messages API's `system` and `messages`: system messages are joined
 * (blank line between) into the top-level `system`; assistant messages become `text` then
 * `tool_use` blocks; tool messages become `tool_result` blocks of a user message; consecutive
 * messages of the same role are merged into one, with the `tool_result` blocks first. Empty texts
 * are left out (the API rejects them), and a message left with no content is dropped.
 *
 * Images and files: a user message's parts become `image` blocks (`base64`, or `url` for an
 * `http:`/`https:` URL) and `document` blocks (a PDF as `base64`, `text/plain` as a `text` source
 * with the part's `filename` as `title`), in order; a `file` part with an image type is sent as an
 * image. A tool message's parts go inside its `tool_result`, after its text.
 * @throws UnsupportedContentError (before anything is sent) for a part the API cannot take — a
 *   `gs:` image URL, a file of another type (audio, CSV …), an image or file in a system or
 *   assistant message — naming the index of its message in `messages`
 */
export function toAnthropicMessages(messages: readonly Message[]): {
  system?: string;
  messages: AnthropicMessageParam[];
} {
  const system: string[] = [];
  const turns: Array<{ role: "user" | "assistant"; blocks: AnthropicContentBlockParam[] }> = [];
  for (const [index, message] of messages.entries()) {
    if (message.role === "system") {
      const text = textOnly(message, index);
      if (text !== "") system.push(text);
      continue;
    }
    const { role, blocks } = blocksOf(message, index);
    if (blocks.length === 0) continue;
    const last = turns.at(-1);
    if (last?.role === role) last.blocks.push(...blocks);
    else turns.push({ role, blocks });
  }
  const converted = turns.map(({ role, blocks }) => finish(role, blocks));
  return system.length > 0 ? { system: system.join("\n\n"), messages: converted } : { messages: converted };
}
