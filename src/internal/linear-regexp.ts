import type { RE2JS } from "re2js";
import { boundText } from "./describe.js";
import { patternSize } from "./pattern-size.js";
import { testWithSmallDfa } from "./re2-dfa.js";
import { require } from "./require.js";
import { MAX_PATTERN_SIZE } from "./schema-cost.js";
import { translatePattern } from "./translate-pattern.js";

// re2js (a CommonJS package) is loaded on the first schema `pattern`, not at import.
function loadRe2(): typeof RE2JS {
  return (require("re2js") as { RE2JS: typeof RE2JS }).RE2JS;
}

/** Longest schema pattern quoted in a registration error. */
const MAX_PATTERN_CHARS = 200;

function patternError(pattern: string, reason: string): Error {
  return new Error(`pattern ${JSON.stringify(boundText(pattern, MAX_PATTERN_CHARS))} ${reason}`);
}

const LINEAR_ENGINE = "toolloop's linear-time engine (RE2, which has no backreferences, lookahead or lookbehind)";

/** A compiled pattern as Ajv uses it: `test` (a search, as JSON Schema's `pattern` means). */
export interface LinearRegExp {
  test(text: string): boolean;
  toString(): string;
}

// Compiled patterns are shared (the same pattern in many schemas is compiled once), in a cache
// bounded in entries and in instructions: a program keeps about 200 bytes per instruction alive
// (measured), and one pattern may have up to MAX_PATTERN_SIZE of them.
const compiledPatterns = new Map<string, { regExp: LinearRegExp; size: number }>();
const MAX_CACHED_PATTERNS = 500;
const MAX_CACHED_INSTRUCTIONS = 100_000;
let cachedInstructions = 0;

// ─── Matching: a bound on the work per validation ───────────────────────────────────────────────
//
// Matching is linear in the text, but RE2 may take a step per instruction of the program for each
// character: a 10,000-character argument against `(a|b|c|d|e){1,1000}$` took 0.7 s, 100,000
// characters 8 s. A validation counts program size × characters for each string it matches and,
// past MAX_PATTERN_WORK, stops and answers that the arguments are too long to check.

/** Steps of matching (instructions × characters) one validation may take: about 0.1 s. */
export const MAX_PATTERN_WORK = 5_000_000;
/** Steps left in the current validation: `Infinity` outside one (the tool search bounds its own). */
let patternWorkLeft = Number.POSITIVE_INFINITY;
/** Thrown from a match once a validation's steps are spent (see {@link startPatternWork}). */
export const PATTERN_WORK_EXCEEDED = Symbol("pattern work exceeded");

/** Starts one validation's budget of matching steps ({@link MAX_PATTERN_WORK}). */
export function startPatternWork(): void {
  patternWorkLeft = MAX_PATTERN_WORK;
}

/** Ends it: matching outside a validation (the tool search bounds its own) is not counted. */
export function endPatternWork(): void {
  patternWorkLeft = Number.POSITIVE_INFINITY;
}

/**
 * Ajv's `code.regExp` engine: compiles a schema pattern for re2js, so that matching takes time
 * linear in the input whatever the pattern. Throws (at registration) for a pattern that is not a
 * valid JS regular expression or that RE2 cannot run, naming the pattern and saying why. The flag
 * `i` makes it case-insensitive; other flags only shape the JS check. Cached, with little DFA kept.
 */
export function linearRegExp(pattern: string, flags: string): LinearRegExp {
  // Ajv dedupes compiled patterns by `toString()`: it must name the pattern (and it is never the
  // text of a native RegExp, so the two can never be mixed up).
  const key = `re2:${flags}:${pattern}`;
  const cached = compiledPatterns.get(key);
  if (cached !== undefined) return cached.regExp;
  const re2 = compileLinearPattern(pattern, flags, MAX_PATTERN_SIZE);
  const steps = re2.programSize();
  const test = testWithSmallDfa(re2);
  const compiled: LinearRegExp = {
    test: (text) => {
      patternWorkLeft -= steps * (text.length + 1);
      if (patternWorkLeft < 0) throw PATTERN_WORK_EXCEEDED;
      return test(text);
    },
    toString: () => key,
  };
  compiledPatterns.set(key, { regExp: compiled, size: steps });
  cachedInstructions += steps;
  while (compiledPatterns.size > MAX_CACHED_PATTERNS || cachedInstructions > MAX_CACHED_INSTRUCTIONS) {
    const [oldest, evicted] = compiledPatterns.entries().next().value as [string, { size: number }];
    compiledPatterns.delete(oldest);
    cachedInstructions -= evicted.size;
  }
  return compiled;
}

/**
 * {@link linearRegExp}'s compilation, uncached: the tool search's patterns are forgotten after
 * their search. A pattern whose program is estimated over `maxSize` instructions is refused before
 * RE2 builds it.
 */
export function compileLinearPattern(pattern: string, flags: string, maxSize = Number.POSITIVE_INFINITY): RE2JS {
  const translated = translatePattern(pattern);
  try {
    new RegExp(translated.js, flags);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw patternError(pattern, `is not a valid regular expression: ${reason}`);
  }
  if (translated.unsupported !== undefined) {
    throw patternError(pattern, `cannot run on ${LINEAR_ENGINE}: it has ${translated.unsupported}`);
  }
  // Before RE2 builds it: a counted repetition multiplies the program (1 KB made 920,000 instructions).
  const size = patternSize(pattern);
  if (size > maxSize) {
    throw patternError(
      pattern,
      `is too large for ${LINEAR_ENGINE}: it would compile to about ${size} instructions, at most ${maxSize} (use fewer or smaller counted repetitions)`,
    );
  }
  let re2: RE2JS;
  try {
    re2 = loadRe2().compile(flags.includes("i") ? `(?i)${translated.re2}` : translated.re2);
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).replace(/^error parsing regexp: /, "");
    const hint = /\\[pP]/.test(reason)
      ? " (RE2 knows short category names such as \\p{L} and scripts such as \\p{Greek})"
      : "";
    throw patternError(pattern, `cannot run on ${LINEAR_ENGINE}: ${reason}${hint}`);
  }
  return re2;
}
// Ajv writes `code` into standalone validation code only, which toolloop never generates.
linearRegExp.code = "toolloopLinearRegExp";
