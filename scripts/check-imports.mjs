#!/usr/bin/env node
// Import directions and structure of src/ (docs/architecture.md), checked on the syntax tree of
// every src/**/*.ts by the TypeScript compiler API: imports, `import type`, `export … from`,
// `import()` (also in types), `require("…")`, `import x = require("…")` and `declare module "…"` all
// count. Fails (exit 1) with `file:line: [rule] message` for each forbidden direction:
//   core (src/*.ts, src/formats/, src/internal/) imports only core, the allow-listed packages
//   below and the allow-listed node: modules; src/testing likewise (plus itself);
//   an adapter (src/adapters/<p>/) imports core, src/adapters/shared/ and its own folder;
//   src/adapters/shared/ imports core and itself; any other src/<dir>/ (builtin/, mcp/ …) imports
//   core and its own folder; no relative import leaves src/; no file imports the package by its own
//   name or a package that package.json does not declare (dependencies, peerDependencies);
//   no public entry (package.json "exports" → tsup.config.ts entries) exports a symbol declared
//   under src/internal/, directly or through re-exports (checked with the type checker, on a
//   program of src/ alone: see exportsProgram);
//   src/internal/ imports only itself and the CONTRACT files, which import only each other and
//   src/internal/ (`internal-imports-above`, `contract-imports-above`);
//   no import circle among the files of src/ (`import-circle`, scripts/import-circles.mjs: a
//   type-only import counts too, and is named);
// and no function over 80 lines or file over 500 (`function-too-long`, `file-too-long`,
// scripts/check-size.mjs), on the same syntax trees. The violations of those last five rules that
// src/ had when they arrived are listed in scripts/structure-baseline.json
// (scripts/structure-baseline.mjs): a listed one is not reported, a new one or one that grew is, and
// so is an entry that no longer occurs; `--shrink-baseline` tightens the list after a fix,
// `--no-baseline` shows every violation.
// `node scripts/check-imports.mjs` checks this repository; `checkImports({ root, entries })` is the
// same check as a function (test/scripts/check-imports.test.ts runs it on fixture trees).
import { readdirSync, readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import ts from "typescript";
import { sizeViolations } from "./check-size.mjs";
import { importCircles } from "./import-circles.mjs";
import { applyBaseline, BASELINE_FILE, readBaseline, writeBaseline } from "./structure-baseline.mjs";

const repositoryRoot = resolve(import.meta.dirname, "..");

/**
 * Packages the core (and src/testing) may import, by package name (subpaths included: `zod/v4/core`,
 * `ajv/dist/2020.js`). Exactly what the core uses today; adding one is a decision — record it in
 * docs/architecture.md. Each must also be declared in package.json (rule `undeclared-package`).
 */
export const CORE_PACKAGES = Object.freeze([
  "zod", // peer dependency: defineTool's schemas (zod/v4/core)
  "zod-to-json-schema", // zod 3 schemas → JSON Schema, loaded on first use
  "ajv", // JSON Schema validation of hand-written tools, loaded on first use
  "re2js", // linear-time schema patterns
  "pino", // the default (silent) logger
  "p-queue", // bounded concurrency of a turn's calls
]);

/**
 * Node built-in modules the core (and src/testing) may import: none that reaches the filesystem, a
 * process, the network or a worker. `node:module` is there for `createRequire` (lazy loading of
 * optional dependencies), `node:events` for `setMaxListeners`.
 */
export const CORE_NODE_MODULES = Object.freeze(["node:events", "node:module"]);

/**
 * The contract: the files every layer may use, src/internal/ included (docs/architecture.md, "The
 * contract"). src/internal/ imports only itself and these; these import only each other and
 * src/internal/. A type that src/internal/ needs from above moves down into one of them (or a small
 * type-only file added here and to the table in docs/architecture.md), never the other way round.
 */
export const CONTRACT = Object.freeze([
  "src/tool.ts",
  "src/tool-result.ts",
  "src/content-part.ts",
  "src/provider.ts",
  "src/errors.ts",
  "src/logger.ts",
]);

const SOURCE_FILE = /\.(?:[cm]?ts|tsx)$/;

/** @typedef {{ kind: "core" | "testing" | "shared" | "adapter" | "extension" | "outside", name: string }} Layer */
/** @typedef {import("./structure-baseline.mjs").Violation} Violation */
/** @typedef {import("./structure-baseline.mjs").BaselineEntry} BaselineEntry */
/** @typedef {{ subpath: string, file: string }} PublicEntry */

/**
 * The layer of a path relative to the repository root (forward slashes).
 * @param {string} path
 * @returns {Layer}
 */
export function layerOf(path) {
  const parts = path.split("/");
  if (parts[0] !== "src") return { kind: "outside", name: parts[0] ?? "" };
  if (parts.length === 2) return { kind: "core", name: "core" };
  const folder = parts[1];
  if (folder === "formats" || folder === "internal") return { kind: "core", name: "core" };
  if (folder === "testing") return { kind: "testing", name: "testing" };
  if (folder === "adapters") {
    // A loose file directly in src/adapters/ is shared by its place.
    if (parts.length === 3 || parts[2] === "shared") return { kind: "shared", name: "adapters/shared" };
    return { kind: "adapter", name: `adapters/${parts[2]}` };
  }
  return { kind: "extension", name: folder };
}

const describeLayer = (layer) =>
  layer.kind === "core"
    ? "core"
    : layer.kind === "testing"
      ? "src/testing"
      : layer.kind === "outside"
        ? `${layer.name}/`
        : `src/${layer.name}`;

/**
 * Whether a file of layer `from` may import a file of layer `to`; the rule broken when not.
 * @param {Layer} from
 * @param {Layer} to
 * @returns {string | undefined}
 */
export function forbiddenDirection(from, to) {
  if (to.kind === "outside") return "imports-outside-src";
  if (to.kind === "core") return undefined;
  if (from.name === to.name) return undefined;
  if (from.kind === "core") return "core-imports-edge";
  if (from.kind === "adapter" && to.kind === "shared") return undefined;
  if (from.kind === "adapter" && to.kind === "adapter") return "adapter-imports-adapter";
  return `${from.kind}-imports-${to.kind}`;
}

const ALLOWED = {
  core: "core imports only core (src/*.ts, src/formats/, src/internal/)",
  testing: "src/testing imports only core and itself",
  shared: "src/adapters/shared imports only core and itself",
  adapter: "an adapter imports only core, src/adapters/shared and its own folder",
  extension: "a subpath folder imports only core and its own folder",
};

/** The package name of a bare specifier (`@scope/name/sub` → `@scope/name`). */
export function packageName(specifier) {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

const BUILTINS = new Set(
  builtinModules.flatMap((name) => (name.startsWith("node:") ? [name] : [name, `node:${name}`])),
);

/** `fs` and `node:fs` → `node:fs`; undefined for a specifier that is not a Node built-in. */
function builtinName(specifier) {
  if (!BUILTINS.has(specifier)) return undefined;
  return specifier.startsWith("node:") ? specifier : `node:${specifier}`;
}

/**
 * Every module specifier a source file names, with its line (1-based) and whether it is erased at
 * run time. With `verbatimModuleSyntax` only a reference marked as a type is erased: `import type`,
 * `export type … from`, `import("…")` in a type, `/// <reference types>`, `declare module`; an
 * `import { type A }` still loads its module (it compiles to `import {} from "…"`).
 * @param {ts.SourceFile} sourceFile
 * @returns {{ specifier: string | undefined, line: number, how: string, typeOnly: boolean }[]}
 *   `specifier` undefined: computed
 */
export function moduleReferences(sourceFile) {
  const found = [];
  const add = (node, literal, how, typeOnly = false) =>
    found.push({
      specifier: literal !== undefined && ts.isStringLiteralLike(literal) ? literal.text : undefined,
      line: sourceFile.getLineAndCharacterOfPosition(node.getStart(sourceFile)).line + 1,
      how,
      typeOnly,
    });
  const visit = (node) => {
    if (ts.isImportDeclaration(node)) add(node, node.moduleSpecifier, "import", node.importClause?.isTypeOnly);
    else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined)
      add(node, node.moduleSpecifier, "export … from", node.isTypeOnly);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference))
      add(node, node.moduleReference.expression, "import = require", node.isTypeOnly);
    else if (ts.isModuleDeclaration(node) && ts.isStringLiteral(node.name))
      add(node, node.name, "declare module", true);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument))
      add(node, node.argument.literal, "import() type", true);
    else if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const isImport = callee.kind === ts.SyntaxKind.ImportKeyword;
      const isRequire = ts.isIdentifier(callee) && callee.text === "require";
      if (isImport || isRequire) add(node, node.arguments[0], isImport ? "import()" : "require()");
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  for (const reference of sourceFile.typeReferenceDirectives) {
    found.push({
      specifier: reference.fileName,
      line: sourceFile.getLineAndCharacterOfPosition(reference.pos).line + 1,
      how: "/// <reference types>",
      typeOnly: true,
    });
  }
  return found;
}

/** Every .ts file under `directory`, as paths relative to `root` with forward slashes, sorted. */
export function sourceFiles(root, directory) {
  const files = [];
  const walk = (absolute) => {
    for (const entry of readdirSync(absolute, { withFileTypes: true })) {
      const path = join(absolute, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (SOURCE_FILE.test(entry.name)) files.push(relative(root, path).split(sep).join("/"));
    }
  };
  walk(join(root, directory));
  return files.sort();
}

/** A relative specifier of `file` → the target's path relative to root (`.js` → `.ts`). */
function resolveRelative(root, file, specifier) {
  const absolute = resolve(root, dirname(file), specifier);
  const path = relative(root, absolute).split(sep).join("/");
  return path.replace(/\.([cm]?)js$/, ".$1ts").replace(/\.jsx$/, ".tsx");
}

/**
 * The public entries of the package: each `exports` subpath of package.json, through its `dist/`
 * file, mapped to its source by tsup.config.ts's `entry`. Throws when an export has no source entry.
 * @param {string} [root]
 * @returns {Promise<PublicEntry[]>}
 */
export async function publicEntries(root = repositoryRoot) {
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const { tsImport } = await import("tsx/esm/api");
  const loaded = await tsImport(pathToFileURL(join(root, "tsup.config.ts")).href, import.meta.url);
  const config = loaded.default?.default ?? loaded.default;
  const configs = Array.isArray(config) ? config : [config];
  /** @type {Map<string, string>} tsup entry name (`openai/index`) → source path */
  const sources = new Map();
  for (const { entry } of configs) {
    if (Array.isArray(entry)) throw new Error("tsup.config.ts: name the entries ({ name: source }) to map exports");
    for (const [name, source] of Object.entries(entry ?? {})) sources.set(name, source.replace(/^\.\//, ""));
  }
  const entries = [];
  for (const [key, target] of Object.entries(manifest.exports ?? {})) {
    const file = typeof target === "string" ? target : (target.import ?? target.default);
    if (typeof file !== "string" || !/^\.\/dist\/.*\.[cm]?js$/.test(file)) continue; // ./package.json
    const name = file.replace(/^\.\/dist\//, "").replace(/\.[cm]?js$/, "");
    const source = sources.get(name);
    if (source === undefined)
      throw new Error(`package.json export "${key}" (${file}) has no entry "${name}" in tsup.config.ts`);
    entries.push({ subpath: key === "." ? manifest.name : `${manifest.name}/${key.slice(2)}`, file: source });
  }
  return entries;
}

/**
 * Compiler options of `root`'s tsconfig.json (defaults when there is none), for a program over a few
 * entry files.
 * @param {string} root
 */
export function compilerOptions(root) {
  const path = join(root, "tsconfig.json");
  const read = ts.readConfigFile(path, ts.sys.readFile);
  if (read.error !== undefined) {
    return {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      skipLibCheck: true,
      noEmit: true,
      types: [],
    };
  }
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, root, undefined, path);
  return { ...parsed.options, noEmit: true, incremental: false };
}

/**
 * A type-checking program over the public entries (and what they import).
 * @param {string} root
 * @param {PublicEntry[]} entries
 */
export function entryProgram(root, entries) {
  const options = compilerOptions(root);
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  // Declaration files (TypeScript's lib, node_modules) are parsed once per process, not per program.
  host.getSourceFile = (fileName, languageVersion, ...rest) => {
    if (!fileName.endsWith(".d.ts")) return getSourceFile(fileName, languageVersion, ...rest);
    const key = `${fileName}\0${JSON.stringify(languageVersion)}`;
    let sourceFile = declarationFiles.get(key);
    if (sourceFile === undefined) {
      sourceFile = getSourceFile(fileName, languageVersion, ...rest);
      if (sourceFile !== undefined) declarationFiles.set(key, sourceFile);
    }
    return sourceFile;
  };
  return ts.createProgram({ rootNames: entries.map((entry) => join(root, entry.file)), options, host });
}

const declarationFiles = new Map();

/**
 * A program over the public entries and the repository's own modules they reach, without any
 * package's declaration files or TypeScript's lib: what an entry exports, and where each symbol is
 * declared, follows the repository's modules only (a package cannot re-export src/internal/), so
 * this is all the exports check needs. (With every package's types — the provider SDKs, MCP, BullMQ
 * — the program took 10–25 s to build on a busy machine; this one takes a fraction of a second.)
 * @param {string} root
 * @param {PublicEntry[]} entries
 */
export function exportsProgram(root, entries) {
  const options = { ...compilerOptions(root), noLib: true, types: [] };
  const host = ts.createCompilerHost(options);
  host.resolveModuleNameLiterals = (literals, containingFile, redirectedReference, settings, containingSourceFile) =>
    literals.map((literal) => {
      const mode = ts.getModeForUsageLocation(containingSourceFile, literal, settings);
      const { resolvedModule } = ts.resolveModuleName(
        literal.text,
        containingFile,
        settings,
        host,
        undefined,
        redirectedReference,
        mode,
      );
      // A package's module is left unresolved: never parsed, and never the declaration of an export.
      return { resolvedModule: resolvedModule?.isExternalLibraryImport ? undefined : resolvedModule };
    });
  return ts.createProgram({ rootNames: entries.map((entry) => join(root, entry.file)), options, host });
}

const toPath = (root, fileName) => relative(root, fileName).split(sep).join("/");

/**
 * Symbols a public entry exports that are declared under src/internal/.
 * @param {string} root
 * @param {PublicEntry[]} entries
 * @param {ts.Program} program {@link exportsProgram} of those entries
 * @returns {Violation[]}
 */
function internalExports(root, entries, program) {
  const checker = program.getTypeChecker();
  const violations = [];
  for (const entry of entries) {
    const sourceFile = program.getSourceFile(join(root, entry.file));
    if (sourceFile === undefined) {
      violations.push({ file: entry.file, line: 1, rule: "missing-entry", message: `${entry.subpath}: no such file` });
      continue;
    }
    const moduleSymbol = checker.getSymbolAtLocation(sourceFile);
    if (moduleSymbol === undefined) continue; // no import or export at all
    const line = (node) => sourceFile.getLineAndCharacterOfPosition(node.getStart(sourceFile)).line + 1;
    for (const exported of checker.getExportsOfModule(moduleSymbol)) {
      const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const declaration = (target.declarations ?? []).find((node) =>
        toPath(root, node.getSourceFile().fileName).startsWith("src/internal/"),
      );
      if (declaration === undefined) continue;
      // Where the entry exports it: its own export specifier, or the `export *` that brings it in.
      const own = (exported.declarations ?? []).find((node) => node.getSourceFile() === sourceFile);
      const star = sourceFile.statements.find(
        (statement) =>
          ts.isExportDeclaration(statement) &&
          statement.exportClause === undefined &&
          statement.moduleSpecifier !== undefined,
      );
      const at = own ?? star;
      violations.push({
        file: entry.file,
        line: at === undefined ? 1 : line(at),
        rule: "entry-exports-internal",
        message: `public entry ${entry.subpath} exports ${exported.name}, declared in ${toPath(root, declaration.getSourceFile().fileName)} (src/internal is never public: move it to a public module)`,
      });
    }
  }
  return violations;
}

/** @typedef {import("./import-circles.mjs").ImportEdge} ImportEdge */

const onFloor = (path, contract) => path.startsWith("src/internal/") || contract.has(path);

/**
 * The rule an import from `from` to `to` (both files of src/, the import otherwise allowed) breaks by
 * running from the bottom floor — src/internal/ and the contract — up past the contract.
 * @param {string} from
 * @param {string} to
 * @param {ReadonlySet<string>} contract
 * @returns {string | undefined}
 */
export function aboveContract(from, to, contract) {
  if (!onFloor(from, contract) || onFloor(to, contract)) return undefined;
  return from.startsWith("src/internal/") ? "internal-imports-above" : "contract-imports-above";
}

/**
 * What a reference to a package or a Node built-in module breaks, if anything.
 * @param {string} specifier
 * @param {Layer} from the layer of the file that names it
 * @param {{ self: string, declared: Set<string>, packages: Set<string>, builtins: Set<string> }} allowed
 *   the package's own name, its declared dependencies, and what core may import
 * @returns {{ rule: string, message: string } | undefined}
 */
function bareReferenceViolation(specifier, from, allowed) {
  const restricted = from.kind === "core" || from.kind === "testing";
  const builtin = builtinName(specifier);
  if (builtin !== undefined) {
    if (!restricted || allowed.builtins.has(builtin)) return undefined;
    return {
      rule: "core-imports-node-module",
      message: `${describeLayer(from)} imports ${builtin}: core and src/testing use only ${[...allowed.builtins].join(", ")} (no filesystem, process or network API; put it behind a subpath export)`,
    };
  }
  const name = packageName(specifier);
  if (name === allowed.self)
    return {
      rule: "self-import",
      message: `"${specifier}" imports the package by its own name: use a relative import`,
    };
  if (!allowed.declared.has(name))
    return {
      rule: "undeclared-package",
      message: `"${specifier}": ${name} is not in package.json dependencies or peerDependencies (a devDependency is not installed for users)`,
    };
  if (restricted && !allowed.packages.has(name))
    return {
      rule: "core-imports-package",
      message: `${describeLayer(from)} imports "${specifier}": core and src/testing use only ${[...allowed.packages].join(", ")} (a provider SDK belongs in an adapter, typed structurally)`,
    };
  return undefined;
}

/**
 * What a relative reference breaks, if anything, and the edge it adds to the graph of src/'s files.
 * @param {string} root
 * @param {string} file the file that names it
 * @param {{ specifier: string, line: number, typeOnly: boolean }} reference
 * @param {ReadonlySet<string>} files the files of src/
 * @param {ReadonlySet<string>} contract
 * @returns {{ violation?: Violation, edge?: ImportEdge }}
 */
function relativeReferenceViolation(root, file, { specifier, line, typeOnly }, files, contract) {
  const target = resolveRelative(root, file, specifier);
  const from = layerOf(file);
  const to = layerOf(target);
  const rule = forbiddenDirection(from, to);
  if (rule === "imports-outside-src") {
    const message = `"${specifier}" resolves to ${target}: nothing in src imports test/, bench/ or anything outside src/`;
    return { violation: { file, line, rule, message } };
  }
  if (rule !== undefined) {
    const message = `${describeLayer(from)} imports ${describeLayer(to)} ("${specifier}"): ${ALLOWED[from.kind]}`;
    return { violation: { file, line, rule, message } };
  }
  if (!files.has(target)) return {};
  const edge = { from: file, to: target, line, typeOnly };
  const above = aboveContract(file, target, contract);
  if (above === undefined) return { edge };
  const what = file.startsWith("src/internal/")
    ? "src/internal/ imports only itself"
    : "the contract imports only itself and src/internal/";
  const message = `${file} imports ${target} ("${specifier}"${typeOnly ? ", type-only" : ""}), above the contract: ${what} and the contract (${[...contract].join(", ")}); move what it needs down into the contract or src/internal/`;
  return { edge, violation: { file, line, rule: above, message, baseline: { rule: above, file, imports: target } } };
}

/**
 * Checks the import directions and the sizes of every src/**\/*.ts under `root`.
 * @param {{ root?: string, entries?: PublicEntry[], contract?: readonly string[],
 *   baseline?: boolean }} [options]
 *   `entries`: the public entries (default: from package.json and tsup.config.ts); `contract`: the
 *   files src/internal/ may import (default {@link CONTRACT}); `baseline: false` reports every
 *   violation, scripts/structure-baseline.json ignored
 * @returns {Promise<{ violations: Violation[], files: number, references: number, functions: number,
 *   suppressed: number, shrunk: BaselineEntry[] | undefined }>} `violations`: those the baseline
 *   does not cover, and its stale entries; `suppressed`: the violations it covers; `shrunk`: see
 *   {@link applyBaseline}
 */
export async function checkImports({ root = repositoryRoot, entries, contract = CONTRACT, baseline = true } = {}) {
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const allowed = {
    self: manifest.name,
    declared: new Set([...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})]),
    packages: new Set(CORE_PACKAGES),
    builtins: new Set(CORE_NODE_MODULES),
  };
  const floor = new Set(contract);
  const publicFiles = entries ?? (await publicEntries(root));

  /** @type {Violation[]} */
  const violations = [];
  const files = sourceFiles(root, "src");
  const known = new Set(files);
  /** @type {ImportEdge[]} */
  const edges = [];
  // The program parses every file the entries reach: the scan below reads those syntax trees
  // rather than parsing each file a second time.
  const program = exportsProgram(root, publicFiles);
  // The checker binds every file of the program, which gives the syntax trees the parent pointers
  // the size rules need to name a function.
  program.getTypeChecker();
  let references = 0;
  let functions = 0;
  for (const file of files) {
    const sourceFile =
      program.getSourceFile(join(root, file)) ??
      ts.createSourceFile(file, readFileSync(join(root, file), "utf8"), ts.ScriptTarget.Latest, true);
    const sizes = sizeViolations(file, sourceFile);
    violations.push(...sizes.violations);
    functions += sizes.functions;
    for (const reference of moduleReferences(sourceFile)) {
      references++;
      const { specifier, line, how } = reference;
      if (specifier === undefined) {
        const message = `${how} with a computed specifier cannot be checked: use a string literal`;
        violations.push({ file, line, rule: "computed-specifier", message });
      } else if (specifier.startsWith(".") || specifier.startsWith("/")) {
        const { violation, edge } = relativeReferenceViolation(root, file, { ...reference, specifier }, known, floor);
        if (violation !== undefined) violations.push(violation);
        if (edge !== undefined) edges.push(edge);
      } else {
        const found = bareReferenceViolation(specifier, layerOf(file), allowed);
        if (found !== undefined) violations.push({ file, line, ...found });
      }
    }
  }
  violations.push(...internalExports(root, publicFiles, program), ...importCircles(edges));
  const baselined = applyBaseline(violations, baseline ? readBaseline(root) : { entries: [], lines: [] });
  baselined.violations.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
  return {
    violations: baselined.violations,
    files: files.length,
    references,
    functions,
    suppressed: baselined.suppressed,
    shrunk: baselined.shrunk,
  };
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const result = await checkImports({ baseline: !process.argv.includes("--no-baseline") });
  const { files, references, functions, suppressed } = result;
  let violations = result.violations;
  if (process.argv.includes("--shrink-baseline") && result.shrunk !== undefined) {
    writeBaseline(repositoryRoot, result.shrunk);
    process.stdout.write(`check-imports: ${BASELINE_FILE} tightened to what it still covers\n`);
    violations = violations.filter((violation) => violation.rule !== "stale-baseline");
  }
  if (violations.length > 0) {
    for (const { file, line, rule, message } of violations)
      process.stderr.write(`${file}:${line}: [${rule}] ${message}\n`);
    process.stderr.write(
      `check-imports: ${violations.length} violation${violations.length === 1 ? "" : "s"} of the import directions and sizes of docs/architecture.md\n`,
    );
    process.exit(1);
  }
  process.stdout.write(
    `check-imports: ${references} module references, ${functions} functions and ${files} files follow docs/architecture.md${suppressed > 0 ? ` (${suppressed} known violation${suppressed === 1 ? "" : "s"} in ${BASELINE_FILE})` : ""}\n`,
  );
}
