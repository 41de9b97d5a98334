import { describe, expect, it } from "vitest";
import { HiddenToolSearch } from "../../src/internal/hidden-tool-search.js";
import { HiddenTools } from "../../src/internal/hidden-tools.js";
import type { RegisteredTool } from "../../src/internal/registered-tool.js";
import type { SearchDocument } from "../../src/internal/tool-search.js";

/** Hidden tools as a registry holds them, and how often their descriptions were read. */
function source(initial: SearchDocument[]) {
  const hidden = new HiddenTools();
  const state = { reads: 0 };
  // What the search reads of a registered tool: its definition's description.
  const tools = new (class extends Map<string, RegisteredTool> {
    override get(name: string) {
      state.reads++;
      return super.get(name);
    }
  })();
  const set = ({ name, description }: SearchDocument) => {
    tools.set(name, { definition: { function: { name, description } } } as unknown as RegisteredTool);
    hidden.add(name);
  };
  const remove = (name: string) => {
    tools.delete(name);
    hidden.delete(name);
  };
  for (const tool of initial) set(tool);
  return { search: new HiddenToolSearch(hidden, tools), state, set, remove };
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
    expect(state.reads).toBe(3); // once per tool, by the first search
    set({ name: "fs_delete_file", description: "Delete a file" });
    remove("fs_write_file");
    expect(names(search.bm25("file", 5))).toEqual(["fs_delete_file", "fs_read_file"]);
    expect(state.reads).toBe(6); // the hidden tools changed: listed again
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
