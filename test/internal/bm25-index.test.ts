import { describe, expect, it } from "vitest";
import { Bm25Index, searchTerms } from "../../src/internal/bm25-index.js";
import { MAX_SEARCH_QUERY_CHARS, type SearchDocument } from "../../src/internal/tool-search.js";

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
