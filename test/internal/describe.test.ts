import { describe, expect, it } from "vitest";
import {
  boundText,
  cutId,
  describeType,
  errorMessage,
  isHighSurrogate,
  isLowSurrogate,
  jsonText,
  showValue,
  wholeEnd,
} from "../../src/internal/describe.js";

describe("wholeEnd and the surrogate checks", () => {
  it("moves an end that would split a surrogate pair back by one, and leaves every other end", () => {
    const text = "a😀b"; // a, high, low, b
    expect([0, 1, 2, 3, 4].map((end) => wholeEnd(text, end))).toEqual([0, 1, 1, 3, 4]);
    expect(isHighSurrogate(text.charCodeAt(1))).toBe(true);
    expect(isLowSurrogate(text.charCodeAt(2))).toBe(true);
    expect(isHighSurrogate(text.charCodeAt(2)) || isLowSurrogate(text.charCodeAt(0))).toBe(false);
  });
});

describe("boundText", () => {
  it("keeps short text and cuts long text to the bound, saying how much was cut", () => {
    expect(boundText("short", 10)).toBe("short");
    const cut = boundText("x".repeat(10_000), 100);
    expect(cut.length).toBeLessThanOrEqual(100);
    expect(cut).toMatch(/^x+ … \[\d+ more characters cut\]$/);
    const kept = cut.indexOf(" …");
    expect(cut).toContain(`[${10_000 - kept} more characters cut]`);
  });

  it("never ends on half a surrogate pair", () => {
    const cut = boundText("😀".repeat(1_000), 100); // 71 code units would end inside a pair
    // A lone high surrogate before the marker would be ill-formed text.
    expect(cut).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
    expect(cut.startsWith("😀")).toBe(true);
  });
});

describe("describeType", () => {
  it.each([
    [null, "null"],
    [[1], "array"],
    [{}, "object"],
    [Object.create(null), "object"],
    [new Date(0), "Date"],
    [new (class Query {})(), "Query"],
    [
      new Proxy(
        {},
        {
          getPrototypeOf: () => {
            throw new Error("trap");
          },
        },
      ),
      "an object with a throwing prototype",
    ],
    ["s", "string"],
    [1n, "bigint"],
  ])("a value described as %#", (value, expected) => {
    expect(describeType(value)).toBe(expected);
  });
});

describe("showValue", () => {
  it("echoes numbers as they are, other values as bounded JSON, and never throws", () => {
    expect(showValue(Number.NaN)).toBe("NaN");
    expect(showValue("a")).toBe('"a"');
    expect(showValue(undefined)).toBe("undefined");
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(showValue(cyclic)).toBe("object");
    expect(showValue("x".repeat(10_000)).length).toBeLessThanOrEqual(200);
    expect(showValue(10n)).toBe("10");
  });
});

describe("jsonText", () => {
  it("is the JSON text, or undefined for a value without one, and never throws", () => {
    expect(jsonText({ a: [1, "b"] })).toBe('{"a":[1,"b"]}');
    expect(jsonText(undefined)).toBeUndefined();
    expect(jsonText(() => 1)).toBeUndefined();
    expect(jsonText(1n)).toBeUndefined();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(jsonText(cyclic)).toBeUndefined();
    expect(
      jsonText({
        toJSON() {
          throw new Error("no");
        },
      }),
    ).toBeUndefined();
  });
});

describe("errorMessage", () => {
  it.each([
    ["an Error", new RangeError("out of range"), "out of range"],
    ["a string", "plain", "plain"],
    ["a number", 42, "42"],
    ["undefined", undefined, "undefined"],
    ["an object (never serialised)", { token: "secret" }, "threw a non-Error value: object"],
    ["an array", ["secret"], "threw a non-Error value: array"],
    ["a boolean", false, "threw a non-Error value: boolean"],
    ["a symbol", Symbol("s"), "threw a non-Error value: symbol"],
    ["an Error whose message is not a string", Object.assign(new Error(), { message: 7 }), "Error without a message"],
    [
      "an Error whose message getter throws",
      Object.defineProperty(new Error(), "message", {
        get() {
          throw new Error("no");
        },
      }),
      "threw an error whose message cannot be read",
    ],
  ])("%s", (_case, value, expected) => {
    expect(errorMessage(value)).toBe(expected);
  });

  it("is bounded", () => {
    expect(errorMessage("x".repeat(100_000)).length).toBeLessThanOrEqual(4_000);
  });
});

describe("cutId", () => {
  it("keeps a short id and undefined as they are, and cuts a 1 MB id", () => {
    expect(cutId("call_1")).toBe("call_1");
    expect(cutId(undefined)).toBeUndefined();
    const cut = cutId("x".repeat(1_000_000)) as string;
    expect(cut.length).toBeLessThan(300);
    expect(cut.endsWith("…")).toBe(true);
  });
});
