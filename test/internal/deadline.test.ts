import { afterEach, describe, expect, it, vi } from "vitest";
import { CallAbort } from "../../src/internal/abort.js";
import { type DeadlineEntry, deadlineQueue, holdDeadlines } from "../../src/internal/deadline.js";

const hung = () => new Promise<never>(() => {});

/**
 * The timers `setTimeout` arms from now on for a timeout of `ms` (a spy, restored after the test):
 * a queue arms for its oldest deadline, so the delay is `ms` less the time since that call started.
 */
function recordTimers(ms: number): Array<ReturnType<typeof setTimeout>> {
  const timers: Array<ReturnType<typeof setTimeout>> = [];
  const original = globalThis.setTimeout;
  vi.spyOn(globalThis, "setTimeout").mockImplementation(((...args: Parameters<typeof setTimeout>) => {
    const timer = original(...args);
    const delay = args[1] ?? 0;
    if (delay <= ms && delay > ms - 1_000) timers.push(timer);
    return timer;
  }) as typeof setTimeout);
  return timers;
}

afterEach(() => {
  vi.useRealTimers();
});

describe("deadline queue", () => {
  it("many calls with one timeout share one timer, and each times out at its own deadline", async () => {
    vi.useFakeTimers();
    const first = Array.from({ length: 100 }, () => new CallAbort(undefined, 50));
    const firstRaces = first.map((abort) => abort.race(hung()));
    await vi.advanceTimersByTimeAsync(20);
    const later = Array.from({ length: 100 }, () => new CallAbort(undefined, 50));
    const laterRaces = later.map((abort) => abort.race(hung()));
    for (const race of [...firstRaces, ...laterRaces]) race.catch(() => {});
    expect(vi.getTimerCount()).toBe(1);

    await vi.advanceTimersByTimeAsync(29);
    expect(first.some((abort) => abort.aborted)).toBe(false);
    await vi.advanceTimersByTimeAsync(1); // t = 50
    expect(first.every((abort) => abort.timedOut)).toBe(true);
    expect(later.some((abort) => abort.aborted)).toBe(false);
    expect(vi.getTimerCount()).toBe(1); // set again, for the later calls
    await vi.advanceTimersByTimeAsync(19);
    expect(later.some((abort) => abort.aborted)).toBe(false);
    await vi.advanceTimersByTimeAsync(1); // t = 70
    expect(later.every((abort) => abort.timedOut)).toBe(true);
    await expect(laterRaces[99]).rejects.toMatchObject({ name: "TimeoutError" });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("one timer per distinct timeout value", () => {
    vi.useFakeTimers();
    const aborts = [10, 20, 10, 20, 30].map((ms) => new CallAbort(undefined, ms));
    for (const abort of aborts) abort.race(hung()).catch(() => {});
    expect(vi.getTimerCount()).toBe(3);
    for (const abort of aborts) abort.dispose();
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a call that ends early takes its deadline with it; a later call's deadline is kept", async () => {
    vi.useFakeTimers();
    const early = new CallAbort(undefined, 100);
    early.race(hung()).catch(() => {});
    await vi.advanceTimersByTimeAsync(40);
    const late = new CallAbort(undefined, 100);
    late.race(hung()).catch(() => {});
    early.dispose();
    await vi.advanceTimersByTimeAsync(60); // early's deadline: nothing expires, the timer is set again
    expect(early.aborted).toBe(false);
    expect(late.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(39);
    expect(late.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(late.timedOut).toBe(true);
  });

  it("without a hold, the last call to end clears the timer", () => {
    vi.useFakeTimers();
    const a = new CallAbort(undefined, 1000);
    const b = new CallAbort(undefined, 1000);
    a.race(hung()).catch(() => {});
    b.race(hung()).catch(() => {});
    a.dispose();
    expect(vi.getTimerCount()).toBe(1);
    b.dispose();
    expect(vi.getTimerCount()).toBe(0);
  });

  it("while held (a run), calls arm one timer in all; it keeps the process alive only while a call is pending", async () => {
    // A timeout no other test uses: the timers armed with it are this queue's, whatever else the
    // process runs meanwhile (the test reads their state, never the process's count of timers).
    const ms = 29_989;
    const ours = recordTimers(ms);
    const release = holdDeadlines(ms);
    for (let index = 0; index < 50; index++) {
      const abort = new CallAbort(undefined, ms);
      const done = abort.race(new Promise((resolve) => setImmediate(resolve, index)));
      const armed = [...ours];
      expect(armed).toHaveLength(1); // the first call's timer, kept for the others
      expect(armed[0]?.hasRef()).toBe(true); // pending: ref()ed
      await done;
      abort.dispose();
      expect(armed[0]?.hasRef()).toBe(false); // idle: unref()ed, nothing keeps the process alive
    }
    const [armed] = ours;
    expect(ours).toHaveLength(1);
    release();
    expect((armed as unknown as { _destroyed: boolean })._destroyed).toBe(true); // cleared once released
  });

  it("a hung call still times out while held, after other calls left the timer idle", async () => {
    vi.useFakeTimers();
    const release = holdDeadlines(1000);
    try {
      const quick = new CallAbort(undefined, 1000);
      await quick.race(Promise.resolve("ok"));
      quick.dispose();
      await vi.advanceTimersByTimeAsync(500);
      const stuck = new CallAbort(undefined, 1000);
      const race = stuck.race(hung());
      race.catch(() => {});
      await vi.advanceTimersByTimeAsync(999); // quick's old deadline passes on the way: not stuck's
      expect(stuck.aborted).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      await expect(race).rejects.toMatchObject({ name: "TimeoutError", message: "tool timed out after 1000 ms" });
    } finally {
      release();
    }
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a hold without calls arms nothing; Infinity and undefined hold nothing", () => {
    vi.useFakeTimers();
    const releases = [holdDeadlines(1000), holdDeadlines(undefined), holdDeadlines(Number.POSITIVE_INFINITY)];
    expect(vi.getTimerCount()).toBe(0);
    for (const release of releases) release();
  });

  it("a timer armed by fake timers is replaced once the real ones are back (and the other way)", async () => {
    vi.useFakeTimers();
    const release = holdDeadlines(40);
    try {
      const fake = new CallAbort(undefined, 40);
      fake.race(Promise.resolve()).catch(() => {});
      fake.dispose(); // the timer stays, idle, on the fake clock
      vi.useRealTimers();
      const real = new CallAbort(undefined, 40);
      await expect(real.race(hung())).rejects.toMatchObject({ name: "TimeoutError" });
      real.dispose();
    } finally {
      release();
    }
  });

  it("entries expire in insertion order and an entry expires once", async () => {
    vi.useFakeTimers();
    const expired: string[] = [];
    const entry = (name: string, at: number): DeadlineEntry => ({ deadline: at, expire: () => expired.push(name) });
    const now = performance.now();
    const queue = deadlineQueue(10);
    const a = entry("a", now + 10);
    queue.add(a).add(entry("b", now + 10));
    await vi.advanceTimersByTimeAsync(10);
    queue.delete(a); // already gone: no effect
    await vi.advanceTimersByTimeAsync(100);
    expect(expired).toEqual(["a", "b"]);
    expect(vi.getTimerCount()).toBe(0);
  });
});
