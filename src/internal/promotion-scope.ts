/**
 * A tool's method that returns the same tool, its promotions going through `promote` (the
 * discovery tools of `createToolSearchTools` have it). The registry binds such a tool to the run or
 * session a call belongs to; unbound, its searches promote nothing. `Symbol.for`, so that a
 * registry of another installed copy binds them too.
 */
export const BIND_PROMOTIONS: unique symbol = Symbol.for("toolloop.tool.bindPromotions");

/** Offers the hidden tools among `names` to the model of one run or session for `ttl` turns; returns how many it offered. */
export type Promote = (names: readonly string[], ttl: number) => number;

/** The turns in which a promoted tool is offered, and the last turn for which the model was shown it. */
interface Window {
  from: number;
  until: number;
  /** `-1`: not shown since this window began. */
  shown: number;
}

/**
 * The hidden tools one run (or one MCP session) has promoted, each for a window of turns — a
 * loop's iterations, a session's tool calls. A promotion made in turn t offers the tool from turn
 * t + 1 through t + ttl; a call may run it only in a turn of that window for which the model was
 * shown its definition (the loop shows the offered tools in every provider call; a session when its
 * client lists them). Nothing here is shared with another run or session.
 */
export class PromotionScope {
  // Made on the first promotion: most runs never promote anything.
  #windows: Map<string, Window> | undefined;

  /** How many tools have a window (current, upcoming or not yet pruned). */
  get size(): number {
    return this.#windows?.size ?? 0;
  }

  /**
   * Offers `names` from turn `turn + 1` through `turn + ttl`. A tool whose window has not ended
   * keeps its start (and what the model was shown) and is offered at least that long.
   */
  promote(names: readonly string[], ttl: number, turn: number): void {
    if (names.length === 0) return;
    this.#windows ??= new Map();
    const until = turn + ttl;
    for (const name of names) {
      const window = this.#windows.get(name);
      if (window !== undefined && window.until >= turn) window.until = Math.max(window.until, until);
      else this.#windows.set(name, { from: turn + 1, until, shown: -1 });
    }
  }

  /** The names offered in `turn`; windows that ended before it are forgotten (turns only grow). */
  offered(turn: number): string[] {
    const names: string[] = [];
    const windows = this.#windows;
    if (windows === undefined) return names;
    for (const [name, window] of windows) {
      if (window.until < turn) windows.delete(name);
      else if (window.from <= turn) names.push(name);
    }
    return names;
  }

  /** The model was shown, for `turn`, the definitions of `names` (those offered then count). */
  show(names: Iterable<string>, turn: number): void {
    const windows = this.#windows;
    if (windows === undefined) return;
    for (const name of names) {
      const window = windows.get(name);
      if (window !== undefined && window.from <= turn && turn <= window.until) window.shown = turn;
    }
  }

  /** The model was shown, for `turn`, every tool offered then (a loop's provider call). */
  showOffered(turn: number): void {
    if (this.#windows !== undefined) this.show(this.offered(turn), turn);
  }

  /** `true` when a call of `name` in `turn` may run: offered then, and shown to the model for a turn of this window before it or in it. */
  callable(name: string, turn: number): boolean {
    const window = this.#windows?.get(name);
    return (
      window !== undefined &&
      window.from <= turn &&
      turn <= window.until &&
      window.shown >= window.from &&
      window.shown <= turn
    );
  }
}

/** One turn of a run or session: what the registry offers and runs in it. */
export interface PromotionView {
  /** The run's or session's promotions. */
  readonly scope: PromotionScope;
  /** The turn: a loop's iteration, a session's call number. */
  readonly turn: number;
}
