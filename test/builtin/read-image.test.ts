import { describe, expect, it } from "vitest";
import { imageMediaType } from "../../src/builtin/read-image.js";
import { TINY_IMAGES } from "../helpers/tiny-images.js";

describe("imageMediaType", () => {
  it.each(Object.values(TINY_IMAGES))("tells $mediaType by its first bytes", ({ mediaType, data }) => {
    expect(imageMediaType(Buffer.from(data, "base64"))).toBe(mediaType);
  });

  it.each([
    ["GIF87a", Buffer.from("GIF87a\x01\0\x01\0", "latin1"), "image/gif"],
    ["a WAV (RIFF, not WEBP)", Buffer.from("RIFF$\0\0\0WAVEfmt ", "latin1"), undefined],
    ["a PNG signature cut short", Buffer.from([0x89, 0x50, 0x4e, 0x47]), undefined],
    ["text", Buffer.from("\u0089PNG as text"), undefined],
    ["nothing", Buffer.alloc(0), undefined],
  ])("%s", (_, bytes, expected) => {
    expect(imageMediaType(bytes)).toBe(expected);
  });
});
