import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

interface Missing {
  file: string;
  line: number;
  name: string;
  subpath: string;
}
interface CheckJsdocModule {
  checkJsdoc(options?: { root?: string; entries?: { subpath: string; file: string }[] }): Promise<{
    missing: Missing[];
    symbols: number;
    members: number;
  }>;
}

// A script, not a module of src/: loaded by URL (it has no type declarations).
const script = new URL("../../scripts/check-jsdoc.mjs", import.meta.url).href;
const { checkJsdoc } = (await import(script)) as CheckJsdocModule;

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** A documented public surface: two entries, re-exports, a class, option interfaces, overloads. */
const documented: Record<string, string> = {
  "package.json": JSON.stringify({ name: "toolloop", type: "module" }),
  "src/index.ts": [
    'export type { RunOptions } from "./run.js";',
    'export { DEFAULT_LIMIT, Runner, run } from "./run.js";',
    'export * from "./parse.js";',
  ].join("\n"),
  "src/run.ts": [
    "/** Options of {@link run}. */", // 1
    "export interface RunOptions {",
    "  /** Calls at most. @default 10 */",
    "  limit?: number;",
    "  /** Retries of a failed call. */", // 5
    "  retry?: {",
    "    /** How many. */",
    "    attempts: number;",
    "  };",
    "}", // 10
    "/** The default of `RunOptions.limit`. */",
    "export const DEFAULT_LIMIT = 10;",
    "/** A base with a documented method. */",
    "interface Base {",
    "  /** Runs once. */", // 15
    "  once(): void;",
    "}",
    "/** Runs things. */",
    "export class Runner implements Base {",
    "  /** How many ran. */", // 20
    "  count = 0;",
    "  private secret = 1;",
    "  #hidden = 2;",
    "  once(): void {", // inherits Base.once's comment
    "    this.count += this.secret + this.#hidden;", // 25
    "  }",
    "  /** The count as text. */",
    "  get text(): string {",
    "    return String(this.count);",
    "  }", // 30
    "  set text(value: string) {",
    "    this.count = Number(value);",
    "  }",
    "  /** A new runner. */",
    "  static create(): Runner {", // 35
    "    return new Runner();",
    "  }",
    "}",
    "/** Runs with a number. */",
    "export function run(value: number): number;", // 40
    "/** Runs with a text. */",
    "export function run(value: string): number;",
    "export function run(value: number | string): number {",
    "  return Number(value);",
    "}", // 45
  ].join("\n"),
  "src/parse.ts": [
    "/** What parse returns. */",
    "export type Parsed =",
    "  | {",
    "      /** It worked. */",
    "      success: true;", // 5
    "      /** The value. */",
    "      data: number;",
    "    }",
    "  | {",
    "      /** It failed. */", // 10
    "      success: false;",
    "    };",
    "/** Parses. */",
    "export const parse = (text: string): Parsed => ({ success: true, data: Number(text) });",
  ].join("\n"),
  "src/testing/index.ts": [
    'export { Runner as TestRunner } from "../run.js";',
    "/** A fake. @example fake() */",
    "export function fake(): void {}",
  ].join("\n"),
};

const entries = [
  { subpath: "toolloop", file: "src/index.ts" },
  { subpath: "toolloop/testing", file: "src/testing/index.ts" },
];

function writeTree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "toolloop-check-jsdoc-"));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, dirname(path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

/** What is missing in the documented tree with `replace` applied to src/run.ts or src/parse.ts. */
async function missingWith(file: string, replace: [string, string][]): Promise<string[]> {
  let text = documented[file] ?? "";
  for (const [from, to] of replace) {
    if (!text.includes(from)) throw new Error(`fixture: ${file} has no ${JSON.stringify(from)}`);
    text = text.replace(from, to);
  }
  const root = writeTree({ ...documented, [file]: text });
  const { missing } = await checkJsdoc({ root, entries });
  return missing.map((entry) => `${entry.file}:${entry.line} ${entry.name} (${entry.subpath})`);
}

describe("check-jsdoc", () => {
  it("passes a fully documented surface, counting each declaration once", async () => {
    const root = writeTree(documented);
    const result = await checkJsdoc({ root, entries });
    expect(result.missing).toEqual([]);
    // RunOptions, DEFAULT_LIMIT, Runner, run, Parsed, parse, fake (TestRunner is Runner again)
    expect(result.symbols).toBe(7);
  });

  it.each([
    [
      "an interface",
      "src/run.ts",
      [["/** Options of {@link run}. */", "// Options"]],
      ["src/run.ts:2 RunOptions (toolloop)"],
    ],
    [
      "an option property, and one of an inline option object",
      "src/run.ts",
      [
        ["/** Calls at most. @default 10 */", "/** @default */"],
        ["/** How many. */", ""],
      ],
      ["src/run.ts:4 RunOptions.limit (toolloop)", "src/run.ts:8 RunOptions.retry.attempts (toolloop)"],
    ],
    [
      "a constant",
      "src/run.ts",
      [["/** The default of `RunOptions.limit`. */", ""]],
      ["src/run.ts:12 DEFAULT_LIMIT (toolloop)"],
    ],
    ["a class", "src/run.ts", [["/** Runs things. */", ""]], ["src/run.ts:19 Runner (toolloop)"]],
    [
      "a class's property, accessor pair and static method",
      "src/run.ts",
      [
        ["/** How many ran. */", ""],
        ["/** The count as text. */", ""],
        ["/** A new runner. */", ""],
      ],
      [
        "src/run.ts:21 Runner.count (toolloop)",
        "src/run.ts:28 Runner.text (toolloop)",
        "src/run.ts:35 Runner.create (toolloop)",
      ],
    ],
    [
      "a method whose base member has no comment either",
      "src/run.ts",
      [["/** Runs once. */", ""]],
      ["src/run.ts:24 Runner.once (toolloop)"],
    ],
    ["one overload signature", "src/run.ts", [["/** Runs with a text. */", ""]], ["src/run.ts:42 run (toolloop)"]],
    [
      "a union type alias and the members of one of its variants",
      "src/parse.ts",
      [
        ["/** What parse returns. */", ""],
        ["/** It failed. */", ""],
      ],
      ["src/parse.ts:2 Parsed (toolloop)", "src/parse.ts:11 Parsed.success (toolloop)"],
    ],
  ] as [string, string, [string, string][], string[]][])(
    "reports %s without JSDoc",
    async (_case, file, replace, expected) => {
      expect(await missingWith(file, replace)).toEqual(expected);
    },
  );

  it("follows a re-export under another name to the declaration, and reports it there", async () => {
    const root = writeTree({
      ...documented,
      "src/run.ts": (documented["src/run.ts"] ?? "").replace("/** The default of `RunOptions.limit`. */", ""),
      "src/testing/index.ts": 'export { DEFAULT_LIMIT as LIMIT } from "../run.js";\nexport function fake(): void {}\n',
    });
    const { missing } = await checkJsdoc({
      root,
      entries: [{ subpath: "toolloop/testing", file: "src/testing/index.ts" }],
    });
    expect(missing.map((entry) => `${entry.file}:${entry.line} ${entry.name} (${entry.subpath})`)).toEqual([
      "src/run.ts:12 LIMIT (toolloop/testing)",
      "src/testing/index.ts:2 fake (toolloop/testing)",
    ]);
  });
});
