import { subscribeAbort } from "../internal/abort.js";
import { seconds } from "./exec-options.js";
import type { PathLookups } from "./workspace.js";

// ─── The limits of the checks before the run ────────────────────────────────────────────────────
//
// The workspace check reads the filesystem (every word resolved through symlinks, every directory
// a wildcard lists read): a hostile command can make that a lot of work (`echo d0/* … d99/*` over
// 100,000 symlinks). So it does one filesystem operation at a time (it never holds more than one
// of libuv's threads, which the rest of the process needs too), counts them, and stops at
// MAX_CHECK_OPERATIONS, at the call's timeout, or when its signal aborts. What it looked up once
// it knows for the rest of the check (a PathLookups): `d/a d/b …` reads `d` once, and only what is
// really read is counted.

/**
 * Most filesystem operations the checks before a run may do (a path component looked up, a
 * symlink read, a directory listed, an entry of it read); a command that needs more is refused.
 */
export const MAX_CHECK_OPERATIONS = 4_000;
/**
 * Most path components the checks' resolutions may walk (through symlinks, each component of a
 * target too, whether already looked up or not); a command that needs more is refused. Only
 * uncached lookups are operations, so this bounds what the cache answers: `ls d/*` over a thousand
 * symlinks into a chain of 40 symlinks of a thousand components each is 40,000 steps per symlink.
 */
const MAX_CHECK_STEPS = 40_000;
export const ABORTED_BEFORE_START = "command aborted before it started";

/** Why the checks before the run stopped early: aborted, timed out, too many operations, too many steps. */
type CheckStop = "abort" | "timeout" | "too many" | "too long";

/** What the checks before a run share: their budget, and what they already looked up. */
export interface Check {
  readonly budget: CheckBudget;
  readonly lookups: PathLookups;
}

/** Thrown inside the checks when they must stop; never leaves the execute of exec-tool.ts. */
export class CheckStopped extends Error {
  readonly reason: CheckStop;

  constructor(reason: CheckStop) {
    super(`the check before the run stopped: ${reason}`);
    this.reason = reason;
  }
}

export function stoppedMessage(reason: CheckStop, timeoutMs: number): string {
  switch (reason) {
    case "abort":
      return ABORTED_BEFORE_START;
    case "timeout":
      return `command timed out after ${seconds(timeoutMs)} while its paths were checked; nothing ran`;
    case "too long":
      return (
        `command refused: checking its paths walks more than ${MAX_CHECK_STEPS.toLocaleString("en-US")} path ` +
        "components (symlinks followed, their targets included), too many to check; name fewer files, or " +
        "remove long chains of symlinks"
      );
    default:
      return (
        `command refused: checking its paths takes more than ${MAX_CHECK_OPERATIONS.toLocaleString("en-US")} ` +
        "filesystem operations (paths looked up, directory entries read), too many to check; name fewer files, " +
        "or quote a pattern for a program that matches it itself (find . -name '*.ts')"
      );
  }
}

/**
 * The operations left to the checks before a run, and the call's deadline and signal: {@link spend}
 * before each filesystem operation throws {@link CheckStopped} once any of them is used up, and
 * {@link race} settles as soon as the deadline passes or the signal aborts, even while an
 * operation is still under way.
 */
export class CheckBudget {
  #left: number;
  #steps = MAX_CHECK_STEPS;
  #stop: CheckStop | undefined;
  #wake: ((error: CheckStopped) => void) | undefined;
  readonly #deadline: number;
  readonly #timer: NodeJS.Timeout | undefined;
  readonly #unsubscribe: (() => void) | undefined;

  constructor(operations: number, timeoutMs: number, signal: AbortSignal) {
    this.#left = operations;
    this.#deadline = performance.now() + timeoutMs;
    if (signal.aborted) this.#stop = "abort";
    else this.#unsubscribe = subscribeAbort(signal, () => this.#halt("abort"));
    if (timeoutMs !== Number.POSITIVE_INFINITY) this.#timer = setTimeout(() => this.#halt("timeout"), timeoutMs);
  }

  /** Counts `count` operations about to be done; throws {@link CheckStopped} when the checks must stop. */
  spend(count = 1): void {
    if (this.#stop === undefined) {
      this.#left -= count;
      if (this.#left < 0) this.#stop = "too many";
    }
    if (this.#stop !== undefined) throw new CheckStopped(this.#stop);
  }

  /** Counts one path component walked; throws {@link CheckStopped} when the checks must stop. */
  step(): void {
    if (this.#stop === undefined && --this.#steps < 0) this.#stop = "too long";
    if (this.#stop !== undefined) throw new CheckStopped(this.#stop);
  }

  /** Settles with `work`, or rejects with {@link CheckStopped} as soon as the deadline passes or the signal aborts. */
  race<T>(work: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.#stop !== undefined) reject(new CheckStopped(this.#stop));
      this.#wake = reject;
      work.then(resolve, reject);
    });
  }

  /** The milliseconds left until the deadline (`Infinity` without one). */
  remainingMs(): number {
    return this.#deadline - performance.now();
  }

  dispose(): void {
    clearTimeout(this.#timer);
    this.#unsubscribe?.();
    this.#wake = undefined;
  }

  #halt(reason: CheckStop): void {
    this.#stop ??= reason;
    this.#wake?.(new CheckStopped(this.#stop));
  }
}
