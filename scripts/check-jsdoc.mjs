#!/usr/bin/env node
// Every public export has JSDoc (GUIDE §11). For each public entry (package.json "exports" mapped
// to src/ by tsup.config.ts), every exported symbol is followed through its re-exports to its
// declarations, and each declaration in the repository must carry a JSDoc comment with some text.
// For a class, an interface or an object type, so must every public member: properties, methods
// and accessors (inherited ones too, where they are declared in the repository; a get/set pair or an
// overload set needs one comment), recursing into object-literal types of members (option objects).
// A function's overload signatures each need one. Fails (exit 1) with `file:line: what` for each.
// `node scripts/check-jsdoc.mjs` checks this repository; `checkJsdoc({ root, entries })` is the same
// check as a function (test/scripts/check-jsdoc.test.ts runs it on a fixture tree).
import { relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { entryProgram, publicEntries } from "./check-imports.mjs";

const repositoryRoot = resolve(import.meta.dirname, "..");

/** @typedef {import("./check-imports.mjs").PublicEntry} PublicEntry */
/** @typedef {{ file: string, line: number, name: string, subpath: string }} Missing */

/** Whether `node` carries a `/** … *\/` comment with text (its own, or its statement's for a variable). */
export function hasJsdoc(node) {
  return ts.getJSDocCommentsAndTags(node).some((doc) => {
    if (!ts.isJSDoc(doc)) return false;
    if ((ts.getTextOfJSDocComment(doc.comment) ?? "").trim() !== "") return true;
    return (doc.tags ?? []).some((tag) => (ts.getTextOfJSDocComment(tag.comment) ?? "").trim() !== "");
  });
}

const isPrivate = (declaration) => {
  const flags = ts.getCombinedModifierFlags(declaration);
  if (flags & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) return true;
  return declaration.name !== undefined && ts.isPrivateIdentifier(declaration.name);
};

const MEMBER = new Set([
  ts.SyntaxKind.PropertySignature,
  ts.SyntaxKind.PropertyDeclaration,
  ts.SyntaxKind.MethodSignature,
  ts.SyntaxKind.MethodDeclaration,
  ts.SyntaxKind.GetAccessor,
  ts.SyntaxKind.SetAccessor,
]);

/**
 * Exported symbols and public members without JSDoc.
 * @param {{ root?: string, entries?: PublicEntry[] }} [options] `entries`: the public entries
 *   (default: from package.json and tsup.config.ts)
 * @returns {Promise<{ missing: Missing[], symbols: number, members: number }>}
 */
export async function checkJsdoc({ root = repositoryRoot, entries } = {}) {
  const publicFiles = entries ?? (await publicEntries(root));
  const program = entryProgram(root, publicFiles);
  const checker = program.getTypeChecker();
  const toPath = (fileName) => relative(root, fileName).split(sep).join("/");
  const ours = (node) => {
    const path = toPath(node.getSourceFile().fileName);
    return !path.startsWith("..") && !path.split("/").includes("node_modules");
  };
  const lineOf = (node) => {
    const sourceFile = node.getSourceFile();
    return sourceFile.getLineAndCharacterOfPosition(node.getStart(sourceFile)).line + 1;
  };

  /** @type {Missing[]} */
  const missing = [];
  const seenDeclarations = new Set();
  const seenTypes = new Set();
  let symbols = 0;
  let members = 0;
  const report = (node, name, subpath) =>
    missing.push({ file: toPath(node.getSourceFile().fileName), line: lineOf(node), name, subpath });

  // A member that overrides or implements a documented one (`chat` of a class implementing
  // LLMProvider) shows the base member's comment in editors: TypeScript inherits it.
  const inheritsDocumentation = (property, declarations) =>
    declarations.some(
      (declaration) => ts.isClassLike(declaration.parent) || ts.isInterfaceDeclaration(declaration.parent),
    ) && property.getDocumentationComment(checker).some((part) => part.text.trim() !== "");

  /** The public members of an object type (declared in the repository) and of its object-literal members. */
  const checkMembers = (type, owner, subpath) => {
    if (seenTypes.has(type)) return;
    seenTypes.add(type);
    if (type.isUnionOrIntersection()) {
      for (const part of type.types) checkMembers(part, owner, subpath);
      return;
    }
    if (!(type.flags & ts.TypeFlags.Object)) return;
    for (const property of checker.getPropertiesOfType(type)) {
      const declarations = (property.declarations ?? []).filter(
        (declaration) => MEMBER.has(declaration.kind) && ours(declaration) && !isPrivate(declaration),
      );
      if (declarations.length === 0) continue;
      if (declarations.some((declaration) => seenDeclarations.has(declaration))) continue;
      for (const declaration of declarations) seenDeclarations.add(declaration);
      members++;
      const name = `${owner}.${property.name}`;
      if (!declarations.some(hasJsdoc) && !inheritsDocumentation(property, declarations)) {
        report(declarations[0], name, subpath);
      }
      // Option objects written inline (`retry?: { attempts: number }`) have members of their own.
      for (const declaration of declarations) {
        const typeNode = declaration.type;
        if (typeNode !== undefined && containsTypeLiteral(typeNode)) {
          checkMembers(checker.getTypeFromTypeNode(typeNode), name, subpath);
        }
      }
    }
  };

  const checkSymbol = (exported, subpath) => {
    const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    const declarations = (target.declarations ?? []).filter(ours);
    if (declarations.length === 0) return; // declared by a dependency
    const fresh = declarations.filter((declaration) => !seenDeclarations.has(declaration));
    if (fresh.length === 0) return;
    for (const declaration of fresh) seenDeclarations.add(declaration);
    symbols++;
    const name = exported.name;
    // Overloads: each signature a caller sees needs its comment; the implementation signature is hidden.
    const functions = fresh.filter(ts.isFunctionDeclaration);
    const signatures = functions.length > 1 ? functions.filter((node) => node.body === undefined) : functions;
    for (const signature of signatures) if (!hasJsdoc(signature)) report(signature, name, subpath);
    const others = fresh.filter((declaration) => !ts.isFunctionDeclaration(declaration));
    // An interface merged with a namespace or a class with an interface: one comment is enough.
    if (others.length > 0 && !others.some(hasJsdoc)) report(others[0], name, subpath);
    for (const declaration of others) {
      if (ts.isClassDeclaration(declaration)) {
        checkMembers(checker.getDeclaredTypeOfSymbol(target), name, subpath); // instance side
        checkMembers(checker.getTypeOfSymbol(target), name, subpath); // static side
      } else if (ts.isInterfaceDeclaration(declaration) || ts.isTypeAliasDeclaration(declaration)) {
        checkMembers(checker.getDeclaredTypeOfSymbol(target), name, subpath);
      } else if (ts.isModuleDeclaration(declaration)) {
        for (const member of checker.getExportsOfModule(target)) checkSymbol(member, subpath);
      }
    }
  };

  for (const entry of publicFiles) {
    const sourceFile = program.getSourceFile(resolve(root, entry.file));
    if (sourceFile === undefined) throw new Error(`${entry.subpath}: no such file ${entry.file}`);
    const moduleSymbol = checker.getSymbolAtLocation(sourceFile);
    if (moduleSymbol === undefined) continue;
    for (const exported of checker.getExportsOfModule(moduleSymbol)) checkSymbol(exported, entry.subpath);
  }
  missing.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
  return { missing, symbols, members };
}

/** Whether a type node is, or is a union/intersection/parenthesis/array of, an object literal type. */
function containsTypeLiteral(node) {
  if (ts.isTypeLiteralNode(node)) return true;
  if (ts.isUnionTypeNode(node) || ts.isIntersectionTypeNode(node)) return node.types.some(containsTypeLiteral);
  if (ts.isParenthesizedTypeNode(node)) return containsTypeLiteral(node.type);
  if (ts.isArrayTypeNode(node)) return false; // element shapes are data, not options
  return false;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { missing, symbols, members } = await checkJsdoc();
  if (missing.length > 0) {
    for (const { file, line, name, subpath } of missing) {
      process.stderr.write(`${file}:${line}: ${name} (exported by ${subpath}) has no JSDoc\n`);
    }
    process.stderr.write(
      `check-jsdoc: ${missing.length} public symbol${missing.length === 1 ? "" : "s"} or member${missing.length === 1 ? "" : "s"} without JSDoc (GUIDE §11: one or two sentences of behaviour, @default where there is one)\n`,
    );
    process.exit(1);
  }
  process.stdout.write(`check-jsdoc: ${symbols} exported symbols and ${members} public members documented\n`);
}
