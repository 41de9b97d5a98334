/** The names of the two discovery tools, which a registry's allowlist always lets through. */
export const TOOL_SEARCH_TOOL_NAMES: readonly string[] = Object.freeze([
  "tool_search_tool_regex",
  "tool_search_tool_bm25",
]);
