import { describe, expect, it } from "vitest";
import { resolveLocalRef, unescapePointerSegment } from "../../src/internal/json-pointer.js";

const root = {
  $defs: { "a/b": { type: "string" }, "c~d": { type: "number" }, "e f": { type: "boolean" } },
  definitions: { Node: { type: "object" } },
  properties: { list: { type: "array", items: [{ type: "integer" }, { type: "null" }] } },
};

describe("resolveLocalRef", () => {
  it.each([
    ["#", root],
    ["#/$defs/a~1b", { type: "string" }],
    ["#/$defs/c~0d", { type: "number" }],
    ["#/$defs/e%20f", { type: "boolean" }],
    ["#/definitions/Node", { type: "object" }],
    ["#/properties/list/items/1", { type: "null" }],
  ])("resolves %s", (ref, expected) => {
    expect(resolveLocalRef(ref, root)).toEqual(expected);
  });

  it.each([
    ["a remote reference", "https://example.com/schema.json#/$defs/x"],
    ["a relative file", "other.json"],
    ["a fragment that is not a pointer", "#node"],
    ["a missing name", "#/$defs/missing"],
    ["a path through a scalar", "#/$defs/a~1b/type/length"],
    ["an array index that is not a number", "#/properties/list/items/first"],
    ["an index with a leading zero", "#/properties/list/items/01"],
    ["an index past the end", "#/properties/list/items/2"],
    ["a malformed %-escape", "#/$defs/%E0%A4%A"],
    ["an inherited property", "#/$defs/constructor"],
    ["the prototype", "#/__proto__"],
  ])("gives undefined for %s, never throwing", (_case, ref) => {
    expect(resolveLocalRef(ref, root)).toBeUndefined();
  });
});

describe("unescapePointerSegment", () => {
  it("turns ~1 into / and ~0 into ~, in that order", () => {
    expect(unescapePointerSegment("a~1b~0c~01")).toBe("a/b~c~1");
  });
});
