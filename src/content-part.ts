import { describeType, isPlainObject } from "./internal/describe.js";

/**
 * One piece of a message's content beside text: an image (base64 or a URL) or a file (a PDF, an
 * audio clip …). Plain JSON objects, so transcripts and checkpoints stay JSON. Each adapter sends
 * them in its provider's shape, or throws an `UnsupportedContentError` for what the provider cannot
 * take (docs/adapters.md).
 */
export type ContentPart =
  | {
      /** A piece of text. */
      type: "text";
      /** The text. */
      text: string;
    }
  | {
      /** An image given inline. */
      type: "image";
      /** `image/png`, `image/jpeg`, `image/gif` or `image/webp`. */
      mediaType: string;
      /** The image's bytes, base64 (no `data:` prefix). */
      data: string;
    }
  | {
      /** An image the provider fetches. */
      type: "image";
      /** An `http:`, `https:` or `gs:` URL, at most 8,192 characters. */
      url: string;
      /** The image's media type, when known. */
      mediaType?: string;
    }
  | {
      /** A file given inline: a PDF, an audio clip (`audio/*`) … */
      type: "file";
      /** Its media type, a `type/subtype` token, e.g. `application/pdf`. */
      mediaType: string;
      /** The file's bytes, base64 (no `data:` prefix). */
      data: string;
      /** Its name, when it has one (some providers show it to the model). */
      filename?: string;
    };

/** Most parts one message may hold. */
export const MAX_CONTENT_PARTS = 1_000;

/** The media types an image part may have (the ones every adapted provider reads). */
export const IMAGE_MEDIA_TYPES: ReadonlySet<string> = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
/** A `type/subtype` token: no spaces, no line breaks, no parameters. */
const MEDIA_TYPE = /^[A-Za-z0-9][\w!#$&^.+-]*\/[A-Za-z0-9][\w!#$&^.+-]*$/;
/** A character base64 does not use (searched for, not matched whole: megabytes cost no backtracking). */
const NOT_BASE64 = /[^A-Za-z0-9+/=]/;
const URL_SCHEMES = /^(?:https?|gs):\/\/[^\s\p{Cc}]+$/iu;
const MAX_MEDIA_TYPE = 255;
const MAX_URL = 8_192;
const FILENAME = /^[^\p{Cc}]{1,255}$/u;

/** The keys each kind of part may have. */
const KEYS: Record<string, ReadonlySet<string>> = {
  text: new Set(["type", "text"]),
  imageData: new Set(["type", "mediaType", "data"]),
  imageUrl: new Set(["type", "url", "mediaType"]),
  file: new Set(["type", "mediaType", "data", "filename"]),
};

function problemOfData(data: unknown): string | undefined {
  if (typeof data !== "string") return `data must be a base64 string, got ${describeType(data)}`;
  if (data.startsWith("data:")) return "data must be base64 without a data: prefix";
  // Padded base64: a multiple of 4 characters, `=` only as the last one or two.
  const padding = data.indexOf("=");
  const padded = padding === -1 || (padding >= data.length - 2 && data.endsWith("="));
  return data.length % 4 === 0 && padded && !NOT_BASE64.test(data) ? undefined : "data is not base64";
}

function problemOfMediaType(mediaType: unknown, image: boolean): string | undefined {
  if (typeof mediaType !== "string") return `mediaType must be a string, got ${describeType(mediaType)}`;
  if (image)
    return IMAGE_MEDIA_TYPES.has(mediaType)
      ? undefined
      : "an image's mediaType must be image/png, image/jpeg, image/gif or image/webp";
  return mediaType.length <= MAX_MEDIA_TYPE && MEDIA_TYPE.test(mediaType)
    ? undefined
    : "a file's mediaType must be a type/subtype token of at most 255 characters";
}

function problemOfPart(part: Record<string, unknown>): string | undefined {
  const kind = part.type === "image" ? (part.url === undefined ? "imageData" : "imageUrl") : part.type;
  const keys = typeof kind === "string" ? KEYS[kind] : undefined;
  if (keys === undefined) return 'type must be "text", "image" or "file"';
  for (const key of Object.keys(part))
    if (!keys.has(key)) return `has an unknown key ${JSON.stringify(key.slice(0, 40))}`;
  if (kind === "text")
    return typeof part.text === "string" ? undefined : `text must be a string, got ${describeType(part.text)}`;
  if (kind === "imageUrl") {
    if (typeof part.url !== "string" || part.url.length > MAX_URL || !URL_SCHEMES.test(part.url)) {
      return "url must be an http:, https: or gs: URL of at most 8,192 characters";
    }
    return part.mediaType === undefined ? undefined : problemOfMediaType(part.mediaType, true);
  }
  const problem = problemOfMediaType(part.mediaType, kind === "imageData") ?? problemOfData(part.data);
  if (problem !== undefined || part.filename === undefined) return problem;
  return typeof part.filename === "string" && FILENAME.test(part.filename)
    ? undefined
    : "filename must be 1 to 255 characters without control characters";
}

/**
 * What is wrong with a message's content parts, as `"[<index>] <problem>"` (to follow the
 * message's name), or `undefined` when every part has one of {@link ContentPart}'s shapes;
 * `textOnly` refuses all but text parts (system and assistant messages); `max` is the most parts.
 * Given a `snapshot` array, each part is copied once as it is read, checked as copied and pushed
 * there: what a caller later sends is what was checked, whatever the owner of `parts` does next.
 */
export function contentPartsProblem(
  parts: readonly unknown[],
  textOnly = false,
  max = MAX_CONTENT_PARTS,
  snapshot?: ContentPart[],
): string | undefined {
  if (parts.length > max) return ` holds ${parts.length} parts; at most ${max} are allowed`;
  for (let index = 0; index < parts.length; index++) {
    let part = parts[index];
    // A spread reads each own property once (a getter too) and defines, never assigns, `__proto__`.
    if (snapshot !== undefined && isPlainObject(part)) part = { ...part };
    const problem = !isPlainObject(part)
      ? `must be a content part object, got ${describeType(part)}`
      : textOnly && part.type !== "text"
        ? "must be a text part: only user and tool messages may hold images and files"
        : problemOfPart(part);
    if (problem !== undefined) return `[${index}] ${problem}`;
    snapshot?.push(part as ContentPart);
  }
  return undefined;
}

/** Most parts a tool result may hold: its tool message holds one more, the result's text first. */
export const MAX_RESULT_PARTS = MAX_CONTENT_PARTS - 1;

/**
 * What is wrong with a tool result's `parts` (not an array, more than {@link MAX_RESULT_PARTS}, a
 * part of none of {@link ContentPart}'s shapes), to follow `parts`: `"[3] data is not base64"`;
 * `snapshot` as {@link contentPartsProblem}'s.
 */
export function resultPartsProblem(parts: unknown, snapshot?: ContentPart[]): string | undefined {
  if (!Array.isArray(parts)) return ` must be an array, got ${describeType(parts)}`;
  return contentPartsProblem(parts, false, MAX_RESULT_PARTS, snapshot);
}

/**
 * The text of a message's content: the string itself, or its text parts joined by a line break
 * (images and files left out); `""` for content of neither kind (a hand-made message).
 */
export function contentText(content: string | readonly ContentPart[]): string {
  if (typeof content === "string") return content;
  let text = "";
  if (!Array.isArray(content)) return text;
  for (const part of content) if (part?.type === "text") text = text === "" ? part.text : `${text}\n${part.text}`;
  return text;
}

/** The decoded size in bytes of a part's base64 `data` (0 for text and URL parts). */
export function contentPartBytes(part: ContentPart): number {
  if (!("data" in part)) return 0;
  const { data } = part;
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return (data.length / 4) * 3 - padding;
}
