import { boundText, errorMessage } from "./describe.js";
import { linearRegExp } from "./json-schema-validator.js";
import { optionError } from "./options.js";
import { patternSize } from "./pattern-size.js";

// The estimate lives in pattern-size.ts (schema limits use it too); callers still find it here.
export { patternSize };

/** A hidden tool as the search sees it: its name and the description read at registration. */
export interface SearchDocument {
  name: string;
  description: string;
}

/** Longest regex pattern or BM25 query accepted (both come from the model). */
export const MAX_SEARCH_QUERY_CHARS = 1_000;
/** Most distinct terms of a BM25 query that are scored (the rest are ignored). */
const MAX_QUERY_TERMS = 32;
/** Only the start of a long description is searched: a hostile server's megabyte stays cheap. */
const MAX_SEARCHED_DESCRIPTION_CHARS = 4_096;
/**
 * Largest regex accepted, in (estimated) instructions of its RE2 program: `.{1000}` repeated to
 * 1,000 characters compiles to 140,000 of them (100 ms and 10 MB each, kept in the pattern cache).
 */
const MAX_PATTERN_SIZE = 1_000;
/**
 * Most work one regex search may do: program size × characters searched. Linear-time matching
 * still costs up to one step per instruction and character (a `.{1000}` over 200 descriptions of
 * 4 KiB held the event loop for a minute); this bounds it to a fraction of a second.
 */
const MAX_REGEX_WORK = 20_000_000;

/**
 * English words a query's meaning does not rest on: as query terms they would give almost every tool
 * a small score, and so promote unrelated tools ("read a file" finds every description with "a").
 */
const STOP_WORDS: ReadonlySet<string> = new Set(
  "a an and are as at be by can for from i in is it me my of on or please the this to use want with".split(" "),
);

// BM25's usual constants (Robertson & Zaragoza): term-frequency saturation and length normalisation.
const K1 = 1.2;
const B = 0.75;

/** What a search compares against: the name and the start of the description. */
function searchedText(document: SearchDocument): string {
  return `${document.name} ${document.description.slice(0, MAX_SEARCHED_DESCRIPTION_CHARS)}`;
}

/**
 * Splits text into lower-cased search terms at `_`, `-`, spaces and other non-alphanumerics, and
 * at case changes (`readFile` → `read`, `file`; `HTTPServer` → `http`, `server`).
 */
export function searchTerms(text: string): string[] {
  const spaced = text
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, "$1 $2")
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, "$1 $2")
    .toLowerCase();
  return spaced.split(/[^\p{L}\p{N}]+/u).filter((term) => term !== "");
}

/** Checks a search's query (a string of at most 1,000 characters) and `max` (an integer ≥ 0). */
function checkSearch(where: string, option: string, query: unknown, max: unknown): asserts query is string {
  if (!Number.isInteger(max) || (max as number) < 0) throw optionError(where, "max", "an integer ≥ 0", max);
  if (typeof query !== "string") throw optionError(where, option, "a string", query);
  if (query.length > MAX_SEARCH_QUERY_CHARS) {
    throw new TypeError(`${where}: ${option} is longer than ${MAX_SEARCH_QUERY_CHARS} characters (${query.length})`);
  }
}

/** Best first: higher score, then name (deterministic whatever the registration order). */
function ranked(scored: { document: SearchDocument; score: number }[], max: number): SearchDocument[] {
  scored.sort((a, b) =>
    b.score !== a.score
      ? b.score - a.score
      : a.document.name < b.document.name
        ? -1
        : Number(a.document.name > b.document.name),
  );
  return scored.slice(0, max).map(({ document }) => document);
}

/**
 * The documents whose name or description `pattern` matches, case-insensitively, on the linear-time
 * engine of schema patterns: a name match ranks before a description-only match, then by name.
 * @throws TypeError for an invalid pattern (its message says why), one longer than 1,000
 * characters, one too complex (its program, or its program times the characters to search, too
 * large), or a `max` that is not an integer ≥ 0
 */
export function searchByRegex(documents: Iterable<SearchDocument>, pattern: string, max: number): SearchDocument[] {
  checkSearch("searchRegex", "pattern", pattern, max);
  const size = patternSize(pattern);
  if (size > MAX_PATTERN_SIZE) {
    throw new TypeError(
      `searchRegex: pattern is too complex (about ${size} steps per character, at most ${MAX_PATTERN_SIZE}): use fewer or smaller repetitions`,
    );
  }
  let regex: { test(text: string): boolean };
  try {
    regex = linearRegExp(pattern, "iu");
  } catch (error) {
    throw new TypeError(`searchRegex: ${errorMessage(error)}`, { cause: error });
  }
  if (max === 0) return [];
  const searched = [...documents];
  let characters = 0;
  for (const { name, description } of searched) {
    characters += name.length + Math.min(description.length, MAX_SEARCHED_DESCRIPTION_CHARS);
  }
  if (size * characters > MAX_REGEX_WORK) {
    throw new TypeError(
      `searchRegex: pattern is too complex to search ${characters} characters of tool names and descriptions (about ${size} steps per character, at most ${Math.floor(MAX_REGEX_WORK / characters)} here): use a simpler one`,
    );
  }
  const scored: { document: SearchDocument; score: number }[] = [];
  for (const document of searched) {
    if (regex.test(document.name)) scored.push({ document, score: 2 });
    else if (regex.test(document.description.slice(0, MAX_SEARCHED_DESCRIPTION_CHARS)))
      scored.push({ document, score: 1 });
  }
  return ranked(scored, max);
}

/** BM25 over the name and description of a fixed set of documents; built once, searched many times. */
export class Bm25Index {
  readonly #documents: readonly SearchDocument[];
  /** Per document: term → count. */
  readonly #frequencies: Map<string, number>[] = [];
  readonly #lengths: number[] = [];
  /** Term → how many documents hold it. */
  readonly #documentFrequency = new Map<string, number>();
  readonly #averageLength: number;

  constructor(documents: readonly SearchDocument[]) {
    this.#documents = documents;
    let total = 0;
    for (const document of documents) {
      const terms = searchTerms(searchedText(document));
      const counts = new Map<string, number>();
      for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
      for (const term of counts.keys()) this.#documentFrequency.set(term, (this.#documentFrequency.get(term) ?? 0) + 1);
      this.#frequencies.push(counts);
      this.#lengths.push(terms.length);
      total += terms.length;
    }
    this.#averageLength = documents.length === 0 ? 0 : total / documents.length;
  }

  /**
   * The documents that share a term with `query`, best BM25 score first, then by name; at most `max`.
   * Only the first 32 distinct terms of the query count.
   * @throws TypeError for a query longer than 1,000 characters or a `max` that is not an integer ≥ 0
   */
  search(query: string, max: number): SearchDocument[] {
    checkSearch("searchBM25", "query", query, max);
    const terms = [...new Set(searchTerms(query))].filter((term) => !STOP_WORDS.has(term)).slice(0, MAX_QUERY_TERMS);
    if (max === 0 || terms.length === 0) return [];
    const count = this.#documents.length;
    const scored: { document: SearchDocument; score: number }[] = [];
    for (let index = 0; index < count; index++) {
      const frequencies = this.#frequencies[index] as Map<string, number>;
      const length = this.#lengths[index] as number;
      let score = 0;
      for (const term of terms) {
        const frequency = frequencies.get(term);
        if (frequency === undefined) continue;
        const holders = this.#documentFrequency.get(term) as number;
        const idf = Math.log(1 + (count - holders + 0.5) / (holders + 0.5));
        score += (idf * frequency * (K1 + 1)) / (frequency + K1 * (1 - B + (B * length) / (this.#averageLength || 1)));
      }
      if (score > 0) scored.push({ document: this.#documents[index] as SearchDocument, score });
    }
    return ranked(scored, max);
  }
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
