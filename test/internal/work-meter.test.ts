import { describe, expect, it } from "vitest";
import { WorkMeter } from "../../src/internal/work-meter.js";

/** A clock that advances `step` ms each time it is read. */
function steppingClock(step: number) {
  let now = 0;
  return () => {
    now += step;
    return now;
  };
}

describe("WorkMeter", () => {
  it("ends a slice after sliceMs of work, or sliceUnits units, whichever comes first", () => {
    const byTime = new WorkMeter({ maxMs: 1_000, sliceMs: 5, sliceUnits: 100, now: steppingClock(1) });
    const units = () => {
      let count = 1;
      while (!byTime.tick()) count++;
      return count;
    };
    expect(units()).toBe(5);
    const byUnits = new WorkMeter({ maxMs: 1_000, sliceMs: 1_000, sliceUnits: 3, now: steppingClock(1) });
    expect([byUnits.tick(), byUnits.tick(), byUnits.tick()]).toEqual([false, false, true]);
  });

  it("counts only the time in slices: waiting between them is free", async () => {
    let now = 0;
    const meter = new WorkMeter({ maxMs: 25, sliceMs: 10, sliceUnits: 100, now: () => now });
    now = 10;
    expect(meter.tick()).toBe(true);
    expect(meter.spent).toBe(10);
    const pause = meter.pause();
    now = 1_000; // other work ran meanwhile
    await pause;
    now = 1_010;
    expect(meter.tick()).toBe(true);
    expect(meter.spent).toBe(20);
    expect(meter.exhausted).toBe(false);
    await meter.pause();
    now = 1_016;
    expect(meter.tick()).toBe(true); // the budget is spent: the slice ends early
    expect(meter.exhausted).toBe(true);
  });

  it("yields to the event loop between slices", async () => {
    const meter = new WorkMeter({ maxMs: 1_000, sliceMs: 1, sliceUnits: 1 });
    const order: string[] = [];
    setImmediate(() => order.push("other work"));
    await meter.pause();
    order.push("next slice");
    expect(order).toEqual(["other work", "next slice"]);
  });

  it("stops at a pause once the signal is aborted, with its reason", async () => {
    const meter = new WorkMeter({ maxMs: 1_000, sliceMs: 1, sliceUnits: 1 });
    const controller = new AbortController();
    const reason = new Error("call timed out");
    controller.abort(reason);
    await expect(meter.pause(controller.signal)).rejects.toBe(reason);
    const later = new AbortController();
    const pause = meter.pause(later.signal);
    later.abort(reason); // while it yields
    await expect(pause).rejects.toBe(reason);
  });
});
