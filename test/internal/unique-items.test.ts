import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/internal/unique-items.js";

describe("canonicalJson (uniqueItems' key of an item)", () => {
  it("is the same for equal JSON values whatever their key order, and differs otherwise", () => {
    expect(canonicalJson({ b: 1, a: [1, { d: 2, c: 3 }] })).toBe(canonicalJson({ a: [1, { c: 3, d: 2 }], b: 1 }));
    expect(canonicalJson([1, 2])).not.toBe(canonicalJson([2, 1]));
    expect(canonicalJson("1")).not.toBe(canonicalJson(1));
    expect(canonicalJson(undefined)).toBe("null");
  });
});
