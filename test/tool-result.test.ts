import { describe, expect, it } from "vitest";
import {
  asyncResult,
  errorResult,
  isToolResult,
  newToolResult,
  silentResult,
  ToolResult,
  userResult,
} from "../src/index.js";

describe("constructors (Go's helpers)", () => {
  it.each([
    [
      "newToolResult",
      newToolResult,
      { forLLM: "x", forUser: "", silent: false, isError: false, async: false, responseHandled: false },
    ],
    [
      "silentResult",
      silentResult,
      { forLLM: "x", forUser: "", silent: true, isError: false, async: false, responseHandled: false },
    ],
    [
      "asyncResult",
      asyncResult,
      { forLLM: "x", forUser: "", silent: false, isError: false, async: true, responseHandled: false },
    ],
    [
      "errorResult",
      errorResult,
      { forLLM: "x", forUser: "", silent: false, isError: true, async: false, responseHandled: false },
    ],
    [
      "userResult",
      userResult,
      { forLLM: "x", forUser: "x", silent: false, isError: false, async: false, responseHandled: false },
    ],
  ] as const)("%s sets the fields as in Go", (_name, make, expected) => {
    const result = make("x");
    expect(result).toBeInstanceOf(ToolResult);
    expect({ ...result }).toEqual(expected);
    expect(result.err).toBeUndefined();
  });

  it("the constructor takes every field, defaults the flags to false and forUser to empty", () => {
    const err = new Error("boom");
    expect(new ToolResult({ forLLM: "a", forUser: "b", silent: true, isError: true, async: true, err })).toMatchObject({
      forLLM: "a",
      forUser: "b",
      silent: true,
      isError: true,
      async: true,
      err,
    });
    expect({ ...new ToolResult({ forLLM: "a" }) }).toEqual({
      forLLM: "a",
      forUser: "",
      silent: false,
      isError: false,
      async: false,
      responseHandled: false,
    });
  });
});

describe("withError", () => {
  it("attaches the error and returns the same result for chaining", () => {
    const result = errorResult("failed");
    const err = new Error("cause");
    expect(result.withError(err)).toBe(result);
    expect(result.err).toBe(err);
    expect(result.forLLM).toBe("failed");
  });
});

describe("contentForLLM", () => {
  it.each([
    ["forLLM when set", new ToolResult({ forLLM: "text" }), "text"],
    ["forLLM over the error", errorResult("shown").withError(new Error("hidden")), "shown"],
    [
      "the error text when forLLM is empty",
      new ToolResult({ forLLM: "" }).withError(new Error("disk full")),
      "disk full",
    ],
    ["empty when neither is set", new ToolResult({ forLLM: "" }), ""],
  ])("returns %s", (_case, result, expected) => {
    expect(result.contentForLLM()).toBe(expected);
  });
});

describe("toJSON", () => {
  it("uses Go's JSON keys and never serialises err", () => {
    const result = errorResult("failed").withError(new Error("secret"));
    expect(JSON.stringify(result)).toMatchInlineSnapshot(
      `"{"for_llm":"failed","silent":false,"is_error":true,"async":false}"`,
    );
  });

  it("includes for_user only when it is not empty", () => {
    expect(userResult("hi").toJSON()).toEqual({
      for_llm: "hi",
      for_user: "hi",
      silent: false,
      is_error: false,
      async: false,
    });
    expect(newToolResult("hi").toJSON()).not.toHaveProperty("for_user");
  });

  it.each([
    ["silentResult", silentResult("s"), { for_llm: "s", silent: true, is_error: false, async: false }],
    ["asyncResult", asyncResult("a"), { for_llm: "a", silent: false, is_error: false, async: true }],
  ])("%s round-trips its flags", (_name, result, expected) => {
    expect(JSON.parse(JSON.stringify(result))).toEqual(expected);
  });
});

describe("isToolResult", () => {
  it("recognises results, also one branded by another copy of toolloop", () => {
    expect(isToolResult(newToolResult("x"))).toBe(true);
    const fromAnotherCopy = { forLLM: "x", [Symbol.for("toolloop.ToolResult")]: true };
    expect(fromAnotherCopy).not.toBeInstanceOf(ToolResult);
    expect(isToolResult(fromAnotherCopy)).toBe(true);
  });

  it.each([
    ["a plain object with the fields", { forLLM: "x", forUser: "", silent: false, isError: false, async: false }],
    ["a string", "x"],
    ["null", null],
    ["undefined", undefined],
    ["a wrong brand value", { [Symbol.for("toolloop.ToolResult")]: "yes" }],
  ])("rejects %s", (_case, value) => {
    expect(isToolResult(value)).toBe(false);
  });
});

describe("data (seed 003's ToolResult.Data)", () => {
  it("is absent by default, set by the constructor or withData, and serialised as data only when present", () => {
    expect(newToolResult("x").data).toBeUndefined();
    expect(newToolResult("x").toJSON()).not.toHaveProperty("data");
    const result = newToolResult("x").withData({ question: "Which?", suggestions: ["a", "b"] });
    expect(result.data).toEqual({ question: "Which?", suggestions: ["a", "b"] });
    expect(JSON.parse(JSON.stringify(result))).toEqual({
      for_llm: "x",
      silent: false,
      is_error: false,
      async: false,
      data: { question: "Which?", suggestions: ["a", "b"] },
    });
    expect(new ToolResult({ forLLM: "y", data: { n: 1 } }).data).toEqual({ n: 1 });
  });

  it("is never what the model reads", () => {
    expect(newToolResult("for the model").withData({ secret: "ui only" }).contentForLLM()).toBe("for the model");
  });
});

describe("responseHandled (picoclaw HEAD's ResponseHandled)", () => {
  it("defaults to false and is omitted from the JSON then; set, it is response_handled: true", () => {
    expect(newToolResult("x").responseHandled).toBe(false);
    expect(newToolResult("x").toJSON()).not.toHaveProperty("response_handled");
    expect(new ToolResult({ forLLM: "x", responseHandled: true }).responseHandled).toBe(true);
    const result = userResult("sent the file");
    expect(result.withResponseHandled()).toBe(result);
    expect(JSON.parse(JSON.stringify(result))).toEqual({
      for_llm: "sent the file",
      for_user: "sent the file",
      silent: false,
      is_error: false,
      async: false,
      response_handled: true,
    });
  });
});
