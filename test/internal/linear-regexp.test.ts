import { describe, expect, it } from "vitest";
import {
  compileLinearPattern,
  endPatternWork,
  linearRegExp,
  PATTERN_WORK_EXCEEDED,
  startPatternWork,
} from "../../src/internal/linear-regexp.js";

describe("linearRegExp: schema patterns on RE2", () => {
  it("refuses a pattern whose program would be huge, before RE2 builds it (it also guards the tool search)", () => {
    const words = Array.from({ length: 100 }, (_, index) => `w${index}`.padEnd(10, "z")).join("|");
    expect(() => linearRegExp(`(?:${words}){1,1000}`, "u")).toThrow(
      /^pattern "\(\?:w0zz.*" is too large for toolloop's linear-time engine \(RE2, which has no backreferences, lookahead or lookbehind\): it would compile to about 1103000 instructions, at most 5000 \(use fewer or smaller counted repetitions\)$/,
    );
    expect(linearRegExp("^[a-z]{1,1000}$", "u").test("abc")).toBe(true);
  });

  it("is cached by pattern and flags, named by them, and case-insensitive with i", () => {
    expect(linearRegExp("^ab$", "u")).toBe(linearRegExp("^ab$", "u"));
    expect(String(linearRegExp("^ab$", "u"))).toBe("re2:u:^ab$");
    expect(linearRegExp("^ab$", "iu").test("AB")).toBe(true);
    expect(linearRegExp("^ab$", "u").test("AB")).toBe(false);
  });

  it("counts the steps of matching within a validation's budget only", () => {
    const regExp = linearRegExp("[a-e]{1,1000}$", "u");
    const text = `${"ab".repeat(5_000)}!`;
    expect(regExp.test(text)).toBe(false);
    startPatternWork();
    try {
      expect(() => regExp.test(text)).toThrow();
      let thrown: unknown;
      try {
        regExp.test(text);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBe(PATTERN_WORK_EXCEEDED);
    } finally {
      endPatternWork();
    }
    expect(regExp.test(text)).toBe(false);
  });

  it("compileLinearPattern refuses what RE2 cannot run, saying why, and a program over its size", () => {
    expect(() => compileLinearPattern("(a)\\1", "u")).toThrow(
      /cannot run on toolloop's linear-time engine.*: it has a backreference \(\\1\)/,
    );
    expect(() => compileLinearPattern("(", "u")).toThrow(/is not a valid regular expression/);
    expect(() => compileLinearPattern("a{100}", "u", 50)).toThrow(/at most 50/);
    expect(compileLinearPattern("^a{100}$", "u").matches("a".repeat(100))).toBe(true);
  });
});
