import { describe, expect, it } from "vitest";
import { compileLinearPattern, linearRegExp } from "../../src/internal/linear-regexp.js";
import { dfaBytes, fitDfa, limitDfa, trimDfa } from "../../src/internal/re2-dfa.js";
import { retainedBytes } from "../helpers/heap.js";
import { thrashingText as letters, THRASHING_PATTERN as THRASHING } from "../helpers/thrashing-text.js";

describe("fitDfa", () => {
  it("keeps the DFA for a pattern whose states fit, within the given bytes", () => {
    const regex = compileLinearPattern("file", "iu");
    expect(fitDfa(regex, 2 ** 0 + 5, 5, 1_000_000)).toBe(true);
    expect(regex.test(`${letters(4_000)} a FILE`)).toBe(true);
    expect(dfaBytes(regex)).toBeGreaterThan(0);
    expect(dfaBytes(regex)).toBeLessThanOrEqual(1_000_000);
  });

  it("switches the DFA off for a pattern with many classes of characters, which then builds no DFA state", () => {
    const regex = compileLinearPattern(THRASHING, "iu");
    expect(fitDfa(regex, 2 ** 12 + 16, 16, 2 * 1024 * 1024)).toBe(false);
    expect(regex.test(letters(4_000))).toBe(false);
    expect(regex.test(`${letters(100)}a0123456789ß#`)).toBe(true);
    expect(dfaBytes(regex)).toBe(0);
  });

  it("leaves alone a pattern re2js matches without a DFA (a literal, a one-pass anchored pattern): one step per character", () => {
    for (const [pattern, flags] of [
      ["123", "iu"],
      ["^mcp_.*$", "iu"],
    ]) {
      const regex = compileLinearPattern(pattern as string, flags as string);
      expect(fitDfa(regex, 2 ** 40, 10, 1_000)).toBe(true);
      limitDfa(regex, 1_000);
      expect(regex.test("mcp_x 123")).toBe(true);
      expect(dfaBytes(regex)).toBe(0);
    }
  });

  it("also for few classes but too many states", () => {
    const regex = compileLinearPattern("a.{40}b", "iu");
    expect(fitDfa(regex, 2 ** 41, 44, 2 * 1024 * 1024)).toBe(false);
    expect(regex.test(`a${"x".repeat(40)}b`)).toBe(true);
    expect(dfaBytes(regex)).toBe(0);
  });
});

describe("limitDfa", () => {
  it("bounds what the DFA builds while it matches", () => {
    const regex = compileLinearPattern(THRASHING, "u");
    limitDfa(regex, 256 * 1024);
    expect(regex.test(letters(2_000))).toBe(false);
    expect(dfaBytes(regex)).toBeGreaterThan(0);
    expect(dfaBytes(regex)).toBeLessThanOrEqual(256 * 1024);
  });
});

describe("trimDfa", () => {
  it("clears a DFA holding more than it may keep, and leaves a small one", () => {
    const big = compileLinearPattern(THRASHING, "u");
    big.test(letters(1_000));
    expect(dfaBytes(big)).toBeGreaterThan(256 * 1024);
    trimDfa(big, 64 * 1024);
    expect(dfaBytes(big)).toBe(0);
    expect(big.test(`${letters(50)}a0123456789x#`)).toBe(true);

    const small = compileLinearPattern("[a-z]+@[a-z]+", "u");
    small.test("write to someone@example or not");
    const kept = dfaBytes(small);
    expect(kept).toBeGreaterThan(0);
    trimDfa(small, 64 * 1024);
    expect(dfaBytes(small)).toBe(kept);
  });
});

describe("schema patterns (linearRegExp) keep little DFA between matches", () => {
  it("20 patterns a hostile MCP server's schemas carry, each matched against model text, keep under 8 MB in all", async () => {
    // Before: each kept its DFA (up to 8 MB) in its validator and in the pattern cache: ~160 MB here.
    const retained = await retainedBytes((keep) => {
      for (let index = 0; index < 20; index++) {
        // Distinct patterns (one more character in the class each), which the text still needs.
        const pattern = linearRegExp(THRASHING.replace("]", `${String.fromCharCode(0x100 + index)}]`), "u");
        keep.push(pattern);
        expect(pattern.test(letters(2_000, index + 1))).toBe(false);
      }
    });
    expect(retained).toBeLessThan(8 * 1024 * 1024);
  });
});
