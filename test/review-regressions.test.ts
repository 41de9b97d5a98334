// Regression tests for findings of the independent review of the core (each failed before its fix).
// Dissolved into the modules' own test files; the one left belongs in test/internal/abort.test.ts
// (another engineer's file at the time of the move): move it there, then delete this file.
import { describe, expect, it } from "vitest";
import { raceAbort } from "../src/internal/abort.js";

describe("review regressions", () => {
  it("raceAbort on an aborted signal leaves no unhandled rejection when the callee rejects later", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const controller = new AbortController();
      controller.abort(new Error("stop"));
      let rejectLater: (error: Error) => void = () => {};
      const callee = new Promise<never>((_, reject) => {
        rejectLater = reject;
      });
      await expect(raceAbort(callee, controller.signal)).rejects.toThrow("stop");
      rejectLater(new Error("late failure"));
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });
});
