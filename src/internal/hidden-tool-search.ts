import { Bm25Index } from "./bm25-index.js";
import type { HiddenTools } from "./hidden-tools.js";
import type { RegisteredTool } from "./registered-tool.js";
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
  readonly #hidden: HiddenTools;
  readonly #tools: ReadonlyMap<string, RegisteredTool>;
  readonly #bm25 = new Bm25Index();
  /** The hidden tools' version the index was last brought up to date with. */
  #synced: number | undefined;

  /** Searches the registry's `hidden` tools, whose descriptions are in `tools`. */
  constructor(hidden: HiddenTools, tools: ReadonlyMap<string, RegisteredTool>) {
    this.#hidden = hidden;
    this.#tools = tools;
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

  *#documents(): Generator<SearchDocument> {
    for (const name of this.#hidden.names()) {
      const { description } = (this.#tools.get(name) as RegisteredTool).definition.function;
      yield { name, description };
    }
  }

  #synchronized(): Bm25Index {
    const { version } = this.#hidden;
    if (version !== this.#synced) {
      this.#bm25.update(this.#documents());
      this.#synced = version;
    }
    return this.#bm25;
  }
}
