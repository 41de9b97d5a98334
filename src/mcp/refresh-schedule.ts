import { MAX_TIMEOUT_MS } from "../execute-tool-call.js";

/** What a {@link RefreshSchedule} runs, and how often at most. */
export interface RefreshScheduleOptions {
  /** Least milliseconds between the starts of two refreshes. */
  readonly intervalMs: number;
  /**
   * Most share of the time the refreshes' own synchronous work (reading, compiling schemas) may
   * take: after a refresh that worked `w` ms, the next starts no sooner than `w × (1 − share) / share`
   * ms after it ended. In (0, 1].
   */
  readonly workShare: number;
  /**
   * One refresh after `list_changed`: resolves with the milliseconds of synchronous work it did.
   * It reports its own failure (a rejection is taken as a refresh that did no work).
   */
  readonly run: () => Promise<number>;
}

/**
 * When an import lists its server again. A server may send `notifications/tools/list_changed` as
 * often as it likes, and a listing whose schemas changed costs their compilation, so notifications
 * are coalesced and refreshes rate-limited:
 *
 * - at most one refresh runs, and at most one waits; every notification while one waits is folded
 *   into it, and one while a refresh runs queues the next (which lists after that notification: the
 *   last change is always seen);
 * - a refresh starts no sooner than `intervalMs` after the start of the one before, and no sooner
 *   than its work allows (`workShare`): a server whose every listing costs seconds of compilation
 *   holds the process for that share of the time at most, however often it notifies. The first
 *   listing (the import) does not count: the first notification after it is followed at once;
 * - {@link close} drops a waiting refresh.
 */
export class RefreshSchedule {
  readonly #options: RefreshScheduleOptions;
  /** How long a listing's work keeps the next one waiting after it ended, per millisecond of work. */
  readonly #restPerWork: number;
  #running: Promise<void> | undefined;
  #queued = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  /** The earliest `performance.now()` the next refresh may start at. */
  #earliest = Number.NEGATIVE_INFINITY;

  constructor(options: RefreshScheduleOptions) {
    this.#options = options;
    this.#restPerWork = (1 - options.workShare) / options.workShare;
  }

  /**
   * Runs the first listing (the import) at once; a notification meanwhile queues a refresh right
   * after it. Rejects with its error, and then schedules nothing (the import is given up).
   */
  async first(listing: () => Promise<number>): Promise<void> {
    await this.#begin(listing, true);
  }

  /** A `list_changed` arrived: a refresh runs as soon as the limits allow (see the class). */
  request(): void {
    if (this.#closed) return;
    if (this.#running !== undefined) {
      this.#queued = true;
      return;
    }
    // A refresh is already waiting: it lists after this notification, so it sees this change too.
    if (this.#timer !== undefined) return;
    this.#arm();
  }

  /** Drops a waiting refresh and schedules none again; resolves once a running one has ended. */
  close(): Promise<void> {
    this.#closed = true;
    this.#queued = false;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    return this.#running ?? Promise.resolve();
  }

  #arm(): void {
    const wait = this.#earliest - performance.now();
    if (wait <= 0) {
      this.#begin(this.#options.run, false).catch(() => {});
      return;
    }
    // Checked again when it fires: a wait beyond the longest timer takes several.
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined;
        if (!this.#closed) this.#arm();
      },
      Math.min(wait, MAX_TIMEOUT_MS),
    );
    // A refresh due later never holds the process open (its client may be forgotten unclosed).
    this.#timer.unref?.();
  }

  #begin(run: () => Promise<number>, first: boolean): Promise<void> {
    const start = performance.now();
    const settle = (work: number) => {
      this.#running = undefined;
      if (first) return;
      const rest = Number.isFinite(work) && work > 0 ? work * this.#restPerWork : 0;
      this.#earliest = Math.max(start + this.#options.intervalMs, performance.now() + rest);
    };
    const running = run()
      .then(settle, (error: unknown) => {
        settle(0);
        if (first) throw error;
      })
      .then(() => {
        if (!this.#queued || this.#closed) return;
        this.#queued = false;
        this.#arm();
      });
    this.#running = running.catch(() => {});
    return running;
  }
}
