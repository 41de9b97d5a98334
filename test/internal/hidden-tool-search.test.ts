import { describe, expect, it } from "vitest";
import { HiddenToolSearch } from "../../src/internal/hidden-tool-search.js";
import type { SearchDocument } from "../../src/internal/tool-search.js";

/** Hidden tools as a registry holds them: a version bumped at every change, and how often they were listed. */
function source(initial: SearchDocument[]) {
  const tools = new Map(initial.map((tool) => [tool.name, tool]));
  const state = { version: 0, listings: 0 };
  const search = new HiddenToolSearch(
    () => state.version,
    () => {
      state.listings++;
      return tools.values();
    },
  );
  const set = (tool: SearchDocument) => {
    tools.set(tool.name, tool);
    state.version++;
  };
  const remove = (name: string) => {
    tools.delete(name);
    state.version++;
  };
  return { search, state, set, remove };
}

const tools = [
  { name: "fs_read_file", description: "Read the contents of a file" },
  { name: "fs_write_file", description: "Write text to a file" },
  { name: "mail_send", description: "Send an email" },
];
const names = (found: readonly SearchDocument[]) => found.map(({ name }) => name);

describe("HiddenToolSearch", () => {
  it("brings the BM25 index up to date only when the hidden tools changed", () => {
    const { search, state, set, remove } = source(tools);
    expect(names(search.bm25("file", 5))).toEqual(["fs_write_file", "fs_read_file"]); // the shorter first
    expect(names(search.bm25("email", 5))).toEqual(["mail_send"]);
    expect(state.listings).toBe(1);
    set({ name: "fs_delete_file", description: "Delete a file" });
    remove("fs_write_file");
    expect(names(search.bm25("file", 5))).toEqual(["fs_delete_file", "fs_read_file"]);
    expect(state.listings).toBe(2);
  });

  it("searches in slices as at once, by regex and by BM25, with the request's time budget", async () => {
    const { search } = source(tools);
    expect(await search.inSlices({ by: "regex", query: "FILE$", max: 5 })).toEqual(search.regex("FILE$", 5));
    expect(await search.inSlices({ by: "bm25", query: "write file", max: 1 })).toEqual(search.bm25("write file", 1));
    let now = 0;
    await expect(
      search.inSlices({ by: "regex", query: "file", max: 5, maxMs: 1, now: () => (now += 5) }),
    ).rejects.toThrow(/^searchRegex: pattern took too long to search the tools \(over 1 ms, 1 of 3 searched\)/);
  });

  it("stops a search in slices once its signal is aborted", async () => {
    const { search } = source(Array.from({ length: 50 }, (_, index) => ({ name: `t${index}`, description: "a file" })));
    const controller = new AbortController();
    controller.abort(new Error("gone"));
    let now = 0;
    const request = { query: "file", max: 5, signal: controller.signal, now: () => (now += 20) };
    await expect(search.inSlices({ ...request, by: "regex" })).rejects.toThrow("gone");
    await expect(search.inSlices({ ...request, by: "bm25" })).rejects.toThrow("gone");
  });
});
