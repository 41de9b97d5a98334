/**
 * A pattern whose DFA cannot hold its states: `\p{L}` makes about 700 classes of characters (over
 * 1,300 case-insensitively), so each DFA state has a table of 5–11 KB, and `.{10}` keeps up to 2^11
 * sets of positions in play. Over varied letters re2js's DFA (8 MB by default) keeps filling up and
 * resetting: a new state at almost every character.
 */
export const THRASHING_PATTERN = "[aeiou].{10}\\p{L}#";

/**
 * `length` pseudo-random letters (a third of them vowels, the rest from several scripts) after a `#`
 * (re2js skips a text without the `#` {@link THRASHING_PATTERN} needs), which that pattern never
 * matches: for it, a new DFA state at almost every character. `seed` varies the text.
 */
export function thrashingText(length: number, seed = 1): string {
  const others = "bcdfghjklmnpqrstvwxyzBCDFGHJKLMNPQRSTVWXYZβγδζθλμξπρστφχψωбвгджзклмнпрстфхцчшщ";
  let state = seed;
  const random = (below: number) => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state % below;
  };
  let text = "#";
  while (text.length <= length) {
    text += random(3) === 0 ? ("aeiou"[random(5)] as string) : others[random(others.length)];
  }
  return text;
}
