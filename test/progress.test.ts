import { describe, expect, it } from "vitest";
import { ToolExecutionError } from "../src/errors.js";
import { defaultLogger } from "../src/internal/logger.js";
import { ProgressReporter, type ProgressUpdate } from "../src/progress.js";
import { errorResult, newToolResult } from "../src/tool-result.js";
import { captureLogger } from "./helpers/capture-logger.js";

function reporter(logger = defaultLogger()) {
  const updates: ProgressUpdate[] = [];
  const progress = new ProgressReporter((update) => updates.push(update), { toolName: "t", toolCallId: "c", logger });
  return { progress, updates };
}

describe("ProgressReporter", () => {
  it.each<[string, unknown, number | undefined]>([
    ["a value inside 0..1", 0.25, 0.25],
    ["0", 0, 0],
    ["1", 1, 1],
    ["below 0 (clamped)", -3, 0],
    ["above 1 (clamped)", 7, 1],
    ["NaN (dropped)", Number.NaN, undefined],
    ["Infinity (dropped)", Number.POSITIVE_INFINITY, undefined],
    ["-Infinity (dropped)", Number.NEGATIVE_INFINITY, undefined],
    ["a numeric string (dropped)", "0.5", undefined],
    ["an object (dropped)", { valueOf: () => 0.5 }, undefined],
    ["nothing", undefined, undefined],
  ])("progress %s", (_label, value, expected) => {
    const { progress, updates } = reporter();
    progress.report(value);
    expect(updates).toHaveLength(1);
    expect(updates[0]?.progress).toBe(expected);
    expect("progress" in (updates[0] as object)).toBe(expected !== undefined);
  });

  it("messages: strings kept and bounded, anything else and empty strings dropped", () => {
    const { progress, updates } = reporter();
    progress.report(undefined, "x".repeat(50_000));
    progress.report(undefined, 42 as unknown as string);
    progress.report(undefined, "");
    expect(updates[0]?.message?.length).toBeLessThanOrEqual(1_100);
    expect(updates[0]?.message).toMatch(/^x+/);
    expect("message" in (updates[1] as object)).toBe(false);
    expect("message" in (updates[2] as object)).toBe(false);
  });

  it.each([
    ["completed", newToolResult("ok")],
    ["failed", errorResult("bad")],
    ["failed", errorResult("timed out").withError(new ToolExecutionError("t", { toolName: "t", code: "timeout" }))],
    ["cancelled", errorResult("stop").withError(new ToolExecutionError("s", { toolName: "t", code: "aborted" }))],
  ])("the final status is %s; nothing is sent after it", (status, result) => {
    const { progress, updates } = reporter();
    expect(progress.finish(result)).toBe(result);
    progress.finish(result);
    progress.report(0.5, "late");
    expect(updates).toEqual([{ toolCallId: "c", toolName: "t", status }]);
  });

  it("a throwing listener is logged (its message only) and never throws to the tool", () => {
    const { logger, lines } = captureLogger();
    const progress = new ProgressReporter(
      () => {
        throw Object.assign(new Error("listener broke"), { secret: "token-123" });
      },
      { toolName: "t", toolCallId: "c", logger },
    );
    expect(() => progress.report(0.1)).not.toThrow();
    expect(() => progress.finish(newToolResult("ok"))).not.toThrow();
    expect(lines).toMatchObject([
      { msg: "progress listener threw", error: "listener broke" },
      { msg: "progress listener threw" },
    ]);
    expect(JSON.stringify(lines)).not.toContain("token-123");
  });

  it("report is bound: a tool may pass it around", () => {
    const { progress, updates } = reporter();
    const { report } = progress;
    report(0.5);
    expect(updates).toHaveLength(1);
  });

  it("a huge tool name is cut", () => {
    const updates: ProgressUpdate[] = [];
    const progress = new ProgressReporter((update) => updates.push(update), {
      toolName: "n".repeat(100_000),
      toolCallId: "c",
      logger: defaultLogger(),
    });
    progress.report();
    expect(updates[0]?.toolName.length).toBeLessThan(200);
  });
});
