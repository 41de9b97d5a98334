import { describe, expect, it } from "vitest";
import { PromotionScope } from "../../src/internal/promotion-scope.js";

describe("PromotionScope", () => {
  it("offers a tool promoted in turn t from turn t + 1 through t + ttl", () => {
    const scope = new PromotionScope();
    scope.promote(["a"], 2, 3);
    expect([3, 4, 5, 6].map((turn) => scope.offered(turn))).toEqual([[], ["a"], ["a"], []]);
  });

  it("a call runs a tool only in a turn of its window for which the model was shown it", () => {
    const scope = new PromotionScope();
    scope.promote(["a"], 3, 1);
    // Offered in turn 2, but not shown yet (the same turn as the search, or a client that never listed).
    expect(scope.callable("a", 1)).toBe(false);
    expect(scope.callable("a", 2)).toBe(false);
    scope.show(["a"], 2);
    expect(scope.callable("a", 1)).toBe(false);
    expect(scope.callable("a", 2)).toBe(true);
    // Shown for turn 2: later turns of the window too, never after it.
    expect(scope.callable("a", 4)).toBe(true);
    expect(scope.callable("a", 5)).toBe(false);
    expect(scope.callable("b", 2)).toBe(false);
  });

  it("showing counts only for tools offered in that turn", () => {
    const scope = new PromotionScope();
    scope.promote(["a"], 2, 5);
    scope.show(["a", "unknown"], 5); // before the window
    expect(scope.callable("a", 6)).toBe(false);
    scope.showOffered(6);
    expect(scope.callable("a", 6)).toBe(true);
  });

  it("a promotion during a window extends it and keeps what was shown; after it ended, a new window starts unshown", () => {
    const scope = new PromotionScope();
    scope.promote(["a"], 2, 1);
    scope.show(["a"], 2);
    scope.promote(["a"], 2, 2);
    expect(scope.callable("a", 2)).toBe(true);
    expect(scope.callable("a", 4)).toBe(true);
    expect(scope.offered(5)).toEqual([]);
    scope.promote(["a"], 2, 6);
    expect(scope.callable("a", 7)).toBe(false);
  });

  it("forgets windows that ended (turns only grow): its size stays bounded by the tools promoted", () => {
    const scope = new PromotionScope();
    for (let turn = 1; turn <= 1_000; turn++) scope.promote([`t${turn % 10}`], 1, turn);
    expect(scope.size).toBeLessThanOrEqual(10);
    scope.offered(2_000);
    expect(scope.size).toBe(0);
  });

  it("keeps hostile names as plain keys", () => {
    const scope = new PromotionScope();
    scope.promote(["__proto__", "constructor"], 1, 0);
    scope.showOffered(1);
    expect(scope.callable("__proto__", 1)).toBe(true);
    expect(scope.callable("toString", 1)).toBe(false);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
