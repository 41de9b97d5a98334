import { afterEach, describe, expect, it, vi } from "vitest";
import { asyncResult, newToolResult } from "../../src/index.js";
import { type AsyncCompletion, AsyncCompletions } from "../../src/internal/async-completions.js";
import { resolveLogger } from "../../src/internal/logger.js";
import { captureLogger } from "../helpers/capture-logger.js";

afterEach(() => {
  vi.useRealTimers();
});

function tracker(awaiting: boolean) {
  const delivered: AsyncCompletion[] = [];
  const { logger, lines } = captureLogger();
  const completions = new AsyncCompletions(awaiting, (done) => delivered.push(done), resolveLogger(logger, "test"));
  return { completions, delivered, lines };
}

describe("AsyncCompletions", () => {
  it("answers each callback once; a second call and a value that is not a ToolResult are logged and ignored", () => {
    const { completions, delivered, lines } = tracker(false);
    const callback = completions.callback("backup", "c1");
    expect(callback(newToolResult("one"))).toBeUndefined();
    expect(callback(newToolResult("two"))).toBeUndefined();
    expect(() => completions.callback("backup", "c2")("text" as never)).not.toThrow();
    expect(delivered.map((done) => [done.toolCallId, done.result.forLLM])).toEqual([["c1", "one"]]);
    expect(lines.map((line) => line.msg)).toEqual([
      "async callback called again: ignored",
      "async callback called without a ToolResult: ignored",
    ]);
  });

  it("a deliver that throws never reaches the tool", () => {
    const completions = new AsyncCompletions(
      false,
      () => {
        throw new Error("listener down");
      },
      resolveLogger(undefined, "test"),
    );
    expect(() => completions.callback("t", "c")(newToolResult("x"))).not.toThrow();
  });

  it("a callback fired before the tool returned its async result leaves nothing pending", async () => {
    const { completions } = tracker(true);
    completions.callback("fast", "c")(newToolResult("already done"));
    completions.started("c", asyncResult("started"), "tool");
    expect(completions.hasWork).toBe(true); // the queued completion
    expect((await completions.collect(1_000, undefined)).map((done) => done.result.forLLM)).toEqual(["already done"]);
    expect(completions.hasWork).toBe(false);
  });

  it("collect waits for every pending call, at most timeoutMs; the rest goes to deliver after end()", async () => {
    vi.useFakeTimers();
    const { completions, delivered } = tracker(true);
    const first = completions.callback("a", "1");
    const second = completions.callback("b", "2");
    completions.started("1", asyncResult("…"), "tool");
    completions.started("2", asyncResult("…"), "tool");
    completions.started("3", newToolResult("not async"), "tool"); // never pending
    const collecting = completions.collect(1_000, undefined);
    setTimeout(() => first(newToolResult("a done")), 10);
    await vi.advanceTimersByTimeAsync(1_000);
    expect((await collecting).map((done) => done.toolCallId)).toEqual(["1"]);
    completions.end();
    second(newToolResult("b done"));
    expect(delivered.map((done) => done.toolCallId)).toEqual(["2"]);
  });

  it("collect returns at once when the signal aborts", async () => {
    const { completions } = tracker(true);
    completions.callback("a", "1");
    completions.started("1", asyncResult("…"), "tool");
    const controller = new AbortController();
    const collecting = completions.collect(Number.POSITIVE_INFINITY, controller.signal);
    controller.abort();
    expect(await collecting).toEqual([]);
  });

  it("collect keeps what arrived when the signal aborts: end() hands it over", async () => {
    const { completions, delivered } = tracker(true);
    completions.callback("a", "1")(newToolResult("a done"));
    completions.callback("b", "2");
    completions.started("1", asyncResult("…"), "tool");
    completions.started("2", asyncResult("…"), "tool");
    const controller = new AbortController();
    const collecting = completions.collect(Number.POSITIVE_INFINITY, controller.signal);
    controller.abort();
    expect(await collecting).toEqual([]);
    completions.end();
    expect(delivered.map((done) => done.result.forLLM)).toEqual(["a done"]);
  });

  it.each([
    ["awaiting (awaitAsync): pending, then received and not fed back yet", true, ["2", "1"]],
    ["not awaiting (onAsyncResult): pending only, a fired callback delivered it", false, ["2"]],
  ])("undelivered(): %s", (_case, awaiting, expected) => {
    const { completions } = tracker(awaiting);
    const first = completions.callback("a", "1");
    completions.callback("b", "2");
    completions.started("1", asyncResult("…"), "a");
    completions.started("2", asyncResult("…"), "b");
    completions.started("3", newToolResult("not async"), "c");
    expect(completions.undelivered()).toEqual([
      { toolCallId: "1", toolName: "a" },
      { toolCallId: "2", toolName: "b" },
    ]);
    first(newToolResult("done"));
    expect(completions.undelivered().map((call) => call.toolCallId)).toEqual(expected);
  });
});
