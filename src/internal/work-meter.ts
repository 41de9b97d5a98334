/**
 * How a long piece of synchronous work is cut into slices and bounded in time. Only the time spent
 * in slices counts: waiting between them (other work of the process) is free.
 */
export interface WorkBudget {
  /** Most milliseconds of work in all (`Infinity`: no bound). */
  readonly maxMs: number;
  /** A slice ends once it has lasted this long; the work then yields to the event loop. */
  readonly sliceMs: number;
  /**
   * Most units of work (documents) in a slice, however fast they go: a bound in work too, so that
   * slicing holds whatever the clock says.
   */
  readonly sliceUnits: number;
  /** The clock, in milliseconds (tests pass their own). @default performance.now */
  readonly now?: (() => number) | undefined;
}

/** Yields to the event loop: timers, I/O and other requests run before the work goes on. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Measures work against a {@link WorkBudget}: the work calls {@link tick} after each unit and, when
 * it says the slice is over, {@link pause} (sliced work) — or goes on (work done at once, still
 * bounded by {@link spent}).
 */
export class WorkMeter {
  readonly #budget: WorkBudget;
  readonly #now: () => number;
  /** Milliseconds of the slices before this one. */
  #before = 0;
  /** When this slice started, and how long it had lasted at its last tick. */
  #start: number;
  #last = 0;
  #units = 0;

  constructor(budget: WorkBudget) {
    this.#budget = budget;
    this.#now = budget.now ?? (() => performance.now());
    this.#start = this.#now();
  }

  /** Milliseconds of work so far (the slices', this one's up to its last {@link tick}). */
  get spent(): number {
    return this.#before + this.#last;
  }

  /** `true` once the work has lasted more than the budget's `maxMs`. */
  get exhausted(): boolean {
    return this.spent > this.#budget.maxMs;
  }

  /** Counts one unit of work done: `true` when the slice is over (or the budget spent). */
  tick(): boolean {
    this.#last = this.#now() - this.#start;
    return ++this.#units >= this.#budget.sliceUnits || this.#last >= this.#budget.sliceMs || this.exhausted;
  }

  /**
   * Yields to the event loop, then starts the next slice.
   * @throws the signal's reason once `signal` is aborted (before or while yielding)
   */
  async pause(signal?: AbortSignal): Promise<void> {
    this.#before += this.#last;
    signal?.throwIfAborted();
    await nextTurn();
    signal?.throwIfAborted();
    this.#start = this.#now();
    this.#last = 0;
    this.#units = 0;
  }
}
