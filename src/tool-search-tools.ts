import { errorMessage, isRecord } from "./internal/describe.js";
import { type HiddenToolSearchRequest, SEARCH_HIDDEN_TOOLS } from "./internal/hidden-tool-search.js";
import { checkCount, optionError } from "./internal/options.js";
import { BIND_PROMOTIONS, type Promote } from "./internal/promotion-scope.js";
import { DEFAULT_SEARCH_MS, formatMatches } from "./internal/tool-search.js";
import type { Tool, ToolContext } from "./tool.js";
import type { ToolRegistry, ToolSearchResult } from "./tool-registry.js";
import { errorResult, silentResult, type ToolResult } from "./tool-result.js";

/** Options of {@link createToolSearchTools}. */
export interface ToolSearchToolsOptions {
  /**
   * For how many turns the tools a search finds are offered to the run that searched: its next
   * `ttl` provider calls (in an MCP session served by `createMcpServer`, its next `ttl` tool calls).
   * @default 5
   */
  ttl?: number | undefined;
  /** Most tools one search returns and promotes; a model's `max_results` may ask for fewer. @default 5 */
  maxResults?: number | undefined;
  /**
   * Most milliseconds of matching one regex search may take (counted in the slices it runs in,
   * between which it yields to the event loop): past it, the model reads that its pattern took too
   * long and to try a simpler one.
   * @default 500
   */
  maxSearchMs?: number | undefined;
}

/** Longest description shown per match: the model reads the full one in the promoted definition. */
const MAX_SHOWN_DESCRIPTION_CHARS = 300;

type Search = (registry: ToolRegistry, query: string, max: number) => ToolSearchResult[];
type SearchInSlices = (request: HiddenToolSearchRequest) => Promise<ToolSearchResult[]>;

interface Settings {
  ttl: number;
  maxResults: number;
  maxSearchMs: number;
}

/** Promotes a search's matches (when bound to a run or session) and lists them for the model. */
function promoted(matches: readonly ToolSearchResult[], ttl: number, promote: Promote | undefined): ToolResult {
  const found = matches.length === 1 ? "1 tool" : `${matches.length} tools`;
  const list = formatMatches(matches, MAX_SHOWN_DESCRIPTION_CHARS);
  // Promotions belong to the run (or MCP session) that searched: a call outside one promotes
  // nothing, so that no search ever offers a tool to another conversation.
  if (
    promote === undefined ||
    promote(
      matches.map(({ name }) => name),
      ttl,
    ) === 0
  ) {
    return silentResult(
      `Found ${found} (not callable here: only a tool loop run or an MCP session offers them):\n${list}`,
    );
  }
  const calls = ttl === 1 ? "model call" : `${ttl} model calls`;
  return silentResult(`Found ${found}, callable directly for the next ${calls}:\n${list}`);
}

/** One discovery tool: validates the query, searches, promotes the matches (when bound to a run) and lists them. */
function searchTool(
  registry: ToolRegistry,
  settings: Settings,
  spec: {
    name: string;
    description: string;
    argument: string;
    argumentDescription: string;
    by: HiddenToolSearchRequest["by"];
    search: Search;
  },
): Tool {
  const { ttl, maxResults, maxSearchMs } = settings;
  // A registry of this copy searches in slices; another copy's (or a stand-in) at once.
  const inSlices = (registry as unknown as Partial<Record<typeof SEARCH_HIDDEN_TOOLS, unknown>>)[SEARCH_HIDDEN_TOOLS];
  const search = async (query: string, max: number, signal: AbortSignal | undefined) =>
    typeof inSlices === "function"
      ? await (inSlices as SearchInSlices).call(registry, { by: spec.by, query, max, signal, maxMs: maxSearchMs })
      : spec.search(registry, query, max);
  const { argument } = spec;
  const parameters = {
    type: "object",
    properties: {
      [argument]: { type: "string", description: spec.argumentDescription },
      max_results: {
        type: "integer",
        minimum: 1,
        description: `How many tools to return at most (up to ${maxResults})`,
      },
    },
    required: [argument],
  };
  const execute = async (
    args: Record<string, unknown>,
    signal: AbortSignal | undefined,
    promote: Promote | undefined,
  ): Promise<ToolResult> => {
    const query = args[argument] as string;
    // An empty query would list (and promote) every hidden tool: a flood of tokens.
    if (query.trim() === "") return errorResult(`${argument} cannot be empty`);
    const max = Math.min(typeof args.max_results === "number" ? args.max_results : maxResults, maxResults);
    let matches: ToolSearchResult[];
    try {
      matches = await search(query, max, signal);
    } catch (error) {
      // Aborted (the call timed out or was cancelled): the call is answered already.
      if (signal?.aborted) throw error;
      return errorResult(`${errorMessage(error).replace(/^search(?:Regex|BM25): /, "")}; fix it and search again`);
    }
    if (matches.length === 0) return silentResult(`No hidden tools match ${argument} ${JSON.stringify(query)}.`);
    return promoted(matches, ttl, promote);
  };
  const bound = (promote: Promote | undefined): Tool =>
    Object.freeze({
      name: spec.name,
      description: spec.description,
      parameters,
      execute: (args: Record<string, unknown>, context: ToolContext | undefined) =>
        execute(args, context?.signal, promote),
      [BIND_PROMOTIONS]: (to: Promote) => bound(to),
    });
  return bound(undefined);
}

/**
 * picoclaw HEAD's two discovery tools over a registry's hidden tools: `tool_search_tool_regex
 * { pattern, max_results? }` and `tool_search_tool_bm25 { query, max_results? }`. Each returns its
 * matches as text (`- name: description` per line, silent for the user) and promotes them for the
 * run that searched only: offered from its next provider call for `ttl` provider calls, and callable
 * in those calls (never in the turn of the search: the model has not seen them yet). Other runs of
 * the registry, and its other MCP sessions, never see them. Called outside a run or session
 * (`registry.execute`), a search lists its matches and promotes nothing. An invalid pattern or an
 * empty query is an error result the model reads. A search runs in slices that yield to the event
 * loop (the BM25 index of hidden tools added since the last search is built that way too) and stops
 * when the call is aborted; a regex search that took more than `maxSearchMs` of matching is an
 * error result telling the model to use a simpler pattern. Register them with `register` (they are
 * never hidden).
 * @throws TypeError when `registry` has no `searchRegex`/`searchBM25`, or for options that are not
 * integers > 0
 * @example
 * ```ts
 * for (const tool of createToolSearchTools(registry, { ttl: 3 })) registry.register(tool);
 * await runToolLoop({ provider, tools: registry, maxIterations: 10 }, messages);
 * ```
 */
export function createToolSearchTools(registry: ToolRegistry, options: ToolSearchToolsOptions = {}): Tool[] {
  const where = "createToolSearchTools";
  if (!isRecord(registry) || typeof registry.searchRegex !== "function" || typeof registry.searchBM25 !== "function") {
    throw optionError(where, "registry", "a ToolRegistry", registry);
  }
  if (!isRecord(options)) throw optionError(where, "options", "an object", options);
  const settings: Settings = {
    ttl: checkCount(where, "ttl", options.ttl, 5),
    maxResults: checkCount(where, "maxResults", options.maxResults, 5),
    maxSearchMs: checkCount(where, "maxSearchMs", options.maxSearchMs, DEFAULT_SEARCH_MS),
  };
  return [
    searchTool(registry, settings, {
      name: "tool_search_tool_regex",
      description:
        "Search the hidden tools by a regular expression over their names and descriptions (case-insensitive). The matches become callable from your next turn, for a few turns.",
      argument: "pattern",
      argumentDescription: "Regular expression (RE2 syntax, no lookaround or backreferences), e.g. 'file|dir'",
      by: "regex",
      search: (target, pattern, max) => target.searchRegex(pattern, max),
    }),
    searchTool(registry, settings, {
      name: "tool_search_tool_bm25",
      description:
        "Search the hidden tools by keywords over their names and descriptions, best match first. The matches become callable from your next turn, for a few turns.",
      argument: "query",
      argumentDescription: "Keywords describing the tool you need, e.g. 'read file contents'",
      by: "bm25",
      search: (target, query, max) => target.searchBM25(query, max),
    }),
  ];
}
