import type { RE2JS } from "re2js";
import { boundText, errorMessage } from "./describe.js";
import { compileLinearPattern } from "./linear-regexp.js";
import { optionError } from "./options.js";
import { patternCost } from "./pattern-size.js";
import { fitDfa } from "./re2-dfa.js";
import { type WorkBudget, WorkMeter } from "./work-meter.js";

// The estimates live in pattern-size.ts (schema limits use them too); callers still find them here.
export { type PatternCost, patternCost, patternSize } from "./pattern-size.js";

/** A hidden tool as the search sees it: its name and the description read at registration. */
export interface SearchDocument {
  name: string;
  description: string;
}

/** A document a search matched, and how well. */
export interface Scored {
  document: SearchDocument;
  score: number;
}

/** Longest regex pattern or BM25 query accepted (both come from the model). */
export const MAX_SEARCH_QUERY_CHARS = 1_000;
/** Only the start of a long description is searched: a hostile server's megabyte stays cheap. */
const MAX_SEARCHED_DESCRIPTION_CHARS = 4_096;
/**
 * Largest regex accepted, in (estimated) instructions of its RE2 program: `.{1000}` repeated to
 * 1,000 characters compiles to 140,000 of them (100 ms and 10 MB each).
 */
const MAX_PATTERN_SIZE = 1_000;
/**
 * Most work one regex search may do, in estimated steps of the engine: characters searched × steps
 * per character (see {@link searchByRegex}). A pattern over it is refused before it runs; one
 * under it is still stopped by its time budget.
 */
const MAX_REGEX_WORK = 20_000_000;
/**
 * Most bytes of DFA one search's pattern may build (re2js's default is 8 MB): the pattern is
 * forgotten after the search, and a DFA that thrashes within a smaller one costs less per document.
 */
const SEARCH_DFA_BYTES = 2 * 1024 * 1024;

/** Most milliseconds of matching one regex search may take by default (see {@link searchByRegex}). */
export const DEFAULT_SEARCH_MS = 500;
/** A regex search yields to the event loop (when searching in slices) every 10 ms or 1,000 tools. */
const SEARCH_SLICE = { sliceMs: 10, sliceUnits: 1_000 } as const;

/** What a search compares against: the name and the start of the description. */
export function searchedText(document: SearchDocument): string {
  return `${document.name} ${document.description.slice(0, MAX_SEARCHED_DESCRIPTION_CHARS)}`;
}

/** Checks a search's query (a string of at most 1,000 characters) and `max` (an integer ≥ 0). */
export function checkSearch(where: string, option: string, query: unknown, max: unknown): asserts query is string {
  if (!Number.isInteger(max) || (max as number) < 0) throw optionError(where, "max", "an integer ≥ 0", max);
  if (typeof query !== "string") throw optionError(where, option, "a string", query);
  if (query.length > MAX_SEARCH_QUERY_CHARS) {
    throw new TypeError(`${where}: ${option} is longer than ${MAX_SEARCH_QUERY_CHARS} characters (${query.length})`);
  }
}

/** Best first: higher score, then name (deterministic whatever the registration order). */
export function ranked(scored: Scored[], max: number): SearchDocument[] {
  scored.sort((a, b) =>
    b.score !== a.score
      ? b.score - a.score
      : a.document.name < b.document.name
        ? -1
        : Number(a.document.name > b.document.name),
  );
  return scored.slice(0, max).map(({ document }) => document);
}

/** A regex search under way: the compiled pattern, the documents, how far it got. */
interface RegexSearch {
  readonly regex: RE2JS;
  readonly documents: readonly SearchDocument[];
  next: number;
  readonly scored: Scored[];
  readonly maxMs: number;
}

/**
 * Checks `pattern` and `max`, refuses a pattern too costly for `documents` from its cost, and
 * compiles it (not cached: the model's patterns are forgotten after their search). `undefined`
 * for `max` 0.
 */
function startRegexSearch(
  documents: Iterable<SearchDocument>,
  pattern: string,
  max: number,
  maxMs: number,
): RegexSearch | undefined {
  checkSearch("searchRegex", "pattern", pattern, max);
  const { size, branching } = patternCost(pattern);
  if (size > MAX_PATTERN_SIZE) {
    throw new TypeError(
      `searchRegex: pattern is too complex (about ${size} steps per character, at most ${MAX_PATTERN_SIZE}): use fewer or smaller repetitions`,
    );
  }
  let regex: RE2JS;
  try {
    regex = compileLinearPattern(pattern, "iu");
  } catch (error) {
    throw new TypeError(`searchRegex: ${errorMessage(error)}`, { cause: error });
  }
  if (max === 0) return undefined;
  const searched = [...documents];
  let characters = 0;
  for (const { name, description } of searched) {
    characters += name.length + Math.min(description.length, MAX_SEARCHED_DESCRIPTION_CHARS);
  }
  // One step per character on the engine's DFA, when its states fit: about 2^branching of them,
  // each with a table of the pattern's character classes. Otherwise the engine simulates the
  // program: its size in steps per character. (The bound was once size × characters for every
  // pattern: over 10,000 tools it refused any plain word of more than 7 letters.)
  const states = 2 ** Math.min(branching, 64) + size + 1;
  const steps = fitDfa(regex, states, size + 1, SEARCH_DFA_BYTES) ? 1 : size;
  if (steps * characters > MAX_REGEX_WORK) {
    if (steps === 1) {
      throw new TypeError(
        `searchRegex: the tools have too many characters of names and descriptions to search by pattern (${characters}, at most ${MAX_REGEX_WORK}): search by keywords`,
      );
    }
    throw new TypeError(
      `searchRegex: pattern is too complex to search ${characters} characters of tool names and descriptions (about ${steps} steps per character, at most ${Math.floor(MAX_REGEX_WORK / characters)} here): use fewer wildcards, classes and repetitions`,
    );
  }
  return { regex, documents: searched, next: 0, scored: [], maxMs };
}

/**
 * Matches documents until `meter`'s slice is over: `true` when all are done.
 * @throws TypeError once the search has taken more than its budget, documents left
 */
function continueRegexSearch(search: RegexSearch, meter: WorkMeter): boolean {
  const { regex, documents, scored } = search;
  while (search.next < documents.length) {
    const document = documents[search.next++] as SearchDocument;
    if (regex.test(document.name)) scored.push({ document, score: 2 });
    else if (regex.test(document.description.slice(0, MAX_SEARCHED_DESCRIPTION_CHARS)))
      scored.push({ document, score: 1 });
    if (!meter.tick() || search.next === documents.length) continue;
    if (meter.exhausted) {
      throw new TypeError(
        `searchRegex: pattern took too long to search the tools (over ${search.maxMs} ms, ${search.next} of ${documents.length} searched): use a simpler pattern, or search by keywords`,
      );
    }
    return false;
  }
  return true;
}

/** How long a search may take and the clock it is measured with (tests pass their own). */
export interface SearchTime {
  /** Most milliseconds of matching. @default 500 */
  maxMs?: number | undefined;
  /** The clock, in milliseconds. @default performance.now */
  now?: (() => number) | undefined;
}

function regexBudget({ maxMs = DEFAULT_SEARCH_MS, now }: SearchTime): WorkBudget {
  return { ...SEARCH_SLICE, maxMs, now };
}

/**
 * The documents whose name or description `pattern` matches, case-insensitively, on the linear-time
 * engine of schema patterns: a name match ranks before a description-only match, then by name.
 *
 * Its work is bounded twice. Before it runs: characters searched × steps per character at most 20
 * million, where a pattern whose DFA fits in memory (plain words, alternatives, a few wildcards:
 * few choices open at once, see {@link PatternCost.branching}, and few classes of characters)
 * costs one step per character and any other its program's size. While it runs: at most
 * `time.maxMs` (500) milliseconds of matching, checked after each document.
 * @throws TypeError for an invalid pattern (its message says why), one longer than 1,000
 * characters, one too complex (its program too large, or its work over these documents), one that
 * took too long, or a `max` that is not an integer ≥ 0
 */
export function searchByRegex(
  documents: Iterable<SearchDocument>,
  pattern: string,
  max: number,
  time: SearchTime = {},
): SearchDocument[] {
  const budget = regexBudget(time);
  const search = startRegexSearch(documents, pattern, max, budget.maxMs);
  if (search === undefined) return [];
  const meter = new WorkMeter(budget);
  while (!continueRegexSearch(search, meter)) {}
  return ranked(search.scored, max);
}

/**
 * {@link searchByRegex} in slices: it yields to the event loop every 10 ms (or 1,000 documents),
 * so that other work goes on while it searches; the slices' time counts against `time.maxMs`.
 * @throws TypeError as {@link searchByRegex}; the signal's reason once `signal` is aborted
 */
export async function searchByRegexInSlices(
  documents: Iterable<SearchDocument>,
  pattern: string,
  max: number,
  time: SearchTime = {},
  signal?: AbortSignal,
): Promise<SearchDocument[]> {
  const budget = regexBudget(time);
  const search = startRegexSearch(documents, pattern, max, budget.maxMs);
  if (search === undefined) return [];
  const meter = new WorkMeter(budget);
  while (!continueRegexSearch(search, meter)) await meter.pause(signal);
  return ranked(search.scored, max);
}

/** One line per match for the model: `- name: description`, the description on one line and bounded. */
export function formatMatches(matches: readonly SearchDocument[], maxDescriptionChars: number): string {
  return matches
    .map(({ name, description }) => {
      const line = description.replace(/\s+/g, " ").trim();
      return line === "" ? `- ${name}` : `- ${name}: ${boundText(line, maxDescriptionChars)}`;
    })
    .join("\n");
}
