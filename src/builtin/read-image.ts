import type { FileHandle } from "node:fs/promises";
import { quoteName } from "../internal/describe.js";
import { errorResult, mediaResult, type ToolResult } from "../tool-result.js";

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const JPEG = [0xff, 0xd8, 0xff];
const GIF87A = [...Buffer.from("GIF87a")];
const GIF89A = [...Buffer.from("GIF89a")];
const RIFF = [...Buffer.from("RIFF")];
const WEBP = [...Buffer.from("WEBP")];

function startsWith(bytes: Uint8Array, signature: readonly number[], at = 0): boolean {
  return signature.every((byte, index) => bytes[at + index] === byte);
}

/**
 * The media type of an image a content part may hold, told by the file's first bytes (its magic
 * number, never its name): `image/png`, `image/jpeg`, `image/gif` or `image/webp`; `undefined` for
 * anything else.
 */
export function imageMediaType(bytes: Uint8Array): string | undefined {
  if (startsWith(bytes, PNG)) return "image/png";
  if (startsWith(bytes, JPEG)) return "image/jpeg";
  if (startsWith(bytes, GIF87A) || startsWith(bytes, GIF89A)) return "image/gif";
  if (startsWith(bytes, RIFF) && startsWith(bytes, WEBP, 8)) return "image/webp";
  return undefined;
}

/** Reads `[0, length)` of the file, or less when it ends sooner; the bytes read. */
async function readStart(handle: FileHandle, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await handle.read(buffer, filled, length - filled, filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}

/**
 * `read_file`'s answer for a PNG, JPEG, GIF or WebP (told by `first`, the file's first bytes as
 * read) of `size` bytes: the image as a part of a {@link mediaResult} whose text names the path,
 * type and size, when it is at most `maxBytes` bytes; an error result saying so when it is larger
 * (a model cannot read an image as lines of text). `undefined` for a file that is no such image:
 * it is read as text.
 */
export async function readImage(
  handle: FileHandle,
  shown: string,
  first: Buffer,
  size: number,
  maxBytes: number,
): Promise<ToolResult | undefined> {
  const mediaType = imageMediaType(first);
  if (mediaType === undefined) return undefined;
  if (size > maxBytes) {
    return errorResult(
      `${quoteName(shown)} is an image (${mediaType}, ${size} bytes) over the ${maxBytes} bytes read_file returns per call`,
    );
  }
  // Usually the first chunk held it all; else it is read again in full, and judged on what is returned.
  const bytes = first.length >= size ? first.subarray(0, size) : await readStart(handle, size);
  if (imageMediaType(bytes) !== mediaType) return undefined;
  return mediaResult(`Image ${quoteName(shown)} (${mediaType}, ${bytes.length} bytes), attached.`, [
    { type: "image", mediaType, data: bytes.toString("base64") },
  ]);
}
