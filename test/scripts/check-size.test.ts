import ts from "typescript";
import { describe, expect, it } from "vitest";

interface Violation {
  file: string;
  line: number;
  rule: string;
  message: string;
  baseline?: Record<string, unknown>;
}
interface FunctionSpan {
  name: string;
  start: number;
  end: number;
  lines: number;
}
interface CheckSizeModule {
  MAX_FUNCTION_LINES: number;
  MAX_FILE_LINES: number;
  lineCount(text: string): number;
  functionSpans(sourceFile: ts.SourceFile): FunctionSpan[];
  sizeViolations(file: string, sourceFile: ts.SourceFile): { violations: Violation[]; functions: number };
}

// A script, not a module of src/: loaded by URL (it has no type declarations).
const script = new URL("../../scripts/check-size.mjs", import.meta.url).href;
const { MAX_FILE_LINES, MAX_FUNCTION_LINES, functionSpans, lineCount, sizeViolations } = (await import(
  script
)) as CheckSizeModule;

const parse = (text: string) => ts.createSourceFile("src/example.ts", text, ts.ScriptTarget.Latest, true);

/** A function declaration of `lines` lines in all, its body comments. */
const functionOf = (name: string, lines: number) =>
  [`export function ${name}(): void {`, ...Array.from({ length: lines - 2 }, () => "  // a step"), "}"].join("\n");

describe("check-size", () => {
  it("allows functions of 80 lines and files of 500", () => {
    expect([MAX_FUNCTION_LINES, MAX_FILE_LINES]).toEqual([80, 500]);
  });

  it.each([
    ["", 0],
    ["one", 1],
    ["one\n", 1],
    ["one\ntwo", 2],
    ["one\r\ntwo\r\n", 2],
    ["\n\n\n", 3],
  ])("counts the lines of %j as %i", (text, lines) => {
    expect(lineCount(text)).toBe(lines);
  });

  it("spans a function from the line where it starts to the line where it ends, its leading comment not counted", () => {
    const text = [
      "// a file",
      "/**",
      " * Documented.",
      " */",
      "export async function run(",
      "  a: number,",
      "): Promise<void> {",
      "}",
    ].join("\n");
    expect(functionSpans(parse(text))).toEqual([{ name: "run", start: 5, end: 8, lines: 4 }]);
  });

  it("names every kind of function by its place, a name seen twice numbered", () => {
    const text = [
      "export function outer() {", // 1
      "  const inner = () => 1;",
      "  return new Promise((resolve) => resolve(inner()));",
      "}",
      "export class Registry {", // 5
      "  constructor() {}",
      "  get size() { return 1; }",
      "  set size(value: number) {}",
      "  execute() { return [1].map(function (n) { return n; }); }",
      "  handler = async () => {};", // 10
      '  ["computed"]() {}',
      "}",
      "const table = { parse: function () {}, render() {} };",
      "let later: () => void;",
      "later = () => {};", // 15
      "export default () => 0;",
      "const wrapped = ((() => 1) as () => number);",
      "const pair = [() => 1, () => 2];",
      "export function outer() {}", // an overload would have no body: this is a second declaration
    ].join("\n");
    expect(functionSpans(parse(text)).map((span) => `${span.start} ${span.name}`)).toEqual([
      "1 outer",
      "2 outer.inner",
      "3 outer.(argument of new Promise)",
      "6 Registry.constructor",
      "7 Registry.get size",
      "8 Registry.set size",
      "9 Registry.execute",
      "9 Registry.execute.(argument of [1].map)",
      "10 Registry.handler",
      '11 Registry.["computed"]',
      "13 table.parse",
      "13 table.render",
      "15 later",
      "16 default",
      "17 wrapped",
      "18 (anonymous)",
      "18 (anonymous) #2",
      "19 outer #2",
    ]);
  });

  it("does not count a signature without a body", () => {
    const text = [
      "export function f(a: string): void;",
      "export function f(a: unknown): void {}",
      "interface I { m(): void }",
    ].join("\n");
    expect(functionSpans(parse(text)).map((span) => span.name)).toEqual(["f"]);
  });

  it("reports a function over 80 lines at its first line, with a record for the baseline", () => {
    const text = [functionOf("fits", 80), functionOf("over", 81)].join("\n");
    const { violations, functions } = sizeViolations("src/example.ts", parse(text));
    expect(functions).toBe(2);
    expect(violations).toEqual([
      {
        file: "src/example.ts",
        line: 81,
        rule: "function-too-long",
        message:
          "over spans 81 lines (81–161); no function in src/ spans more than 80: give its steps functions of their own",
        baseline: { rule: "function-too-long", file: "src/example.ts", function: "over", lines: 81 },
      },
    ]);
  });

  it("counts a function inside a long function for both", () => {
    const text = ["export function outer(): void {", functionOf("inner", 81), "}"].join("\n");
    const { violations } = sizeViolations("src/example.ts", parse(text));
    expect(violations.map((violation) => violation.baseline)).toEqual([
      { rule: "function-too-long", file: "src/example.ts", function: "outer", lines: 83 },
      { rule: "function-too-long", file: "src/example.ts", function: "outer.inner", lines: 81 },
    ]);
  });

  it("reports a file over 500 lines, counted as the file has them", () => {
    const lines = (count: number) => `${Array.from({ length: count }, (_, index) => `// ${index}`).join("\n")}\n`;
    expect(sizeViolations("src/example.ts", parse(lines(500))).violations).toEqual([]);
    expect(sizeViolations("src/example.ts", parse(lines(501))).violations).toEqual([
      {
        file: "src/example.ts",
        line: 1,
        rule: "file-too-long",
        message: "src/example.ts has 501 lines; no file in src/ has more than 500: split it by concern",
        baseline: { rule: "file-too-long", file: "src/example.ts", lines: 501 },
      },
    ]);
  });
});
