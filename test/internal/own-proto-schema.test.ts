import { describe, expect, it } from "vitest";
import { withOwnProtoDependency, withOwnProtoProperty } from "../../src/internal/own-proto-schema.js";

const parsed = (json: string) => JSON.parse(json) as Record<string, unknown>;

describe("keys named __proto__ in the compiled copy of a schema", () => {
  it("a declared __proto__ property gets a patternProperties twin (beside one already there)", () => {
    const schema = parsed(
      '{"properties":{"__proto__":{"type":"string"}},"patternProperties":{"^__proto__$":{"minLength":1}}}',
    );
    withOwnProtoProperty(schema);
    expect(schema.patternProperties).toEqual({ "^__proto__$": { allOf: [{ minLength: 1 }, { type: "string" }] } });
  });

  it("a dependencies entry keyed __proto__ moves to allOf as if-own-__proto__-then, names or schema", () => {
    const names = parsed('{"dependencies":{"__proto__":["b"],"a":["c"]},"allOf":[{"required":["z"]}]}');
    withOwnProtoDependency(names);
    expect(Object.hasOwn(names.dependencies as object, "__proto__")).toBe(false);
    expect(names.dependencies).toEqual({ a: ["c"] });
    expect(names.allOf).toEqual(
      JSON.parse('[{"required":["z"]},{"if":{"required":["__proto__"]},"then":{"required":["b"]}}]'),
    );
    const schema = parsed('{"dependencies":{"__proto__":{"minProperties":2}}}');
    withOwnProtoDependency(schema);
    expect(schema.allOf).toEqual(JSON.parse('[{"if":{"required":["__proto__"]},"then":{"minProperties":2}}]'));
  });

  it("leaves invalid forms to Ajv, and schemas without such keys alone", () => {
    const invalid = parsed('{"dependencies":{"__proto__":5}}');
    withOwnProtoDependency(invalid);
    expect(invalid.allOf).toBeUndefined();
    const plain = parsed('{"dependencies":{"a":["b"]},"properties":{"a":{}}}');
    const before = JSON.stringify(plain);
    withOwnProtoDependency(plain);
    withOwnProtoProperty(plain);
    expect(JSON.stringify(plain)).toBe(before);
  });
});
