import { describe, expect, it } from "vitest";
import { MAX_VALIDATION_MESSAGE_CHARS as MAX } from "../../src/internal/describe.js";
import { formatAjvErrors, formatIssues } from "../../src/internal/validation-messages.js";

describe("validation messages", () => {
  it("formatIssues bounds each issue and the whole line", () => {
    expect(formatIssues([])).toBe("");
    expect(formatIssues(["a: bad", "b: bad"])).toBe("a: bad; b: bad");
    const one = formatIssues([`a: ${"x".repeat(10_000)}`, "b: bad"]);
    expect(one).toMatch(/^a: x+ … \[\d+ more characters cut\]; b: bad$/);
    expect(one.length).toBeLessThanOrEqual(MAX);
    const many = formatIssues(Array.from({ length: 100_000 }, () => "y".repeat(10_000)));
    expect(many.length).toBeLessThanOrEqual(MAX);
    expect(many).toMatch(/ … \[\d+ more characters cut\]; … and 99992 more$/);
  });

  it("formatAjvErrors names each property and lists an enum's values, bounded", () => {
    const enumError = {
      keyword: "enum",
      instancePath: "/mode",
      schemaPath: "#/properties/mode/enum",
      params: { allowedValues: Array.from({ length: 12 }, (_, index) => `v${index}`) },
      message: "must be equal to one of the allowed values",
    };
    const required = {
      keyword: "required",
      instancePath: "",
      schemaPath: "#/required",
      params: { missingProperty: "name" },
    };
    expect(formatAjvErrors([enumError, required])).toBe(
      'mode: must be one of "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", … and 2 more; name: required property is missing',
    );
  });
});
