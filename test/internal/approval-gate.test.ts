import { describe, expect, it } from "vitest";
import { type Tool, ToolRegistry } from "../../src/index.js";
import { needsAnyApproval } from "../../src/internal/approval-gate.js";
import type { NormalizedToolCall } from "../../src/internal/normalize-tool-call.js";

const call = (name: string, argumentsError?: string): NormalizedToolCall => ({
  call: { id: name, name, arguments: {} },
  ...(argumentsError === undefined ? {} : { argumentsError }),
});

function registry(needsApproval: Tool["needsApproval"]): ToolRegistry {
  const tools = new ToolRegistry();
  tools.register({ name: "t", description: "t", parameters: { type: "object" }, execute: () => "", needsApproval });
  return tools;
}

describe("needsAnyApproval (the loop's check without loop-control options)", () => {
  it.each<[string, unknown, NormalizedToolCall[], boolean]>([
    ["needsApproval true", registry(true), [call("t")], true],
    ["a predicate (decided later, per call)", registry(() => false), [call("t")], true],
    ["needsApproval false", registry(false), [call("t")], false],
    ["absent", registry(undefined), [call("t")], false],
    ["an unknown name", registry(true), [call("__proto__"), call("constructor")], false],
    ["a call refused for its arguments", registry(true), [call("t", "bad JSON")], false],
    ["no registry", null, [call("t")], false],
    ["a registry-like without get", { count: () => 1 }, [call("t")], false],
    [
      "a registry whose get throws (fail closed)",
      {
        get: () => {
          throw new Error("x");
        },
      },
      [call("t")],
      true,
    ],
  ])("%s", (_case, tools, calls, expected) => {
    expect(needsAnyApproval(tools, calls)).toBe(expected);
  });
});
