import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

type BaselineEntry = Record<string, string | number | string[]> & { rule: string };
interface Violation {
  file: string;
  line: number;
  rule: string;
  message: string;
  baseline?: BaselineEntry;
}
interface Baseline {
  entries: BaselineEntry[];
  lines: number[];
}
interface StructureBaselineModule {
  BASELINE_FILE: string;
  covers(entry: BaselineEntry, record: BaselineEntry): boolean;
  applyBaseline(
    violations: Violation[],
    baseline: Baseline,
  ): { violations: Violation[]; suppressed: number; shrunk: BaselineEntry[] | undefined };
  readBaseline(root: string): Baseline;
  writeBaseline(root: string, entries: BaselineEntry[]): void;
}

// A script, not a module of src/: loaded by URL (it has no type declarations).
const script = new URL("../../scripts/structure-baseline.mjs", import.meta.url).href;
const { BASELINE_FILE, applyBaseline, covers, readBaseline, writeBaseline } = (await import(
  script
)) as StructureBaselineModule;

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

function emptyRoot(): string {
  const root = mkdtempSync(join(tmpdir(), "toolloop-structure-baseline-"));
  roots.push(root);
  mkdirSync(join(root, "scripts"));
  return root;
}

const circle = (...files: string[]): BaselineEntry => ({ rule: "import-circle", files });
const longFunction = (name: string, lines: number): BaselineEntry => ({
  rule: "function-too-long",
  file: "src/loop.ts",
  function: name,
  lines,
});
const violation = (record: BaselineEntry, line = 1): Violation => ({
  file: typeof record.file === "string" ? record.file : "src/a.ts",
  line,
  rule: record.rule,
  message: `${record.rule} here`,
  baseline: record,
});
const baselineOf = (...entries: BaselineEntry[]): Baseline => ({
  entries,
  lines: entries.map((_, index) => index + 3),
});

describe("structure baseline", () => {
  it.each([
    ["the same violation", longFunction("loop", 90), longFunction("loop", 90), true],
    ["a length under its ceiling", longFunction("loop", 90), longFunction("loop", 85), true],
    ["a length over its ceiling", longFunction("loop", 90), longFunction("loop", 91), false],
    ["another function", longFunction("loop", 90), longFunction("step", 85), false],
    [
      "another rule",
      { rule: "file-too-long", file: "src/loop.ts", lines: 900 },
      { ...longFunction("loop", 85) },
      false,
    ],
    ["a circle that lost a file", circle("src/a.ts", "src/b.ts", "src/c.ts"), circle("src/a.ts", "src/b.ts"), true],
    ["a circle that took in a file", circle("src/a.ts", "src/b.ts"), circle("src/a.ts", "src/b.ts", "src/c.ts"), false],
  ])("an entry covers %s: %s", (_case, entry, record, expected) => {
    expect(covers(entry, record)).toBe(expected);
  });

  it("drops the violations it covers and counts them", () => {
    const known = violation(circle("src/a.ts", "src/b.ts"));
    const fresh = violation(longFunction("step", 81));
    const untracked: Violation = { file: "src/a.ts", line: 2, rule: "core-imports-edge", message: "no" };
    const result = applyBaseline([known, fresh, untracked], baselineOf(circle("src/a.ts", "src/b.ts")));
    expect(result.violations).toEqual([fresh, untracked]);
    expect(result.suppressed).toBe(1);
    expect(result.shrunk).toBeUndefined();
  });

  it("reports an entry that covers nothing at its line", () => {
    const result = applyBaseline([], baselineOf(circle("src/a.ts", "src/b.ts"), longFunction("loop", 90)));
    expect(result.violations).toEqual([
      {
        file: BASELINE_FILE,
        line: 3,
        rule: "stale-baseline",
        message:
          '{ "rule": "import-circle", "files": ["src/a.ts", "src/b.ts"] } no longer occurs: delete the entry (or run the check with --shrink-baseline)',
      },
      {
        file: BASELINE_FILE,
        line: 4,
        rule: "stale-baseline",
        message:
          '{ "rule": "function-too-long", "file": "src/loop.ts", "function": "loop", "lines": 90 } no longer occurs: delete the entry (or run the check with --shrink-baseline)',
      },
    ]);
    expect(result.shrunk).toEqual([]);
  });

  it("reports a violation that grew past its entry once, naming the entry, and not the entry as stale", () => {
    const grown = violation(longFunction("loop", 95));
    const result = applyBaseline([grown], baselineOf(longFunction("loop", 90)));
    expect(result.violations).toEqual([
      {
        ...grown,
        message: `function-too-long here (${BASELINE_FILE} lists { "rule": "function-too-long", "file": "src/loop.ts", "function": "loop", "lines": 90 }: it may only shrink)`,
      },
    ]);
  });

  it("shrinks to what the entries still cover, never adding one", () => {
    const result = applyBaseline(
      [
        violation(circle("src/a.ts", "src/b.ts")),
        violation(circle("src/c.ts", "src/d.ts")),
        violation(longFunction("loop", 85)),
        violation(longFunction("step", 81)), // new: not added
      ],
      baselineOf(
        circle("src/a.ts", "src/b.ts", "src/c.ts", "src/d.ts"), // split in two
        longFunction("loop", 90), // shorter
        longFunction("gone", 120), // fixed
      ),
    );
    expect(result.shrunk).toEqual([
      longFunction("loop", 85),
      circle("src/a.ts", "src/b.ts"),
      circle("src/c.ts", "src/d.ts"),
    ]);
  });

  it("writes what it reads, each entry at the line it reports, in the formatter's layout", () => {
    const root = emptyRoot();
    expect(readBaseline(root)).toEqual({ entries: [], lines: [] });
    const entries = [
      circle("src/internal/loop-run.ts", "src/resume-tool-loop.ts", "src/run-tool-loop.ts", "src/tool-loop-event.ts"),
      longFunction("loop", 187),
      { rule: "file-too-long", file: "src/run-tool-loop.ts", lines: 927 },
    ];
    writeBaseline(root, entries);
    const text = readFileSync(join(root, BASELINE_FILE), "utf8");
    // Sorted by rule; an entry that does not fit in 120 columns is written a field a line.
    expect(text.split("\n").slice(2)).toEqual([
      '  "violations": [',
      '    { "rule": "file-too-long", "file": "src/run-tool-loop.ts", "lines": 927 },',
      '    { "rule": "function-too-long", "file": "src/loop.ts", "function": "loop", "lines": 187 },',
      "    {",
      '      "rule": "import-circle",',
      '      "files": ["src/internal/loop-run.ts", "src/resume-tool-loop.ts", "src/run-tool-loop.ts", "src/tool-loop-event.ts"]',
      "    }",
      "  ]",
      "}",
      "",
    ]);
    const read = readBaseline(root);
    expect(read.entries).toEqual([entries[2], entries[1], entries[0]]);
    expect(read.lines).toEqual([4, 5, 6]);
    writeBaseline(root, []);
    expect(readBaseline(root)).toEqual({ entries: [], lines: [] });
  });
});
