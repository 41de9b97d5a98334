import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { prettyJson } from "../../src/builtin/pretty-json.js";

const live = new AbortController().signal;
const LOTS = 1_000_000_000;

/** `text` in pieces of `size` characters (the last one shorter), as a body decoded chunk by chunk. */
function split(text: string, size: number): string[] {
  const pieces: string[] = [];
  for (let at = 0; at < text.length; at += size) pieces.push(text.slice(at, at + size));
  return pieces;
}

/** prettyJson of `text` whole, and in pieces of 1, 2, 3, 5 and 7 characters: the same answer each time. */
async function pretty(text: string, max: number, signal = live) {
  const whole = await prettyJson([text], max, signal);
  for (const size of [1, 2, 3, 5, 7]) expect(await prettyJson(split(text, size), max, signal)).toEqual(whole);
  return whole;
}

describe("prettyJson", () => {
  it("lays JSON out as JSON.stringify(JSON.parse(text), null, 2) does, whatever the input's spacing (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.jsonValue(),
        fc.constantFrom(undefined, 0, 1, 4, "\t", " \r\n", "\r\n\t "),
        fc.integer({ min: 1, max: 40 }),
        async (value, indent, size) => {
          const text = JSON.stringify(value, null, indent);
          const expected = { text: JSON.stringify(value, null, 2), cut: false };
          expect(await prettyJson([text], LOTS, live)).toEqual(expected);
          expect(await prettyJson(split(text, size), LOTS, live)).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("refuses exactly what JSON.parse refuses (property)", async () => {
    const unit = fc.constantFrom(...'{}[],:"\\01-.eEtrufalsn u\t\n');
    await fc.assert(
      fc.asyncProperty(fc.string({ unit, maxLength: 16 }), fc.integer({ min: 1, max: 4 }), async (text, size) => {
        let valid = true;
        try {
          JSON.parse(text);
        } catch {
          valid = false;
        }
        expect((await prettyJson([text], LOTS, live)) !== undefined).toBe(valid);
        expect((await prettyJson(split(text, size), LOTS, live)) !== undefined).toBe(valid);
      }),
      { numRuns: 3_000 },
    );
  });

  it.each([
    "",
    " ",
    "{",
    "{not json",
    "[1,]",
    "[,1]",
    '{"a" 1}',
    '{"a":1,}',
    "{1:2}",
    "[1 2]",
    "01",
    "1.",
    "-",
    "+1",
    ".5",
    "NaN",
    "tru",
    '"abc',
    '"\\x"',
    '"\\u12g4"',
    '"a\u0001"',
    "{} x",
    "[1] [2]",
    "]",
  ])("returns undefined for invalid JSON: %j", async (text) => {
    expect(await pretty(text, LOTS)).toBeUndefined();
  });

  it("keeps numbers, escapes and keys as written (duplicates and order included)", async () => {
    const text = '{"b":1.50,"2":1e400,"2":-0,"s":"\\u0041\\/\\n","big":12345678901234567890}';
    expect(await pretty(text, LOTS)).toEqual({
      text: '{\n  "b": 1.50,\n  "2": 1e400,\n  "2": -0,\n  "s": "\\u0041\\/\\n",\n  "big": 12345678901234567890\n}',
      cut: false,
    });
  });

  it("makes at most maxChars characters, a prefix of the whole, however deep the nesting", async () => {
    const value = [[{ a: "x".repeat(50), b: [1, 2, { c: null }] }], "tail"];
    const whole = JSON.stringify(value, null, 2);
    for (let max = 0; max <= whole.length + 1; max += 7) {
      const result = await pretty(JSON.stringify(value), max);
      expect(result).toEqual({ text: whole.slice(0, max), cut: max < whole.length });
    }
    // 500 levels and 300,000 values: the whole would be 300 M characters of indentation.
    const bomb = `${"[".repeat(500)}${"1,".repeat(300_000)}1${"]".repeat(500)}`;
    const shown = await prettyJson(split(bomb, 65_536), 50_000, live);
    expect(shown?.cut).toBe(true);
    expect(shown?.text.length).toBe(50_000);
    const levels = Array.from({ length: 500 }, (_, depth) => `${" ".repeat(2 * depth)}[`).join("\n");
    expect(shown?.text).toBe(`${levels}\n${" ".repeat(1_000)}1,`.slice(0, 50_000));
  });

  it("copies a long string a slice at a time, and cuts it at maxChars", async () => {
    const long = `"${"ab\\n".repeat(100_000)}"`;
    expect(await prettyJson(split(long, 1_000), LOTS, live)).toEqual({ text: long, cut: false });
    expect(await prettyJson(split(long, 999), 1_000, live)).toEqual({ text: long.slice(0, 1_000), cut: true });
    expect(await prettyJson(split(long.slice(0, -1), 1_000), LOTS, live)).toBeUndefined();
    // A long number too, piece after piece; one cut short of its digits is not a number.
    const number = `-${"9".repeat(200_000)}.5e+${"1".repeat(1_000)}`;
    expect(await prettyJson(split(number, 4_096), LOTS, live)).toEqual({ text: number, cut: false });
    expect(await prettyJson(split(`${number.slice(0, 200_002)}`, 4_096), LOTS, live)).toBeUndefined();
    expect(await prettyJson(split(number, 4_096), 10, live)).toEqual({ text: number.slice(0, 10), cut: true });
  });

  it("lets the event loop turn between slices of a long text, and stops when the signal aborts", async () => {
    // 4 M characters of whitespace inside an array: read, none written.
    const text = `[${" ".repeat(4_000_000)}1]`;
    let turns = 0;
    let ticking = true;
    const tick = () => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const result = await prettyJson(split(text, 65_536), LOTS, live);
    ticking = false;
    expect(result).toEqual({ text: "[\n  1\n]", cut: false });
    // One slice is 65,536 characters: 4 M take 61 slices, with a turn of the loop after each.
    expect(turns).toBeGreaterThanOrEqual(50);
    const stop = new Error("stop");
    await expect(prettyJson([text], LOTS, AbortSignal.abort(stop))).rejects.toBe(stop);
    // A text done in one slice never waits for a turn (nor looks at the signal).
    expect(await prettyJson(["[1]"], LOTS, AbortSignal.abort(stop))).toEqual({ text: "[\n  1\n]", cut: false });
  });
});
