import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Bm25Index, searchTerms } from "../../src/internal/bm25-index.js";
import { MAX_SEARCH_QUERY_CHARS, type SearchDocument } from "../../src/internal/tool-search.js";
import { retainedBytes } from "../helpers/heap.js";

const doc = (name: string, description: string): SearchDocument => ({ name, description });
const names = (documents: readonly SearchDocument[]) => documents.map(({ name }) => name);

describe("searchTerms (BM25's tokenizer)", () => {
  it.each([
    ["read_file", ["read", "file"]],
    ["list-dir", ["list", "dir"]],
    ["readFile", ["read", "file"]],
    ["ReadFileContents", ["read", "file", "contents"]],
    ["HTTPServer", ["http", "server"]],
    ["getHTTPResponseCode", ["get", "http", "response", "code"]],
    ["  spaced   out\ttext\n", ["spaced", "out", "text"]],
    ["utf8Decode", ["utf8", "decode"]],
    ["v2_api file2", ["v2", "api", "file2"]],
    ["123", ["123"]],
    ["ÜberTool", ["über", "tool"]],
    ["café_crème", ["café", "crème"]],
    ["日本語_tool", ["日本語", "tool"]],
    ["mcp_github_create-issue: Creates an ISSUE.", ["mcp", "github", "create", "issue", "creates", "an", "issue"]],
    ["", []],
    ["__--__  ..", []],
  ])("%j → %j", (text, terms) => {
    expect(searchTerms(text)).toEqual(terms);
  });
});

describe("Bm25Index", () => {
  const documents = [
    doc("read_file", "Read the contents of a file"),
    doc("write_file", "Write contents to a file"),
    doc("list_dir", "List the files of a directory"),
    doc("send_email", "Send an email message"),
    doc("weather", "Current weather for a city"),
  ];

  it("ranks the document holding the rare term first", () => {
    const index = new Bm25Index(documents);
    // "file" is in three documents, "read" only in one: read_file wins.
    expect(names(index.search("read file", 5))).toEqual(["read_file", "write_file"]);
    expect(names(index.search("email", 5))).toEqual(["send_email"]);
    expect(names(index.search("directory", 5))).toEqual(["list_dir"]);
  });

  it("ignores stop words in the query: they would promote tools that share only an article", () => {
    const index = new Bm25Index(documents);
    // Four descriptions have "a" or "the": without stop words list_dir and send_email would score too.
    expect(names(index.search("read a file", 5))).toEqual(["read_file", "write_file"]);
    expect(names(index.search("the a of to", 5))).toEqual([]);
  });

  it("matches case-insensitively and across camelCase and separators in the query", () => {
    const index = new Bm25Index(documents);
    expect(names(index.search("SendEmail", 1))).toEqual(["send_email"]);
    expect(names(index.search("WEATHER-city", 5))).toEqual(["weather"]);
  });

  it("breaks ties by name, whatever the registration order", () => {
    const twins = [doc("zeta", "same words"), doc("alpha", "same words"), doc("mid", "same words")];
    expect(names(new Bm25Index(twins).search("words", 5))).toEqual(["alpha", "mid", "zeta"]);
    expect(names(new Bm25Index([...twins].reverse()).search("words", 5))).toEqual(["alpha", "mid", "zeta"]);
  });

  it("returns at most max, none for max 0, none for a query without terms or without a shared term", () => {
    const index = new Bm25Index(documents);
    expect(names(index.search("file", 2))).toHaveLength(2);
    expect(index.search("file", 0)).toEqual([]);
    expect(index.search("  --__ ", 5)).toEqual([]);
    expect(index.search("nothing shared", 5)).toEqual([]);
    expect(new Bm25Index([]).search("file", 5)).toEqual([]);
  });

  it("scores only the first 32 distinct query terms", () => {
    const index = new Bm25Index([doc("late", "zzterm")]);
    const filler = Array.from({ length: 32 }, (_, i) => `w${i}`).join(" ");
    expect(index.search(`${filler} zzterm`, 5)).toEqual([]);
    expect(names(index.search(`zzterm ${filler}`, 5))).toEqual(["late"]);
  });

  it("searches only the start of a huge description", () => {
    const index = new Bm25Index([doc("huge", `${"a ".repeat(5_000)} needle`)]);
    expect(index.search("needle", 5)).toEqual([]);
  });

  it.each([
    ["a query that is not a string", 42, 5, "searchBM25: query must be a string, got 42"],
    ["a negative max", "x", -1, "searchBM25: max must be an integer ≥ 0, got -1"],
    ["a fractional max", "x", 1.5, "searchBM25: max must be an integer ≥ 0, got 1.5"],
    ["a NaN max", "x", Number.NaN, "searchBM25: max must be an integer ≥ 0, got NaN"],
    ["an over-long query", "q".repeat(1_001), 5, "searchBM25: query is longer than 1000 characters (1001)"],
  ])("throws a TypeError for %s", (_, query, max, message) => {
    const index = new Bm25Index(documents);
    expect(() => index.search(query as string, max)).toThrow(new TypeError(message));
  });

  it("accepts a query of exactly the longest length", () => {
    expect(new Bm25Index(documents).search("q".repeat(MAX_SEARCH_QUERY_CHARS), 5)).toEqual([]);
  });
});

/** A clock that advances 1 ms each time it is read. */
function steppingClock() {
  let now = 0;
  return () => ++now;
}

describe("Bm25Index kept up to date", () => {
  const tools = (count: number, from = 0) =>
    Array.from({ length: count }, (_, index) =>
      doc(
        `tool_${from + index}`,
        `${["Reads", "Writes", "Lists"][index % 3]} a file number ${from + index} of the disk`,
      ),
    );

  it("indexes a document when a search first needs it, and then only what changed", () => {
    const first = tools(50);
    const index = new Bm25Index(first);
    expect(index.pending).toBe(50);
    expect(names(index.search("tool 7", 1))).toEqual(["tool_7"]);
    expect(index.pending).toBe(0);
    index.update([...first, ...tools(1, 50)]);
    expect(index.pending).toBe(1);
    const changed = first.map((each) => (each.name === "tool_3" ? doc("tool_3", "Sends an email") : each));
    index.update(changed.slice(1)); // tool_0 and tool_50 gone, tool_3 changed
    expect(index.pending).toBe(1);
    expect(names(index.search("email", 5))).toEqual(["tool_3"]);
    expect(index.search("tool 0", 5).map(({ name }) => name)).not.toContain("tool_0");
    expect(index.search("50", 5)).toEqual([]);
  });

  it("ranks exactly as an index built afresh, whatever documents came and went", () => {
    const queries = ["read file", "writes disk 7", "lists", "number 42 of", "file tool 13"];
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom("add", "remove", "change"), fc.integer({ min: 0, max: 59 })), {
          maxLength: 40,
        }),
        (steps) => {
          const current = new Map(tools(30).map((each) => [each.name, each]));
          const index = new Bm25Index(current.values());
          for (const [step, number] of steps) {
            const name = `tool_${number}`;
            if (step === "remove") current.delete(name);
            else if (step === "add") current.set(name, tools(1, number)[0] as SearchDocument);
            else current.set(name, doc(name, `Changed ${number} writes disk ${number % 7}`));
            index.update(current.values());
            if (number % 3 === 0) index.search("file", 1); // indexed now and then, not always
          }
          const fresh = new Bm25Index(current.values());
          for (const query of queries) expect(index.search(query, 10)).toEqual(fresh.search(query, 10));
        },
      ),
      { numRuns: 60, seed: 26 },
    );
  });

  it("searchInSlices finds what search finds, yielding to the event loop while it indexes", async () => {
    const many = tools(300);
    const order: string[] = [];
    const index = new Bm25Index(many);
    const search = index.searchInSlices("read file 7", 5, undefined, steppingClock());
    setImmediate(() => order.push("other work"));
    const found = await search;
    order.push("search done");
    expect(order).toEqual(["other work", "search done"]);
    expect(found).toEqual(new Bm25Index(many).search("read file 7", 5));
  });

  it("searchInSlices stops at its next slice once aborted; what it indexed stays indexed", async () => {
    const index = new Bm25Index(tools(300));
    const controller = new AbortController();
    const reason = new Error("cancelled");
    const search = index.searchInSlices("file", 5, controller.signal, steppingClock());
    controller.abort(reason);
    await expect(search).rejects.toBe(reason);
    expect(index.pending).toBeGreaterThan(0);
    expect(index.pending).toBeLessThan(300);
    expect(await index.searchInSlices("file", 1)).toHaveLength(1);
    expect(index.pending).toBe(0);
  });

  it("searchInSlices checks the query and max before it indexes anything", async () => {
    const index = new Bm25Index(tools(10));
    await expect(index.searchInSlices("q".repeat(1_001), 5)).rejects.toThrow(
      "searchBM25: query is longer than 1000 characters (1001)",
    );
    expect(await index.searchInSlices("the a of", 5)).toEqual([]);
    expect(index.pending).toBe(10);
  });
});

describe("Bm25Index memory", () => {
  it("keeps a few bytes per distinct term of a document: 300 descriptions of 4,096 characters, under 6 MB", async () => {
    // Before, a Map per document (term → count): 14 MB here, 250 MB for 10,000 such tools.
    let state = 7;
    const word = () => {
      state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
      return (state % 30_000).toString(36);
    };
    const documents = Array.from({ length: 300 }, (_, index) => {
      const words: string[] = [];
      for (let length = 0; length < 4_096; length += (words.at(-1) as string).length + 1) words.push(word());
      return doc(`tool_${index}`, words.join(" ")); // joined, not concatenated: flat strings, measured once
    });
    const retained = await retainedBytes((keep) => {
      const index = new Bm25Index(documents);
      expect(index.search("tool 7", 1)).toHaveLength(1);
      keep.push(index);
    });
    expect(retained).toBeLessThan(6 * 1024 * 1024);
  });
});
