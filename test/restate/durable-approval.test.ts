import type * as restate from "@restatedev/restate-sdk";
import { describe, expect, it } from "vitest";
import { durableApproval } from "../../src/restate/durable-approval.js";

// Its awakeables on a real restate-server: test/restate/restate-agent.test.ts (an approval pending
// across a service restart, a denial).
describe("durableApproval", () => {
  const ctx = {} as restate.Context;

  it.each([
    ["no options", undefined],
    ["no onRequest", {}],
    ["an onRequest that is not a function", { onRequest: "notify" }],
  ])("rejects %s with a TypeError before any step", (_name, options) => {
    expect(() => durableApproval(ctx, options as never)).toThrow(TypeError);
    expect(() => durableApproval(ctx, options as never)).toThrow(
      /durableApproval: options\.onRequest must be a function/,
    );
  });

  it("returns an approver", () => {
    expect(typeof durableApproval(ctx, { onRequest: () => {} })).toBe("function");
  });
});
