const COUNTED_REPETITION = /\{(\d+)(,(\d*))?\}/y;

/** What a regex search costs, estimated from the pattern's text (see {@link patternCost}). */
export interface PatternCost {
  /** The RE2 program's size, from above: the steps per character when the engine simulates it. */
  size: number;
  /**
   * How many of the pattern's choices can be open at once: each atom that matches more than one
   * character (`.`, a class, `\w` …) and each quantifier counts one, each group with k
   * alternatives log₂ k, and a counted repetition multiplies what it repeats. Literal characters,
   * anchors and `\b` count nothing.
   */
  branching: number;
}

/** One open group while the pattern is read: finished items, and the last one (a quantifier repeats it). */
interface OpenGroup {
  size: number;
  lastSize: number;
  branching: number;
  lastBranching: number;
  alternatives: number;
}

const newGroup = (): OpenGroup => ({ size: 0, lastSize: 0, branching: 0, lastBranching: 0, alternatives: 1 });

/** Ends the last item of `group`: it joins the finished ones. */
function settle(group: OpenGroup): void {
  group.size += group.lastSize;
  group.branching += group.lastBranching;
}

/**
 * Estimates a valid pattern's cost ({@link PatternCost}) from its text, in one pass: atoms count
 * one instruction, groups their content, and a counted repetition multiplies what it repeats
 * (`(?:a{10}){10}` → 100 instructions).
 */
export function patternCost(pattern: string): PatternCost {
  const open: OpenGroup[] = [];
  let group = newGroup();
  let at = 0;
  const close = () => {
    const size = group.size + group.lastSize + 2;
    const branching = group.branching + group.lastBranching + Math.log2(group.alternatives);
    group = open.pop() ?? newGroup();
    settle(group);
    group.lastSize = size;
    group.lastBranching = branching;
  };
  while (at < pattern.length) {
    const char = pattern[at++];
    if (char === "(") {
      open.push(group);
      group = newGroup();
    } else if (char === ")" && open.length > 0) {
      close();
    } else if (char === "|") {
      group.size += group.lastSize + 1;
      group.branching += group.lastBranching;
      group.lastSize = 0;
      group.lastBranching = 0;
      group.alternatives++;
    } else if (char === "*" || char === "+" || char === "?") {
      // Only after an atom: `(?:` and `(?<` open a group.
      if (group.lastSize > 0) {
        group.lastSize++;
        group.lastBranching++;
      }
    } else {
      COUNTED_REPETITION.lastIndex = at - 1;
      const repetition = group.lastSize > 0 ? COUNTED_REPETITION.exec(pattern) : null;
      if (repetition !== null) {
        const min = Number(repetition[1]);
        const max = repetition[2] === undefined ? min : repetition[3] === "" ? min + 1 : Number(repetition[3]);
        const times = Math.max(min, max, 1);
        group.lastSize = group.lastSize * times + Math.max(max - min, 0) + 1;
        group.lastBranching = group.lastBranching * times + (max > min ? 1 : 0);
        at = COUNTED_REPETITION.lastIndex;
        continue;
      }
      // A literal character matches one character: it opens no choice.
      let wide = false;
      if (char === "\\") {
        const escaped = pattern[at] ?? "";
        // `\p{L}`, `\u{1F600}`: one atom, braces included.
        const braced = /[pPu]/.test(escaped) && pattern[at + 1] === "{" ? pattern.indexOf("}", at) : -1;
        wide = /[dDwWsSpP]/.test(escaped);
        at = braced === -1 ? at + 1 : braced + 1;
      } else if (char === "[") {
        while (at < pattern.length && pattern[at] !== "]") at += pattern[at] === "\\" ? 2 : 1;
        at++;
        wide = true;
      } else if (char === ".") {
        wide = true;
      }
      settle(group);
      group.lastSize = 1;
      group.lastBranching = wide ? 1 : 0;
    }
  }
  while (open.length > 0) close();
  return {
    size: group.size + group.lastSize,
    branching: group.branching + group.lastBranching + Math.log2(group.alternatives),
  };
}

/** {@link PatternCost.size}: an estimate (from above, within a few instructions per atom) of the RE2 program's size. */
export function patternSize(pattern: string): number {
  return patternCost(pattern).size;
}
