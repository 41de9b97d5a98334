import { describe, expect, it } from "vitest";
import { translatePattern } from "../../src/internal/translate-pattern.js";

describe("translatePattern: a JSON Schema pattern in RE2 syntax, with JS meaning", () => {
  it("keeps what both syntaxes share", () => {
    expect(translatePattern("^[a-z]+\\d{2}$")).toEqual({ re2: "^[a-z]+\\d{2}$", js: "^[a-z]+\\d{2}$" });
  });

  it("translates \\u escapes, \\cX, [\\b], [] and [^], \\p{Script=X}, and JS's dot", () => {
    expect(translatePattern("\\u0041").re2).toBe("\\x{41}");
    expect(translatePattern("\\cJ").re2).toBe("\\x{a}");
    expect(translatePattern("[\\b]").re2).toBe("[\\x{8}]");
    expect(translatePattern("[]").js).toBe("[]");
    expect(translatePattern("[^]").js).toBe("[^]");
    expect(translatePattern("\\p{Script=Greek}").re2).toBe("\\p{Greek}");
    expect(translatePattern("a.b").re2).toBe("a[^\\n\\r\\x{2028}\\x{2029}]b");
    expect(translatePattern("(?s)a.b").re2).toBe("(?s)a.b");
    expect(translatePattern("(?s)a.b").js).toBe("a.b");
    expect(translatePattern("[[]").re2).toBe("[\\[]");
  });

  it("says what RE2 cannot run: the first backreference or lookaround", () => {
    expect(translatePattern("(a)\\1").unsupported).toBe("a backreference (\\1)");
    expect(translatePattern("(?<n>a)\\k<n>").unsupported).toBe("a backreference (\\k<…>)");
    expect(translatePattern("a(?=b)(?<!c)").unsupported).toBe("a lookahead ((?=…)");
    expect(translatePattern("(?<!c)").unsupported).toBe("a lookbehind ((?<!…)");
    expect(translatePattern("[\\1]").unsupported).toBeUndefined();
  });
});
