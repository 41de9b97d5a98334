// ─── Schema patterns on a linear-time engine: translation ───────────────────────────────────────
//
// A backtracking engine (V8's RegExp) takes exponential time on patterns such as `^(a+)+$`, and
// validation is synchronous: no timeout or abort can interrupt it. So every pattern Ajv compiles
// (`pattern`, `patternProperties` keys, `propertyNames` patterns) runs on re2js, a pure-JS RE2
// whose matching is linear in the input. A pattern must first be a valid ECMA-262 (`u` mode)
// regular expression, as JSON Schema says; it is then translated where RE2's syntax or meaning
// differs, so that it accepts exactly what V8 would.

/** JS `\s` (WhiteSpace and LineTerminator, ECMA-262), as code point ranges; RE2's `\s` is ASCII only. */
const WHITE_SPACE: ReadonlyArray<readonly [number, number]> = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];
const MAX_CODE_POINT = 0x10ffff;

function rangesText(ranges: ReadonlyArray<readonly [number, number]>): string {
  return ranges.map(([from, to]) => (from === to ? hexEscape(from) : `${hexEscape(from)}-${hexEscape(to)}`)).join("");
}

function complement(ranges: ReadonlyArray<readonly [number, number]>): Array<[number, number]> {
  const result: Array<[number, number]> = [];
  let next = 0;
  for (const [from, to] of ranges) {
    if (from > next) result.push([next, from - 1]);
    next = to + 1;
  }
  if (next <= MAX_CODE_POINT) result.push([next, MAX_CODE_POINT]);
  return result;
}

/** Class bodies (without brackets), usable inside a class too, where `[^…]` cannot nest. */
const SPACE_CLASS_BODY = rangesText(WHITE_SPACE);
const NON_SPACE_CLASS_BODY = rangesText(complement(WHITE_SPACE));
/** JS `.` without the `s` flag: anything but a line terminator; RE2's `.` only excludes `\n`. */
const JS_DOT = "[^\\n\\r\\x{2028}\\x{2029}]";
/** JS `[^]` and `[]`, which RE2 reads as an unclosed class. */
const ANY_CHARACTER = `[${rangesText([[0, MAX_CODE_POINT]])}]`;
const NO_CHARACTER = `[^${rangesText([[0, MAX_CODE_POINT]])}]`;
/** RE2's inline flag groups, `(?i)` or `(?i-s:`, which V8 (before modifiers) does not know. */
const INLINE_FLAGS = /^\(\?([imsU]*)(?:-([imsU]*))?([:)])/;

/** A pattern translated for RE2 (see {@link translatePattern}). */
export interface TranslatedPattern {
  /** The pattern in RE2 syntax, with JS meaning. */
  re2: string;
  /** The pattern with RE2's inline flag groups made neutral, to check it as a JS (`u`) pattern. */
  js: string;
  /** Why RE2 cannot run it (a backreference, lookaround), if it cannot. */
  unsupported?: string;
}

function hexEscape(code: number): string {
  return `\\x{${code.toString(16)}}`;
}

/** Reads a `\uXXXX` (a surrogate pair of them as one code point) or `\u{X…}` escape at `index`. */
function readUnicodeEscape(pattern: string, index: number): { code: number; length: number } | undefined {
  const braced = /^\\u\{([0-9a-fA-F]{1,6})\}/.exec(pattern.slice(index, index + 10));
  if (braced?.[1] !== undefined) return { code: Number.parseInt(braced[1], 16), length: braced[0].length };
  const pair = /^\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})/.exec(pattern.slice(index, index + 12));
  if (pair?.[1] !== undefined && pair[2] !== undefined) {
    const high = Number.parseInt(pair[1], 16);
    const low = Number.parseInt(pair[2], 16);
    return { code: (high - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000, length: 12 };
  }
  const single = /^\\u([0-9a-fA-F]{4})/.exec(pattern.slice(index, index + 6));
  if (single?.[1] !== undefined) return { code: Number.parseInt(single[1], 16), length: 6 };
  return undefined;
}

/**
 * Translates a JSON Schema (ECMA-262, `u` mode) pattern into RE2 syntax with the same meaning:
 * `\u` escapes, JS's Unicode `\s`/`\S` and `.`, `[` inside a class (a POSIX class in RE2),
 * `[\b]`, `\cX`, `[]`, `[^]`, `\p{Script=X}`. Everything else is the same in both syntaxes.
 */
export function translatePattern(pattern: string): TranslatedPattern {
  const translation: Translation = { re2: [], js: [], dots: [], dotAll: false, inClass: false };
  let index = 0;
  while (index < pattern.length) {
    index =
      pattern[index] === "\\"
        ? translateEscape(translation, pattern, index)
        : translateCharacter(translation, pattern, index);
  }
  const { re2, js, dots, dotAll, unsupported } = translation;
  // `(?s)` makes `.` match line terminators, which JS's class form of `.` would never do: with
  // RE2's flags in play, `.` keeps RE2's meaning (a `.` outside `(?s)` then also matches `\r`).
  if (!dotAll) for (const at of dots) re2[at] = JS_DOT;
  const result: TranslatedPattern = { re2: re2.join(""), js: js.join("") };
  if (unsupported !== undefined) result.unsupported = unsupported;
  return result;
}

/** A translation under way: both texts so far, and what was read. */
interface Translation {
  re2: string[];
  js: string[];
  /** Where the `.`s are in `re2`. */
  dots: number[];
  /** A `(?s)` flag was seen. */
  dotAll: boolean;
  inClass: boolean;
  /** The first thing RE2 cannot run. */
  unsupported?: string;
}

function both(translation: Translation, text: string): void {
  translation.re2.push(text);
  translation.js.push(text);
}

/** Translates the escape at `index` (a backslash); returns the index after it. */
function translateEscape(translation: Translation, pattern: string, index: number): number {
  const { re2, js, inClass } = translation;
  const next = pattern[index + 1];
  if (next === undefined) {
    both(translation, "\\");
    return index + 1;
  }
  const escaped = `\\${next}`;
  if (next === "u") {
    const unicode = readUnicodeEscape(pattern, index);
    if (unicode !== undefined) {
      re2.push(hexEscape(unicode.code));
      js.push(pattern.slice(index, index + unicode.length));
      return index + unicode.length;
    }
  } else if (next === "s" || next === "S") {
    const body = next === "s" ? SPACE_CLASS_BODY : NON_SPACE_CLASS_BODY;
    re2.push(inClass ? body : `[${body}]`);
    js.push(escaped);
    return index + 2;
  } else if (next === "b" && inClass) {
    re2.push(hexEscape(0x08));
    js.push(escaped);
    return index + 2;
  } else if (next === "c" && /^[A-Za-z]$/.test(pattern[index + 2] ?? "")) {
    re2.push(hexEscape((pattern.charCodeAt(index + 2) as number) % 32));
    js.push(pattern.slice(index, index + 3));
    return index + 3;
  } else if ((next === "p" || next === "P") && pattern[index + 2] === "{") {
    const end = pattern.indexOf("}", index);
    if (end !== -1) {
      const property = pattern.slice(index + 3, end);
      re2.push(`\\${next}{${property.replace(/^(?:Script|sc)=/, "")}}`);
      js.push(pattern.slice(index, end + 1));
      return end + 1;
    }
  } else if (!inClass && /^[1-9]$/.test(next)) {
    translation.unsupported ??= `a backreference (${escaped})`;
  } else if (!inClass && next === "k") {
    translation.unsupported ??= `a backreference (${escaped}<…>)`;
  }
  // Any other escape (a code point, so an astral one stays whole) means the same in both.
  const length = 1 + ((pattern.codePointAt(index + 1) as number) > 0xffff ? 2 : 1);
  both(translation, pattern.slice(index, index + length));
  return index + length;
}

/** Translates the character at `index`, outside an escape; returns the index after what it read. */
function translateCharacter(translation: Translation, pattern: string, index: number): number {
  const { re2, js } = translation;
  const char = pattern[index] as string;
  if (translation.inClass) {
    if (char === "]") translation.inClass = false;
    re2.push(char === "[" ? "\\[" : char);
    js.push(char);
    return index + 1;
  }
  if (char === "[") {
    if (pattern.startsWith("[]", index) || pattern.startsWith("[^]", index)) {
      const negated = pattern[index + 1] === "^";
      re2.push(negated ? ANY_CHARACTER : NO_CHARACTER);
      js.push(negated ? "[^]" : "[]");
      return index + (negated ? 3 : 2);
    }
    translation.inClass = true;
  } else if (char === ".") {
    translation.dots.push(re2.length);
  } else if (char === "(" && pattern[index + 1] === "?") {
    const lookaround = /^\(\?(?:=|!|<=|<!)/.exec(pattern.slice(index, index + 4));
    if (lookaround !== null) {
      const kind = lookaround[0].includes("<") ? "lookbehind" : "lookahead";
      translation.unsupported ??= `a ${kind} (${lookaround[0]}…)`;
    }
    const flags = INLINE_FLAGS.exec(pattern.slice(index, index + 16));
    if (flags !== null && (flags[1] !== "" || flags[2] !== undefined)) {
      if (flags[1]?.includes("s")) translation.dotAll = true;
      re2.push(flags[0]);
      js.push(flags[3] === ":" ? "(?:" : "");
      return index + flags[0].length;
    }
  }
  both(translation, char);
  return index + 1;
}
