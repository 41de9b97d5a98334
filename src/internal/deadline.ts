/** Something that expires at a deadline: the abort state of one tool call. */
export interface DeadlineEntry {
  /** `performance.now()` at which it expires. */
  readonly deadline: number;
  /** Called once, when the deadline has passed and the entry is still queued. */
  expire(): void;
}

/**
 * The pending deadlines of one timeout value, sharing one timer: entries expire in the order they
 * were added (with one timeout value, that is the order of their deadlines), so the timer is set for
 * the oldest entry only and set again when it fires. Adding and removing an entry is a Set add and
 * delete and touches no timer, except that the timer is `ref()`ed while an entry is pending (a hung
 * tool still times out) and `unref()`ed, or cleared, when none is (a finished call never keeps the
 * process alive). A run holds its queue (see {@link holdDeadlines}) so that its calls share one timer.
 */
export class DeadlineQueue extends Set<DeadlineEntry> {
  readonly #ms: number;
  #holds = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  // What clears the timer: fake timers (tests) swap the global functions, and a timer set by the
  // other clock is replaced.
  #clear: typeof clearTimeout | undefined;

  constructor(ms: number) {
    super();
    this.#ms = ms;
  }

  /** Queues `entry`, whose deadline must be at most this queue's timeout from now. */
  override add(entry: DeadlineEntry): this {
    super.add(entry);
    if (this.#timer === undefined || this.#clear !== clearTimeout) this.#arm();
    else if (this.size === 1) this.#timer.ref?.();
    return this;
  }

  /** Withdraws `entry` (no effect once it expired or was withdrawn). */
  override delete(entry: DeadlineEntry): boolean {
    if (!super.delete(entry) || this.size > 0) return false;
    if (this.#holds > 0) this.#timer?.unref?.();
    else this.#stop();
    return true;
  }

  /** Keeps the timer while held (cleared at the last release when nothing is queued); returns the release, to call once. */
  hold(): () => void {
    this.#holds++;
    return () => {
      if (--this.#holds === 0 && this.size === 0) this.#stop();
    };
  }

  /** Sets the timer for the oldest entry, never longer than the timeout (whatever a swapped clock says). */
  #arm(): void {
    this.#clear?.(this.#timer);
    this.#clear = clearTimeout;
    const [oldest] = this;
    const delay = Math.ceil((oldest as DeadlineEntry).deadline - performance.now());
    this.#timer = setTimeout(this.#fire, Math.min(this.#ms, Math.max(0, delay)));
  }

  #stop(): void {
    this.#clear?.(this.#timer);
    this.#timer = undefined;
    if (queues.get(this.#ms) === this) queues.delete(this.#ms);
  }

  readonly #fire = (): void => {
    this.#timer = undefined;
    this.#clear = undefined;
    // A timer that fires a little before the oldest deadline is set again, for the rest.
    const now = performance.now();
    for (const entry of this) {
      if (entry.deadline > now) break;
      super.delete(entry);
      entry.expire();
    }
    if (this.size === 0) {
      if (this.#holds === 0) this.#stop();
    } else if (this.#timer === undefined) this.#arm();
  };
}

// One queue per distinct timeout value, removed when nothing holds or waits on it.
const queues = new Map<number, DeadlineQueue>();

/** The queue of timeout `ms` (finite, > 0). */
export function deadlineQueue(ms: number): DeadlineQueue {
  let queue = queues.get(ms);
  if (queue === undefined) {
    queue = new DeadlineQueue(ms);
    queues.set(ms, queue);
  }
  return queue;
}

const NOTHING_HELD = () => {};

/**
 * Keeps the timer of timeout `ms` (`undefined` or `Infinity`: none) while a run lasts, so that its
 * calls share one timer instead of arming and clearing one each; returns the release function.
 */
export function holdDeadlines(ms: number | undefined): () => void {
  if (ms === undefined || ms === Number.POSITIVE_INFINITY) return NOTHING_HELD;
  return deadlineQueue(ms).hold();
}
