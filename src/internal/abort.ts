import { setMaxListeners } from "node:events";
import { type DeadlineEntry, type DeadlineQueue, deadlineQueue } from "./deadline.js";

/**
 * An `AbortController` whose signal takes any number of listeners without Node's leak warning: a
 * run's or a call's signal is listened to by every tool and every call that uses it.
 */
export function unboundedController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}

type AbortSubscriber = (reason: unknown) => void;

/** What {@link watchAbort} tells, once, when the signal aborts. */
export interface AbortWatcher {
  /** Called with the signal's reason. */
  onAbort(reason: unknown): void;
}

/** The watchers of one signal, as {@link watchAbort} returns it for {@link unwatchAbort}. */
export interface Fanout {
  readonly subscribers: Set<AbortWatcher>;
  /** The listener on the signal; `undefined` for a linked signal, whose link notifies the subscribers. */
  readonly listener: (() => void) | undefined;
  /** A linked signal's own flag, set before it aborts (see {@link isAborted}). */
  aborted?: boolean;
}

// One real listener per signal, however many runs and calls wait on it: Node's EventTarget warns
// past ten listeners and removes a listener by a linear search, so a listener per call would make
// a turn of n calls cost O(n²) and print MaxListenersExceededWarning on the caller's console.
//
// Where a signal's watchers are found: the two signals most recently given watchers keep them in
// two places here; an older one that still has watchers keeps them on the signal itself, under a
// symbol. So runs one after another (a caller's signal and the run's link each) never write to a
// signal: on Node 20, where every AbortSignal has a hidden class of its own, a property added to
// one makes it a new class (~1 µs, and garbage for the collector), and a WeakMap entry per signal
// cost the collector about 0.8 µs on Node 22. A place is emptied when its signal's watchers are
// gone, so what stays referenced from here is at most two signals of runs still waiting. A signal
// that takes no new property (`Object.preventExtensions`) is kept nowhere: its watchers each get a
// listener of their own, as the first one does.
const FANOUT = Symbol("toolloop.fanout");
type Slotted = AbortSignal & { [FANOUT]?: Fanout | undefined };

// The newer place, then the older one.
let newerSignal: AbortSignal | undefined;
let newerFanout: Fanout | undefined;
let olderSignal: AbortSignal | undefined;
let olderFanout: Fanout | undefined;

/** The watchers of `signal`, wherever they are kept; `undefined` when it has none. */
function fanoutOf(signal: AbortSignal): Fanout | undefined {
  return signal === newerSignal ? newerFanout : signal === olderSignal ? olderFanout : (signal as Slotted)[FANOUT];
}

/**
 * Keeps `fanout` on the signal; nothing (no error) where the signal takes no new property or was
 * frozen. A store in a `try`, not `Reflect.set`: that call costs about 0.15 µs on Node 22, the
 * store 0.02.
 */
function setFanout(signal: AbortSignal, fanout: Fanout | undefined): void {
  try {
    (signal as Slotted)[FANOUT] = fanout;
  } catch {
    // its watchers each get a listener of their own (see watchAbort)
  }
}

/**
 * Keeps `fanout` as `signal`'s watchers in the newer place here; those in the older place move onto
 * their signal. Nowhere for a signal that takes no new property.
 */
function keepFanout(signal: AbortSignal, fanout: Fanout): void {
  if (!Object.isExtensible(signal)) return;
  if (olderSignal !== undefined) setFanout(olderSignal, olderFanout);
  olderSignal = newerSignal;
  olderFanout = newerFanout;
  newerSignal = signal;
  newerFanout = fanout;
}

/** Forgets `fanout` as `signal`'s watchers (no effect when they are others by now). */
function dropFanout(signal: AbortSignal, fanout: Fanout): void {
  if (signal === newerSignal && newerFanout === fanout) {
    newerSignal = olderSignal;
    newerFanout = olderFanout;
    olderSignal = olderFanout = undefined;
  } else if (signal === olderSignal && olderFanout === fanout) olderSignal = olderFanout = undefined;
  else if ((signal as Slotted)[FANOUT] === fanout) setFanout(signal, undefined);
}

function notifyAll(signal: AbortSignal, fanout: Fanout, reason: unknown): void {
  dropFanout(signal, fanout);
  for (const watcher of fanout.subscribers) {
    try {
      watcher.onAbort(reason);
    } catch {
      // A watcher that aborts a signal someone froze (Node cannot abort it) must not keep the
      // others waiting, nor throw inside Node's event dispatch (an uncaught exception).
    }
  }
  fanout.subscribers.clear();
}

/**
 * Calls `subscriber` with the signal's reason once `signal` aborts; returns the function that
 * unsubscribes. O(1) both ways. The listener on `signal` itself is removed when its last
 * subscriber leaves, so nothing stays on a long-lived caller signal after the calls end.
 * The signal must not be aborted yet (check `signal.aborted` first).
 */
export function subscribeAbort(signal: AbortSignal, subscriber: AbortSubscriber): () => void {
  // A fresh watcher per subscription: the Set needs distinct entries.
  const watcher: AbortWatcher = { onAbort: subscriber };
  const fanout = watchAbort(signal, watcher);
  return () => unwatchAbort(signal, fanout, watcher);
}

/**
 * {@link subscribeAbort} for an object that is its own watcher (no closure per subscription): calls
 * `watcher.onAbort(reason)` once `signal` aborts. Returns what {@link unwatchAbort} needs.
 * The signal must not be aborted yet.
 */
export function watchAbort(signal: AbortSignal, watcher: AbortWatcher): Fanout {
  let fanout = fanoutOf(signal);
  if (fanout === undefined) {
    const listener = () => notifyAll(signal, made, signal.reason);
    const made: Fanout = { subscribers: new Set(), listener };
    // Kept only once listening: a signal whose addEventListener throws must not keep a fanout
    // that the next watcher would join, never to be told.
    signal.addEventListener("abort", listener, { once: true });
    keepFanout(signal, made);
    fanout = made;
  }
  fanout.subscribers.add(watcher);
  return fanout;
}

/** Ends a {@link watchAbort} (no effect when it ended already); the listener on `signal` goes with its last watcher. */
export function unwatchAbort(signal: AbortSignal, fanout: Fanout, watcher: AbortWatcher): void {
  if (!fanout.subscribers.delete(watcher) || fanout.subscribers.size > 0 || fanout.listener === undefined) return;
  signal.removeEventListener("abort", fanout.listener);
  dropFanout(signal, fanout);
}

/**
 * Settles with `promise`, or rejects with the signal's reason as soon as it aborts, so a callee
 * that ignores its signal cannot hang the caller. The subscription ends either way.
 */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const unsubscribe = subscribeAbort(signal, reject);
    promise.then(
      (value) => {
        unsubscribe();
        resolve(value);
      },
      (error: unknown) => {
        unsubscribe();
        reject(error);
      },
    );
  });
}

/**
 * {@link raceAbort} for promises awaited one after another (a run's provider calls): one
 * subscription to `signal` for all of them instead of one per promise. {@link dispose} ends it.
 */
export class SerialAbortRace implements AbortWatcher {
  readonly #signal: AbortSignal;
  #reject: ((reason: unknown) => void) | undefined;
  readonly #watching: Fanout;

  /** @param signal not aborted yet */
  constructor(signal: AbortSignal) {
    this.#signal = signal;
    this.#watching = watchAbort(signal, this);
  }

  /** @internal the signal aborted: the latest race's reject (a race that already settled ignores it) */
  onAbort(reason: unknown): void {
    this.#reject?.(reason);
  }

  /** Settles with `promise`, or rejects with the signal's reason as soon as it aborts. */
  race<T>(promise: Promise<T>): Promise<T> {
    if (isAborted(this.#signal)) return raceAbort(promise, this.#signal);
    return new Promise<T>((resolve, reject) => {
      this.#reject = reject;
      promise.then(resolve, reject);
    });
  }

  /** Unsubscribes from the signal. */
  dispose(): void {
    this.#reject = undefined;
    unwatchAbort(this.#signal, this.#watching, this);
  }
}

// Whether each linked signal aborted, set before it aborts: Node 20's `signal.aborted` is a getter
// on an object whose prototype was set after creation (~540 instructions a read, callgrind), and
// the loop asks about the run's signal several times per step. Kept on the linked signal's fanout
// while the link lasts; afterwards `signal.aborted` answers.

/** `signal?.aborted === true`; for a signal made by {@link linkSignal}, read from its own flag (same answer, cheaper). */
export function isAborted(signal: AbortSignal | undefined): boolean {
  if (signal === undefined) return false;
  return fanoutOf(signal)?.aborted ?? signal.aborted;
}

/** A signal that follows `parent`, and the function that detaches it. */
export interface LinkedSignal {
  signal: AbortSignal | undefined;
  dispose(): void;
}

/**
 * A child signal that follows `parent` (through the one shared subscription), with no listener
 * limit: a provider SDK may add a listener per request without Node warning on the console. The
 * child carries no listener of ours: until {@link LinkedSignal.dispose}, whatever subscribes to it
 * (the run's calls, one by one) is notified by the link itself, after the child aborted.
 */
export function linkSignal(parent: AbortSignal | undefined): LinkedSignal {
  if (parent === undefined) return { signal: undefined, dispose: () => {} };
  const controller = unboundedController();
  const child = controller.signal;
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { signal: child, dispose: () => {} };
  }
  const fanout: Fanout = { subscribers: new Set(), listener: undefined, aborted: false };
  const unsubscribe = subscribeAbort(parent, (reason) => {
    fanout.aborted = true;
    try {
      controller.abort(reason);
    } finally {
      // told even when the child cannot abort (frozen by the provider given it)
      notifyAll(child, fanout, reason);
    }
  });
  // Kept once the parent is listened to (its addEventListener may throw).
  keepFanout(child, fanout);
  return {
    signal: child,
    dispose: () => {
      unsubscribe();
      // Later subscribers (a provider call still settling) get a fanout of their own, listening.
      dropFanout(child, fanout);
    },
  };
}

/**
 * The abort state of one tool call: it follows the caller's signal and an optional timeout, and
 * makes the call's own `AbortSignal` only when the tool reads it. Nothing is armed for a tool that
 * neither reads its signal nor returns a promise; otherwise the call subscribes to the caller's
 * signal (one listener per signal, see {@link subscribeAbort}) and joins its timeout's deadline
 * queue (one timer per timeout value): no listener, timer or controller of its own.
 * {@link dispose} detaches it when the call ends, so listeners a tool adds to its signal and
 * forgets die with the call instead of piling up on the caller's long-lived signal.
 */
export class CallAbort implements DeadlineEntry, AbortWatcher {
  /** When the timeout fires (`performance.now()`), counted from the start of the call. */
  readonly deadline: number;
  readonly #parent: AbortSignal | undefined;
  readonly #timeoutMs: number | undefined;
  /** `true` once the timeout fired (and not the caller's signal first). */
  timedOut = false;
  /** Why the call was aborted (the caller's reason, or a `TimeoutError`). */
  reason: unknown;
  #armed = false;
  #controller: AbortController | undefined;
  #aborted = false;
  #reject: ((reason: unknown) => void) | undefined;
  /** The caller's signal's watchers while this call is one of them. */
  #watching: Fanout | undefined;
  #queue: DeadlineQueue | undefined;

  /**
   * @param timeoutMs finite milliseconds from `startedAt`, or `undefined` for none
   * @param startedAt `performance.now()` when the call started, when the caller read the clock already (for its log line) @default now
   */
  constructor(parent: AbortSignal | undefined, timeoutMs: number | undefined, startedAt?: number) {
    this.#parent = parent;
    this.#timeoutMs = timeoutMs;
    this.deadline = timeoutMs === undefined ? 0 : (startedAt ?? performance.now()) + timeoutMs;
  }

  /** `true` once the caller's signal aborted or the timeout fired. */
  get aborted(): boolean {
    this.#arm();
    return this.#aborted;
  }

  /** The call's signal, made on first use; never aborts when there is neither caller signal nor timeout. */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = unboundedController();
      this.#arm();
      if (this.#aborted) this.#controller.abort(this.reason);
    }
    return this.#controller.signal;
  }

  /** Settles with `value`, or rejects with the abort reason as soon as the call is aborted. */
  race<T>(value: Promise<T>): Promise<T> {
    this.#arm();
    if (this.#aborted) {
      value.catch(() => {});
      return Promise.reject(this.reason);
    }
    if (this.#watching === undefined && this.#queue === undefined) return value;
    return new Promise<T>((resolve, reject) => {
      this.#reject = reject;
      value.then(resolve, reject);
    });
  }

  /** Unsubscribes from the caller's signal and leaves the deadline queue. The call's signal stays as it is. */
  dispose(): void {
    this.#armed = true; // nothing to arm after the end
    if (this.#watching !== undefined) unwatchAbort(this.#parent as AbortSignal, this.#watching, this);
    this.#queue?.delete(this);
    this.#watching = undefined;
    this.#queue = undefined;
    this.#reject = undefined;
  }

  /** @internal the caller's signal aborted (called by its watchers, see {@link watchAbort}) */
  onAbort(reason: unknown): void {
    this.#abort(reason);
  }

  /** @internal the timeout passed (called by the deadline queue) */
  expire(): void {
    if (this.#aborted) return;
    this.timedOut = true;
    this.#abort(new DOMException(`tool timed out after ${this.#timeoutMs} ms`, "TimeoutError"));
  }

  #arm(): void {
    if (this.#armed) return;
    this.#armed = true;
    const parent = this.#parent;
    if (parent !== undefined) {
      if (isAborted(parent)) {
        this.#abort(parent.reason);
        return;
      }
      this.#watching = watchAbort(parent, this);
    }
    if (this.#timeoutMs !== undefined) this.#queue = deadlineQueue(this.#timeoutMs).add(this);
  }

  #abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.reason = reason;
    this.#controller?.abort(reason);
    this.#reject?.(reason);
  }
}
