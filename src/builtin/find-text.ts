import { setImmediate as nextTurn } from "node:timers/promises";

/** Character comparisons between two pauses of {@link findText} (a few milliseconds of work). */
export const SEARCH_SLICE = 1 << 20;

/** Options of {@link findText}. */
export interface FindTextOptions {
  /**
   * Called after each slice of work; the search goes on when it resolves, and stops with its
   * rejection (an abort). @default a turn of the event loop
   */
  pause?: () => Promise<void>;
  /** Comparisons of characters in a slice. @default {@link SEARCH_SLICE} */
  slice?: number;
}

const turn = async (): Promise<void> => {
  await nextTurn();
};

/**
 * Where `needle` first occurs in `text` at or after `from`, or -1: the two-way string matching of
 * Crochemore and Perrin (1991), in time linear in the length of both — at most about twice the
 * text's and four times the needle's length in comparisons — and constant extra memory, whatever
 * the two strings are. `String#indexOf` is not linear: V8 compares all of a long needle wherever
 * its last 250 characters match, so a file of `"a"` and the needle `"ab" + "a".repeat(9998)` cost
 * 10,000 comparisons per character of the file. The work is done in slices of `slice` comparisons
 * with `pause` between them (a turn of the event loop, where an abort can stop it). Characters
 * are UTF-16 code units, as `indexOf` compares them.
 */
export async function findText(text: string, needle: string, from = 0, options: FindTextOptions = {}): Promise<number> {
  const pause = options.pause ?? turn;
  const slice = Math.max(1, options.slice ?? SEARCH_SLICE);
  const start = Math.max(0, from);
  if (needle.length === 0) return start <= text.length ? start : -1;
  if (needle.length > text.length - start) return -1;
  const search = new TwoWaySearch(text, needle, start);
  for (;;) {
    const found = search.run(slice);
    if (found !== undefined) return found;
    await pause();
  }
}

/**
 * The state of one two-way search, run a bounded number of comparisons at a time ({@link run}):
 * first the needle's two maximal suffixes and its period, then the scan of the text.
 */
class TwoWaySearch {
  readonly #text: string;
  readonly #needle: string;
  /** What is being done: a maximal suffix (`forward`, `backward`), the period check, the scan. */
  #phase: "forward" | "backward" | "periodic" | "scan" = "forward";
  // The maximal-suffix computation: its start less one, the candidate, the offset, the period.
  #ms = -1;
  #j = 0;
  #k = 1;
  #p = 1;
  /** The forward maximal suffix (start less one, period), while the backward one is computed. */
  #forward = { ms: -1, period: 1 };
  /** The critical factorisation: needle = needle[0, ell] · needle[ell + 1, m). */
  #ell = -1;
  #period = 1;
  #periodic = true;
  /** Where the needle is tried in the text, and the needle's index being compared there. */
  #at: number;
  #i = 0;
  /** In the periodic case: the prefix of the needle known to match at `#at` after a shift by the period. */
  #memory = -1;
  /** Comparing the left part (right to left) after the right part matched. */
  #left = false;

  constructor(text: string, needle: string, start: number) {
    this.#text = text;
    this.#needle = needle;
    this.#at = start;
  }

  /** Runs about `budget` comparisons: the index found, -1 when there is none, `undefined` when not done yet. */
  run(budget: number): number | undefined {
    let work = 0;
    while (work < budget) {
      if (this.#phase === "scan") return this.#scan(budget - work);
      work += this.#phase === "periodic" ? this.#checkPeriod(budget - work) : this.#maximalSuffix(budget - work);
    }
    return undefined;
  }

  /** One step of the maximal suffix for the current order, up to `budget` comparisons; the work done. */
  #maximalSuffix(budget: number): number {
    const needle = this.#needle;
    const m = needle.length;
    const reverse = this.#phase === "backward";
    let ms = this.#ms;
    let j = this.#j;
    let k = this.#k;
    let p = this.#p;
    let work = 0;
    while (j + k < m && work < budget) {
      work++;
      const a = needle.charCodeAt(j + k);
      const b = needle.charCodeAt(ms + k);
      if (reverse ? a > b : a < b) {
        j += k;
        k = 1;
        p = j - ms;
      } else if (a === b) {
        if (k === p) {
          j += p;
          k = 1;
        } else k++;
      } else {
        ms = j;
        j = ms + 1;
        k = 1;
        p = 1;
      }
    }
    if (j + k < m) {
      this.#ms = ms;
      this.#j = j;
      this.#k = k;
      this.#p = p;
      return work;
    }
    if (!reverse) {
      this.#forward = { ms, period: p };
      this.#ms = -1;
      this.#j = 0;
      this.#k = 1;
      this.#p = 1;
      this.#phase = "backward";
      return work + 1;
    }
    const chosen = this.#forward.ms > ms ? this.#forward : { ms, period: p };
    this.#ell = chosen.ms;
    this.#period = chosen.period;
    this.#periodic = chosen.period + chosen.ms < m;
    this.#i = 0;
    this.#phase = "periodic";
    return work + 1;
  }

  /** Whether needle[0, ell] occurs again `period` further on (the needle is periodic), up to `budget` comparisons. */
  #checkPeriod(budget: number): number {
    const needle = this.#needle;
    const ell = this.#ell;
    const period = this.#period;
    let i = this.#i;
    let work = 0;
    while (this.#periodic && i <= ell && work < budget) {
      work++;
      this.#periodic = needle.charCodeAt(i) === needle.charCodeAt(i + period);
      i++;
    }
    this.#i = i;
    if (this.#periodic && i <= ell) return work;
    // Not periodic: the shift after a match of the right part and a mismatch in the left one.
    if (!this.#periodic) this.#period = Math.max(ell + 1, this.#needle.length - ell - 1) + 1;
    this.#memory = -1;
    this.#i = Math.max(ell, this.#memory) + 1;
    this.#phase = "scan";
    return work + 1;
  }

  /**
   * The scan of the text, up to about `budget` comparisons: at each place `#at`, the right part of
   * the needle left to right, then (when it matched) the left part right to left. The index found,
   * -1 when there is none, or `undefined` when the budget ran out (the state is kept).
   */
  #scan(budget: number): number | undefined {
    const needle = this.#needle;
    const text = this.#text;
    const m = needle.length;
    const last = text.length - m;
    const ell = this.#ell;
    const period = this.#period;
    const periodic = this.#periodic;
    let at = this.#at;
    let i = this.#i;
    let memory = this.#memory;
    let left = this.#left;
    let work = 0;
    for (;;) {
      if (!left) {
        if (i === ell + 1 && memory === -1) {
          // A mismatch on the right part's first character shifts by one: find the next place
          // it matches with the native single-character search (linear, and much faster).
          const next = text.indexOf(needle[ell + 1] as string, at + ell + 1);
          if (next === -1 || next - ell - 1 > last) return -1;
          work += (next - ell - 1 - at) >> 4;
          at = next - ell - 1;
          i = ell + 2;
        } else if (at > last) return -1;
        const from = i;
        const end = Math.min(m, i + Math.max(1, budget - work));
        while (i < end && needle.charCodeAt(i) === text.charCodeAt(i + at)) i++;
        work += i - from + 1;
        if (i === end && i < m) break; // the budget ran out
        if (i < m) {
          // A mismatch in the right part: shift past it.
          at += i - ell;
          memory = -1;
          i = ell + 1;
          if (work >= budget) break;
          continue;
        }
        left = true;
        i = ell;
      }
      // In the periodic case the part up to `memory` is known to match already.
      const floor = periodic ? memory : -1;
      const from = i;
      const end = Math.max(floor, i - Math.max(1, budget - work));
      while (i > end && needle.charCodeAt(i) === text.charCodeAt(i + at)) i--;
      work += from - i + 1;
      if (i === end && i > floor) break; // the budget ran out
      if (i <= floor) return at;
      at += period;
      if (periodic) memory = m - period - 1;
      left = false;
      i = periodic ? Math.max(ell, memory) + 1 : ell + 1;
      if (work >= budget) break;
    }
    this.#at = at;
    this.#i = i;
    this.#memory = memory;
    this.#left = left;
    return undefined;
  }
}
