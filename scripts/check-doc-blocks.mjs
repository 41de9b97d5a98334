#!/usr/bin/env node
// Type-checks every ```ts / ```typescript code block of README.md and docs/*.md, each as its own
// module, against the sources ("toolloop", "toolloop/testing", "toolloop/<adapter>" map to src/
// through tsconfig.json's "paths"). A block that is deliberately partial says so in its fence info
// (```ts fragment) and is skipped. Errors are reported at the Markdown line: `docs/guide.md:123: error …`.
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { codeBlocks } from "./markdown.mjs";

const root = resolve(import.meta.dirname, "..");
const outDir = join(root, ".tmp", "doc-blocks");
const TYPESCRIPT = new Set(["ts", "typescript"]);

// Markdown files to check, relative to the repository: the arguments, or README.md and docs/*.md.
const markdownFiles =
  process.argv.length > 2
    ? process.argv.slice(2)
    : [
        "README.md",
        ...readdirSync(join(root, "docs"))
          .filter((name) => name.endsWith(".md"))
          .sort()
          .map((name) => `docs/${name}`),
      ];

rmSync(outDir, { recursive: true, force: true });
mkdirSync(outDir, { recursive: true });

/** Generated file name → where its block starts in the Markdown. */
const origins = new Map();
let fragments = 0;
for (const file of markdownFiles) {
  for (const block of codeBlocks(readFileSync(join(root, file), "utf8"))) {
    if (!TYPESCRIPT.has(block.language)) continue;
    if (block.attributes.includes("fragment")) {
      fragments++;
      continue;
    }
    const name = `${file.replace(/\.md$/, "").replace(/[^A-Za-z0-9]+/g, "-")}-line-${block.line}.ts`;
    // Line n of the block is line n of the module; `export {}` at the end makes every block a module
    // (its own scope, top-level await) without moving a line.
    writeFileSync(join(outDir, name), `${block.code}\nexport {};\n`);
    origins.set(name, { file, line: block.line });
  }
}

writeFileSync(
  join(outDir, "tsconfig.json"),
  JSON.stringify(
    {
      extends: "../../tsconfig.json",
      compilerOptions: { noEmit: true, incremental: false },
      include: ["./*.ts"],
    },
    null,
    2,
  ),
);

let output = "";
try {
  execFileSync(join(root, "node_modules", ".bin", "tsc"), ["-p", join(outDir, "tsconfig.json"), "--pretty", "false"], {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
} catch (error) {
  output = `${error.stdout ?? ""}${error.stderr ?? ""}`;
  if (output.trim() === "") throw error;
}

if (output.trim() !== "") {
  // `path(line,col): error TS…: message`, continuation lines indented: each error maps back to its block.
  const lines = output.split("\n").map((line) => {
    const match = /^(.+?)\((\d+),(\d+)\): (.*)$/.exec(line);
    if (match === null) return line;
    const [, path, line_, column, message] = match;
    const origin = origins.get(relative(outDir, resolve(root, path)));
    return origin === undefined ? line : `${origin.file}:${origin.line + Number(line_)}:${column}: ${message}`;
  });
  process.stderr.write(`${lines.join("\n").trimEnd()}\n`);
  process.stderr.write(
    "check-doc-blocks: code blocks above do not compile on their own; complete them (imports, `declare const x: T;`) or mark a genuinely partial one ```ts fragment\n",
  );
  process.exit(1);
}
process.stdout.write(
  `check-doc-blocks: ${origins.size} ts code blocks in ${markdownFiles.length} Markdown files type-check (${fragments} marked fragment, skipped)\n`,
);
