import { describe, expect, it } from "vitest";
import { META, RefResolver } from "../../src/internal/ref-resolver.js";

describe("RefResolver: $ref resolved as Ajv does", () => {
  const leaf = { type: "string" };
  const root = {
    $defs: { "a/b": leaf, "t~n": { type: "number" }, "%x": { type: "boolean" } },
    items: [{ type: "null" }, { $id: "https://example.com/inner", $defs: { deep: leaf } }],
  };

  it("follows JSON pointers with ~0 ~1 and %-escapes, into arrays, and '#' to the root", () => {
    const resolver = new RefResolver(root);
    expect(resolver.resolve("", "#/$defs/a~1b")).toEqual({ schema: leaf, base: "" });
    expect(resolver.resolve("", "#/$defs/t~0n")).toMatchObject({ schema: { type: "number" } });
    expect(resolver.resolve("", "#/$defs/%25x")).toMatchObject({ schema: { type: "boolean" } });
    expect(resolver.resolve("", "#/items/0")).toMatchObject({ schema: { type: "null" } });
    expect(resolver.resolve("", "#")).toEqual({ schema: root, base: "" });
  });

  it("resolves against an $id's base URI, knows meta-schemas, and refuses what it cannot follow", () => {
    const resolver = new RefResolver(root);
    expect(resolver.enter("", { $id: "https://example.com/inner" })).toBe("https://example.com/inner");
    expect(resolver.resolve("https://example.com/inner", "#/$defs/deep")).toMatchObject({ schema: leaf });
    expect(resolver.resolve("", "http://json-schema.org/draft-07/schema#")).toBe(META);
    expect(resolver.resolve("", "#/$defs/missing")).toBeUndefined();
    expect(resolver.resolve("", "#/$defs/%zz")).toBeUndefined();
    expect(resolver.resolve("", "https://elsewhere.example/schema.json")).toBeUndefined();
  });

  it("keys a target by the URI Ajv compiles it under: one key per way of writing it", () => {
    const resolver = new RefResolver(root);
    expect(resolver.key("", "#")).toBeNull();
    expect(resolver.key("", "#/$defs/a~1b")).not.toBe(resolver.key("", "#/%24defs/a~1b"));
  });
});
