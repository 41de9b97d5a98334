// Brace expansion as bash makes it (`{a,b}`, innermost groups first), bounded, for `execute_bash`'s
// command guard.

/** Whether a word may be a brace expansion (`{a,b}`, `{1..3}`). */
export function isBraceExpansion(text: string): boolean {
  const open = text.indexOf("{");
  return open !== -1 && text.indexOf("}", open + 1) !== -1 && (text.includes(",") || text.includes(".."));
}

/** Most words {@link braceExpansion} makes of one word, and most rounds; beyond, its braces and commas read as blanks. */
const MAX_BRACE_WORDS = 32;
const MAX_BRACE_ROUNDS = 8;

/**
 * The words bash makes of a word with `{a,b}` groups (`/{proc,x}/1` → `/proc/1`, `/x/1`;
 * `{rm,-rf,x}` → `rm`, `-rf`, `x`), innermost groups first; a sequence (`{1..3}`) is kept as it
 * is. When that would make more than {@link MAX_BRACE_WORDS} words or take more than
 * {@link MAX_BRACE_ROUNDS} rounds, the word with its braces and commas as blanks: it
 * over-approximates, and the work stays a constant times the word's length.
 */
export function braceExpansion(word: string): string[] {
  let words = [word];
  for (let round = 0; round < MAX_BRACE_ROUNDS; round++) {
    const next: string[] = [];
    let expanded = false;
    for (const current of words) {
      const group = innermostGroup(current);
      if (group === undefined) {
        next.push(current);
        continue;
      }
      expanded = true;
      const head = current.slice(0, group.open);
      const tail = current.slice(group.close + 1);
      for (const alternative of current.slice(group.open + 1, group.close).split(",")) {
        next.push(head + alternative + tail);
      }
    }
    if (!expanded) return words;
    if (next.length > MAX_BRACE_WORDS) break;
    words = next;
  }
  return [word.replace(/[{},]/g, " ")];
}

/** The first `{…}` holding a comma and no brace, or `undefined`. Linear. */
function innermostGroup(word: string): { open: number; close: number } | undefined {
  let open = -1;
  let comma = false;
  for (let index = 0; index < word.length; index++) {
    const char = word.charAt(index);
    if (char === "{") {
      open = index;
      comma = false;
    } else if (char === "}") {
      if (open !== -1 && comma) return { open, close: index };
      open = -1;
    } else if (char === "," && open !== -1) comma = true;
  }
  return undefined;
}
