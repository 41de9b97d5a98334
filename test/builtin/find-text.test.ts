import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { findText, SEARCH_SLICE } from "../../src/builtin/find-text.js";

/** Runs a search with a slice of `slice` comparisons, counting the pauses (the slices of work done). */
async function counted(text: string, needle: string, from = 0, slice = 1_000) {
  let pauses = 0;
  const index = await findText(text, needle, from, {
    slice,
    pause: async () => {
      pauses++;
    },
  });
  return { index, pauses };
}

describe("findText", () => {
  it("finds what String#indexOf finds (property: small alphabets, surrogates, every slice size)", async () => {
    const unit = fc.constantFrom("a", "b", "c", "\ud83d", "\ude00");
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit, maxLength: 40 }),
        fc.string({ unit, minLength: 1, maxLength: 10 }),
        fc.integer({ min: -2, max: 45 }),
        fc.integer({ min: 1, max: 9 }),
        async (text, needle, from, slice) => {
          expect((await counted(text, needle, from, slice)).index).toBe(text.indexOf(needle, Math.max(0, from)));
        },
      ),
      { numRuns: 3_000 },
    );
  });

  it.each([
    ["periodic", "abaabaabaab", "abaabaabaabaabaab"],
    ["one letter", "aaaa", "aaaaaaaa"],
    ["at the end", "needle", `${"x".repeat(100)}needle`],
    ["at the start", "ne", "needle"],
    ["the whole text", "abc", "abc"],
    ["longer than the text", "abcd", "abc"],
  ])("finds a needle: %s", async (_, needle, text) => {
    for (const slice of [1, 2, 3, 1_000]) {
      expect((await counted(text, needle, 0, slice)).index).toBe(text.indexOf(needle));
    }
  });

  it("returns the start for an empty needle, and -1 past the end", async () => {
    expect(await findText("abc", "", 2)).toBe(2);
    expect(await findText("abc", "", 4)).toBe(-1);
    expect(await findText("abc", "c", 3)).toBe(-1);
  });

  it.each([
    // The input that held edit_file's event loop 15.8 s with String#indexOf, and its variants.
    ["a needle that differs near its start", (m: number) => `ab${"a".repeat(m - 2)}`, -1],
    ["a needle that differs in its middle", (m: number) => `${"a".repeat(m >> 1)}b${"a".repeat(m - (m >> 1) - 1)}`, -1],
    [
      "a needle that differs 300 characters before its end",
      (m: number) => `${"a".repeat(m - 300)}b${"a".repeat(299)}`,
      -1,
    ],
    ["a needle that differs at its end", (m: number) => `${"a".repeat(m - 1)}b`, -1],
    ["a needle that matches", (m: number) => "a".repeat(m), 0],
  ])("bounds its work by the lengths, not their product: %s", async (_, needle, expected) => {
    // 256 K characters and a 20,000-character needle: String#indexOf makes up to 5 G comparisons
    // of the first (it took seconds, so the answers are given, not asked of it).
    const n = 1 << 18;
    const m = 20_000;
    const text = "a".repeat(n);
    const { index, pauses } = await counted(text, needle(m));
    expect(index).toBe(expected);
    // At most 2 comparisons per character of the text and 4 per character of the needle.
    expect(pauses).toBeLessThanOrEqual(Math.ceil((2 * n + 4 * m) / 1_000) + 2);
  });

  it("pauses inside one long comparison too (a needle as long as the text)", async () => {
    const text = "a".repeat(100_000);
    const { index, pauses } = await counted(text, `${"a".repeat(99_999)}b`, 0, 10_000);
    expect(index).toBe(-1);
    expect(pauses).toBeGreaterThanOrEqual(10);
  });

  it("stops when the pause rejects (an abort), and pauses with a turn of the event loop by default", async () => {
    const text = "a".repeat(SEARCH_SLICE * 2);
    const needle = `ab${"a".repeat(998)}`;
    let pauses = 0;
    const stopped = findText(text, needle, 0, {
      pause: async () => {
        pauses++;
        throw new Error("aborted");
      },
    });
    await expect(stopped).rejects.toThrow("aborted");
    expect(pauses).toBe(1);
    // With the default pause, other callbacks run between slices.
    let turns = 0;
    let searching = true;
    const tick = () => {
      turns++;
      if (searching) setImmediate(tick);
    };
    setImmediate(tick);
    try {
      expect(await findText(text, needle)).toBe(-1);
    } finally {
      searching = false;
    }
    expect(turns).toBeGreaterThan(0);
  });
});
