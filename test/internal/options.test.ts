import { describe, expect, it } from "vitest";
import {
  checkCount,
  checkMetadata,
  checkProvider,
  checkSignal,
  checkString,
  isAbortSignal,
  isStringArray,
  optionError,
} from "../../src/internal/options.js";

/** An object with an AbortSignal's surface that is no instance of this realm's AbortSignal. */
function foreignSignal(aborted = false) {
  return { aborted, reason: undefined, addEventListener() {}, removeEventListener() {} };
}

describe("optionError", () => {
  it("is a TypeError worded `<where>: <option> must be <expected>, got <value>`", () => {
    const error = optionError("runToolLoop", "maxIterations", "an integer ≥ 0", -1);
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toBe("runToolLoop: maxIterations must be an integer ≥ 0, got -1");
  });

  it.each([
    ["a string as JSON", "ten", '"ten"'],
    ["a number as it is", 1.5, "1.5"],
    ["NaN as NaN (not JSON's null)", Number.NaN, "NaN"],
    ["Infinity", Number.NEGATIVE_INFINITY, "-Infinity"],
    ["undefined", undefined, "undefined"],
    ["null", null, "null"],
    ["a boolean", false, "false"],
    ["an array as JSON", [1, "a"], '[1,"a"]'],
    ["a plain object as JSON", { level: "x" }, '{"level":"x"}'],
    ["a null-prototype object as JSON", Object.assign(Object.create(null), { a: 1 }), '{"a":1}'],
    ["a BigInt by its text", 10n, "10"],
    ["a symbol by its text", Symbol("s"), "Symbol(s)"],
  ])("echoes %s", (_case, value, shown) => {
    expect(optionError("f", "x", "y", value).message).toBe(`f: x must be y, got ${shown}`);
  });

  it("a plain object without a JSON form is named by its type", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(optionError("f", "x", "y", cyclic).message).toBe("f: x must be y, got object");
  });

  it("bounds the echo of a long value", () => {
    const message = optionError("f", "x", "y", "v".repeat(100_000)).message;
    expect(message.length).toBeLessThan(300);
    expect(message).toMatch(/^f: x must be y, got "v+ … \[\d+ more characters cut\]$/);
  });

  it.each([
    ["a Date", new Date(0), "Date"],
    ["a Map", new Map([["k", "v"]]), "Map"],
    ["an Error", new Error("secret message"), "Error"],
    ["an AbortController", new AbortController(), "AbortController"],
    [
      "an instance of a user class",
      new (class ApiClient {
        apiKey = "sk-secret";
      })(),
      "ApiClient",
    ],
  ])("names %s by its class, never printing its contents", (_case, value, name) => {
    const message = optionError("f", "x", "y", value).message;
    expect(message).toBe(`f: x must be y, got ${name}`);
    expect(message).not.toContain("secret");
    expect(message).not.toContain("1970");
  });

  it.each([
    [
      "a function",
      function withSecret() {
        return "sk-secret";
      },
    ],
    ["an arrow function", () => "sk-secret"],
    [
      "a class",
      class Secret {
        key = "sk-secret";
      },
    ],
  ])("names %s by its type, never printing its source", (_case, value) => {
    const message = optionError("f", "x", "y", value).message;
    expect(message).toBe("f: x must be y, got function");
    expect(message).not.toContain("secret");
  });
});

describe("isAbortSignal", () => {
  it("accepts an AbortSignal, aborted or not", () => {
    expect(isAbortSignal(new AbortController().signal)).toBe(true);
    expect(isAbortSignal(AbortSignal.abort())).toBe(true);
  });

  it("accepts a signal of another realm or a polyfill: the same surface without being an instance", () => {
    const signal = foreignSignal();
    expect(signal instanceof AbortSignal).toBe(false);
    expect(isAbortSignal(signal)).toBe(true);
    expect(isAbortSignal(foreignSignal(true))).toBe(true);
  });

  it.each([
    ["undefined", undefined],
    ["null", null],
    ["a string", "signal"],
    ["a function", () => {}],
    ["an AbortController", new AbortController()],
    ["an object without addEventListener", { aborted: false, removeEventListener() {} }],
    ["an object without removeEventListener", { aborted: false, addEventListener() {} }],
    ["an object whose aborted is no boolean", { ...foreignSignal(), aborted: "no" }],
    ["an EventTarget", new EventTarget()],
  ])("refuses %s", (_case, value) => {
    expect(isAbortSignal(value)).toBe(false);
  });
});

describe("checkSignal", () => {
  it("returns the signal, a foreign one included, and undefined for none", () => {
    const signal = new AbortController().signal;
    const foreign = foreignSignal();
    expect(checkSignal("f", "signal", signal)).toBe(signal);
    expect(checkSignal("f", "signal", foreign)).toBe(foreign);
    expect(checkSignal("f", "signal", undefined)).toBeUndefined();
  });

  it.each([
    [null, "null"],
    [{}, "{}"],
    [new AbortController(), "AbortController"],
    [true, "true"],
  ])("anything else is the option TypeError: %j", (value, shown) => {
    expect(() => checkSignal("runToolLoop", "options.signal", value)).toThrow(
      new TypeError(`runToolLoop: options.signal must be an AbortSignal, got ${shown}`),
    );
  });
});

describe("checkMetadata", () => {
  it("returns the object itself when every value is a string, and undefined for none", () => {
    const metadata = { user: "u1", "x-trace": "" };
    expect(checkMetadata("f", "metadata", metadata)).toBe(metadata);
    const bare = Object.assign(Object.create(null), { a: "b" });
    expect(checkMetadata("f", "metadata", bare)).toBe(bare);
    expect(checkMetadata("f", "metadata", {})).toEqual({});
    expect(checkMetadata("f", "metadata", undefined)).toBeUndefined();
  });

  it.each([
    [null, "null"],
    ["user=u1", '"user=u1"'],
    [["u1"], '["u1"]'],
    [new Map([["user", "u1"]]), "Map"],
  ])("a value that is no plain object is the option TypeError: %j", (value, shown) => {
    expect(() => checkMetadata("executeWithContext", "metadata", value)).toThrow(
      new TypeError(`executeWithContext: metadata must be an object of strings, got ${shown}`),
    );
  });

  it("a value that is no string is a TypeError naming its key (JSON-quoted)", () => {
    expect(() => checkMetadata("f", "metadata", { ok: "1", count: 2 })).toThrow(
      new TypeError('f: metadata["count"] must be a string, got 2'),
    );
    expect(() => checkMetadata("f", "metadata", { 'a"b': null })).toThrow(
      new TypeError('f: metadata["a\\"b"] must be a string, got null'),
    );
  });
});

describe("checkString", () => {
  it("returns a string, the empty one included, and undefined for none", () => {
    expect(checkString("f", "toolCallId", "call_1")).toBe("call_1");
    expect(checkString("f", "toolCallId", "")).toBe("");
    expect(checkString("f", "toolCallId", undefined)).toBeUndefined();
  });

  it.each([
    [1, "1"],
    [null, "null"],
    [{ id: "a" }, '{"id":"a"}'],
    [new String("a"), "String"],
  ])("anything else is the option TypeError: %j", (value, shown) => {
    expect(() => checkString("f", "toolCallId", value)).toThrow(
      new TypeError(`f: toolCallId must be a string, got ${shown}`),
    );
  });
});

describe("checkProvider", () => {
  it("returns an object with chat and getDefaultModel methods", () => {
    const provider = { chat: async () => ({ content: "" }), getDefaultModel: () => "m" };
    expect(checkProvider("f", provider)).toBe(provider);
  });

  it.each([
    [undefined, "undefined"],
    [{ chat: () => {} }, "{}"],
    [{ getDefaultModel: () => "m" }, "{}"],
    ["openai", '"openai"'],
  ])("anything else is the option TypeError: %j", (value, shown) => {
    expect(() => checkProvider("f", value)).toThrow(
      new TypeError(`f: provider must be an LLMProvider (chat and getDefaultModel), got ${shown}`),
    );
  });
});

describe("isStringArray", () => {
  it.each<[string, unknown, boolean]>([
    ["an array of strings", ["a", ""], true],
    ["an empty array", [], true],
    ["an array with a number", ["a", 1], false],
    ["not an array", "a", false],
    ["array-like", { length: 1, 0: "a" }, false],
    ["a sparse array (a hole is not a string)", Object.assign([], { 1: "a" }), false],
  ])("%s → %s", (_, value, expected) => {
    expect(isStringArray(value)).toBe(expected);
  });

  it("refuses a sparse array of length 2**32 - 1 at its first hole, without walking it", () => {
    const huge: string[] = [];
    huge.length = 2 ** 32 - 1;
    huge[5] = "a";
    expect(isStringArray(huge)).toBe(false);
  });
});

describe("checkCount", () => {
  it("returns a safe integer > 0, and the fallback for undefined", () => {
    expect(checkCount("f", "maxChars", 5, 10)).toBe(5);
    expect(checkCount("f", "maxChars", undefined, 10)).toBe(10);
  });

  it.each([
    [0, "0"],
    [-1, "-1"],
    [1.5, "1.5"],
    [Number.NaN, "NaN"],
    [Number.POSITIVE_INFINITY, "Infinity"],
    [2 ** 53, "9007199254740992"],
    ["5", '"5"'],
    [null, "null"],
  ])("anything else is the option TypeError: %s", (value, shown) => {
    expect(() => checkCount("f", "maxChars", value, 10)).toThrow(
      new TypeError(`f: maxChars must be an integer > 0, got ${shown}`),
    );
  });
});
