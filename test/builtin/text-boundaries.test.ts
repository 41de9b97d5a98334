import { describe, expect, it } from "vitest";
import { fitUtf8, splitCharacter } from "../../src/builtin/text-boundaries.js";

const bytes = (...values: number[]) => Uint8Array.from(values);
const decode = (data: Uint8Array) => new TextDecoder().decode(data);

describe("splitCharacter", () => {
  it("finds the character a position splits: its lead and its end", () => {
    // "a😀b": the emoji is bytes 1–4.
    const text = bytes(0x61, 0xf0, 0x9f, 0x98, 0x80, 0x62);
    expect(splitCharacter(text, 2)).toEqual({ start: 1, end: 5 });
    expect(splitCharacter(text, 4)).toEqual({ start: 1, end: 5 });
    expect(splitCharacter(text, 1)).toBeUndefined();
    expect(splitCharacter(text, 5)).toBeUndefined();
  });

  it("splits nothing where the decoder reads the bytes as separate replacement characters", () => {
    // E0 80, ED A0 (a surrogate), F0 80 (overlong), F4 90 (past U+10FFFF), C0 80: each byte on its own.
    for (const [lead, next] of [
      [0xe0, 0x80],
      [0xed, 0xa0],
      [0xf0, 0x80],
      [0xf4, 0x90],
      [0xc0, 0x80],
    ] as const) {
      const data = bytes(lead, next, 0x61);
      expect(splitCharacter(data, 1)).toBeUndefined();
      expect(decode(data.subarray(0, 1)) + decode(data.subarray(1))).toBe(decode(data));
    }
  });

  it("ends a cut sequence where the decoder ends it (F0 9F then 80 E0: one replacement character for F0 9F 80)", () => {
    const data = bytes(0xf0, 0x9f, 0x80, 0xe0, 0x80);
    expect(splitCharacter(data, 2)).toEqual({ start: 0, end: 3 });
    expect(splitCharacter(data, 4)).toBeUndefined();
  });

  it("reads a character cut by the end of the bytes as far as its lead says", () => {
    expect(splitCharacter(bytes(0xf0, 0x9f), 1)).toEqual({ start: 0, end: 4 });
    expect(splitCharacter(bytes(0xf0, 0x9f, 0x98), 1)).toEqual({ start: 0, end: 4 });
  });

  it("decodes, at every position a split is not reported, to the same text in two parts as whole", () => {
    const data = bytes(0xe0, 0x80, 0xf0, 0x9f, 0x98, 0x80, 0xf0, 0x9f, 0x80, 0xe0, 0x80, 0xed, 0xa0, 0x80, 0xc3, 0xa9);
    for (let at = 1; at < data.length; at++) {
      const split = splitCharacter(data, at);
      const cut = split === undefined ? at : split.start;
      expect(decode(data.subarray(0, cut)) + decode(data.subarray(cut))).toBe(decode(data));
    }
  });
});

describe("fitUtf8", () => {
  it("takes the longest start whose decoded text fits the room", () => {
    const data = bytes(0x61, 0xc3, 0xa9, 0x62);
    expect(fitUtf8(data, 3)).toEqual({ text: "aé", taken: 3 });
    expect(fitUtf8(data, 2)).toEqual({ text: "a", taken: 1 });
  });
});
