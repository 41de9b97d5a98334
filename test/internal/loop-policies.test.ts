import { describe, expect, it } from "vitest";
import { errorResult, newToolResult } from "../../src/index.js";
import { cutResult, MIN_RESULT_CHARS, RepeatedFailures } from "../../src/internal/loop-policies.js";

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
