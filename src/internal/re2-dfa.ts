import type { RE2JS } from "re2js";

// re2js matches (when it can) with a lazily built DFA: each state a set of program positions and a
// table with one entry per class of characters the pattern tells apart, built as the text needs
// them and kept in the compiled pattern, up to 8 MB (its own estimate of bytes). When the states
// a text needs do not fit, it clears them all and goes on building (a "reset"), so such a pattern
// costs the building of a state per character. These helpers read and bound that DFA through the
// fields re2js's types declare public (`re2Input`, `onepass`, `prefixComplete`, `lazyDFA`, `dfa`,
// `numClasses`, `stateBudget`, `memBudget`, `failed`, `clearCache`). Should a later re2js lay it
// out otherwise, they bound nothing (and `fitDfa` counts every pattern at its program's size per
// character); what bounds a search's time (its budget) and the engine's linearity still hold.

/** The parts of re2js's DFA read here. */
interface Dfa {
  numClasses: number;
  stateBudget: number;
  memBudget: number;
  failed: boolean;
  clearCache(): void;
}

/** re2js's estimate of the bytes of one DFA state without its table (`DFA.STATE_OVERHEAD` + `TABLE_OVERHEAD`). */
const STATE_BYTES = 200;
/** Bytes per element of a state's list of positions or of its table (`DFA.ELEMENT_SIZE`). */
const ELEMENT_BYTES = 8;

function isDfa(value: unknown): value is Dfa {
  if (typeof value !== "object" || value === null) return false;
  const dfa = value as Partial<Record<keyof Dfa, unknown>>;
  return (
    typeof dfa.numClasses === "number" &&
    typeof dfa.stateBudget === "number" &&
    typeof dfa.memBudget === "number" &&
    typeof dfa.failed === "boolean" &&
    typeof dfa.clearCache === "function"
  );
}

/** The parts of re2js's compiled program read here. */
interface Engine {
  lazyDFA?: unknown;
  dfa?: unknown;
  onepass?: unknown;
  prefixComplete?: unknown;
}

function engineOf(regex: RE2JS): Engine | undefined {
  const engine = (regex as { re2Input?: Engine | null }).re2Input;
  return typeof engine === "object" && engine !== null ? engine : undefined;
}

/**
 * `true` when re2js matches `regex` without a DFA, at about one step per character: a literal
 * (searched as such), or an anchored pattern it runs in one pass.
 */
function needsNoDfa(regex: RE2JS): boolean {
  const engine = engineOf(regex);
  return (
    engine !== undefined &&
    ((engine.onepass !== null && engine.onepass !== undefined) || engine.prefixComplete === true)
  );
}

/** The pattern's DFA; made now when `make` (it is made on the first match anyway), else only if it exists. */
function dfaOf(regex: RE2JS, make: boolean): Dfa | undefined {
  const engine = engineOf(regex);
  const dfa = make ? engine?.dfa : engine?.lazyDFA;
  return isDfa(dfa) ? dfa : undefined;
}

/** Bytes the DFA of `regex` holds now (0 when it has none). */
export function dfaBytes(regex: RE2JS): number {
  const dfa = dfaOf(regex, false);
  return dfa === undefined ? 0 : dfa.stateBudget - dfa.memBudget;
}

/** After a match: clears the DFA of `regex` when it holds more than `keepBytes`, so that a kept pattern keeps at most that much. */
export function trimDfa(regex: RE2JS, keepBytes: number): void {
  const dfa = dfaOf(regex, false);
  if (dfa !== undefined && dfa.stateBudget - dfa.memBudget > keepBytes) dfa.clearCache();
}

/**
 * Makes the DFA of `regex` (not yet used: the DFA is made now) hold at most `maxBytes`: the cost of
 * a pattern that thrashes is about the building of `maxBytes` of states, twice, per match (re2js
 * then gives up on the DFA for that match and simulates the program).
 */
export function limitDfa(regex: RE2JS, maxBytes: number): void {
  if (needsNoDfa(regex)) return;
  const dfa = dfaOf(regex, true);
  if (dfa === undefined || dfa.stateBudget !== dfa.memBudget) return;
  dfa.stateBudget = maxBytes;
  dfa.memBudget = maxBytes;
}

/**
 * Prepares `regex` (not yet used) to search about `chars` characters: when its DFA's states would
 * not fit in `maxBytes` — `states` of them, each with a table of the pattern's character classes
 * (`\p{L}` case-insensitively makes over 1,300: 11 KB a state) — the DFA is switched off and re2js
 * simulates the program instead (its size in steps per character, linear), rather than building a
 * state for every character; otherwise the DFA may hold at most `maxBytes`.
 * @returns `true` when matching costs about one step per character (the DFA stays on, or the
 * pattern needs none)
 */
export function fitDfa(regex: RE2JS, states: number, positions: number, maxBytes: number): boolean {
  if (needsNoDfa(regex)) return true;
  const dfa = dfaOf(regex, true);
  if (dfa === undefined) return false;
  const bytes = states * (STATE_BYTES + ELEMENT_BYTES * (dfa.numClasses + 1 + positions));
  if (bytes > maxBytes / 2) {
    dfa.failed = true;
    return false;
  }
  limitDfa(regex, maxBytes);
  return true;
}

/**
 * Most bytes of DFA a kept pattern (a schema's) may build while it matches — at re2js's 8 MB, a
 * pattern whose states do not fit cost ~300 ms a match — and keep between matches: the DFA grows
 * with the text matched, and the model chooses that text.
 */
const KEPT_PATTERN_DFA_BYTES = 256 * 1024;
const KEPT_BETWEEN_MATCHES_BYTES = 64 * 1024;

/**
 * `regex.test` for a pattern that is kept (a schema pattern): on first use its DFA is limited to
 * 256 KB, and after each match cut back when it holds more than 64 KB.
 */
export function testWithSmallDfa(regex: RE2JS): (text: string) => boolean {
  let used = false;
  return (text) => {
    // On first use: most patterns are compiled at registration and many never run.
    if (!used) limitDfa(regex, KEPT_PATTERN_DFA_BYTES);
    used = true;
    const matched = regex.test(text);
    trimDfa(regex, KEPT_BETWEEN_MATCHES_BYTES);
    return matched;
  };
}
