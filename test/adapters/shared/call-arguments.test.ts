import { describe, expect, it } from "vitest";
import { toCallArguments } from "../../../src/adapters/shared/call-arguments.js";

describe("toCallArguments", () => {
  const map = new Map([["a", 1]]);
  it.each<[string, unknown, unknown]>([
    ["an object as it is", { a: 1 }, { a: 1 }],
    ["absent as no arguments", undefined, {}],
    ["null as no arguments", null, {}],
    ["a string as it is (the loop parses it)", '{"a":1}', '{"a":1}'],
    ["an array as its JSON text", [1, "x"], '[1,"x"]'],
    ["a number as its JSON text", 3, "3"],
    ["a boolean as its JSON text", false, "false"],
    // Values no JSON parser gives (a custom client's): as they are, for the loop to refuse by type.
    ["a class instance as it is", map, map],
    ["NaN as it is (its JSON text would be null)", Number.NaN, Number.NaN],
    ["a bigint as it is", 1n, 1n],
  ])("passes %s", (_name, input, expected) => {
    expect(toCallArguments(input)).toStrictEqual(expected);
  });

  it("keeps the very object, prototype-named keys included", () => {
    const input = JSON.parse('{"__proto__":{"polluted":1}}') as Record<string, unknown>;
    expect(toCallArguments(input)).toBe(input);
  });
});
