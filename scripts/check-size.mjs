// Sizes in src/ (docs/architecture.md): no function over MAX_FUNCTION_LINES lines, no file over
// MAX_FILE_LINES. Lines are counted as the file has them, blank lines and comments included: a file
// by its line breaks (a last line without one counts too), a function — a function declaration, a
// method, a constructor, an accessor, an arrow function or a function expression, with a body — from
// the line where it starts (its modifiers included, its leading comment not) to the line where it
// ends; a function inside another counts for both. scripts/check-imports.mjs applies these rules to
// the syntax trees it has already parsed (one parse of src/ per `npm test`), with the baseline of
// scripts/structure-baseline.json; test/scripts/check-size.test.ts runs them on fixture texts.
import ts from "typescript";

/** The most lines a function of src/ may span. */
export const MAX_FUNCTION_LINES = 80;

/** The most lines a file of src/ may have. */
export const MAX_FILE_LINES = 500;

/** @typedef {import("./structure-baseline.mjs").Violation} Violation */
/** @typedef {{ name: string, start: number, end: number, lines: number }} FunctionSpan */

/** The number of lines of a text: its line breaks, plus one for a last line without one. */
export function lineCount(text) {
  if (text === "") return 0;
  const breaks = text.match(/\r\n|\r|\n/g)?.length ?? 0;
  return /[\r\n]$/.test(text) ? breaks : breaks + 1;
}

const isFunction = (node) =>
  (ts.isFunctionDeclaration(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node) ||
    ts.isArrowFunction(node) ||
    ts.isFunctionExpression(node)) &&
  node.body !== undefined;

/**
 * What an anonymous function, class or object literal is known by: the name it is assigned to, or
 * where it is passed.
 */
function placeName(node) {
  let place = node.parent;
  while (ts.isParenthesizedExpression(place) || ts.isAsExpression(place) || ts.isSatisfiesExpression(place))
    place = place.parent;
  if (
    (ts.isVariableDeclaration(place) || ts.isPropertyAssignment(place) || ts.isPropertyDeclaration(place)) &&
    place.name
  )
    return propertyName(place.name);
  if (ts.isBinaryExpression(place) && place.operatorToken.kind === ts.SyntaxKind.EqualsToken)
    return place.left.getText(place.getSourceFile());
  if (ts.isCallExpression(place) || ts.isNewExpression(place)) {
    const callee = place.expression.getText(place.getSourceFile()).replace(/\s+/g, " ");
    return `(argument of ${ts.isNewExpression(place) ? "new " : ""}${callee})`;
  }
  if (ts.isExportAssignment(place)) return "default";
  return "(anonymous)";
}

const propertyName = (name) =>
  ts.isComputedPropertyName(name)
    ? `[${name.expression.getText(name.getSourceFile())}]`
    : name.getText(name.getSourceFile());

/** A function's or a class's own name, or its place's. */
function ownName(node) {
  if (ts.isConstructorDeclaration(node)) return "constructor";
  const prefix = ts.isGetAccessorDeclaration(node) ? "get " : ts.isSetAccessorDeclaration(node) ? "set " : "";
  if (node.name !== undefined) return prefix + propertyName(node.name);
  return placeName(node);
}

/**
 * Every function of a source file (parsed with parent pointers) with its span, named by the classes,
 * functions and object literals around it (`ToolRegistry.execute`, `runToolLoop.loop`, `run.(argument
 * of new Promise)`, `(argument of defineTool).execute`); a name that occurs twice in the file gets
 * ` #2`, ` #3` … in source order.
 * @param {ts.SourceFile} sourceFile
 * @returns {FunctionSpan[]}
 */
export function functionSpans(sourceFile) {
  const spans = [];
  const seen = new Map();
  const lineOf = (position) => sourceFile.getLineAndCharacterOfPosition(position).line + 1;
  const visit = (node, scope) => {
    let inner = scope;
    if (ts.isObjectLiteralExpression(node)) inner = [...scope, placeName(node)];
    else if (isFunction(node) || ts.isClassLike(node)) {
      inner = [...scope, ownName(node)];
      if (isFunction(node)) {
        const base = inner.join(".");
        const count = (seen.get(base) ?? 0) + 1;
        seen.set(base, count);
        const start = lineOf(node.getStart(sourceFile));
        const end = lineOf(node.getEnd());
        spans.push({ name: count === 1 ? base : `${base} #${count}`, start, end, lines: end - start + 1 });
      }
    }
    ts.forEachChild(node, (child) => visit(child, inner));
  };
  visit(sourceFile, []);
  return spans;
}

/**
 * The size violations of one file.
 * @param {string} file its path relative to the repository root
 * @param {ts.SourceFile} sourceFile its syntax tree, with parent pointers (bound by a type checker,
 *   or parsed with `setParentNodes`)
 * @returns {{ violations: Violation[], functions: number }}
 */
export function sizeViolations(file, sourceFile) {
  const violations = [];
  const lines = lineCount(sourceFile.text);
  if (lines > MAX_FILE_LINES) {
    violations.push({
      file,
      line: 1,
      rule: "file-too-long",
      message: `${file} has ${lines} lines; no file in src/ has more than ${MAX_FILE_LINES}: split it by concern`,
      baseline: { rule: "file-too-long", file, lines },
    });
  }
  const spans = functionSpans(sourceFile);
  for (const span of spans) {
    if (span.lines <= MAX_FUNCTION_LINES) continue;
    violations.push({
      file,
      line: span.start,
      rule: "function-too-long",
      message: `${span.name} spans ${span.lines} lines (${span.start}–${span.end}); no function in src/ spans more than ${MAX_FUNCTION_LINES}: give its steps functions of their own`,
      baseline: { rule: "function-too-long", file, function: span.name, lines: span.lines },
    });
  }
  return { violations, functions: spans.length };
}
