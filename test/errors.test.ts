import { describe, expect, it } from "vitest";
import {
  InvalidProviderResponseError,
  isToolExecutionError,
  isToolLoopError,
  isToolloopBaseError,
  type Message,
  ToolExecutionError,
  ToolLoopError,
  ToolloopBaseError,
} from "../src/index.js";

const ERROR_BRAND = Symbol.for("toolloop.error");

describe("error classes", () => {
  it("ToolloopBaseError is an Error with a literal name and an ES2022 cause", () => {
    const cause = new Error("root");
    const error = new ToolloopBaseError("outer", { cause });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("ToolloopBaseError");
    expect(error.message).toBe("outer");
    expect(error.cause).toBe(cause);
    expect(new ToolloopBaseError("no cause")).not.toHaveProperty("cause");
  });

  it("ToolExecutionError carries the tool name, the code and the cause", () => {
    const cause = new TypeError("bad");
    const error = new ToolExecutionError('tool "x" failed: bad', { toolName: "x", code: "tool_failed", cause });
    expect(error).toBeInstanceOf(ToolloopBaseError);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ name: "ToolExecutionError", toolName: "x", code: "tool_failed", cause });
    expect(String(error)).toBe('ToolExecutionError: tool "x" failed: bad');
    expect(new ToolExecutionError("m", { toolName: "x", code: "timeout" })).not.toHaveProperty("cause");
  });

  it("ToolLoopError carries the transcript, the iterations and the cause", () => {
    const messages: Message[] = [{ role: "user", content: "hi" }];
    const cause = new Error("503");
    const error = new ToolLoopError("LLM call failed: 503", { messages, iterations: 2, cause });
    expect(error).toBeInstanceOf(ToolloopBaseError);
    expect(error).toMatchObject({ name: "ToolLoopError", messages, iterations: 2, cause });
    expect(error.stack).toContain("ToolLoopError: LLM call failed: 503");
  });

  it("every error a caller may branch on has a literal code: ToolLoopError's defaults to internal", () => {
    expect(new ToolLoopError("x", { messages: [], iterations: 0 }).code).toBe("internal");
    expect(new ToolLoopError("x", { messages: [], iterations: 0, code: "aborted" }).code).toBe("aborted");
    const invalid = new InvalidProviderResponseError("p: empty", { provider: "p", body: "" });
    expect(invalid.code).toBe("invalid_provider_response");
    expect(new ToolExecutionError("m", { toolName: "x", code: "timeout" }).code).toBe("timeout");
    // The base class has no code of its own (and no own property that would show in logs).
    expect(new ToolloopBaseError("x")).not.toHaveProperty("code");
  });
});

describe("guards", () => {
  const loopError = new ToolLoopError("x", { messages: [], iterations: 0 });
  const executionError = new ToolExecutionError("x", { toolName: "t", code: "timeout" });
  const baseError = new ToolloopBaseError("x");

  it.each([
    ["ToolloopBaseError", baseError, { base: true, loop: false, execution: false }],
    ["ToolLoopError", loopError, { base: true, loop: true, execution: false }],
    ["ToolExecutionError", executionError, { base: true, loop: false, execution: true }],
    ["a plain Error", new Error("x"), { base: false, loop: false, execution: false }],
    [
      "a plain Error named like ours",
      Object.assign(new Error("x"), { name: "ToolLoopError" }),
      { base: false, loop: false, execution: false },
    ],
    ["null", null, { base: false, loop: false, execution: false }],
    ["a string", "ToolLoopError", { base: false, loop: false, execution: false }],
    ["an object with a non-string brand", { [ERROR_BRAND]: true }, { base: false, loop: false, execution: false }],
  ])("%s", (_case, value, expected) => {
    expect({
      base: isToolloopBaseError(value),
      loop: isToolLoopError(value),
      execution: isToolExecutionError(value),
    }).toEqual(expected);
  });

  // Another installed copy of toolloop has its own classes (instanceof fails) but the same
  // Symbol.for brand, which resolves to the same symbol across copies.
  it.each([
    ["ToolLoopError", { base: true, loop: true, execution: false }],
    ["ToolExecutionError", { base: true, loop: false, execution: true }],
    ["ToolloopBaseError", { base: true, loop: false, execution: false }],
  ])("recognise a %s from another copy by its Symbol.for brand", (name, expected) => {
    class ForeignError extends Error {
      override name = name;
      get [Symbol.for("toolloop.error")](): string {
        return this.name;
      }
    }
    const foreign = new ForeignError("from another copy");
    expect(foreign).not.toBeInstanceOf(ToolloopBaseError);
    expect({
      base: isToolloopBaseError(foreign),
      loop: isToolLoopError(foreign),
      execution: isToolExecutionError(foreign),
    }).toEqual(expected);
  });

  it("the brand of our own errors is their name", () => {
    expect((loopError as unknown as Record<symbol, unknown>)[ERROR_BRAND]).toBe("ToolLoopError");
    expect((executionError as unknown as Record<symbol, unknown>)[ERROR_BRAND]).toBe("ToolExecutionError");
  });
});
