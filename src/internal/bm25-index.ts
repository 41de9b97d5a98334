import { checkSearch, ranked, type Scored, type SearchDocument, searchedText } from "./tool-search.js";
import { type WorkBudget, WorkMeter } from "./work-meter.js";

/** Most distinct terms of a BM25 query that are scored (the rest are ignored). */
const MAX_QUERY_TERMS = 32;

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

/** Slices of the index's work when it is done in slices: documents indexed, documents scored. */
const INDEX_SLICE = { maxMs: Number.POSITIVE_INFINITY, sliceMs: 10, sliceUnits: 100 } as const;
const SCORE_SLICE = { maxMs: Number.POSITIVE_INFINITY, sliceMs: 10, sliceUnits: 2_000 } as const;

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

/** One indexed document: its distinct terms (ids, ascending) and how often each occurs. */
interface Indexed {
  readonly document: SearchDocument;
  readonly terms: Uint32Array;
  readonly counts: Uint16Array;
  readonly length: number;
}

/** Where `id` is in `terms` (ascending), or -1. */
function find(terms: Uint32Array, id: number): number {
  let low = 0;
  let high = terms.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const at = terms[middle] as number;
    if (at === id) return middle;
    if (at < id) low = middle + 1;
    else high = middle - 1;
  }
  return -1;
}

/** A query's terms as one search scores them: ids and idf read once, when scoring starts. */
interface Query {
  readonly ids: number[];
  readonly idf: number[];
  readonly averageLength: number;
}

/**
 * BM25 over the name and description of a set of documents, kept up to date: {@link update} takes
 * the documents as they are now and works out what changed (a document is indexed once, when a
 * search first needs it), so a registry's change costs the changed documents only. A document
 * keeps its distinct terms as ids in typed arrays (a few bytes a term).
 */
export class Bm25Index {
  readonly #indexed = new Map<string, Indexed>();
  /** Documents not indexed yet, by name: the next search indexes them (in slices, for the discovery tools). */
  readonly #pending = new Map<string, SearchDocument>();
  /** Term → id; and by id: the term and how many indexed documents hold it. */
  readonly #ids = new Map<string, number>();
  readonly #terms: (string | undefined)[] = [];
  readonly #holders: number[] = [];
  readonly #freeIds: number[] = [];
  #totalLength = 0;

  constructor(documents: Iterable<SearchDocument> = []) {
    this.update(documents);
  }

  /** How many documents the next search still has to index. */
  get pending(): number {
    return this.#pending.size;
  }

  /**
   * Makes `documents` (unique names) what the index holds: documents gone or whose description
   * changed are dropped at once, new and changed ones wait for the next search. One pass, no
   * tokenizing.
   */
  update(documents: Iterable<SearchDocument>): void {
    const seen = new Set<string>();
    for (const document of documents) {
      const { name, description } = document;
      seen.add(name);
      const indexed = this.#indexed.get(name);
      if (indexed?.document.description === description) continue;
      if (indexed !== undefined) this.#drop(name, indexed);
      this.#pending.set(name, document);
    }
    for (const [name, indexed] of this.#indexed) if (!seen.has(name)) this.#drop(name, indexed);
    for (const name of this.#pending.keys()) if (!seen.has(name)) this.#pending.delete(name);
  }

  /**
   * The documents that share a term with `query`, best BM25 score first, then by name; at most `max`.
   * Only the first 32 distinct terms of the query count. Indexes what is pending first, at once.
   * @throws TypeError for a query longer than 1,000 characters or a `max` that is not an integer ≥ 0
   */
  search(query: string, max: number): SearchDocument[] {
    checkSearch("searchBM25", "query", query, max);
    const terms = queryTerms(query);
    if (max === 0 || terms.length === 0) return [];
    const meter = new WorkMeter(INDEX_SLICE);
    while (!this.#indexSome(meter)) {}
    const entries = [...this.#indexed.values()];
    const scored: Scored[] = [];
    this.#score(this.#query(terms), entries, 0, entries.length, scored);
    return ranked(scored, max);
  }

  /**
   * {@link search} in slices: indexing what is pending and scoring yield to the event loop every
   * few milliseconds, so a first search over 10,000 long descriptions holds it for no longer. What
   * it indexed stays indexed if it is aborted.
   * @throws TypeError as {@link search}; the signal's reason once `signal` is aborted
   */
  async searchInSlices(
    query: string,
    max: number,
    signal?: AbortSignal,
    now?: () => number,
  ): Promise<SearchDocument[]> {
    checkSearch("searchBM25", "query", query, max);
    const terms = queryTerms(query);
    if (max === 0 || terms.length === 0) return [];
    const indexing = new WorkMeter({ ...INDEX_SLICE, now });
    while (!this.#indexSome(indexing)) await indexing.pause(signal);
    // Scored against the index as it is now: a change while this search yields counts from the next one.
    const entries = [...this.#indexed.values()];
    const query_ = this.#query(terms);
    const scored: Scored[] = [];
    const scoring = new WorkMeter({ ...SCORE_SLICE, now } satisfies WorkBudget);
    for (let from = 0; from < entries.length; ) {
      from = this.#score(query_, entries, from, entries.length, scored, scoring);
      if (from < entries.length) await scoring.pause(signal);
    }
    return ranked(scored, max);
  }

  /** Indexes pending documents until `meter`'s slice is over: `true` when none is left. */
  #indexSome(meter: WorkMeter): boolean {
    for (const [name, document] of this.#pending) {
      this.#pending.delete(name);
      this.#add(document);
      if (meter.tick()) return this.#pending.size === 0;
    }
    return true;
  }

  #add(document: SearchDocument): void {
    const terms = searchTerms(searchedText(document));
    const counts = new Map<number, number>();
    for (const term of terms) {
      const id = this.#idOf(term);
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    const ids = Uint32Array.from(counts.keys()).sort();
    const frequencies = new Uint16Array(ids.length);
    ids.forEach((id, at) => {
      // A term occurs at most about 2,000 times in the 4,096 characters searched.
      frequencies[at] = Math.min(counts.get(id) as number, 0xffff);
      this.#holders[id] = (this.#holders[id] as number) + 1;
    });
    this.#indexed.set(document.name, { document, terms: ids, counts: frequencies, length: terms.length });
    this.#totalLength += terms.length;
  }

  #drop(name: string, indexed: Indexed): void {
    this.#indexed.delete(name);
    this.#totalLength -= indexed.length;
    for (const id of indexed.terms) {
      const holders = (this.#holders[id] as number) - 1;
      this.#holders[id] = holders;
      if (holders > 0) continue;
      // A term no document holds any more is forgotten: the dictionary follows the documents.
      this.#ids.delete(this.#terms[id] as string);
      this.#terms[id] = undefined;
      this.#freeIds.push(id);
    }
  }

  #idOf(term: string): number {
    let id = this.#ids.get(term);
    if (id === undefined) {
      id = this.#freeIds.pop() ?? this.#terms.length;
      this.#ids.set(term, id);
      this.#terms[id] = term;
      this.#holders[id] = 0;
    }
    return id;
  }

  /** The query's terms the index holds, with their idf now. */
  #query(terms: readonly string[]): Query {
    const count = this.#indexed.size;
    const ids: number[] = [];
    const idf: number[] = [];
    for (const term of terms) {
      const id = this.#ids.get(term);
      if (id === undefined) continue;
      const holders = this.#holders[id] as number;
      ids.push(id);
      idf.push(Math.log(1 + (count - holders + 0.5) / (holders + 0.5)));
    }
    return { ids, idf, averageLength: count === 0 ? 0 : this.#totalLength / count };
  }

  /** Scores `entries[from..to)` into `scored`, until `meter`'s slice is over when given: where it stopped. */
  #score(
    query: Query,
    entries: readonly Indexed[],
    from: number,
    to: number,
    scored: Scored[],
    meter?: WorkMeter,
  ): number {
    const { ids, idf, averageLength } = query;
    if (ids.length === 0) return to;
    let at = from;
    while (at < to) {
      const { document, terms, counts, length } = entries[at++] as Indexed;
      let score = 0;
      for (let term = 0; term < ids.length; term++) {
        const found = find(terms, ids[term] as number);
        if (found === -1) continue;
        const frequency = counts[found] as number;
        score +=
          ((idf[term] as number) * frequency * (K1 + 1)) /
          (frequency + K1 * (1 - B + (B * length) / (averageLength || 1)));
      }
      if (score > 0) scored.push({ document, score });
      if (meter?.tick()) break;
    }
    return at;
  }
}

/** The distinct terms of a query that are scored: no stop words, the first 32. */
function queryTerms(query: string): string[] {
  return [...new Set(searchTerms(query))].filter((term) => !STOP_WORDS.has(term)).slice(0, MAX_QUERY_TERMS);
}
