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
  checkImports(options?: { root?: string; entries?: PublicEntry[] }): Promise<{
    violations: Violation[];
    files: number;
    references: number;
  }>;
  publicEntries(root?: string): Promise<PublicEntry[]>;
  exportsProgram(root: string, entries: PublicEntry[]): import("typescript").Program;
}

// A script, not a module of src/: loaded by URL (it has no type declarations).
const script = new URL("../../scripts/check-imports.mjs", import.meta.url).href;
const { checkImports, exportsProgram, publicEntries } = (await import(script)) as CheckImportsModule;

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
  ])("fails when %s", async (_case, changes, expected) => {
    expect(await violationsWith(changes)).toEqual(expected);
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
