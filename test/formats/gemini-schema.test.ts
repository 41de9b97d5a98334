import { describe, expect, it } from "vitest";
import { typeOf } from "../../src/formats/gemini-schema.js";

describe("typeOf: Gemini's name of a JSON Schema type", () => {
  it("maps JSON Schema's type names, upper-case, and nothing else", () => {
    expect(["string", "number", "integer", "boolean", "array", "object"].map(typeOf)).toEqual([
      "STRING",
      "NUMBER",
      "INTEGER",
      "BOOLEAN",
      "ARRAY",
      "OBJECT",
    ]);
    expect(typeOf("null")).toBeUndefined();
    expect(typeOf("toString")).toBeUndefined();
    expect(typeOf(["string"])).toBeUndefined();
  });
});
