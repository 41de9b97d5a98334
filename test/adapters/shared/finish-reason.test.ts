import { describe, expect, it } from "vitest";
import { mapFinishReason } from "../../../src/adapters/shared/finish-reason.js";
import type { FinishReason } from "../../../src/index.js";

describe("mapFinishReason", () => {
  const table: ReadonlyMap<string, FinishReason> = new Map([
    ["end_turn", "stop"],
    ["max_tokens", "length"],
  ]);

  it.each<[string, unknown, boolean, FinishReason | undefined]>([
    ["any call makes it tool_calls", "end_turn", true, "tool_calls"],
    ["a call without a reason", undefined, true, "tool_calls"],
    ["a reason in the table", "max_tokens", false, "length"],
    ["an unknown reason passes through", "pause_turn", false, "pause_turn"],
    ["a missing reason", undefined, false, undefined],
    ["a reason that is not a string", 3, false, undefined],
  ])("%s", (_name, reason, hasCalls, expected) => {
    expect(mapFinishReason({ reason, hasCalls, table })).toBe(expected);
  });

  it("passes every reason through without a table", () => {
    expect(mapFinishReason({ reason: "length", hasCalls: false })).toBe("length");
  });
});
