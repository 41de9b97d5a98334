import { getEventListeners } from "node:events";
import { describe, expect, it, vi } from "vitest";
import {
  CallAbort,
  isAborted,
  linkSignal,
  raceAbort,
  SerialAbortRace,
  subscribeAbort,
  unwatchAbort,
  watchAbort,
} from "../../src/internal/abort.js";

describe("subscribeAbort", () => {
  it("one listener on the signal for any number of subscribers; each is told the reason once", () => {
    const controller = new AbortController();
    const subscribers = Array.from({ length: 1_000 }, () => vi.fn());
    const unsubscribe = subscribers.map((subscriber) => subscribeAbort(controller.signal, subscriber));
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    unsubscribe[0]?.();
    const reason = new Error("stop");
    controller.abort(reason);
    expect(subscribers[0]).not.toHaveBeenCalled();
    for (const subscriber of subscribers.slice(1)) expect(subscriber.mock.calls).toEqual([[reason]]);
    for (const done of unsubscribe) done(); // after the abort: harmless
  });

  it("removes its listener when the last subscriber leaves, and adds one again for the next", () => {
    const controller = new AbortController();
    const first = subscribeAbort(controller.signal, () => {});
    const second = subscribeAbort(controller.signal, () => {});
    first();
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    second();
    second(); // twice: no effect
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    const third = vi.fn();
    subscribeAbort(controller.signal, third);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    controller.abort();
    expect(third).toHaveBeenCalledTimes(1);
  });

  it("a signal that takes no new property works too: each subscriber told once, no listener left after", () => {
    const controller = new AbortController();
    const signal = Object.preventExtensions(controller.signal);
    const subscribers = [vi.fn(), vi.fn(), vi.fn()];
    const unsubscribe = subscribers.map((subscriber) => subscribeAbort(signal, subscriber));
    // Nowhere to keep the shared list: a listener each.
    expect(getEventListeners(signal, "abort")).toHaveLength(3);
    unsubscribe[0]?.();
    expect(getEventListeners(signal, "abort")).toHaveLength(2);
    controller.abort("stop");
    expect(subscribers.map((subscriber) => subscriber.mock.calls)).toEqual([[], [["stop"]], [["stop"]]]);
    const other = new AbortController();
    const closed = Object.preventExtensions(other.signal);
    const leave = [subscribeAbort(closed, () => {}), subscribeAbort(closed, () => {})];
    for (const done of leave) done();
    expect(getEventListeners(closed, "abort")).toHaveLength(0);
  });

  it("leaves nothing of its own on the signal but a property that reads undefined once nobody listens", () => {
    const controller = new AbortController();
    const before = Object.getOwnPropertyNames(controller.signal);
    const unsubscribe = subscribeAbort(controller.signal, () => {});
    unsubscribe();
    expect(Object.getOwnPropertyNames(controller.signal)).toEqual(before);
    for (const key of Object.getOwnPropertySymbols(controller.signal)) {
      if (key.description?.startsWith("toolloop.")) expect((controller.signal as never)[key]).toBeUndefined();
    }
  });

  it("a signal frozen while watched (a hostile provider's doing): unwatching and a link's dispose do not throw", () => {
    const controllers = Array.from({ length: 2 }, () => new AbortController());
    const watcher = { onAbort: vi.fn() };
    const fanout = watchAbort(controllers[0]?.signal as AbortSignal, watcher);
    Object.freeze(controllers[0]?.signal);
    expect(() => unwatchAbort(controllers[0]?.signal as AbortSignal, fanout, watcher)).not.toThrow();
    const link = linkSignal(controllers[1]?.signal);
    Object.freeze(link.signal);
    expect(() => link.dispose()).not.toThrow();
    for (const controller of controllers) expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("a signal whose addEventListener throws keeps no watchers: the next watch listens again and is told", () => {
    const target = new EventTarget();
    let refuse = true;
    const lookAlike = {
      aborted: false,
      reason: undefined as unknown,
      addEventListener(type: string, listener: () => void, options?: { once?: boolean }) {
        if (refuse) throw new Error("refused");
        target.addEventListener(type, listener, options);
      },
      removeEventListener(type: string, listener: () => void) {
        target.removeEventListener(type, listener);
      },
    };
    const signal = lookAlike as unknown as AbortSignal;
    expect(() => watchAbort(signal, { onAbort: () => {} })).toThrow("refused");
    expect(() => linkSignal(signal)).toThrow("refused");
    refuse = false;
    const told = vi.fn();
    watchAbort(signal, { onAbort: told });
    const link = linkSignal(signal);
    lookAlike.reason = "stop";
    target.dispatchEvent(new Event("abort"));
    expect(told.mock.calls).toEqual([["stop"]]);
    expect(isAborted(link.signal)).toBe(true);
  });

  it("a watcher that throws when told (the link of a signal a provider froze) keeps no other from being told", () => {
    const parent = new AbortController();
    const link = linkSignal(parent.signal);
    Object.freeze(link.signal); // Node cannot abort a frozen signal: the link's abort throws
    const otherRun = vi.fn();
    subscribeAbort(parent.signal, otherRun);
    const call = vi.fn();
    watchAbort(link.signal as AbortSignal, { onAbort: call });
    parent.abort("stop");
    expect(otherRun.mock.calls).toEqual([["stop"]]);
    expect(call.mock.calls).toEqual([["stop"]]);
  });

  it("the same function subscribed twice is told twice", () => {
    const controller = new AbortController();
    const subscriber = vi.fn();
    subscribeAbort(controller.signal, subscriber);
    subscribeAbort(controller.signal, subscriber);
    controller.abort();
    expect(subscriber).toHaveBeenCalledTimes(2);
  });
});

describe("watchAbort", () => {
  it("tells each watcher object once, through one listener; the last unwatch removes it, a second unwatch does nothing", () => {
    const controller = new AbortController();
    const seen: unknown[] = [];
    const first = { onAbort: (reason: unknown) => seen.push(["first", reason]) };
    const second = { onAbort: (reason: unknown) => seen.push(["second", reason]) };
    const gone = { onAbort: (reason: unknown) => seen.push(["gone", reason]) };
    const fanout = watchAbort(controller.signal, first);
    expect(watchAbort(controller.signal, second)).toBe(fanout);
    watchAbort(controller.signal, gone);
    unwatchAbort(controller.signal, fanout, gone);
    unwatchAbort(controller.signal, fanout, gone);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    controller.abort("stop");
    controller.abort("again");
    expect(seen).toEqual([
      ["first", "stop"],
      ["second", "stop"],
    ]);
    const other = new AbortController();
    const watcher = { onAbort: () => {} };
    const own = watchAbort(other.signal, watcher);
    unwatchAbort(other.signal, own, watcher);
    expect(getEventListeners(other.signal, "abort")).toHaveLength(0);
  });
});

describe("where a signal's watchers are kept", () => {
  const ownSymbols = (signal: AbortSignal) =>
    Object.getOwnPropertySymbols(signal).filter((key) => key.description?.startsWith("toolloop."));

  it("signals watched one after another (a run's caller signal and its link) are never written to", () => {
    for (let run = 0; run < 5; run++) {
      const caller = new AbortController().signal;
      const link = linkSignal(caller);
      const child = link.signal as AbortSignal;
      const watcher = { onAbort: vi.fn() };
      const fanout = watchAbort(child, watcher);
      expect(isAborted(child)).toBe(false);
      expect([...ownSymbols(caller), ...ownSymbols(child)]).toEqual([]);
      unwatchAbort(child, fanout, watcher);
      link.dispose();
      expect([...ownSymbols(caller), ...ownSymbols(child)]).toEqual([]);
      expect(getEventListeners(caller, "abort")).toHaveLength(0);
    }
  });

  it("more signals watched at once than are kept here: one listener each, every watcher told once, nothing left after", () => {
    const controllers = Array.from({ length: 5 }, () => new AbortController());
    const seen: Array<[number, number, unknown]> = [];
    const watched = controllers.map((controller, index) =>
      [0, 1].map((which) => {
        const watcher = { onAbort: (reason: unknown) => seen.push([index, which, reason]) };
        return { watcher, fanout: watchAbort(controller.signal, watcher) };
      }),
    );
    for (const [index, controller] of controllers.entries()) {
      expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
      const [first, second] = watched[index] ?? [];
      expect(first?.fanout).toBe(second?.fanout);
    }
    // The oldest ones keep their watchers on themselves meanwhile; the two newest do not.
    expect(ownSymbols(controllers[0]?.signal as AbortSignal)).toHaveLength(1);
    expect(ownSymbols(controllers[4]?.signal as AbortSignal)).toHaveLength(0);
    controllers[0]?.abort("first");
    controllers[4]?.abort("last");
    for (const [index, controller] of controllers.entries()) {
      if (index === 0 || index === 4) continue;
      for (const { watcher, fanout } of watched[index] ?? []) unwatchAbort(controller.signal, fanout, watcher);
    }
    expect(seen).toEqual([
      [0, 0, "first"],
      [0, 1, "first"],
      [4, 0, "last"],
      [4, 1, "last"],
    ]);
    for (const controller of controllers) {
      expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
      for (const key of ownSymbols(controller.signal)) expect((controller.signal as never)[key]).toBeUndefined();
    }
    // Watched again: a fresh listener, told once.
    const again = vi.fn();
    subscribeAbort(controllers[2]?.signal as AbortSignal, again);
    controllers[2]?.abort("again");
    expect(again.mock.calls).toEqual([["again"]]);
  });

  it("a linked signal whose watchers moved onto it (runs at once) still tells them, after it aborted", () => {
    const parents = Array.from({ length: 3 }, () => new AbortController());
    const links = parents.map((parent) => linkSignal(parent.signal));
    const first = links[0]?.signal as AbortSignal;
    expect(ownSymbols(first)).toHaveLength(1); // moved onto it by the newer links
    const seen: boolean[] = [];
    watchAbort(first, { onAbort: () => seen.push(first.aborted && isAborted(first)) });
    parents[0]?.abort("stop");
    expect(seen).toEqual([true]);
    for (const link of links) link.dispose();
  });
});

describe("raceAbort", () => {
  it("rejects with the reason when the signal aborts first, and leaves no listener either way", async () => {
    const controller = new AbortController();
    const settled = await raceAbort(Promise.resolve(1), controller.signal);
    expect(settled).toBe(1);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    const pending = raceAbort(new Promise(() => {}), controller.signal);
    controller.abort(new Error("stop"));
    await expect(pending).rejects.toThrow("stop");
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });
});

describe("raceAbort on an aborted signal", () => {
  it("leaves no unhandled rejection when the callee rejects later", async () => {
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

describe("SerialAbortRace", () => {
  it("holds one listener for every race, rejects the pending race on abort, and none after dispose", async () => {
    const controller = new AbortController();
    const races = new SerialAbortRace(controller.signal);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    expect(await races.race(Promise.resolve(1))).toBe(1);
    expect(await races.race(Promise.resolve(2))).toBe(2);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    const pending = races.race(new Promise(() => {}));
    controller.abort(new Error("stop"));
    await expect(pending).rejects.toThrow("stop");
    // Once aborted, a later race rejects at once instead of waiting on a callee that ignores the signal.
    await expect(races.race(new Promise(() => {}))).rejects.toThrow("stop");
    races.dispose();
  });

  it("an abort between races rejects none of the settled ones; dispose removes the listener", async () => {
    const controller = new AbortController();
    const races = new SerialAbortRace(controller.signal);
    expect(await races.race(Promise.resolve("first"))).toBe("first");
    races.dispose();
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    controller.abort(new Error("late"));
  });

  it("a callee's rejection passes through unchanged", async () => {
    const races = new SerialAbortRace(new AbortController().signal);
    const failure = new Error("provider down");
    await expect(races.race(Promise.reject(failure))).rejects.toBe(failure);
    races.dispose();
  });
});

describe("linkSignal", () => {
  it("follows the parent through the shared subscription and detaches on dispose", () => {
    const parent = new AbortController();
    const links = Array.from({ length: 50 }, () => linkSignal(parent.signal));
    expect(getEventListeners(parent.signal, "abort")).toHaveLength(1);
    links[0]?.dispose();
    parent.abort("why");
    expect(links[0]?.signal?.aborted).toBe(false);
    expect(links.slice(1).every((link) => link.signal?.aborted && link.signal.reason === "why")).toBe(true);
  });

  it("the child carries no listener of ours: its subscribers are told by the link (a run's calls add none)", () => {
    const parent = new AbortController();
    const link = linkSignal(parent.signal);
    const child = link.signal as AbortSignal;
    const added = vi.spyOn(child, "addEventListener");
    const removed = vi.spyOn(child, "removeEventListener");
    for (let index = 0; index < 100; index++) {
      const call = new CallAbort(child, 30_000);
      call.race(Promise.resolve()).catch(() => {});
      call.dispose();
      subscribeAbort(child, () => {})(); // as raceAbort does for a provider call
    }
    expect(added).not.toHaveBeenCalled();
    expect(removed).not.toHaveBeenCalled();
    expect(getEventListeners(child, "abort")).toHaveLength(0);
    expect(getEventListeners(parent.signal, "abort")).toHaveLength(1);
    link.dispose();
    expect(getEventListeners(child, "abort")).toHaveLength(0);
    expect(getEventListeners(parent.signal, "abort")).toHaveLength(0);
  });

  it("after dispose, the child no longer follows the parent and its subscribers are not told", () => {
    const parent = new AbortController();
    const link = linkSignal(parent.signal);
    const call = new CallAbort(link.signal, undefined);
    const signal = call.signal;
    link.dispose();
    parent.abort("late");
    expect(link.signal?.aborted).toBe(false);
    expect(signal.aborted).toBe(false);
    call.dispose();
  });

  it("aborting the parent aborts every call in flight on the child, with the parent's reason", async () => {
    const parent = new AbortController();
    const link = linkSignal(parent.signal);
    const calls = Array.from({ length: 100 }, () => new CallAbort(link.signal, 30_000));
    const races = calls.map((call) => call.race(new Promise(() => {})));
    const signals = calls.slice(0, 10).map((call) => call.signal);
    const reason = new Error("stop");
    parent.abort(reason);
    const settled = await Promise.allSettled(races);
    expect(settled.every((result) => result.status === "rejected" && result.reason === reason)).toBe(true);
    expect(calls.every((call) => call.aborted && !call.timedOut && call.reason === reason)).toBe(true);
    expect(signals.every((signal) => signal.aborted && signal.reason === reason)).toBe(true);
    for (const call of calls) call.dispose();
    link.dispose();
    expect(getEventListeners(parent.signal, "abort")).toHaveLength(0);
  });

  it("an already aborted parent gives an aborted child", () => {
    const parent = new AbortController();
    parent.abort("early");
    expect(linkSignal(parent.signal).signal?.reason).toBe("early");
    expect(linkSignal(undefined).signal).toBeUndefined();
  });
});

describe("isAborted", () => {
  it("answers as signal.aborted for a linked signal: before, when its parent aborts (already, to its own listeners), after dispose", () => {
    const parent = new AbortController();
    const link = linkSignal(parent.signal);
    const child = link.signal as AbortSignal;
    expect(isAborted(child)).toBe(false);
    const seen: boolean[] = [];
    child.addEventListener("abort", () => seen.push(isAborted(child)));
    parent.abort("why");
    expect([isAborted(child), child.aborted, ...seen]).toEqual([true, true, true]);
    const early = new AbortController();
    early.abort();
    expect(isAborted(linkSignal(early.signal).signal as AbortSignal)).toBe(true);
    const detached = linkSignal(new AbortController().signal);
    detached.dispose();
    expect(isAborted(detached.signal as AbortSignal)).toBe(false);
  });

  it("answers as signal.aborted for any other signal", () => {
    const controller = new AbortController();
    expect(isAborted(controller.signal)).toBe(false);
    controller.abort();
    expect(isAborted(controller.signal)).toBe(true);
    expect(isAborted(AbortSignal.abort())).toBe(true);
  });
});

describe("CallAbort", () => {
  it("makes no AbortController until the signal is read, then one", () => {
    const parent = new AbortController();
    const abort = new CallAbort(parent.signal, undefined);
    expect(abort.aborted).toBe(false);
    const signal = abort.signal;
    expect(abort.signal).toBe(signal);
    parent.abort("x");
    expect(signal.aborted).toBe(true);
    expect(abort.reason).toBe("x");
  });

  it("a signal read after the abort is already aborted with the reason", () => {
    const parent = new AbortController();
    parent.abort("before");
    const abort = new CallAbort(parent.signal, 1000);
    expect(abort.aborted).toBe(true);
    expect(abort.signal.reason).toBe("before");
    abort.dispose();
  });

  it("times out with a TimeoutError and says so", async () => {
    vi.useFakeTimers();
    try {
      const abort = new CallAbort(undefined, 50);
      const race = abort.race(new Promise(() => {}));
      vi.advanceTimersByTime(50);
      await expect(race).rejects.toMatchObject({ name: "TimeoutError", message: "tool timed out after 50 ms" });
      expect(abort.timedOut).toBe(true);
      expect(abort.signal.aborted).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it("dispose detaches from the parent and clears the timer; the signal stays as it is", () => {
    vi.useFakeTimers();
    try {
      const parent = new AbortController();
      const abort = new CallAbort(parent.signal, 50);
      const signal = abort.signal;
      abort.dispose();
      expect(getEventListeners(parent.signal, "abort")).toHaveLength(0);
      expect(vi.getTimerCount()).toBe(0);
      parent.abort();
      expect(signal.aborted).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });

  it("without parent or timeout, race returns the promise itself", () => {
    const promise = Promise.resolve(1);
    expect(new CallAbort(undefined, undefined).race(promise)).toBe(promise);
  });
});
