import { describe, expect, it } from "vitest";
import {
  type Context,
  cutType,
  inputChars,
  OVER_BOUND,
  ownChars,
  SHORTENED,
  shortened,
  spend,
} from "../../src/formats/gemini-bound.js";

function context(left: number, last: boolean): Context {
  return { root: {}, expanding: new Set(), left, maxRefs: Number.POSITIVE_INFINITY, depth: 0, last, shown: new Map() };
}

describe("the bound on one Gemini conversion", () => {
  it("spends characters: an attempt that may fail throws past the bound, the last one says false", () => {
    const trying = context(10, false);
    expect(spend(trying, 10)).toBe(true);
    expect(() => spend(trying, 1)).toThrow();
    let thrown: unknown;
    try {
      spend(context(0, false), 1);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBe(OVER_BOUND);
    expect(spend(context(0, true), 1)).toBe(false);
  });

  it("counts a node's own characters as JSON, its subschemas aside, and an input once per object", () => {
    // Braces, each key with its quotes and colon and comma, each string value.
    expect(ownChars({ type: "STRING" })).toBe(2 + "type".length + 4 + "STRING".length);
    const shared = { description: "x".repeat(1_000) };
    const once = inputChars({ a: shared });
    expect(inputChars({ a: shared, b: shared })).toBeLessThan(once + 100);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(inputChars(cyclic)).toBeGreaterThan(0);
  });

  it("cuts a part to a loose schema of its plain type that says so", () => {
    expect(cutType({ type: "string" })).toBe("STRING");
    expect(cutType({ properties: {} })).toBe("OBJECT");
    expect(cutType({ items: {} })).toBe("ARRAY");
    expect(cutType({ anyOf: [] })).toBeUndefined();
    const within = context(1_000, true);
    expect(shortened({ type: "integer" }, within)).toEqual({ type: "INTEGER", description: SHORTENED });
    expect(within.left).toBeLessThan(1_000);
  });
});
