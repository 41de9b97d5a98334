import { type ContentPart, contentText } from "../../content-part.js";
import { showValue } from "../../internal/describe.js";
import type { Message, ToolCall } from "../../provider.js";
import { toolAnswerParts, toolMediaMessage, unsupportedContent } from "../shared/content.js";
import { callsById, providerMetadataOf } from "../shared/transcript.js";

/** A function call in a Gemini part; the Gemini Developer API usually gives no `id`. */
export interface GeminiFunctionCall {
  /** The call's id, when the API gave one (echoed in the answer's `functionResponse.id`). */
  id?: string;
  /** The function's name. */
  name?: string;
  /** The call's arguments, as an object. */
  args?: Record<string, unknown>;
}

/** Bytes given inline: an image, a PDF, an audio clip … (`inlineData`). */
export interface GeminiBlob {
  /** The media type, e.g. `image/png`. */
  mimeType?: string;
  /** The bytes, base64. */
  data?: string;
  /** Inside a function response only: the name its `response` refers to (`{ $ref: displayName }`). */
  displayName?: string;
}

/** A file the API fetches (`fileData`): an `https:` or `gs:` URL. */
export interface GeminiFileData {
  /** The media type (required by the API). */
  mimeType?: string;
  /** The file's URL. */
  fileUri?: string;
}

/** A function result in a Gemini part. */
export interface GeminiFunctionResponse {
  /** The id of the call it answers, when the call had one. */
  id?: string;
  /** The name of the function that answered (Gemini pairs answers with calls by name). */
  name?: string;
  /**
   * `{ output: "<tool text>" }`, or `{ error: "<text>" }` for a failed tool; with media in
   * `parts`, also `media: [{ $ref: "<displayName>" }, …]`, one reference per part.
   */
  response?: Record<string, unknown>;
  /** The images and documents the tool returned (multimodal function responses). */
  parts?: Array<{ inlineData?: GeminiBlob }>;
}

/** One part of a Gemini content (only the fields this adapter reads or writes). */
export interface GeminiPart {
  /** A text part. */
  text?: string;
  /** `true` on the model's thought summaries, which are not part of the answer. */
  thought?: boolean;
  /** Opaque signature the model attaches to (the first of) its function calls; it must be sent back. */
  thoughtSignature?: string;
  /** A call the model made. */
  functionCall?: GeminiFunctionCall;
  /** A tool's answer. */
  functionResponse?: GeminiFunctionResponse;
  /** An image or file given inline. */
  inlineData?: GeminiBlob;
  /** An image or file given by URL. */
  fileData?: GeminiFileData;
}

/** A Gemini content: a turn of `"user"` or `"model"`. */
export interface GeminiContent {
  /** `"user"` (also for tool answers) or `"model"`. */
  role?: string;
  /** The turn's parts. */
  parts?: GeminiPart[];
}

/** What this adapter keeps in `ToolCall.providerMetadata.gemini`. */
export interface GeminiCallMetadata {
  /** The call id, when the API gave one (it is then echoed in `functionCall.id` and `functionResponse.id`). */
  id?: string;
  /** The part's `thoughtSignature`, sent back unchanged on the same call. */
  thoughtSignature?: string;
}

/** The key of this adapter's data in `ToolCall.providerMetadata`. */
export const METADATA_KEY = "gemini";

/** @internal The API's name in error messages. */
/** The provider named by an `UnsupportedContentError` (its OpenTelemetry GenAI name). */
const CONTENT_PROVIDER = "gcp.gemini";

export const PROVIDER = "Gemini";

function metadataOf(call: ToolCall | undefined): GeminiCallMetadata {
  const metadata = providerMetadataOf(call, METADATA_KEY);
  const result: GeminiCallMetadata = {};
  if (typeof metadata?.id === "string") result.id = metadata.id;
  if (typeof metadata?.thoughtSignature === "string") result.thoughtSignature = metadata.thoughtSignature;
  return result;
}

function functionCallPart(call: ToolCall): GeminiPart {
  const { id, thoughtSignature } = metadataOf(call);
  const part: GeminiPart = {
    functionCall: { ...(id === undefined ? {} : { id }), name: call.name, args: call.arguments ?? {} },
  };
  if (thoughtSignature !== undefined) part.thoughtSignature = thoughtSignature;
  return part;
}

/**
 * How a tool's images and files reach the model: `"function-response"` in the answer's
 * `functionResponse.parts` (Gemini 3 models), `"user-message"` in one user content right after the
 * turn's answers, each tool's media introduced by a text naming its call (for models without
 * multimodal function responses).
 */
export type GeminiToolMedia = "function-response" | "user-message";

/** Options of {@link toGeminiMessages}. */
export interface GeminiMessagesOptions {
  /** Where the tools' images and files go. @default "function-response" */
  toolMedia?: GeminiToolMedia;
}

/** The image types Gemini reads (its docs list PNG, JPEG, WebP, HEIC and HEIF: not GIF). */
const IMAGE_TYPES: ReadonlySet<string> = new Set(["image/png", "image/jpeg", "image/webp"]);

/** What a multimodal function response may hold, by Gemini's docs; other media go in a user content. */
const FUNCTION_RESPONSE_TYPES: ReadonlySet<string> = new Set([...IMAGE_TYPES, "application/pdf", "text/plain"]);

/**
 * A part as Gemini takes it in a user content: text, `inlineData` for base64 images and files,
 * `fileData` for image URLs. A file's `filename` is not sent: Gemini's only name field
 * (`displayName`) is read with server-side tools only.
 * @throws UnsupportedContentError for a GIF image and an image URL without `mediaType` (`fileData`
 *   requires a `mimeType`)
 */
function userPart(part: ContentPart, messageIndex: number): GeminiPart {
  if (part.type === "text") return { text: part.text };
  if (part.type === "file") return { inlineData: { mimeType: part.mediaType, data: part.data } };
  if ("url" in part) {
    if (part.mediaType === undefined) {
      throw unsupportedContent(
        CONTENT_PROVIDER,
        part,
        messageIndex,
        "fileData needs a mimeType: give the part a mediaType",
      );
    }
    if (!IMAGE_TYPES.has(part.mediaType)) throw unsupportedImage(part, part.mediaType, messageIndex);
    return { fileData: { mimeType: part.mediaType, fileUri: part.url } };
  }
  if (!IMAGE_TYPES.has(part.mediaType)) throw unsupportedImage(part, part.mediaType, messageIndex);
  return { inlineData: { mimeType: part.mediaType, data: part.data } };
}

function unsupportedImage(part: ContentPart, mediaType: unknown, messageIndex: number) {
  // Echoed bounded: `chat` may be given parts the loop never checked.
  const shown = showValue(mediaType);
  return unsupportedContent(
    CONTENT_PROVIDER,
    part,
    messageIndex,
    `Gemini reads PNG, JPEG and WebP images, not ${shown}`,
  );
}

/** A media part a multimodal function response can hold: inline, of a type the docs list. */
function inFunctionResponse(part: ContentPart): part is Extract<ContentPart, { data: string }> {
  return "data" in part && FUNCTION_RESPONSE_TYPES.has(part.mediaType);
}

/** The state of {@link toGeminiMessages} across one turn's answers. */
interface AnswerState {
  /** Where the media go. */
  toolMedia: GeminiToolMedia;
  /** The `displayName`s given so far in the request, to keep them unique. */
  names: number;
}

/** One tool message as a `functionResponse` part, and the media it leaves for the user content. */
interface ConvertedAnswer {
  part: GeminiPart;
  rest: ContentPart[];
}

function functionResponsePart(
  message: Message,
  call: ToolCall | undefined,
  messageIndex: number,
  state: AnswerState,
): ConvertedAnswer {
  const { id } = metadataOf(call);
  const { text, media } = toolAnswerParts(message);
  const response: Record<string, unknown> = message.isError === true ? { error: text } : { output: text };
  const parts: Array<{ inlineData: GeminiBlob }> = [];
  const refs: Array<{ $ref: string }> = [];
  const rest: ContentPart[] = [];
  for (const part of media) {
    if (state.toolMedia === "function-response" && inFunctionResponse(part)) {
      // The response refers to each part by a name unique in the request, as Gemini's docs show.
      state.names++;
      const displayName = `media_${state.names}`;
      parts.push({ inlineData: { mimeType: part.mediaType, data: part.data, displayName } });
      refs.push({ $ref: displayName });
    } else {
      userPart(part, messageIndex); // refuses what Gemini cannot take anywhere, before any request
      rest.push(part);
    }
  }
  if (refs.length > 0) response.media = refs;
  const functionResponse: GeminiFunctionResponse = {
    ...(id === undefined ? {} : { id }),
    // Gemini pairs answers with calls by name (and position): use the call's own name.
    name: call?.name ?? message.toolName ?? "",
    response,
  };
  if (parts.length > 0) functionResponse.parts = parts;
  return { part: { functionResponse }, rest };
}

/** A transcript as `generateContent` takes it: the contents, and the system texts apart. */
export interface GeminiMessages {
  contents: GeminiContent[];
  /** The system messages' texts, in order, for `config.systemInstruction`. */
  system: string[];
}

/**
 * Converts a transcript to Gemini contents: system texts apart (for `systemInstruction`), user
 * messages' parts as text, `inlineData` (base64 images and files) and `fileData` (image URLs);
 * assistant turns as `model` contents of a text part and one `functionCall` part per call (with
 * the call's kept `id` and `thoughtSignature`), and all answers of a turn in one `user` content of
 * `functionResponse` parts (`{ output }`, or `{ error }` for a failed tool), named as their calls.
 * A tool's images and documents go in its `functionResponse.parts` (each referred to from
 * `response.media` as `{ $ref: displayName }`); what a function response cannot hold (an image
 * URL, audio …), or everything with `toolMedia: "user-message"`, goes in one user content right
 * after the answers, each tool's media introduced by a text naming its call.
 * @throws UnsupportedContentError for a part Gemini cannot take (a GIF image, an image URL without
 *   `mediaType`), with the index of its message in `messages`
 */
export function toGeminiMessages(messages: readonly Message[], options: GeminiMessagesOptions = {}): GeminiMessages {
  const contents: GeminiContent[] = [];
  const system: string[] = [];
  const state: AnswerState = { toolMedia: options.toolMedia ?? "function-response", names: 0 };
  let turnCalls: ReadonlyMap<string, ToolCall> = new Map();
  let answers: GeminiPart[] | undefined;
  // The turn's answers whose media could not go in their function response (content: those media).
  let leftovers: Message[] = [];

  const endTurn = () => {
    answers = undefined;
    const extra = toolMediaMessage(leftovers);
    leftovers = [];
    // Every media part was checked where its tool message was read: this cannot throw.
    if (extra !== undefined) contents.push({ role: "user", parts: extra.map((part) => userPart(part, -1)) });
  };

  messages.forEach((message, index) => {
    if (message.role !== "tool" && answers !== undefined) endTurn();
    switch (message.role) {
      case "system":
        system.push(contentText(message.content));
        break;
      case "assistant": {
        const calls = message.toolCalls ?? [];
        turnCalls = callsById(calls);
        const parts: GeminiPart[] = [];
        const text = contentText(message.content);
        if (text !== "") parts.push({ text });
        parts.push(...calls.map(functionCallPart));
        if (parts.length > 0) contents.push({ role: "model", parts });
        break;
      }
      case "tool": {
        if (answers === undefined) {
          answers = [];
          contents.push({ role: "user", parts: answers });
        }
        // `toolCallId` may be missing from a hand-made transcript: a Map finds a call without id as a search would.
        const call = turnCalls.get(message.toolCallId as string);
        const { part, rest } = functionResponsePart(message, call, index, state);
        answers.push(part);
        if (rest.length > 0) leftovers.push({ ...message, content: rest });
        break;
      }
      default: {
        const { content } = message;
        const parts = typeof content === "string" ? [{ text: content }] : content.map((part) => userPart(part, index));
        contents.push({ role: "user", parts: parts.length > 0 ? parts : [{ text: "" }] });
      }
    }
  });
  if (answers !== undefined) endTurn();
  return { contents, system };
}
