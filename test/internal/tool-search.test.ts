import { describe, expect, it } from "vitest";
import {
  formatMatches,
  patternCost,
  patternSize,
  type SearchDocument,
  searchByRegex,
  searchByRegexInSlices,
} from "../../src/internal/tool-search.js";
import { retainedBytes } from "../helpers/heap.js";
import { THRASHING_PATTERN, thrashingText } from "../helpers/thrashing-text.js";

const doc = (name: string, description: string): SearchDocument => ({ name, description });
const names = (documents: readonly SearchDocument[]) => documents.map(({ name }) => name);

/** Catches what `run` throws (a TypeError expected), for its message. */
function thrown(run: () => unknown): TypeError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(TypeError);
    return error as TypeError;
  }
  throw new Error("did not throw");
}

/** A clock that advances 1 ms each time it is read: the search's time is then its count of documents. */
function steppingClock() {
  let now = 0;
  return () => ++now;
}

/** No time bound: a test about what a search finds must not depend on how loaded the machine is. */
const UNBOUNDED = { maxMs: Number.POSITIVE_INFINITY };

describe("searchByRegex", () => {
  const documents = [
    doc("zeta_notes", "Reads the FILE of notes"),
    doc("file_reader", "Reads things"),
    doc("alpha", "mentions file in its description"),
    doc("other", "nothing to see"),
  ];

  it("ranks name matches before description-only matches, each by name", () => {
    expect(names(searchByRegex(documents, "file", 10))).toEqual(["file_reader", "alpha", "zeta_notes"]);
  });

  it("matches case-insensitively (name and description)", () => {
    expect(names(searchByRegex(documents, "FILE_READER", 10))).toEqual(["file_reader"]);
    expect(names(searchByRegex(documents, "NOTHING TO", 10))).toEqual(["other"]);
    expect(names(searchByRegex(documents, "^reads\\b", 10))).toEqual(["file_reader", "zeta_notes"]);
  });

  it("returns at most max; max 0 returns none", () => {
    expect(names(searchByRegex(documents, "file", 1))).toEqual(["file_reader"]);
    expect(searchByRegex(documents, "file", 0)).toEqual([]);
    expect(searchByRegex(documents, "no such thing", 5)).toEqual([]);
  });

  it("searches only the start of a huge description", () => {
    expect(searchByRegex([doc("huge", `${"a".repeat(5_000)}needle`)], "needle", 5)).toEqual([]);
    expect(names(searchByRegex([doc("huge", `${"a".repeat(4_000)}needle`)], "needle", 5))).toEqual(["huge"]);
  });

  it("throws a TypeError naming the pattern and why for an invalid pattern", () => {
    expect(thrown(() => searchByRegex(documents, "(unclosed", 5)).message).toMatchInlineSnapshot(
      `"searchRegex: pattern "(unclosed" is not a valid regular expression: Invalid regular expression: /(unclosed/iu: Unterminated group"`,
    );
    // Invalid even when nothing would be returned.
    expect(() => searchByRegex(documents, "[", 0)).toThrow(TypeError);
  });

  it.each([
    ["a lookahead", "file(?=_reader)", "lookahead"],
    ["a negative lookahead", "(?!x)file", "lookahead"],
    ["a lookbehind", "(?<=read)er", "lookbehind"],
    ["a backreference", "(f)\\1", "backreference"],
  ])("throws a TypeError saying the linear engine cannot run %s", (_, pattern, feature) => {
    const { message } = thrown(() => searchByRegex(documents, pattern, 5));
    expect(message).toContain("cannot run on toolloop's linear-time engine");
    expect(message).toContain(feature);
  });

  it("says so for a pattern the engine cannot run (inline snapshot of the wording)", () => {
    expect(thrown(() => searchByRegex(documents, "(a)\\1", 5)).message).toMatchInlineSnapshot(
      `"searchRegex: pattern "(a)\\\\1" cannot run on toolloop's linear-time engine (RE2, which has no backreferences, lookahead or lookbehind): it has a backreference (\\1)"`,
    );
  });

  it.each([
    ["a pattern that is not a string", null, 5, "searchRegex: pattern must be a string, got null"],
    ["a negative max", "x", -1, "searchRegex: max must be an integer ≥ 0, got -1"],
    ["a string max", "x", "5", 'searchRegex: max must be an integer ≥ 0, got "5"'],
    ["an over-long pattern", "a".repeat(1_001), 5, "searchRegex: pattern is longer than 1000 characters (1001)"],
  ])("throws a TypeError for %s", (_, pattern, max, message) => {
    expect(thrown(() => searchByRegex(documents, pattern as string, max as number)).message).toBe(message);
  });

  it("runs a catastrophic-backtracking pattern over a 100k-character description on the linear engine", () => {
    // Backtracking engines take exponential time here; the search completes (and finds nothing).
    // Only the first 4,096 characters are searched: `$` matches where they end.
    const huge = doc("huge", `${"a".repeat(100_000)}!`);
    expect(names(searchByRegex([huge], "(a+)+$", 5))).toEqual(["huge"]);
    const hostile = doc("hostile", `${"a".repeat(4_000)}!`);
    expect(searchByRegex([hostile], "(a+)+$", 5)).toEqual([]);
    expect(searchByRegex([hostile], "^(a|aa)*b", 5)).toEqual([]);
    expect(searchByRegex([doc("x", `${"x".repeat(4_000)}!`)], "(x+x+)+y", 5)).toEqual([]);
  });

  it("refuses a pattern whose program is too large, before compiling it (a hostile model's 1,000 characters)", () => {
    // `.{1000}` repeated compiles to 140,000 instructions: 100 ms and 10 MB each, and a minute of
    // matching over 200 descriptions of 4 KiB, before this check.
    const { message } = thrown(() => searchByRegex(documents, ".{1000}".repeat(142), 5));
    expect(message).toMatchInlineSnapshot(
      `"searchRegex: pattern is too complex (about 142142 steps per character, at most 1000): use fewer or smaller repetitions"`,
    );
    expect(() => searchByRegex(documents, "(?:\\p{L}|\\d){100}(?:\\w){100}", 5)).toThrow(/too complex/);
  });

  it("refuses a pattern whose work over the documents is too large, and runs it over fewer", () => {
    const many = Array.from({ length: 200 }, (_, i) => doc(`t${i}`, "x".repeat(5_000)));
    const { message } = thrown(() => searchByRegex(many, ".{990}", 5));
    expect(message).toMatchInlineSnapshot(
      `"searchRegex: pattern is too complex to search 819890 characters of tool names and descriptions (about 991 steps per character, at most 24 here): use fewer wildcards, classes and repetitions"`,
    );
    // A simple pattern over the same documents runs, and the heavy one over a few documents.
    expect(names(searchByRegex(many, "t1\\d\\d", 2))).toEqual(["t100", "t101"]);
    expect(names(searchByRegex(many.slice(0, 2), ".{990}", 5))).toEqual(["t0", "t1"]);
  });
});

describe("searchByRegex over 10,000 tools (issue 26: a work bound of pattern length × characters)", () => {
  // 10,000 tools of about 260 characters: 2.6 million characters. A bound of program size ×
  // characters refused every pattern of more than 7 instructions here, plain words included.
  const words = "read write list create delete update issue pull request branch commit user channel message send".split(
    " ",
  );
  const many = Array.from({ length: 10_000 }, (_, index) => {
    const word = (offset: number) => words[(index * 7 + offset * 3) % words.length] as string;
    const name = `mcp_server${index % 40}_${word(0)}_${word(1)}_${index}`;
    const description = Array.from({ length: 36 }, (_, offset) => word(offset)).join(" ");
    return doc(name, index === 4_321 ? `${description} on the filesystem` : description);
  });
  many.push(doc("mcp_github_get_issues", "Get the issues of a repository"));

  it("plain words and ordinary patterns run (one step per character on the engine's DFA)", () => {
    const characters = many.reduce((sum, { name, description }) => sum + name.length + description.length, 0);
    expect(characters).toBeGreaterThan(2_500_000);
    expect(names(searchByRegex(many, "filesystem", 5, UNBOUNDED))).toEqual([many[4_321]?.name]);
    expect(names(searchByRegex(many, "(get|list)_(issue|pr)s?\\b", 5, UNBOUNDED))).toEqual(["mcp_github_get_issues"]);
    expect(names(searchByRegex(many, "^mcp_github_.*issue", 5, UNBOUNDED))).toEqual(["mcp_github_get_issues"]);
  });

  it("counts a pattern's classes of characters: `[aeiou].{10}\\p{L}#` cannot run on the DFA, so it costs its size per character", () => {
    // Before, its branching (12) said one step per character on the DFA; but `\p{L}`
    // case-insensitively makes over 1,300 classes, the DFA's states did not fit, and it built a
    // state per character: seconds (minutes on a loaded machine) over these tools.
    expect(thrown(() => searchByRegex(many, THRASHING_PATTERN, 5)).message).toMatch(
      /^searchRegex: pattern is too complex to search \d+ characters of tool names and descriptions \(about 14 steps per character, at most 7 here\): use fewer wildcards, classes and repetitions$/,
    );
  });

  it("still refuses a pattern that defeats the DFA (a wildcard run after a literal): its work would be seconds", () => {
    expect(thrown(() => searchByRegex(many, "a.{40}b", 5)).message).toMatch(
      /^searchRegex: pattern is too complex to search \d+ characters of tool names and descriptions \(about 43 steps per character, at most 7 here\): use fewer wildcards, classes and repetitions$/,
    );
    expect(() =>
      searchByRegex(
        many,
        "a(?:a|b)(?:a|b)(?:a|b)(?:a|b)(?:a|b)(?:a|b)(?:a|b)(?:a|b)(?:a|b)(?:a|b)(?:a|b)(?:a|b)(?:a|b)c",
        5,
      ),
    ).toThrow(/too complex to search/);
  });

  it("refuses any pattern over more characters than one search may read, saying to search by keywords", () => {
    const huge = Array.from({ length: 6_000 }, (_, index) => doc(`t${index}`, "x".repeat(4_000)));
    expect(thrown(() => searchByRegex(huge, "word", 5)).message).toMatchInlineSnapshot(
      `"searchRegex: the tools have too many characters of names and descriptions to search by pattern (24028890, at most 20000000): search by keywords"`,
    );
  });
});

describe("searchByRegex: a time budget checked as it searches", () => {
  const many = Array.from({ length: 1_000 }, (_, index) => doc(`tool_${index}`, "Reads a file"));

  it("stops once its matching has taken maxMs, saying how far it got (the clock injected)", () => {
    const { message } = thrown(() => searchByRegex(many, "file", 5, { maxMs: 50, now: steppingClock() }));
    expect(message).toMatchInlineSnapshot(
      `"searchRegex: pattern took too long to search the tools (over 50 ms, 51 of 1000 searched): use a simpler pattern, or search by keywords"`,
    );
  });

  it("returns its matches when it ends within the budget, also when the last document ends past it", () => {
    expect(names(searchByRegex(many, "tool_99\\d", 3, { maxMs: 2_000, now: steppingClock() }))).toEqual([
      "tool_990",
      "tool_991",
      "tool_992",
    ]);
    expect(names(searchByRegex(many.slice(0, 60), "file", 2, { maxMs: 59, now: steppingClock() }))).toEqual([
      "tool_0",
      "tool_1",
    ]);
  });

  it("runs a pattern that would thrash re2js's DFA on the program instead: it answers over tools of varied text", () => {
    const varied = Array.from({ length: 200 }, (_, index) => doc(`t${index}`, thrashingText(200, index + 1)));
    varied.push(doc("needle", "a0123456789ß#"));
    expect(names(searchByRegex(varied, THRASHING_PATTERN, 5, UNBOUNDED))).toEqual(["needle"]);
  });
});

describe("searchByRegexInSlices", () => {
  const many = Array.from({ length: 100 }, (_, index) =>
    doc(`tool_${index}`, index % 2 ? "Reads a file" : "Sends mail"),
  );

  it("finds what searchByRegex finds, yielding to the event loop between slices (10 ms each)", async () => {
    const order: string[] = [];
    const search = searchByRegexInSlices(many, "file|tool_[0-4]$", 5, { maxMs: 1_000, now: steppingClock() });
    setImmediate(() => order.push("other work"));
    const found = await search;
    order.push("search done");
    expect(order).toEqual(["other work", "search done"]);
    expect(found).toEqual(searchByRegex(many, "file|tool_[0-4]$", 5));
  });

  it("counts its slices' time against maxMs", async () => {
    await expect(searchByRegexInSlices(many, "file", 5, { maxMs: 25, now: steppingClock() })).rejects.toThrow(
      /^searchRegex: pattern took too long to search the tools \(over 25 ms, 26 of 100 searched\)/,
    );
  });

  it("stops at its next slice once the signal is aborted, with the signal's reason", async () => {
    const controller = new AbortController();
    const reason = new Error("timed out");
    const search = searchByRegexInSlices(many, "file", 5, { maxMs: 1_000, now: steppingClock() }, controller.signal);
    controller.abort(reason);
    await expect(search).rejects.toBe(reason);
  });

  it("checks the pattern and max before it starts (a TypeError, as searchByRegex)", async () => {
    await expect(searchByRegexInSlices(many, "(", 5)).rejects.toThrow(/^searchRegex: pattern "\(" is not a valid/);
    await expect(searchByRegexInSlices(many, "file", -1)).rejects.toThrow(TypeError);
    expect(await searchByRegexInSlices(many, "file", 0)).toEqual([]);
  });
});

describe("searchByRegex keeps nothing of the model's patterns", () => {
  it("24 distinct patterns that fill re2js's DFA leave nothing reachable once searched", async () => {
    // Before, each stayed in the process-wide pattern cache with its DFA (up to 8 MB): ~190 MB
    // here, and a hostile model ran the process out of memory after ~125 searches.
    const tools = [doc("tool", thrashingText(1_500))];
    const retained = await retainedBytes(() => {
      for (let index = 0; index < 24; index++) {
        const pattern = THRASHING_PATTERN.replace("]", `${String.fromCharCode(0x100 + index)}]`);
        expect(searchByRegex(tools, pattern, 5, UNBOUNDED)).toEqual([]);
      }
    });
    expect(retained).toBeLessThan(8 * 1024 * 1024);
  });
});

describe("patternCost (what a regex search costs)", () => {
  it.each([
    ["calendar", 0],
    ["filesystem", 0],
    ["^mcp_github_\\b", 0],
    ["a{1000}", 0],
    ["read|write", 1],
    ["create.*issue", 2],
    ["(get|list)_(issue|pr)s?", 3],
    ["[a-z]+_file", 2],
    ["x{2,5}", 1],
    ["(?:a|b){5}", 5],
    ["a.{40}b", 40],
    ["\\w{3}\\d", 4],
  ])("%j branches %d times", (pattern, branching) => {
    expect(patternCost(pattern).branching).toBe(branching);
  });

  it("counts log₂ of a group's alternatives: ten words in a group branch less than ten wildcards", () => {
    const { branching } = patternCost(
      "(?:read|write|list|create|delete|update|issue|pull|request|branch) (?:file|dir)",
    );
    expect(branching).toBeCloseTo(Math.log2(10) + 1);
  });
});

describe("patternSize (an estimate of the RE2 program's size)", () => {
  it.each([
    ["read", 4],
    ["read|write", 10],
    [".{1000}", 1001],
    ["(?:.{10}){10}", 141],
    ["\\p{L}{100}", 101],
    ["[a-z\\]]{10}", 11],
    ["x{2,5}", 9],
    ["x{3,}", 6],
    ["(unbalanced", 12],
    ["unbalanced)", 11],
  ])("%j → %d", (pattern, size) => {
    expect(patternSize(pattern)).toBe(size);
  });

  it("multiplies nested counted repetitions", () => {
    expect(patternSize("(?:(?:a{10}){10}){10}")).toBeGreaterThan(1_000);
  });
});

describe("formatMatches", () => {
  it("lists one match per line, the description on one line", () => {
    const text = formatMatches(
      [doc("read_file", "Reads a file.\n\n  Returns its  text."), doc("bare", "   "), doc("plain", "Plain.")],
      100,
    );
    expect(text).toMatchInlineSnapshot(`
      "- read_file: Reads a file. Returns its text.
      - bare
      - plain: Plain."
    `);
  });

  it("bounds a long description", () => {
    const text = formatMatches([doc("long", "word ".repeat(1_000))], 60);
    expect(text.length).toBeLessThanOrEqual("- long: ".length + 60);
    expect(text).toMatch(/^- long: word word .* … \[\d+ more characters cut\]$/);
  });

  it("returns an empty text for no matches", () => {
    expect(formatMatches([], 100)).toBe("");
  });
});
