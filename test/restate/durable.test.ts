import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RestateTestbed, startRestateTestbed } from "../helpers/restate-testbed.js";

// `durable(ctx)` on its own, in a plain Restate service that runs the loop by hand (the service
// process's `plain`, test/helpers/restate-service-process.ts), inside a middleware of its own that
// logs every model call it sees. The real engine: test/helpers/restate-testbed.ts.

let bed: RestateTestbed;

beforeAll(async () => {
  bed = await startRestateTestbed();
});

afterAll(async () => {
  await bed?.dispose();
});

describe("durable on a real restate-server", () => {
  it("continues a run SIGKILLed while a tool sleeps: each model call made once, the middleware outside it run again on replay", async () => {
    await bed.killService();
    await bed.startService(600_000);
    const pending = bed.send("/plain/run", "crash:d1");
    const slow = await bed.waitForLog((entry) => entry.kind === "tool" && entry.name === "slow");
    await bed.killService();
    await bed.startService(0);
    const result = await pending;
    expect(result.content).toBe("done d1");
    expect(result.stopReason).toBe("completed");
    const entries = bed.readLog();
    // The provider was asked three times in all: the two answers before the kill came from the journal.
    expect(entries.filter((entry) => entry.kind === "model" && entry.tag === "d1").map((entry) => entry.step)).toEqual([
      0, 1, 2,
    ]);
    // What wraps durable(ctx) is not journaled: it ran for iterations 1 and 2 before the kill, and
    // again for both on replay, in the new process (a retry that failed early adds nothing here).
    const outer = entries.filter((entry) => entry.kind === "outer" && entry.tag === "d1");
    expect(outer.filter((entry) => entry.pid === slow.pid).map((entry) => entry.step)).toEqual([1, 2]);
    const replayed = outer.filter((entry) => entry.pid !== slow.pid).map((entry) => entry.step);
    expect(replayed.slice(-3)).toEqual([1, 2, 3]);
    const tools = entries.filter((entry) => entry.kind === "tool" && entry.id?.startsWith("d1-"));
    expect(tools.filter((entry) => entry.name === "fast").map((entry) => entry.id)).toEqual(["d1-0-0-a", "d1-0-0-b"]);
    expect(tools.filter((entry) => entry.name === "fast").every((entry) => entry.pid === slow.pid)).toBe(true);
    // The slow call was in flight, with no journal entry: it ran again in the new process.
    const slowRuns = tools.filter((entry) => entry.name === "slow").map((entry) => entry.pid);
    expect(slowRuns).toHaveLength(2);
    expect(slowRuns[0]).toBe(slow.pid);
    expect(slowRuns[1]).not.toBe(slow.pid);
    expect(result.messages.map((message) => [message.role, message.content])).toEqual([
      ["user", "crash:d1"],
      ["assistant", ""],
      ["tool", "fast a"],
      ["tool", "fast b"],
      ["assistant", ""],
      ["tool", "slept"],
      ["assistant", "done d1"],
    ]);
  });

  it("journals a tool that throws as its error result: the model reads it, the tool runs once, Restate retries nothing", async () => {
    const result = await bed.send("/plain/run", "boom:d2");
    expect(result.stopReason).toBe("completed");
    expect(result.content).toMatch(/^boom: .*kaboom/);
    const entries = bed.readLog();
    expect(
      entries.filter((entry) => entry.kind === "tool" && entry.name === "boom" && entry.id === "d2-0-0-b"),
    ).toHaveLength(1);
    expect(entries.filter((entry) => entry.kind === "model" && entry.tag === "d2")).toHaveLength(2);
  });
});
