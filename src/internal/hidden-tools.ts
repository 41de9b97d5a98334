/** A hidden tool's state: offered to the model while `ttl > 0`. */
interface Hidden {
  ttl: number;
  /** The promotion's serial: a loop's tick after the round of this promotion skips it. */
  promotion: number;
}

/**
 * The registry's hidden tools (picoclaw HEAD's non-core tools): which names are hidden, and for
 * how many more provider calls each one `promoteTools` promoted is offered to everyone (a run's or
 * session's own promotions are in its PromotionScope). Every method that changes what is visible
 * says so (`true`), so that the registry rebuilds its definitions only then.
 */
export class HiddenTools {
  readonly #tools = new Map<string, Hidden>();
  #promotions = 0;
  /** Bumped when the set of hidden tools changes (the search index is rebuilt then). */
  #version = 0;

  /** How many tools are hidden (promoted or not). */
  get size(): number {
    return this.#tools.size;
  }

  /** Changes whenever a hidden tool is added or removed. */
  get version(): number {
    return this.#version;
  }

  /** `true` when `name` is hidden and not promoted now (absent from definitions, not callable). */
  isConcealed(name: string): boolean {
    const hidden = this.#tools.get(name);
    return hidden !== undefined && hidden.ttl === 0;
  }

  /** `true` when `name` is a hidden tool, promoted or not. */
  has(name: string): boolean {
    return this.#tools.has(name);
  }

  /** The names of the hidden tools, in registration order. */
  names(): IterableIterator<string> {
    return this.#tools.keys();
  }

  /** Hides `name`, not promoted (a new registration, also one replacing a promoted tool). */
  add(name: string): void {
    this.#tools.set(name, { ttl: 0, promotion: 0 });
    this.#version++;
  }

  /** Forgets `name` (unregistered, or registered again as a visible tool). */
  delete(name: string): void {
    if (this.#tools.delete(name)) this.#version++;
  }

  /** Offers the hidden tools among `names` for the next `ttl` provider calls. `true` when visibility changed. */
  promote(names: readonly string[], ttl: number): boolean {
    const promotion = ++this.#promotions;
    let changed = false;
    for (const name of names) {
      const hidden = this.#tools.get(name);
      if (hidden === undefined) continue;
      if ((hidden.ttl === 0) !== (ttl === 0)) changed = true;
      hidden.ttl = ttl;
      hidden.promotion = promotion;
    }
    return changed;
  }

  /** The serial of the latest promotion: what {@link tick} compares against. */
  mark(): number {
    return this.#promotions;
  }

  /**
   * One tool round passed: every promoted tool's ttl − 1 — only those promoted at or before
   * `mark` when given (a loop passes the mark taken before the round, so that a promotion made
   * during the round does not count it). `true` when a tool stopped being offered.
   */
  tick(mark = Number.POSITIVE_INFINITY): boolean {
    let changed = false;
    for (const hidden of this.#tools.values()) {
      if (hidden.ttl === 0 || hidden.promotion > mark) continue;
      hidden.ttl--;
      if (hidden.ttl === 0) changed = true;
    }
    return changed;
  }

  /** Takes over `other`'s hidden tools and promotions, as copies (a registry's `clone()`). */
  adopt(other: HiddenTools): void {
    for (const [name, hidden] of other.#tools) this.#tools.set(name, { ...hidden });
    this.#promotions = other.#promotions;
    this.#version++;
  }
}
