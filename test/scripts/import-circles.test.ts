import { describe, expect, it } from "vitest";

interface ImportEdge {
  from: string;
  to: string;
  line: number;
  typeOnly: boolean;
}
interface Violation {
  file: string;
  line: number;
  rule: string;
  message: string;
  baseline?: { rule: string; files?: string[] };
}
interface ImportCirclesModule {
  importCircles(edges: ImportEdge[]): Violation[];
}

// A script, not a module of src/: loaded by URL (it has no type declarations).
const script = new URL("../../scripts/import-circles.mjs", import.meta.url).href;
const { importCircles } = (await import(script)) as ImportCirclesModule;

/** `"a>b:3"` → an import of b.ts by a.ts at line 3; `"a>b:3t"` → type-only. */
const edges = (...arrows: string[]): ImportEdge[] =>
  arrows.map((arrow) => {
    const [, from, to, line, type] = /^(\w+)>(\w+):(\d+)(t?)$/.exec(arrow) ?? [];
    return { from: `${from}.ts`, to: `${to}.ts`, line: Number(line), typeOnly: type === "t" };
  });

/** Each circle as its route and where its imports are. */
const circles = (found: Violation[]) => found.map((violation) => violation.message.replace(/; one circle among.*/, ""));

describe("import circles", () => {
  it("finds none in a graph without one, nor in a file that imports itself", () => {
    expect(importCircles(edges("a>b:1", "a>c:2", "b>d:1", "c>d:1", "d>d:4"))).toEqual([]);
  });

  it("shows a circle at its first import, with the files that import each other", () => {
    expect(importCircles(edges("a>b:3", "b>c:5t", "c>a:7"))).toEqual([
      {
        file: "a.ts",
        line: 3,
        rule: "import-circle",
        message:
          "a.ts → b.ts → c.ts → a.ts (imports at a.ts:3, b.ts:5 type-only, c.ts:7); one circle among 3 files that import each other (a.ts, b.ts, c.ts): no import circle in src/ — move what they share down a floor",
        baseline: { rule: "import-circle", files: ["a.ts", "b.ts", "c.ts"] },
      },
    ]);
  });

  it("shows every import inside a tangle in some circle, each circle the shortest way back", () => {
    // a ⇄ b, b → c → a, c → d → c: three circles, one component; e imports into it from outside.
    const found = importCircles(edges("a>b:1", "b>a:1", "b>c:2", "c>a:1", "c>d:2", "d>c:1", "e>a:1"));
    expect(circles(found)).toEqual([
      "a.ts → b.ts → a.ts (imports at a.ts:1, b.ts:1)",
      "b.ts → c.ts → a.ts → b.ts (imports at b.ts:2, c.ts:1, a.ts:1)",
      "c.ts → d.ts → c.ts (imports at c.ts:2, d.ts:1)",
    ]);
    expect(new Set(found.map((violation) => violation.baseline?.files?.join(" ")))).toEqual(
      new Set(["a.ts b.ts c.ts d.ts"]),
    );
  });

  it("keeps separate tangles apart", () => {
    const found = importCircles(edges("a>b:1", "b>a:1", "c>d:1", "d>c:1", "b>c:3"));
    expect(found.map((violation) => violation.baseline?.files)).toEqual([
      ["a.ts", "b.ts"],
      ["c.ts", "d.ts"],
    ]);
  });

  it("names an import between two files type-only only when every import between them is", () => {
    expect(circles(importCircles(edges("a>b:1t", "a>b:4", "b>a:2t", "b>a:3t")))).toEqual([
      "a.ts → b.ts → a.ts (imports at a.ts:4, b.ts:2 type-only)",
    ]);
  });
});
