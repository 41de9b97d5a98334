/** Something that expires at a deadline: the abort state of one tool call. */
export interface DeadlineEntry {
  /** `performance.now()` at which it expires. */
  readonly deadline: number;
  /** Called once, when the deadline has passed and the entry is still queued. */
  expire(): void;
}

/** A place in a {@link List}: what {@link List.push} returns and {@link List.remove} takes. */
export interface ListNode<T> {
  readonly value: T;
  prev: ListNode<T> | undefined;
  next: ListNode<T> | undefined;
  list: List<T> | undefined;
}

/**
 * A doubly-linked list in insertion order: O(1) push and remove, and, unlike a Set, no hashing,
 * rehashing or shrinking when entries come and go one by one (a Set costs several times as much
 * per call that way). Removing a node twice, or from another list, does nothing.
 */
export class List<T> {
  head: ListNode<T> | undefined;
  #tail: ListNode<T> | undefined;

  push(value: T): ListNode<T> {
    const node: ListNode<T> = { value, prev: this.#tail, next: undefined, list: this };
    if (this.#tail === undefined) this.head = node;
    else this.#tail.next = node;
    this.#tail = node;
    return node;
  }

  /** Removes `node`; `true` when it was in this list. */
  remove(node: ListNode<T>): boolean {
    if (node.list !== this) return false;
    node.list = undefined;
    if (node.prev === undefined) this.head = node.next;
    else node.prev.next = node.next;
    if (node.next === undefined) this.#tail = node.prev;
    else node.next.prev = node.prev;
    node.prev = undefined;
    node.next = undefined;
    return true;
  }

  /** Empties the list and returns its values in order. */
  take(): T[] {
    const values: T[] = [];
    for (let node = this.head; node !== undefined; node = node.next) {
      node.list = undefined;
      values.push(node.value);
    }
    this.head = undefined;
    this.#tail = undefined;
    return values;
  }
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
export class DeadlineQueue {
  readonly #ms: number;
  // Insertion-ordered: the head is the oldest.
  readonly #entries = new List<DeadlineEntry>();
  #holds = 0;
  #timer: Timer | undefined;
  // The functions that armed the timer: fake timers (tests) swap the global ones.
  #set: typeof setTimeout | undefined;
  #clear: typeof clearTimeout | undefined;
  #target = 0;

  constructor(ms: number) {
    this.#ms = ms;
  }

  /** Queues `entry`, whose deadline must be at most this queue's timeout from now; returns its place. */
  add(entry: DeadlineEntry): ListNode<DeadlineEntry> {
    const wasIdle = this.#entries.head === undefined;
    const node = this.#entries.push(entry);
    if (this.#timer === undefined) this.#arm(entry.deadline);
    else if (this.#set !== setTimeout) this.#arm(this.#oldest());
    else if (wasIdle) this.#timer.ref?.();
    return node;
  }

  /** Withdraws an entry by its place (no effect once it expired or was withdrawn). */
  delete(node: ListNode<DeadlineEntry>): void {
    if (!this.#entries.remove(node) || this.#entries.head !== undefined) return;
    if (this.#holds > 0) this.#timer?.unref?.();
    else this.#stop();
  }

  /** Keeps the timer while held (cleared on the last release when nothing is queued); returns the release. */
  hold(): () => void {
    this.#holds++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      if (--this.#holds === 0 && this.#entries.head === undefined) this.#stop();
    };
  }

  #oldest(): number {
    return (this.#entries.head as ListNode<DeadlineEntry>).value.deadline;
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
    for (let node = this.#entries.head; node !== undefined && node.value.deadline <= now; ) {
      const next = node.next;
      this.#entries.remove(node);
      due.push(node.value);
      node = next;
    }
    if (this.#entries.head !== undefined) this.#arm(this.#oldest());
    else if (this.#holds === 0) this.#stop();
    for (const entry of due) entry.expire();
  };
}

// One queue per distinct timeout value, removed when nothing holds or waits on it.
const queues = new Map<number, DeadlineQueue>();

/** The queue of timeout `ms` (finite, > 0): entries of one timeout value expire in the order they were added. */
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
