import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, sep } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

interface Violation {
  file: string;
  line: number;
  rule: string;
  message: string;
}
interface PublicEntry {
  subpath: string;
  file: string;
}
interface CheckImportsModule {
  checkImports(options?: {
    root?: string;
    entries?: PublicEntry[];
    contract?: readonly string[];
    baseline?: boolean;
  }): Promise<{
    violations: Violation[];
    files: number;
    references: number;
    functions: number;
    suppressed: number;
  }>;
  CONTRACT: readonly string[];
  publicEntries(root?: string): Promise<PublicEntry[]>;
  exportsProgram(root: string, entries: PublicEntry[]): import("typescript").Program;
}

// A script, not a module of src/: loaded by URL (it has no type declarations).
const script = new URL("../../scripts/check-imports.mjs", import.meta.url).href;
const { checkImports, CONTRACT, exportsProgram, publicEntries } = (await import(script)) as CheckImportsModule;

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

const packageJson = JSON.stringify({
  name: "toolloop",
  type: "module",
  dependencies: { "p-queue": "*", pino: "*" },
  peerDependencies: { zod: "*", openai: "*" },
  devDependencies: { vitest: "*" },
});

/** A clean tree in the anatomy of docs/architecture.md: every direction it uses is allowed. */
const cleanTree: Record<string, string> = {
  "package.json": packageJson,
  "src/index.ts": [
    'export type { Tool } from "./tool.js";',
    'export { runTool } from "./run-tool.js";',
    'export * from "./formats/openai.js";',
  ].join("\n"),
  "src/tool.ts": "export interface Tool { name: string }\n",
  "src/run-tool.ts": [
    'import { setMaxListeners } from "node:events";',
    'import PQueue from "p-queue";',
    'import type * as z4 from "zod/v4/core";',
    'import { clamp } from "./internal/clamp.js";',
    'import type { Tool } from "./tool.js";',
    "export function runTool(tool: Tool, schema?: z4.$ZodType): number {",
    "  setMaxListeners(1);",
    "  return clamp(new PQueue().size + tool.name.length + (schema === undefined ? 0 : 1));",
    "}",
  ].join("\n"),
  "src/internal/clamp.ts": "export const clamp = (value: number): number => Math.min(value, 10);\n",
  "src/formats/openai.ts": [
    'import { clamp } from "../internal/clamp.js";',
    "export const toOpenAI = (n: number): number => clamp(n);",
  ].join("\n"),
  "src/testing/index.ts": [
    'import type { Tool } from "../tool.js";',
    'export { scripted } from "./scripted.js";',
    "export const fake: Tool = { name: 'fake' };",
  ].join("\n"),
  "src/testing/scripted.ts": "export const scripted = 1;\n",
  "src/adapters/shared/usage.ts": [
    'import { clamp } from "../../internal/clamp.js";',
    "export const usage = (n: number): number => clamp(n);",
  ].join("\n"),
  "src/adapters/openai/index.ts": [
    'import { readFileSync } from "node:fs";', // adapters may use Node APIs: they are behind a subpath
    'export { toOpenAI } from "../../formats/openai.js";',
    'export { createOpenAIProvider } from "./create-openai-provider.js";',
    "export const read = readFileSync;",
  ].join("\n"),
  "src/adapters/openai/create-openai-provider.ts": [
    'import type OpenAI from "openai";', // a declared peer dependency, type only
    'import { runTool } from "../../run-tool.js";',
    'import { usage } from "../shared/usage.js";',
    "export const createOpenAIProvider = (client?: OpenAI) => [runTool, usage, client];",
  ].join("\n"),
  "src/adapters/gemini/index.ts": 'export { usage } from "../shared/usage.js";\n',
  "src/builtin/index.ts": 'export type { Tool } from "../tool.js";\nexport const builtin = 1;\n',
};

const entries: PublicEntry[] = [
  { subpath: "toolloop", file: "src/index.ts" },
  { subpath: "toolloop/testing", file: "src/testing/index.ts" },
  { subpath: "toolloop/openai", file: "src/adapters/openai/index.ts" },
  { subpath: "toolloop/gemini", file: "src/adapters/gemini/index.ts" },
  { subpath: "toolloop/builtin", file: "src/builtin/index.ts" },
];

function writeTree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "toolloop-check-imports-"));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, dirname(path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

/** The violations of the clean tree with `changes` applied, as `file:line [rule]`. */
async function violationsWith(changes: Record<string, string>): Promise<string[]> {
  const root = writeTree({ ...cleanTree, ...changes });
  const { violations } = await checkImports({ root, entries });
  return violations.map((violation) => `${violation.file}:${violation.line} [${violation.rule}]`);
}

describe("check-imports", () => {
  it("passes a tree that follows docs/architecture.md", async () => {
    const root = writeTree(cleanTree);
    const result = await checkImports({ root, entries });
    expect(result.violations).toEqual([]);
    expect(result.files).toBe(12);
  });

  it.each([
    [
      "core imports an adapter (type-only import)",
      { "src/tool.ts": 'import type { read } from "./adapters/openai/index.js";\nexport type R = typeof read;\n' },
      ["src/tool.ts:1 [core-imports-edge]"],
    ],
    [
      "core re-exports from src/testing",
      { "src/tool.ts": 'export { scripted } from "./testing/scripted.js";\n' },
      ["src/tool.ts:1 [core-imports-edge]"],
    ],
    [
      "src/formats imports an adapter in a type (`typeof import()`)",
      {
        "src/formats/openai.ts":
          'export type Provider = typeof import("../adapters/openai/create-openai-provider.js");\nexport const toOpenAI = (n: number): number => n;\n',
      },
      ["src/formats/openai.ts:1 [core-imports-edge]"],
    ],
    [
      "src/internal imports a subpath folder (builtin/)",
      {
        "src/internal/clamp.ts":
          'import { builtin } from "../builtin/index.js";\nexport const clamp = (n: number) => n + builtin;\n',
      },
      ["src/internal/clamp.ts:1 [core-imports-edge]"],
    ],
    [
      "an adapter imports another adapter",
      { "src/adapters/gemini/index.ts": 'export { toOpenAI } from "../openai/index.js";\n' },
      ["src/adapters/gemini/index.ts:1 [adapter-imports-adapter]"],
    ],
    [
      "an adapter imports src/testing",
      {
        "src/adapters/gemini/index.ts":
          'import { scripted } from "../../testing/index.js";\nexport const s = scripted;\n',
      },
      ["src/adapters/gemini/index.ts:1 [adapter-imports-testing]"],
    ],
    [
      "src/adapters/shared imports an adapter",
      { "src/adapters/shared/usage.ts": 'import "../openai/index.js";\nexport const usage = (n: number) => n;\n' },
      ["src/adapters/shared/usage.ts:1 [shared-imports-adapter]"],
    ],
    [
      "src/testing imports an adapter",
      {
        "src/testing/scripted.ts":
          'import type { read } from "../adapters/openai/index.js";\nexport const scripted: typeof read | 1 = 1;\n',
      },
      ["src/testing/scripted.ts:1 [testing-imports-adapter]"],
    ],
    [
      "a subpath folder (builtin/) imports src/adapters/shared",
      { "src/builtin/index.ts": 'export { usage } from "../adapters/shared/usage.js";\n' },
      ["src/builtin/index.ts:1 [extension-imports-shared]"],
    ],
    [
      "src imports test/",
      { "src/tool.ts": 'import "../test/helpers/capture-logger.js";\nexport interface Tool { name: string }\n' },
      ["src/tool.ts:1 [imports-outside-src]"],
    ],
    [
      "src imports bench/ through require()",
      { "src/run-tool.ts": 'const bench = require("../bench/cases.js");\nexport const runTool = () => bench;\n' },
      ["src/run-tool.ts:1 [imports-outside-src]"],
    ],
    [
      "core imports a provider SDK (declared peer dependency, type only)",
      { "src/tool.ts": 'import type OpenAI from "openai";\nexport interface Tool { name: string; client?: OpenAI }\n' },
      ["src/tool.ts:1 [core-imports-package]"],
    ],
    [
      "core imports the filesystem, a process API and the network",
      {
        "src/tool.ts": [
          'import { readFileSync } from "node:fs";',
          'import type { ChildProcess } from "child_process";',
          "export interface Tool { name: string; child?: ChildProcess }",
          'export const load = () => [readFileSync, require("node:http")];',
        ].join("\n"),
      },
      [
        "src/tool.ts:1 [core-imports-node-module]",
        "src/tool.ts:2 [core-imports-node-module]",
        "src/tool.ts:4 [core-imports-node-module]",
      ],
    ],
    [
      "src/testing imports the filesystem",
      { "src/testing/scripted.ts": 'import { readFileSync } from "node:fs";\nexport const scripted = readFileSync;\n' },
      ["src/testing/scripted.ts:1 [core-imports-node-module]"],
    ],
    [
      "an adapter imports a devDependency",
      { "src/adapters/gemini/index.ts": 'import type { Mock } from "vitest";\nexport type M = Mock;\n' },
      ["src/adapters/gemini/index.ts:1 [undeclared-package]"],
    ],
    [
      "a file imports the package by its own name",
      { "src/adapters/gemini/index.ts": 'export { runTool } from "toolloop";\n' },
      ["src/adapters/gemini/index.ts:1 [self-import]"],
    ],
    [
      "an import specifier is computed",
      { "src/run-tool.ts": 'const name = "./tool.js";\nexport const runTool = () => import(name);\n' },
      ["src/run-tool.ts:2 [computed-specifier]"],
    ],
    [
      "a public entry re-exports from src/internal",
      { "src/index.ts": 'export type { Tool } from "./tool.js";\nexport { clamp } from "./internal/clamp.js";\n' },
      ["src/index.ts:2 [entry-exports-internal]"],
    ],
    [
      "a public entry re-exports src/internal through a public module (`export *`)",
      {
        "src/formats/openai.ts":
          'export { clamp } from "../internal/clamp.js";\nexport const toOpenAI = (n: number) => n;\n',
      },
      ["src/index.ts:3 [entry-exports-internal]"],
    ],
    [
      "an adapter entry exports what it imported from src/internal",
      {
        "src/adapters/gemini/index.ts": 'import { clamp } from "../../internal/clamp.js";\nexport { clamp };\n',
      },
      ["src/adapters/gemini/index.ts:2 [entry-exports-internal]"],
    ],
    [
      "two files import each other",
      {
        "src/loop.ts": 'import { step } from "./step.js";\nexport const loop = (): number => step();\n',
        "src/step.ts": 'import type { loop } from "./loop.js";\nexport const step: typeof loop = () => 1;\n',
      },
      ["src/loop.ts:1 [import-circle]"],
    ],
    [
      "three files import each other in two circles (one shown per circle, every import shown once)",
      {
        "src/a.ts": 'import { b } from "./b.js";\nexport const a = () => b;\n',
        "src/b.ts": 'export { a } from "./a.js";\nimport { c } from "./c.js";\nexport const b = () => c;\n',
        "src/c.ts": 'export const c = () => import("./a.js");\n',
      },
      ["src/a.ts:1 [import-circle]", "src/b.ts:2 [import-circle]"],
    ],
    [
      "a circle runs through src/internal and a subpath folder imports into it",
      {
        "src/run-tool.ts": 'import { clamp } from "./internal/clamp.js";\nexport const runTool = () => clamp(1);\n',
        "src/internal/clamp.ts":
          'import type { runTool } from "../run-tool.js";\nexport const clamp = (n: number) => n;\nexport type R = typeof runTool;\n',
      },
      ["src/internal/clamp.ts:1 [internal-imports-above]", "src/internal/clamp.ts:1 [import-circle]"],
    ],
    [
      "src/internal imports a core file above the contract (type only)",
      {
        "src/define.ts": "export interface Options { limit: number }\n",
        "src/internal/clamp.ts":
          'import type { Options } from "../define.js";\nexport const clamp = (n: number, options?: Options) => Math.min(n, options?.limit ?? 10);\n',
      },
      ["src/internal/clamp.ts:1 [internal-imports-above]"],
    ],
    [
      "src/internal imports a public format module (core, but above the contract)",
      {
        "src/formats/gemini.ts": "export const toGemini = (n: number): number => n;\n",
        "src/internal/names.ts":
          'import { toGemini } from "../formats/gemini.js";\nexport const nameLength = toGemini;\n',
      },
      ["src/internal/names.ts:1 [internal-imports-above]"],
    ],
    [
      "a contract file imports a file above the contract",
      {
        "src/define.ts": "export interface Options { limit: number }\n",
        "src/tool.ts":
          'import type { Options } from "./define.js";\nexport interface Tool { name: string; options?: Options }\n',
      },
      ["src/tool.ts:1 [contract-imports-above]"],
    ],
    [
      "a function spans 81 lines",
      {
        "src/internal/clamp.ts": [
          "export const clamp = (value: number): number => Math.min(value, 10);",
          "export function long(): number {",
          ...Array.from({ length: 79 }, (_, index) => `  // step ${index}`),
          "}",
        ].join("\n"),
      },
      ["src/internal/clamp.ts:2 [function-too-long]"],
    ],
    [
      "a file has 501 lines",
      {
        "src/builtin/index.ts": [
          'export type { Tool } from "../tool.js";',
          ...Array.from({ length: 499 }, (_, index) => `export const builtin${index} = ${index};`),
          "export const builtin = 1;",
        ].join("\n"),
      },
      ["src/builtin/index.ts:1 [file-too-long]"],
    ],
  ])("fails when %s", async (_case, changes, expected) => {
    expect(await violationsWith(changes)).toEqual(expected);
  });

  it("lets src/internal import itself and the contract, and the contract import src/internal", async () => {
    expect(
      await violationsWith({
        "src/internal/names.ts": [
          'import type { Tool } from "../tool.js";',
          'import { clamp } from "./clamp.js";',
          "export const nameLength = (tool: Tool): number => clamp(tool.name.length);",
        ].join("\n"),
        "src/tool.ts":
          'import type { clamp } from "./internal/clamp.js";\nexport interface Tool { name: string; c?: typeof clamp }\n',
      }),
    ).toEqual([]);
  });

  it("lets src/internal import a file added to the contract", async () => {
    const root = writeTree({
      ...cleanTree,
      "src/define.ts": "export interface Options { limit: number }\n",
      "src/internal/clamp.ts":
        'import type { Options } from "../define.js";\nexport const clamp = (n: number, options?: Options) => Math.min(n, options?.limit ?? 10);\n',
    });
    const contract = [...CONTRACT, "src/define.ts"];
    expect((await checkImports({ root, entries, contract })).violations).toEqual([]);
    expect(CONTRACT).toEqual([
      "src/tool.ts",
      "src/tool-result.ts",
      "src/content-part.ts",
      "src/provider.ts",
      "src/errors.ts",
      "src/logger.ts",
    ]);
  });

  it("sees no circle where imports only share a file", async () => {
    expect(
      await violationsWith({
        "src/a.ts": 'import "./b.js";\nimport "./c.js";\n',
        "src/b.ts": 'import "./d.js";\n',
        "src/c.ts": 'import type { D } from "./d.js";\nexport type C = D;\n',
        "src/d.ts": "export type D = number;\n",
      }),
    ).toEqual([]);
  });

  it("shows each circle with the line of every import in it, type-only ones named", async () => {
    const root = writeTree({
      ...cleanTree,
      "src/a.ts": 'import { b } from "./b.js";\nexport const a = () => b;\n',
      "src/b.ts":
        'import { type A, a } from "./a.js";\nimport type { c } from "./c.js";\nexport const b = (): A => a;\n',
      "src/c.ts": 'export type A = 1;\nexport const c = () => import("./a.js");\n',
    });
    const { violations } = await checkImports({ root, entries });
    const suffix = "no import circle in src/ — move what they share down a floor";
    expect(violations).toEqual([
      {
        file: "src/a.ts",
        line: 1,
        rule: "import-circle",
        message: `src/a.ts → src/b.ts → src/a.ts (imports at src/a.ts:1, src/b.ts:1); one circle among 3 files that import each other (src/a.ts, src/b.ts, src/c.ts): ${suffix}`,
        baseline: { rule: "import-circle", files: ["src/a.ts", "src/b.ts", "src/c.ts"] },
      },
      {
        file: "src/b.ts",
        line: 2,
        rule: "import-circle",
        message: `src/b.ts → src/c.ts → src/a.ts → src/b.ts (imports at src/b.ts:2 type-only, src/c.ts:2, src/a.ts:1); one circle among 3 files that import each other (src/a.ts, src/b.ts, src/c.ts): ${suffix}`,
        baseline: { rule: "import-circle", files: ["src/a.ts", "src/b.ts", "src/c.ts"] },
      },
    ]);
  });

  it("names the import that runs above the contract, and the contract", async () => {
    const root = writeTree({
      ...cleanTree,
      "src/define.ts": "export interface Options { limit: number }\n",
      "src/internal/clamp.ts":
        'import type { Options } from "../define.js";\nexport const clamp = (n: number, options?: Options) => Math.min(n, options?.limit ?? 10);\n',
    });
    const { violations } = await checkImports({ root, entries });
    expect(violations.map((violation) => violation.message)).toEqual([
      'src/internal/clamp.ts imports src/define.ts ("../define.js", type-only), above the contract: src/internal/ imports only itself and the contract (src/tool.ts, src/tool-result.ts, src/content-part.ts, src/provider.ts, src/errors.ts, src/logger.ts); move what it needs down into the contract or src/internal/',
    ]);
  });

  describe("with the baseline of scripts/structure-baseline.json", () => {
    const circle = {
      "src/loop.ts": 'import { step } from "./step.js";\nexport const loop = (): number => step();\n',
      "src/step.ts": 'import type { loop } from "./loop.js";\nexport const step: typeof loop = () => 1;\n',
    };
    const longFunction = (lines: number) =>
      ["export function long(): void {", ...Array.from({ length: lines - 2 }, () => "  // a step"), "}"].join("\n");
    const baselineOf = (...entries: object[]) =>
      JSON.stringify({ violations: entries }, null, 2).replaceAll("\n      ", " ").replaceAll("\n    }", " }");

    it("does not report the violations it lists, and reports the others", async () => {
      const root = writeTree({
        ...cleanTree,
        ...circle,
        "src/long.ts": longFunction(90),
        "src/other.ts": longFunction(82),
        "scripts/structure-baseline.json": baselineOf(
          { rule: "import-circle", files: ["src/loop.ts", "src/step.ts"] },
          { rule: "function-too-long", file: "src/long.ts", function: "long", lines: 90 },
        ),
      });
      const result = await checkImports({ root, entries });
      expect(result.violations.map((violation) => `${violation.file}:${violation.line} [${violation.rule}]`)).toEqual([
        "src/other.ts:1 [function-too-long]",
      ]);
      expect(result.suppressed).toBe(2);
      const all = await checkImports({ root, entries, baseline: false });
      expect(all.violations.map((violation) => violation.rule)).toEqual([
        "function-too-long",
        "import-circle",
        "function-too-long",
      ]);
    });

    it("fails on an entry that no longer occurs, at its line", async () => {
      const root = writeTree({
        ...cleanTree,
        "scripts/structure-baseline.json": baselineOf(
          { rule: "import-circle", files: ["src/loop.ts", "src/step.ts"] },
          { rule: "internal-imports-above", file: "src/internal/clamp.ts", imports: "src/define.ts" },
        ),
      });
      const { violations } = await checkImports({ root, entries });
      expect(violations).toEqual([
        {
          file: "scripts/structure-baseline.json",
          line: 3,
          rule: "stale-baseline",
          message:
            '{ "rule": "import-circle", "files": ["src/loop.ts", "src/step.ts"] } no longer occurs: delete the entry (or run the check with --shrink-baseline)',
        },
        {
          file: "scripts/structure-baseline.json",
          line: 4,
          rule: "stale-baseline",
          message:
            '{ "rule": "internal-imports-above", "file": "src/internal/clamp.ts", "imports": "src/define.ts" } no longer occurs: delete the entry (or run the check with --shrink-baseline)',
        },
      ]);
    });

    it("reports a listed violation that grew, naming its entry", async () => {
      const root = writeTree({
        ...cleanTree,
        ...circle,
        "src/loop.ts":
          'import { step } from "./step.js";\nimport "./third.js";\nexport const loop = (): number => step();\n',
        "src/third.ts": 'import "./loop.js";\n',
        "src/long.ts": longFunction(91),
        "scripts/structure-baseline.json": baselineOf(
          { rule: "import-circle", files: ["src/loop.ts", "src/step.ts"] },
          { rule: "function-too-long", file: "src/long.ts", function: "long", lines: 90 },
        ),
      });
      const { violations } = await checkImports({ root, entries });
      expect(violations.map((violation) => `${violation.file}:${violation.line} [${violation.rule}]`)).toEqual([
        "src/long.ts:1 [function-too-long]",
        "src/loop.ts:1 [import-circle]",
        "src/loop.ts:2 [import-circle]",
      ]);
      expect(violations[0]?.message).toBe(
        'long spans 91 lines (1–91); no function in src/ spans more than 80: give its steps functions of their own (scripts/structure-baseline.json lists { "rule": "function-too-long", "file": "src/long.ts", "function": "long", "lines": 90 }: it may only shrink)',
      );
    });
  });

  it("names the rule and the allowed directions in its message", async () => {
    const root = writeTree({
      ...cleanTree,
      "src/adapters/gemini/index.ts": 'export { toOpenAI } from "../openai/index.js";\n',
    });
    const { violations } = await checkImports({ root, entries });
    expect(violations[0]?.message).toBe(
      'src/adapters/gemini imports src/adapters/openai ("../openai/index.js"): an adapter imports only core, src/adapters/shared and its own folder',
    );
  });

  it("maps every package.json export to its source through tsup.config.ts", async () => {
    const found = await publicEntries();
    expect(found).toContainEqual({ subpath: "toolloop", file: "src/index.ts" });
    expect(found).toContainEqual({ subpath: "toolloop/testing", file: "src/testing/index.ts" });
    expect(found).toContainEqual({ subpath: "toolloop/openai", file: "src/adapters/openai/index.ts" });
    expect(found.length).toBeGreaterThanOrEqual(7);
  });

  // About 2 s of CPU (TypeScript parses src/ once); the timeout leaves room for a machine busy with
  // other work, which stretches the wall clock several times over.
  it("passes on this repository's src/", { timeout: 60_000 }, async () => {
    const { violations, files } = await checkImports();
    expect(violations).toEqual([]);
    expect(files).toBeGreaterThan(40);
  });

  it("follows the entries' exports through src/ alone: no package's declarations, no lib, are parsed", async () => {
    const root = writeTree(cleanTree);
    const program = exportsProgram(root, entries);
    const parsed = program.getSourceFiles().map((file) => relative(root, file.fileName).split(sep).join("/"));
    // The entries and what they import from src/; openai, zod, p-queue and node: stay unresolved.
    expect(parsed.sort()).toEqual(
      Object.keys(cleanTree)
        .filter((path) => path.startsWith("src/"))
        .sort(),
    );
  });
});
