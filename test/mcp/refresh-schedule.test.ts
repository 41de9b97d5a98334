import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MAX_TIMEOUT_MS } from "../../src/execute-tool-call.js";
import { RefreshSchedule } from "../../src/mcp/refresh-schedule.js";

// The schedule reads `performance.now()` and waits with `setTimeout`: both on the fake clock.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** Lets pending promise callbacks run (no time passes). */
const settle = () => vi.advanceTimersByTimeAsync(0);

/**
 * A schedule whose refreshes are counted; each sees the number of requests made so far, and
 * `work` says how long each one works (it advances the fake clock by that much, as a compilation would).
 */
function counted(options: { intervalMs: number; work?: number; fail?: boolean }) {
  let requests = 0;
  const seen: number[] = [];
  const schedule = new RefreshSchedule({
    intervalMs: options.intervalMs,
    workShare: 0.1,
    run: async () => {
      seen.push(requests);
      const work = options.work ?? 0;
      vi.advanceTimersByTime(work);
      if (options.fail) throw new Error("down");
      return work;
    },
  });
  return {
    schedule,
    seen,
    request: () => {
      requests++;
      schedule.request();
    },
  };
}

describe("RefreshSchedule", () => {
  it("follows the first request at once, then starts at most one refresh per intervalMs", async () => {
    const { schedule, seen, request } = counted({ intervalMs: 1_000 });
    await schedule.first(async () => 0);
    request();
    await settle();
    expect(seen).toEqual([1]);
    for (let index = 0; index < 1_000; index++) request();
    await settle();
    expect(seen).toEqual([1]);
    await vi.advanceTimersByTimeAsync(999);
    expect(seen).toEqual([1]);
    await vi.advanceTimersByTimeAsync(1);
    // One refresh for the 1,000 requests, and it saw the last of them.
    expect(seen).toEqual([1, 1_001]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(seen).toEqual([1, 1_001]);
  });

  it("picks up a request after the interval at once", async () => {
    const { schedule, seen, request } = counted({ intervalMs: 1_000 });
    await schedule.first(async () => 0);
    request();
    await settle();
    await vi.advanceTimersByTimeAsync(1_000);
    request();
    await settle();
    expect(seen).toEqual([1, 2]);
  });

  it("queues one refresh for requests while one runs, and starts it once the interval allows", async () => {
    let release: () => void = () => {};
    let runs = 0;
    const schedule = new RefreshSchedule({
      intervalMs: 500,
      workShare: 0.1,
      run: async () => {
        if (++runs === 1) await new Promise<void>((resolve) => (release = resolve));
        return 0;
      },
    });
    await schedule.first(async () => 0);
    schedule.request();
    await settle();
    for (let index = 0; index < 10; index++) schedule.request();
    await vi.advanceTimersByTimeAsync(2_000);
    expect(runs).toBe(1);
    release();
    await settle();
    // The interval since the running one started is over: the queued one starts at once.
    expect(runs).toBe(2);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(runs).toBe(2);
  });

  it("queues a refresh right after the first listing for a request during it", async () => {
    let release: () => void = () => {};
    const { schedule, seen, request } = counted({ intervalMs: 1_000 });
    const first = schedule.first(() => new Promise<number>((resolve) => (release = () => resolve(0))));
    request();
    request();
    await settle();
    expect(seen).toEqual([]);
    release();
    await first;
    await settle();
    expect(seen).toEqual([2]);
  });

  it("keeps the next refresh waiting 9 × the work of the one before after it ended (a tenth of the time)", async () => {
    const { schedule, seen, request } = counted({ intervalMs: 100, work: 2_000 });
    await schedule.first(async () => 0);
    request();
    await settle();
    expect(seen).toEqual([1]);
    request();
    await vi.advanceTimersByTimeAsync(17_999);
    expect(seen).toEqual([1]);
    await vi.advanceTimersByTimeAsync(1);
    expect(seen).toEqual([1, 2]);
  });

  it("waits a rest longer than the longest timer in several timers", async () => {
    const { schedule, seen, request } = counted({ intervalMs: 0, work: MAX_TIMEOUT_MS });
    await schedule.first(async () => 0);
    request();
    await settle();
    request();
    await vi.advanceTimersByTimeAsync(MAX_TIMEOUT_MS);
    expect(seen).toEqual([1]);
    await vi.advanceTimersByTimeAsync(8 * MAX_TIMEOUT_MS);
    expect(seen).toEqual([1, 2]);
  });

  it("a failing refresh counts as one without work: requests go on being served, rate-limited", async () => {
    const { schedule, seen, request } = counted({ intervalMs: 1_000, fail: true });
    await schedule.first(async () => 0);
    request();
    await settle();
    request();
    await settle();
    expect(seen).toEqual([1]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(seen).toEqual([1, 2]);
  });

  it("rejects with the first listing's error and then schedules nothing, even for a request during it", async () => {
    let fail: (error: Error) => void = () => {};
    const { schedule, seen, request } = counted({ intervalMs: 0 });
    const first = schedule.first(() => new Promise<number>((_, reject) => (fail = reject)));
    request();
    fail(new Error("no list"));
    await expect(first).rejects.toThrow("no list");
    await schedule.close();
    request();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(seen).toEqual([]);
  });

  it("a waiting refresh never holds the process open (its timer is unref'd)", async () => {
    const { schedule, request } = counted({ intervalMs: 1_000 });
    await schedule.first(async () => 0);
    request();
    await settle();
    const timers = vi.spyOn(globalThis, "setTimeout");
    request();
    expect(timers).toHaveBeenCalledTimes(1);
    const timer = timers.mock.results[0]?.value as NodeJS.Timeout;
    expect(timer.hasRef()).toBe(false);
    timers.mockRestore();
  });

  it("close() drops a waiting refresh, resolves without waiting for it, and schedules nothing more", async () => {
    const { schedule, seen, request } = counted({ intervalMs: 1_000 });
    await schedule.first(async () => 0);
    request();
    await settle();
    request();
    await schedule.close();
    request();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(seen).toEqual([1]);
  });

  it("close() resolves once the running refresh has ended, and drops the one queued behind it", async () => {
    let release: () => void = () => {};
    let runs = 0;
    const schedule = new RefreshSchedule({
      intervalMs: 0,
      workShare: 0.1,
      run: async () => {
        if (++runs === 1) await new Promise<void>((resolve) => (release = resolve));
        return 0;
      },
    });
    await schedule.first(async () => 0);
    schedule.request();
    await settle();
    schedule.request();
    let closed = false;
    const closing = schedule.close().then(() => (closed = true));
    await settle();
    expect(closed).toBe(false);
    release();
    await closing;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(runs).toBe(1);
  });
});
