import { setMaxListeners } from "node:events";

import { type DeadlineEntry, type DeadlineQueue, deadlineQueue, List, type ListNode } from "./deadline.js";

/** Told once when a signal aborts. */
interface AbortTarget {
  onAbort(reason: unknown): void;
}

/**
 * The one real listener of ours on a signal, however many runs and calls wait on it: Node's
 * EventTarget warns past ten listeners and removes a listener by a linear search, so a listener per
 * call would make a turn of n calls cost O(n²) and print MaxListenersExceededWarning on the
 * caller's console. Subscribing is a Set add, leaving a Set delete; the listener is on the signal
 * while anyone is subscribed. A run's own signal (see {@link linkSignal}) has a fan-out driven by
 * the run's subscription to the caller's signal instead, with no listener at all: its calls
 * subscribe and leave without touching any signal.
 */
class Fanout {
  readonly #signal: AbortSignal;
  readonly #targets = new List<AbortTarget>();
  // Driven: told by linkSignal, never listens.
  readonly #driven: boolean;
  #listening = false;

  constructor(signal: AbortSignal, driven: boolean) {
    this.#signal = signal;
    this.#driven = driven;
  }

  add(target: AbortTarget): ListNode<AbortTarget> {
    const node = this.#targets.push(target);
    if (!this.#listening && !this.#driven) {
      this.#listening = true;
      this.#signal.addEventListener("abort", this.fire, { once: true });
    }
    return node;
  }

  delete(node: ListNode<AbortTarget>): void {
    if (!this.#targets.remove(node) || this.#targets.head !== undefined || !this.#listening) return;
    this.#signal.removeEventListener("abort", this.fire);
    this.#listening = false;
    if (fanouts.get(this.#signal) === this) fanouts.delete(this.#signal);
  }

  /** Tells every subscriber the signal's reason, once. */
  readonly fire = (): void => {
    this.#listening = false;
    if (fanouts.get(this.#signal) === this) fanouts.delete(this.#signal);
    const reason = this.#signal.reason;
    for (const target of this.#targets.take()) target.onAbort(reason);
  };
}

const fanouts = new WeakMap<AbortSignal, Fanout>();

/** The fan-out of `signal`, which must not be aborted yet. */
function fanoutOf(signal: AbortSignal): Fanout {
  let fanout = fanouts.get(signal);
  if (fanout === undefined) {
    fanout = new Fanout(signal, false);
    fanouts.set(signal, fanout);
  }
  return fanout;
}

/**
 * Calls `subscriber` with the signal's reason once `signal` aborts; returns the function that
 * unsubscribes. O(1) both ways. The listener on `signal` itself is removed when its last
 * subscriber leaves, so nothing stays on a long-lived caller signal after the calls end.
 * The signal must not be aborted yet (check `signal.aborted` first).
 */
export function subscribeAbort(signal: AbortSignal, subscriber: (reason: unknown) => void): () => void {
  const fanout = fanoutOf(signal);
  const node = fanout.add({ onAbort: subscriber });
  return () => fanout.delete(node);
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
  const fanout = fanoutOf(signal);
  return new Promise<T>((resolve, reject) => {
    const node = fanout.add({ onAbort: reject });
    promise.then(
      (value) => {
        fanout.delete(node);
        resolve(value);
      },
      (error: unknown) => {
        fanout.delete(node);
        reject(error);
      },
    );
  });
}

/** A signal that follows `parent`, and the function that detaches it. */
export interface LinkedSignal {
  signal: AbortSignal | undefined;
  dispose(): void;
}

const NOTHING_TO_DISPOSE = () => {};

/**
 * A child signal that follows `parent` (through the one shared subscription), with no listener
 * limit: a provider SDK may add a listener per request without Node warning on the console.
 * Until {@link LinkedSignal.dispose}, whatever subscribes to the child (a run's calls, its provider
 * calls) is told by the subscription to `parent` directly: no listener is added to the child.
 */
export function linkSignal(parent: AbortSignal | undefined): LinkedSignal {
  if (parent === undefined) return { signal: undefined, dispose: NOTHING_TO_DISPOSE };
  const controller = new AbortController();
  const { signal } = controller;
  setMaxListeners(0, signal);
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { signal, dispose: NOTHING_TO_DISPOSE };
  }
  const fanout = new Fanout(signal, true);
  fanouts.set(signal, fanout);
  const unsubscribe = subscribeAbort(parent, (reason) => {
    controller.abort(reason);
    fanout.fire();
  });
  return {
    signal,
    dispose: () => {
      unsubscribe();
      if (fanouts.get(signal) === fanout) fanouts.delete(signal);
    },
  };
}

/**
 * The abort state of one tool call: it follows the caller's signal and an optional timeout, and
 * makes the call's own `AbortSignal` only when the tool reads it. Nothing is armed for a tool that
 * neither reads its signal nor returns a promise; otherwise the call joins the caller signal's
 * fan-out and its timeout's deadline queue (a Set add each, no listener, timer or controller of
 * its own). {@link dispose} detaches it when the call ends, so listeners a tool adds to its signal
 * and forgets die with the call instead of piling up on the caller's long-lived signal.
 */
export class CallAbort implements AbortTarget, DeadlineEntry {
  /** When the timeout fires (`performance.now()`), counted from the start of the call. */
  readonly deadline: number;
  readonly #parent: AbortSignal | undefined;
  readonly #timeoutMs: number | undefined;
  #armed = false;
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;
  #timedOut = false;
  #reject: ((reason: unknown) => void) | undefined;
  #fanout: Fanout | undefined;
  #fanoutNode: ListNode<AbortTarget> | undefined;
  #deadlines: DeadlineQueue | undefined;
  #deadlineNode: ListNode<DeadlineEntry> | undefined;

  /** @param timeoutMs finite milliseconds from now, or `undefined` for none */
  constructor(parent: AbortSignal | undefined, timeoutMs: number | undefined) {
    this.#parent = parent;
    this.#timeoutMs = timeoutMs;
    this.deadline = timeoutMs === undefined ? 0 : performance.now() + timeoutMs;
  }

  /** `true` once the timeout fired (and not the caller's signal first). */
  get timedOut(): boolean {
    return this.#timedOut;
  }

  /** `true` once the caller's signal aborted or the timeout fired. */
  get aborted(): boolean {
    this.#arm();
    return this.#aborted;
  }

  /** Why the call was aborted (the caller's reason, or a `TimeoutError`). */
  get reason(): unknown {
    return this.#reason;
  }

  /** The call's signal, made on first use; never aborts when there is neither caller signal nor timeout. */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      setMaxListeners(0, this.#controller.signal);
      this.#arm();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Settles with `value`, or rejects with the abort reason as soon as the call is aborted. */
  race<T>(value: Promise<T>): Promise<T> {
    this.#arm();
    if (this.#aborted) {
      value.catch(() => {});
      return Promise.reject(this.#reason);
    }
    if (this.#fanout === undefined && this.#deadlines === undefined) return value;
    return new Promise<T>((resolve, reject) => {
      this.#reject = reject;
      value.then(resolve, reject);
    });
  }

  /** Leaves the caller signal's fan-out and the deadline queue. The call's signal stays as it is. */
  dispose(): void {
    this.#armed = true; // nothing to arm after the end
    if (this.#fanoutNode !== undefined) this.#fanout?.delete(this.#fanoutNode);
    if (this.#deadlineNode !== undefined) this.#deadlines?.delete(this.#deadlineNode);
    this.#fanout = undefined;
    this.#deadlines = undefined;
    this.#reject = undefined;
  }

  /** @internal the caller's signal aborted */
  onAbort(reason: unknown): void {
    this.#fanout = undefined;
    this.#abort(reason);
  }

  /** @internal the timeout passed */
  expire(): void {
    this.#deadlines = undefined;
    if (this.#aborted) return;
    this.#timedOut = true;
    this.#abort(new DOMException(`tool timed out after ${this.#timeoutMs} ms`, "TimeoutError"));
  }

  #arm(): void {
    if (this.#armed) return;
    this.#armed = true;
    const parent = this.#parent;
    if (parent !== undefined) {
      if (parent.aborted) {
        this.#abort(parent.reason);
        return;
      }
      this.#fanout = fanoutOf(parent);
      this.#fanoutNode = this.#fanout.add(this);
    }
    if (this.#timeoutMs !== undefined) {
      this.#deadlines = deadlineQueue(this.#timeoutMs);
      this.#deadlineNode = this.#deadlines.add(this);
    }
  }

  #abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
    this.#reject?.(reason);
  }
}
