import type { ContentPart } from "../../content-part.js";
import { UnsupportedContentError } from "../../errors.js";
import type { Message } from "../../provider.js";

/** An image or file part given inline (base64 `data`). */
export type InlinePart = Extract<ContentPart, { data: string }>;

/** A part's bytes as a `data:` URL (`data:<mediaType>;base64,<data>`), as OpenAI's APIs take them. */
export function dataUrl(part: InlinePart): string {
  return `data:${part.mediaType};base64,${part.data}`;
}

// Node's Buffer when there is one (it decodes megabytes natively); `atob` elsewhere (browsers).
const NodeBuffer = (globalThis as { Buffer?: { from(data: string, encoding: "base64"): Uint8Array } }).Buffer;

/** The bytes of base64 text (a part's `data`, already checked where the part was made). */
export function base64Bytes(data: string): Uint8Array {
  if (NodeBuffer !== undefined) return NodeBuffer.from(data, "base64");
  const binary = atob(data);
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index++) bytes[index] = binary.charCodeAt(index);
  return bytes;
}

/** A message's content as parts: a string is one text part (none when it is empty). */
export function contentParts(content: string | readonly ContentPart[]): readonly ContentPart[] {
  if (typeof content !== "string") return content;
  return content === "" ? [] : [{ type: "text", text: content }];
}

/**
 * A tool message's answer split in two: its text (`forLLM`: the text parts joined) and the images
 * and files the tool returned after it (`ToolResult.parts`), in order.
 */
export function toolAnswerParts(message: Message): { text: string; media: ContentPart[] } {
  if (typeof message.content === "string") return { text: message.content, media: [] };
  let text = "";
  const media: ContentPart[] = [];
  for (const part of message.content) {
    if (part.type !== "text") media.push(part);
    else text = text === "" ? part.text : `${text}\n${part.text}`;
  }
  return { text, media };
}

/**
 * For a provider whose tool messages hold text only (OpenAI Chat, Ollama): the parts of one turn's
 * tool answers as the content of one user message to send right after the turn's last tool message,
 * each tool's parts introduced by a text part naming its call; `undefined` when no answer has any.
 */
export function toolMediaMessage(answers: readonly Message[]): ContentPart[] | undefined {
  let content: ContentPart[] | undefined;
  for (const answer of answers) {
    const { media } = toolAnswerParts(answer);
    if (media.length === 0) continue;
    content ??= [];
    const name = answer.toolName === undefined ? "" : ` (${answer.toolName})`;
    content.push({ type: "text", text: `Returned by tool call ${answer.toolCallId ?? ""}${name}:` }, ...media);
  }
  return content;
}

/** The {@link UnsupportedContentError} for a part `provider` cannot take, in the message at `messageIndex`. */
export function unsupportedContent(
  provider: string,
  part: ContentPart,
  messageIndex: number,
  why: string,
): UnsupportedContentError {
  const kind = part.type === "image" && "url" in part ? "an image URL" : part.type === "image" ? "an image" : "a file";
  return new UnsupportedContentError(`${provider} cannot take ${kind} in messages[${messageIndex}]: ${why}`, {
    provider,
    part: part.type,
    messageIndex,
  });
}
