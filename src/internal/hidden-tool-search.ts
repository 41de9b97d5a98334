import { Bm25Index } from "./bm25-index.js";
import { type SearchDocument, type SearchTime, searchByRegex, searchByRegexInSlices } from "./tool-search.js";

/**
 * @internal `(request: HiddenToolSearchRequest) => Promise<ToolSearchResult[]>`: a registry's search
 * of its hidden tools in slices that yield to the event loop — what the discovery tools of
 * `createToolSearchTools` call. `Symbol.for`, so that tools of another installed copy find it.
 */
export const SEARCH_HIDDEN_TOOLS: unique symbol = Symbol.for("toolloop.registry.searchHiddenTools");

/** One search by a discovery tool. */
export interface HiddenToolSearchRequest extends SearchTime {
  by: "regex" | "bm25";
  /** The pattern or the keywords (the model's). */
  query: string;
  max: number;
  /** The tool call's signal: an aborted search stops at its next slice. */
  signal?: AbortSignal | undefined;
}

/**
 * A registry's search of its hidden tools: by regex (over the tools as they are when it starts),
 * by BM25 over an index kept up to date as hidden tools come and go.
 */
export class HiddenToolSearch {
  readonly #version: () => number;
  readonly #documents: () => Iterable<SearchDocument>;
  readonly #bm25 = new Bm25Index();
  /** The hidden tools' version the index was last brought up to date with. */
  #synced: number | undefined;

  /** `version` changes whenever a hidden tool is added or removed; `documents` lists them. */
  constructor(version: () => number, documents: () => Iterable<SearchDocument>) {
    this.#version = version;
    this.#documents = documents;
  }

  /** See `ToolRegistry.searchRegex`. */
  regex(pattern: string, max: number): SearchDocument[] {
    return searchByRegex(this.#documents(), pattern, max);
  }

  /** See `ToolRegistry.searchBM25`. */
  bm25(query: string, max: number): SearchDocument[] {
    return this.#synchronized().search(query, max);
  }

  /** A discovery tool's search: in slices (see {@link SEARCH_HIDDEN_TOOLS}). */
  inSlices(request: HiddenToolSearchRequest): Promise<SearchDocument[]> {
    const { query, max, signal, maxMs, now } = request;
    if (request.by === "regex") return searchByRegexInSlices(this.#documents(), query, max, { maxMs, now }, signal);
    return this.#synchronized().searchInSlices(query, max, signal, now);
  }

  #synchronized(): Bm25Index {
    const version = this.#version();
    if (version !== this.#synced) {
      this.#bm25.update(this.#documents());
      this.#synced = version;
    }
    return this.#bm25;
  }
}
