import { describe, expect, it } from "vitest";
import type { ContentPart } from "../../src/content-part.js";
import { errorResult, newToolResult } from "../../src/index.js";
import { cutContent, cutResult, MIN_RESULT_CHARS, RepeatedFailures } from "../../src/internal/loop-policies.js";

describe("cutResult (maxResultChars)", () => {
  it.each([
    ["shorter than the limit", "abc", 10, "abc"],
    ["exactly the limit", "abcdefghij", 10, "abcdefghij"],
    [
      "longer: the start, then the marker, within the limit",
      "x".repeat(100),
      40,
      `${"x".repeat(17)}\n[… 83 characters cut]`,
    ],
    // runToolLoop refuses a maxResultChars below MIN_RESULT_CHARS, so this never reaches a transcript.
    ["a limit smaller than the marker: the marker alone", "x".repeat(100), 5, "\n[… 100 characters cut]"],
  ])("%s", (_case, text, max, expected) => {
    expect(cutResult(text, max)).toBe(expected);
  });

  it("never splits a surrogate pair, wherever the cut falls", () => {
    const text = "😀".repeat(60);
    for (let max = 23; max < 120; max++) {
      const cut = cutResult(text, max);
      expect(cut.length).toBeLessThanOrEqual(max);
      const kept = cut.slice(0, cut.indexOf("\n[…"));
      expect(kept).toBe("😀".repeat(kept.length / 2));
      expect(cut).toMatch(new RegExp(`\\[… ${text.length - kept.length} characters cut\\]$`));
    }
  });
});

describe("MIN_RESULT_CHARS", () => {
  it("leaves room for the largest marker and, after it, the largest repeated-failure note", () => {
    const marker = `\n[… ${Number.MAX_SAFE_INTEGER} characters cut]`;
    const failures = new RepeatedFailures(1);
    const note = failures.record("t", errorResult("x"), "x") ?? "";
    const largestNote = note.replace("1", String(Number.MAX_SAFE_INTEGER));
    expect(marker.length + largestNote.length).toBeLessThanOrEqual(MIN_RESULT_CHARS);
    const text = "x".repeat(100_000);
    expect(cutResult(text, MIN_RESULT_CHARS - largestNote.length).length).toBeLessThanOrEqual(
      MIN_RESULT_CHARS - largestNote.length,
    );
  });
});

describe("RepeatedFailures (maxRepeatedFailures)", () => {
  it("counts the same error of the same tool in a row; a success or another error starts over", () => {
    const failures = new RepeatedFailures(3);
    const fail = errorResult("boom");
    expect(failures.record("t", fail, "boom")).toBeUndefined();
    expect(failures.record("other", fail, "boom")).toBeUndefined(); // another tool does not break t's row
    expect(failures.record("t", fail, "boom")).toBeUndefined();
    expect(failures.record("t", newToolResult("ok"), "ok")).toBeUndefined();
    expect(failures.record("t", fail, "boom")).toBeUndefined();
    expect(failures.record("t", fail, "other error")).toBeUndefined();
    expect(failures.record("t", fail, "other error")).toBeUndefined();
    expect(failures.record("t", fail, "other error")).toMatchInlineSnapshot(`
      "

      [This call failed 3 times in a row with the same error. Stop retrying it.]"
    `);
  });

  it("the loop's content names the tool and the (bounded) error", () => {
    expect(RepeatedFailures.content("read_file", "no such file", 3)).toMatchInlineSnapshot(
      `"stopped: tool "read_file" failed 3 times in a row with the same error: no such file"`,
    );
    expect(RepeatedFailures.content("t", "e".repeat(100_000), 3).length).toBeLessThan(1_200);
  });
});

describe("cutContent (maxResultChars on text or parts)", () => {
  const png: ContentPart = { type: "image", mediaType: "image/png", data: "iVBORw0KGgo=" };
  const text = (value: string): ContentPart => ({ type: "text", text: value });

  it("a string: cut as cutResult does, leaving room for the note after it", () => {
    expect(cutContent("x".repeat(100), 60, "!".repeat(20))).toBe(`${cutResult("x".repeat(100), 40)}${"!".repeat(20)}`);
    expect(cutContent("abc", undefined, "!")).toBe("abc!");
  });

  it("parts within the limit are the same parts; the note goes after the first text", () => {
    const parts = [text("abc"), png, text("def")];
    expect(cutContent(parts, 100)).toEqual(parts);
    const noted = cutContent(parts, undefined, " (note)") as ContentPart[];
    expect(noted).toEqual([text("abc (note)"), png, text("def")]);
    expect(noted[1]).toBe(png);
    expect(parts[0]).toEqual(text("abc")); // the parts given are never changed
  });

  it("the text parts share the budget in order: the one that overflows is cut, later ones are their marker alone; images kept", () => {
    const parts = [text("a".repeat(30)), png, text("b".repeat(100)), png, text("c".repeat(50))];
    const cut = cutContent(parts, 80) as ContentPart[];
    expect(cut[0]).toBe(parts[0]);
    expect(cut[1]).toBe(png);
    expect(cut[2]).toEqual(text(cutResult("b".repeat(100), 50)));
    expect(cut[3]).toBe(png);
    expect(cut[4]).toEqual(text("\n[… 50 characters cut]"));
  });

  it("with a note, text and note together stay within the limit", () => {
    const note = "\n\n[This call failed 2 times in a row with the same error. Stop retrying it.]";
    const cut = cutContent([text("e".repeat(5_000)), png], MIN_RESULT_CHARS, note) as ContentPart[];
    const first = cut[0] as { text: string };
    expect(first.text.length).toBeLessThanOrEqual(MIN_RESULT_CHARS);
    expect(first.text.endsWith(note)).toBe(true);
    expect(cut[1]).toBe(png);
  });
});
