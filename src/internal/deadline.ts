/** Something that expires at a deadline: the abort state of one tool call. */
export interface DeadlineEntry {
  /** `performance.now()` at which it expires. */
  readonly deadline: number;
  /** Called once, when the deadline has passed and the entry is still queued. */
  expire(): void;
}

type Timer = ReturnType<typeof setTimeout>;

/**
 * The pending deadlines of one timeout value, sharing one timer: entries expire in the order they
 * were added (with one timeout value, that is the order of their deadlines), so the timer is set for
 * the oldest entry only and set again when it fires. Adding and removing an entry is O(1) and
 * touches no timer, except that the timer is `ref()`ed while an entry is pending (a hung tool still
 * times out) and `unref()`ed, or cleared, when none is (a finished call never keeps the process
 * alive). A run holds its queue (see {@link holdDeadlines}) so that its calls share one timer.
 */
class DeadlineQueue {
  readonly #ms: number;
  // Insertion-ordered: the first entry is the oldest.
  readonly #entries = new Set<DeadlineEntry>();
  #holds = 0;
  #timer: Timer | undefined;
  // The functions that armed the timer: fake timers (tests) swap the global ones.
  #set: typeof setTimeout | undefined;
  #clear: typeof clearTimeout | undefined;
  #target = 0;

  constructor(ms: number) {
    this.#ms = ms;
  }

  add(entry: DeadlineEntry): void {
    this.#entries.add(entry);
    if (this.#timer === undefined) this.#arm(entry.deadline);
    else if (this.#set !== setTimeout) this.#arm(this.#oldest());
    else if (this.#entries.size === 1) this.#timer.ref?.();
  }

  delete(entry: DeadlineEntry): void {
    if (!this.#entries.delete(entry) || this.#entries.size > 0) return;
    if (this.#holds > 0) this.#timer?.unref?.();
    else this.#stop();
  }

  hold(): () => void {
    this.#holds++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      if (--this.#holds === 0 && this.#entries.size === 0) this.#stop();
    };
  }

  #oldest(): number {
    return (this.#entries.values().next().value as DeadlineEntry).deadline;
  }

  #arm(deadline: number): void {
    if (this.#timer !== undefined) this.#clear?.(this.#timer);
    this.#target = deadline;
    this.#set = setTimeout;
    this.#clear = clearTimeout;
    // Never longer than the timeout itself, whatever a swapped clock says.
    const delay = Math.min(this.#ms, Math.max(0, Math.ceil(deadline - performance.now())));
    this.#timer = setTimeout(this.#fire, delay);
  }

  #stop(): void {
    if (this.#timer !== undefined) this.#clear?.(this.#timer);
    this.#timer = undefined;
    if (queues.get(this.#ms) === this) queues.delete(this.#ms);
  }

  readonly #fire = (): void => {
    this.#timer = undefined;
    // Timers may fire a little before performance.now() reaches their deadline: trust the timer.
    const now = Math.max(performance.now(), this.#target);
    const due: DeadlineEntry[] = [];
    for (const entry of this.#entries) {
      if (entry.deadline > now) break;
      due.push(entry);
      this.#entries.delete(entry);
    }
    if (this.#entries.size > 0) this.#arm(this.#oldest());
    else if (this.#holds === 0) this.#stop();
    for (const entry of due) entry.expire();
  };
}

// One queue per distinct timeout value, removed when nothing holds or waits on it.
const queues = new Map<number, DeadlineQueue>();

function queueOf(ms: number): DeadlineQueue {
  let queue = queues.get(ms);
  if (queue === undefined) {
    queue = new DeadlineQueue(ms);
    queues.set(ms, queue);
  }
  return queue;
}

/**
 * Queues `entry` to expire at `entry.deadline`, which must be at most `ms` from now (`ms` is the
 * call's timeout: entries of one timeout value expire in the order they were added). Returns the
 * queue, whose `delete(entry)` withdraws it.
 */
export function addDeadline(ms: number, entry: DeadlineEntry): { delete(entry: DeadlineEntry): void } {
  const queue = queueOf(ms);
  queue.add(entry);
  return queue;
}

const NOTHING_HELD = () => {};

/**
 * Keeps the timer of timeout `ms` (`undefined` or `Infinity`: none) while a run lasts, so that its
 * calls share one timer instead of arming and clearing one each; returns the release function.
 */
export function holdDeadlines(ms: number | undefined): () => void {
  if (ms === undefined || ms === Number.POSITIVE_INFINITY) return NOTHING_HELD;
  return queueOf(ms).hold();
}
