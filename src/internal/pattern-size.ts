const COUNTED_REPETITION = /\{(\d+)(,(\d*))?\}/y;

/**
 * An estimate (from above, within a few instructions per atom) of the size of the RE2 program a
 * valid pattern compiles to: atoms count one, groups their content, and a counted repetition
 * multiplies what it repeats (`(?:a{10}){10}` → 100).
 */
export function patternSize(pattern: string): number {
  // Per open group: the size of its finished items, and of the last item (which a quantifier repeats).
  const open: { done: number; last: number }[] = [];
  let group = { done: 0, last: 0 };
  let at = 0;
  const close = () => {
    const inner = group.done + group.last + 2;
    group = open.pop() ?? { done: 0, last: 0 };
    group.done += group.last;
    group.last = inner;
  };
  while (at < pattern.length) {
    const char = pattern[at++];
    if (char === "(") {
      open.push(group);
      group = { done: 0, last: 0 };
    } else if (char === ")" && open.length > 0) {
      close();
    } else if (char === "|") {
      group.done += group.last + 1;
      group.last = 0;
    } else if (char === "*" || char === "+" || char === "?") {
      if (group.last > 0) group.last++;
    } else {
      COUNTED_REPETITION.lastIndex = at - 1;
      const repetition = group.last > 0 ? COUNTED_REPETITION.exec(pattern) : null;
      if (repetition !== null) {
        const min = Number(repetition[1]);
        const max = repetition[2] === undefined ? min : repetition[3] === "" ? min + 1 : Number(repetition[3]);
        group.last = group.last * Math.max(min, max, 1) + Math.max(max - min, 0) + 1;
        at = COUNTED_REPETITION.lastIndex;
        continue;
      }
      if (char === "\\") {
        // `\p{L}`, `\u{1F600}`: one atom, braces included.
        const braced = /[pPu]/.test(pattern[at] ?? "") && pattern[at + 1] === "{" ? pattern.indexOf("}", at) : -1;
        at = braced === -1 ? at + 1 : braced + 1;
      } else if (char === "[") {
        while (at < pattern.length && pattern[at] !== "]") at += pattern[at] === "\\" ? 2 : 1;
        at++;
      }
      group.done += group.last;
      group.last = 1;
    }
  }
  while (open.length > 0) close();
  return group.done + group.last;
}
