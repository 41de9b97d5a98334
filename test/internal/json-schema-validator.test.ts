import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import * as z from "zod";
import { defineTool } from "../../src/define-tool.js";
import { newToolResult, type Tool, ToolRegistry } from "../../src/index.js";
import { compileJsonSchemaValidator } from "../../src/internal/json-schema-validator.js";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** A validator for `{ s: <string with this pattern> }`. */
function patternValidator(pattern: string) {
  return compileJsonSchemaValidator({ type: "object", properties: { s: { type: "string", pattern } } });
}

function accepts(pattern: string, text: string): boolean {
  return patternValidator(pattern)({ s: text }).success;
}

function errorOf(result: ReturnType<ReturnType<typeof compileJsonSchemaValidator>>): string {
  if (result.success) throw new Error("expected the arguments to be refused");
  return String(result.error);
}

function tool(name: string, parameters: Record<string, unknown>): Tool & { execute: ReturnType<typeof vi.fn> } {
  return {
    name,
    description: `the ${name} tool`,
    parameters,
    execute: vi.fn(() => newToolResult("ran")),
  } as Tool & { execute: ReturnType<typeof vi.fn> };
}

// With V8's backtracking engine, each of these takes 10+ seconds (exponential in the length);
// 31 characters keep a regression finite, so that it fails instead of hanging the run.
const EVIL = "^(a+)+$";
const EVIL_INPUT = `${"a".repeat(30)}!`;
const MARKER = /… \[\d+ more characters cut\]/;

describe("schema patterns run on a linear-time engine (D01)", () => {
  it("matches ^(a+)+$ against 30+ characters at once, never on V8's RegExp", () => {
    const validate = patternValidator(EVIL);
    const test = vi.spyOn(RegExp.prototype, "test");
    const exec = vi.spyOn(RegExp.prototype, "exec");
    const started = performance.now();
    const results = [validate({ s: EVIL_INPUT }), validate({ s: "a".repeat(100_000) }), validate({ s: "aaab" })];
    const elapsed = performance.now() - started;
    expect(results.map((result) => result.success)).toEqual([false, true, false]);
    // A safety net (V8's backtracking on 30+ characters takes hours), generous for a busy machine.
    expect(elapsed).toBeLessThan(10_000);
    // Structurally: no native RegExp ever saw the model's text.
    const sawInput = [...test.mock.calls, ...exec.mock.calls].some(([text]) => String(text).startsWith("aaa"));
    expect(sawInput).toBe(false);
  });

  it("answers at once through ToolRegistry.register and execute", async () => {
    const registry = new ToolRegistry();
    const evil = tool("evil", { type: "object", properties: { s: { type: "string", pattern: EVIL } } });
    registry.register(evil);
    const started = performance.now();
    const result = await registry.execute("evil", { s: EVIL_INPUT });
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(result.isError).toBe(true);
    expect(result.forLLM).toBe('invalid arguments for tool "evil": s: must match pattern "^(a+)+$"');
    expect(evil.execute).not.toHaveBeenCalled();
    expect((await registry.execute("evil", { s: "aaaa" })).forLLM).toBe("ran");
  });

  it.each([
    ["patternProperties keys", { patternProperties: { [EVIL]: { type: "number" } } }],
    [
      "patternProperties with additionalProperties: false",
      {
        patternProperties: { [EVIL]: { type: "number" } },
        additionalProperties: false,
      },
    ],
    ["propertyNames patterns", { propertyNames: { pattern: EVIL } }],
  ])("runs %s on the same engine: an evil key is answered at once", (_case, keywords) => {
    const validate = compileJsonSchemaValidator({ type: "object", ...keywords });
    const started = performance.now();
    const evilKey = validate({ [EVIL_INPUT]: 1 });
    const longKey = validate({ ["a".repeat(50_000)]: 1 });
    expect(performance.now() - started).toBeLessThan(10_000);
    // The patterns really ran: a long matching key is accepted, the evil one is not matched.
    expect(longKey.success).toBe(true);
    if ("propertyNames" in keywords || "additionalProperties" in keywords) expect(evilKey.success).toBe(false);
    else expect(evilKey.success).toBe(true);
  });

  it("checks the values of properties whose key matches a patternProperties pattern", () => {
    const validate = compileJsonSchemaValidator({
      type: "object",
      patternProperties: { "^x_\\d+$": { type: "number" } },
    });
    expect(validate({ x_1: 1, y: "free" }).success).toBe(true);
    expect(errorOf(validate({ x_1: "one" }))).toBe("x_1: must be number");
  });

  it("keeps each pattern's own meaning when one schema has several (Ajv dedupes them by their text)", () => {
    const validate = compileJsonSchemaValidator({
      type: "object",
      properties: { a: { type: "string", pattern: "^a+$" }, b: { type: "string", pattern: "^b+$" } },
      patternProperties: { "^x": { type: "string", pattern: "^a+$" } },
    });
    expect(validate({ a: "aa", b: "bb", x1: "a" }).success).toBe(true);
    expect(errorOf(validate({ a: "bb", b: "aa", x1: "b" }))).toBe(
      'a: must match pattern "^a+$"; b: must match pattern "^b+$"; x1: must match pattern "^a+$"',
    );
  });

  it.each([
    ["a backreference", "^(a)\\1$"],
    ["a named backreference", "^(?<q>['\"]).*\\k<q>$"],
    ["a lookahead", "^(?=.*\\d).+$"],
    ["a negative lookahead", "^(?!\\.)[a-z.]+$"],
    ["a lookbehind", "(?<=\\$)\\d+"],
    ["a negative lookbehind", "(?<!-)\\d+"],
  ])("refuses %s at registration with a TypeError naming the pattern", (_case, pattern) => {
    const registry = new ToolRegistry();
    const bad = tool("bad", { type: "object", properties: { s: { type: "string", pattern } } });
    expect(() => registry.register(bad)).toThrow(TypeError);
    expect(() => registry.register(bad)).toThrow(JSON.stringify(pattern));
    expect(() => registry.register(bad)).toThrow(/linear-time engine \(RE2, which has no backreferences/);
    expect(registry.has("bad")).toBe(false);
  });

  it("says exactly why a pattern is refused", () => {
    const registry = new ToolRegistry();
    const message = (pattern: string, where: "pattern" | "key" = "pattern") => {
      const parameters =
        where === "pattern"
          ? { type: "object", properties: { s: { type: "string", pattern } } }
          : { type: "object", patternProperties: { [pattern]: {} }, additionalProperties: false };
      try {
        registry.register(tool("t", parameters));
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error("expected register() to throw");
    };
    expect(message("^(a)\\1$")).toMatchInlineSnapshot(
      `"tool "t": parameters is not a valid JSON Schema: pattern "^(a)\\\\1$" cannot run on toolloop's linear-time engine (RE2, which has no backreferences, lookahead or lookbehind): it has a backreference (\\1)"`,
    );
    expect(message("(?<=a)b", "key")).toMatchInlineSnapshot(
      `"tool "t": parameters is not a valid JSON Schema: pattern "(?<=a)b" cannot run on toolloop's linear-time engine (RE2, which has no backreferences, lookahead or lookbehind): it has a lookbehind ((?<=…)"`,
    );
    // Limits of RE2 itself, and JS syntax errors, are refused as clearly.
    expect(message("^a{1001}$")).toMatchInlineSnapshot(
      `"tool "t": parameters is not a valid JSON Schema: pattern "^a{1001}$" cannot run on toolloop's linear-time engine (RE2, which has no backreferences, lookahead or lookbehind): invalid repeat count: \`{1001}\`"`,
    );
    expect(message("^\\p{Letter}+$")).toContain("RE2 knows short category names such as \\p{L}");
    expect(message("^(a$")).toMatchInlineSnapshot(
      `"tool "t": parameters is not a valid JSON Schema: pattern "^(a$" is not a valid regular expression: Invalid regular expression: /^(a$/u: Unterminated group"`,
    );
    // RE2-only syntax is not a JSON Schema (ECMA-262) pattern: refused as before.
    expect(message("^\\Qa.b\\E$")).toContain("is not a valid regular expression");
    // A long pattern is quoted cut short.
    const long = message(`^(${"a|".repeat(500)}b)\\1$`);
    expect(long.length).toBeLessThan(600);
    expect(long).toMatch(/ … \[\d+ more characters cut\]" cannot run on .*: it has a backreference \(\\1\)$/);
  });

  it("keeps a schema that failed to compile out of Ajv, so its $id can be used again", () => {
    const schema = (pattern: string) => ({
      $id: "https://example.com/reused",
      type: "object",
      properties: { s: { type: "string", pattern } },
    });
    expect(() => compileJsonSchemaValidator(schema("(a)\\1"))).toThrow(/backreference/);
    expect(compileJsonSchemaValidator(schema("^a+$"))({ s: "aa" }).success).toBe(true);
  });

  // Each row also runs on V8's RegExp (`u` flag, as Ajv used it): the engines agree.
  it.each([
    ["^[a-z]+$", "abc", true],
    ["^[a-z]+$", "abC", false],
    ["abc", "xxabcxx", true],
    ["", "anything", true],
    ["^$", "", true],
    ["^\\d{3}-\\d{4}$", "555-1234", true],
    ["^\\d{3}-\\d{4}$", "555-12345", false],
    ["^\\d+$", "٣", false],
    ["^\\w+$", "snake_case1", true],
    ["^\\w+$", "é", false],
    ["\\bcat\\b", "a cat!", true],
    ["\\bcat\\b", "concat", false],
    ["^a{2,3}$", "aaaa", false],
    ["^(?:ab|cd)+$", "abcdab", true],
    ["^(?<word>\\w+)-(\\d)$", "hi-1", true],
    ["^[^a-c]*$", "xyz", true],
    ["^[^a-c]*$", "xaz", false],
    ["^\\$\\d+\\.\\d{2}$", "$12.50", true],
    ["^[\\-+]?\\d+$", "-5", true],
    ["^a\\/b$", "a/b", true],
    ["^\\x41\\0$", "A\0", true],
    ["^\\cJ$", "\n", true],
    ["^[\\b]$", "\b", true],
    ["^\\u00e9t\\u00e9$", "été", true],
    ["^caf\\u{e9}$", "café", true],
    ["^\\uD83D\\uDE00$", "😀", true],
    ["^[\\u0041-\\u005A]+$", "ABC", true],
    ["^[\\u0041-\\u005A]+$", "abc", false],
    ["^[à-ÿ]+$", "éèü", true],
    ["^[😀-😂]$", "😁", true],
    ["^.$", "😀", true],
    ["^.$", "\n", false],
    ["^.$", "\r", false],
    ["^.$", "\u2028", false],
    ["^.*$", "a\nb", false],
    ["^a$", "a\n", false],
    ["^a\\nb$", "a\nb", true],
    ["^\\s+$", "\u00a0\t\ufeff\u3000", true],
    ["^\\S+$", "a\u00a0b", false],
    ["^[^\\s]+$", "ab\u2003", false],
    ["^[\\S\\s]+$", "any\nthing", true],
    ["^[\\s\\d]+$", " 1\u00a02", true],
    ["^[[:digit:]+$", "::tig", true],
    ["^[[:digit:]+$", "1", false],
    ["^[^]$", "\n", true],
    ["^a[]?b$", "ab", true],
    ["^[]$", "", false],
    ["^\\p{L}+$", "Ωmega", true],
    ["^\\p{L}+$", "abc1", false],
    ["^\\p{Lu}", "Hello", true],
    ["^\\P{Lu}", "Hello", false],
    ["^\\p{Script=Greek}+$", "αβγ", true],
    ["^\\p{sc=Greek}+$", "abc", false],
    ["^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$", "a@b.co", true],
    ["^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$", "a @b.co", false],
    ["^\\d{4}-\\d{2}-\\d{2}$", "2024-02-29", true],
    ["^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", "123e4567-e89b-12d3-a456-426614174000", true],
    ["^(https?|ftp)://[^\\s/$.?#].[^\\s]*$", "https://example.com/a?b=c", true],
    ["^a|b$", "xb", true],
    ["^[A-Z][a-z]*?$", "Hello", true],
  ])("pattern %j on %j → %s, as with V8's RegExp", (pattern, text, expected) => {
    expect(new RegExp(pattern, "u").test(text)).toBe(expected);
    expect(accepts(pattern, text)).toBe(expected);
  });

  it("matches \\s, \\S, [\\s], [^\\s], [\\S] and . exactly as V8 does, on every BMP code point", () => {
    const patterns = ["^\\s$", "^\\S$", "^[\\s]$", "^[^\\s]$", "^[\\S]$", "^[^\\S]$", "^.$"];
    const mismatches: string[] = [];
    for (const pattern of patterns) {
      const validate = patternValidator(pattern);
      const native = new RegExp(pattern, "u");
      for (let code = 0; code <= 0x10ffff; code += code < 0x10000 ? 1 : 0x101) {
        const text = String.fromCodePoint(code);
        if (validate({ s: text }).success !== native.test(text)) mismatches.push(`${pattern} U+${code.toString(16)}`);
      }
    }
    expect(mismatches).toEqual([]);
  });

  it("agrees with V8's RegExp on arbitrary model text (property-based)", () => {
    const patterns = [
      "^[a-z]+\\d*$",
      "^\\s*\\S+(?:\\s+\\S+)*\\s*$",
      "^.+$",
      "a.b",
      "^(ab|a)*b?$",
      "^[^\\s@]+@[^\\s@]+$",
      "\\bé\\w*",
      "^\\p{L}[\\p{L}\\d_-]*$",
    ];
    const alphabet = fc.constantFrom(
      "a",
      "b",
      "z",
      "é",
      "1",
      "_",
      "@",
      " ",
      "\n",
      "\r",
      "\u00a0",
      "\u2028",
      "😀",
      "\ud800",
    );
    fc.assert(
      fc.property(fc.constantFrom(...patterns), fc.array(alphabet, { maxLength: 12 }), (pattern, chars) => {
        const text = chars.join("");
        expect(accepts(pattern, text)).toBe(new RegExp(pattern, "u").test(text));
      }),
      { numRuns: 500 },
    );
  });

  it("accepts RE2's inline flags, such as case-insensitive (?i), as an extension", () => {
    expect(accepts("(?i)^abc$", "AbC")).toBe(true);
    expect(accepts("^(?i:ab)c$", "ABc")).toBe(true);
    expect(accepts("^(?i:ab)c$", "ABC")).toBe(false);
    expect(accepts("(?s)^a.b$", "a\nb")).toBe(true);
    expect(accepts("(?m)^b$", "a\nb")).toBe(true);
  });

  it("does not load Ajv or re2js on import, only on the first compilation", async () => {
    const script = `
      import { createRequire } from "node:module";
      const { ToolRegistry } = await import("./src/index.ts");
      const cache = () => Object.keys(createRequire(import.meta.url).cache);
      const loaded = (name) => cache().some((path) => path.includes("/node_modules/" + name + "/"));
      const before = { ajv: loaded("ajv"), re2js: loaded("re2js") };
      new ToolRegistry().register({ name: "t", description: "t", execute: () => "ok",
        parameters: { type: "object", properties: { s: { type: "string", pattern: "^a+$" } } } });
      process.stdout.write(JSON.stringify({ before, after: { ajv: loaded("ajv"), re2js: loaded("re2js") } }));`;
    const output = await new Promise<string>((resolve, reject) => {
      execFile(
        process.execPath,
        ["--import", "tsx", "--input-type=module", "--eval", script],
        { cwd: root, timeout: 60_000 },
        (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)),
      );
    });
    expect(JSON.parse(output)).toEqual({ before: { ajv: false, re2js: false }, after: { ajv: true, re2js: true } });
  });
});

describe("patterns: bounded programs, bounded matching", () => {
  it("stops matching past 5,000,000 steps per validation (program × characters) and says why", () => {
    // About 2,000 instructions: 10,000 characters took the old validator 0.3–0.7 s to refuse.
    const validate = patternValidator("[a-e]{1,1000}$");
    const text = `${"ab".repeat(5_000)}!`;
    expect(errorOf(validate({ s: text }))).toBe(
      "(root): the strings are too long to check against the tool's patterns (more than 5000000 steps of matching): send shorter strings",
    );
    // Shorter strings are checked as usual, the budget renewed on each call.
    expect(validate({ s: "abc" }).success).toBe(true);
    expect(errorOf(validate({ s: "abc!" }))).toBe('s: must match pattern "[a-e]{1,1000}$"');
    // A simple pattern checks long text: 100,000 characters of ^[a-z]+$ take 900,000 steps.
    expect(accepts("^[a-z]+$", "a".repeat(100_000))).toBe(true);
  });

  it("counts the matching of every key against patternProperties too", () => {
    const validate = compileJsonSchemaValidator({
      type: "object",
      patternProperties: { "^[a-e]{1,1000}$": { type: "string" } },
    });
    // 10 keys of 101 characters: about 2,000,000 steps.
    const args = Object.fromEntries(Array.from({ length: 10 }, (_, index) => [`${"ab".repeat(50)}${index}`, "x"]));
    expect(validate(args).success).toBe(true);
    const long = Object.fromEntries(Array.from({ length: 30 }, (_, index) => [`${"ab".repeat(1_000)}${index}`, "x"]));
    expect(errorOf(validate(long))).toMatch(/^\(root\): the strings are too long to check against the tool's patterns/);
  });
});

describe("required and enum are checked in loops: same answers", () => {
  it("reports missing required properties one by one, as before", () => {
    const required = Array.from({ length: 20 }, (_, index) => `r${index}`);
    const validate = compileJsonSchemaValidator({ type: "object", required });
    expect(errorOf(validate({ r3: 1 }))).toBe(
      "r0: required property is missing; r1: required property is missing; r2: required property is missing; r4: required property is missing; r5: required property is missing; r6: required property is missing; r7: required property is missing; r8: required property is missing; … and 11 more",
    );
    // Own properties only, in the loop too.
    expect(validate(Object.fromEntries(required.map((name) => [name, 0]))).success).toBe(true);
    expect(
      errorOf(
        compileJsonSchemaValidator({ type: "object", required: [...required, "toString"] })(
          Object.fromEntries(required.map((name) => [name, 0])),
        ),
      ),
    ).toBe("toString: required property is missing");
  });

  it("accepts exactly the values of a 30-value enum, objects compared by value", () => {
    const values = [...Array.from({ length: 29 }, (_, index) => `v${index}`), { a: [1, 2] }];
    const validate = compileJsonSchemaValidator({ type: "object", properties: { e: { enum: values } } });
    expect(validate({ e: "v28" }).success).toBe(true);
    expect(validate({ e: { a: [1, 2] } }).success).toBe(true);
    expect(errorOf(validate({ e: "v29" }))).toMatch(/^e: must be one of "v0", "v1", .*, … and 20 more$/);
  });
});

describe("uniqueItems runs in linear time", () => {
  const validate = compileJsonSchemaValidator({
    type: "object",
    properties: { xs: { type: "array", uniqueItems: true, maxItems: 100 } },
  });

  it("20,000 distinct objects from the model are checked at once (Ajv compares them pairwise: 8 s)", () => {
    const xs = Array.from({ length: 20_000 }, (_, index) => ({ a: index }));
    const started = performance.now();
    const result = validate({ xs });
    // Ajv's pairwise check takes 8 s on an idle machine (longer on a busy one): 4 s tells them apart.
    expect(performance.now() - started).toBeLessThan(4_000);
    expect(result).toMatchObject({ success: false });
    expect(result.success ? "" : result.error).toMatchInlineSnapshot(`"xs: must NOT have more than 100 items"`);
  });

  it.each([
    [
      "equal objects whose keys come in another order",
      [
        { a: 1, b: [2] },
        { b: [2], a: 1 },
      ],
      "items ## 0 and 1",
    ],
    ["equal arrays", [[1, { x: null }], 2, [1, { x: null }]], "items ## 0 and 2"],
    ["equal scalars", ["a", "b", "a"], "items ## 0 and 2"],
  ])("still finds duplicates: %s", (_case, xs, where) => {
    const result = validate({ xs });
    expect(result.success ? "" : result.error).toBe(`xs: must NOT have duplicate items (${where} are identical)`);
  });

  it.each([
    ["values of different types", [1, "1", [1], { "1": 1 }, null, true]],
    ["objects that differ in one nested value", [{ a: { b: 1 } }, { a: { b: 2 } }]],
    ["uniqueItems: false", undefined],
  ])("accepts %s", (_case, xs) => {
    const schema = xs === undefined ? { type: "array", uniqueItems: false } : { type: "array", uniqueItems: true };
    const check = compileJsonSchemaValidator({ type: "object", properties: { xs: schema } });
    expect(check({ xs: xs ?? [1, 1] })).toMatchObject({ success: true });
  });
});

describe("validation messages are bounded (D03)", () => {
  const MAX = 1_000;

  it("lists only the first 10 values of a 1,000-value enum", () => {
    const values = Array.from({ length: 1_000 }, (_, index) => `value-${index}`);
    const validate = compileJsonSchemaValidator({ type: "object", properties: { mode: { enum: values } } });
    const message = errorOf(validate({ mode: "nope" }));
    expect(message.length).toBeLessThanOrEqual(MAX);
    expect(message).toContain("… and 990 more");
    expect(message).toMatchInlineSnapshot(
      `"mode: must be one of "value-0", "value-1", "value-2", "value-3", "value-4", "value-5", "value-6", "value-7", "value-8", "value-9", … and 990 more"`,
    );
  });

  it("cuts each long allowed value", () => {
    const values = [{ nested: "x".repeat(5_000) }, "y".repeat(5_000), 42];
    const validate = compileJsonSchemaValidator({ type: "object", properties: { mode: { enum: values } } });
    const message = errorOf(validate({ mode: "nope" }));
    expect(message).toMatchInlineSnapshot(
      `"mode: must be one of {"nested":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxx…, "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy…", 42"`,
    );
  });

  it("cuts a 10 kB unknown property name the model sent", () => {
    const validate = compileJsonSchemaValidator({
      type: "object",
      properties: { path: { type: "string" } },
      additionalProperties: false,
    });
    const message = errorOf(validate({ path: "a", ["k".repeat(10_000)]: 1 }));
    expect(message.length).toBeLessThanOrEqual(MAX);
    expect(message).toBe(`${"k".repeat(80)}…: unknown property is not allowed`);
  });

  it("cuts model-sent names in paths and property names", () => {
    const validate = compileJsonSchemaValidator({
      type: "object",
      additionalProperties: { type: "object", required: ["id"] },
      propertyNames: { maxLength: 100 },
    });
    const key = "n".repeat(10_000);
    const message = errorOf(validate({ [key]: {} }));
    expect(message.length).toBeLessThanOrEqual(MAX);
    expect(message).not.toContain("n".repeat(81));
    expect(message).toBe(
      `(root): property name "${"n".repeat(80)}…": must NOT have more than 100 characters; ${"n".repeat(80)}….id: required property is missing`,
    );
  });

  it("reports 8 of 50 failing properties, then how many more", () => {
    const properties = Object.fromEntries(Array.from({ length: 50 }, (_, index) => [`p${index}`, { type: "string" }]));
    const validate = compileJsonSchemaValidator({ type: "object", properties });
    const args = Object.fromEntries(Array.from({ length: 50 }, (_, index) => [`p${index}`, index]));
    const message = errorOf(validate(args));
    expect(message.length).toBeLessThanOrEqual(MAX);
    expect(message).toMatch(/; … and 42 more$/);
    expect(message).toMatchInlineSnapshot(
      `"p0: must be string; p1: must be string; p2: must be string; p3: must be string; p4: must be string; p5: must be string; p6: must be string; p7: must be string; … and 42 more"`,
    );
  });

  it("cuts a line of long issues to 1,000 characters, the marker near its end, still saying how many more", () => {
    const longEnum = Array.from({ length: 20 }, (_, index) => `${"v".repeat(39)}${index}`);
    const properties = Object.fromEntries(Array.from({ length: 50 }, (_, index) => [`p${index}`, { enum: longEnum }]));
    const validate = compileJsonSchemaValidator({ type: "object", properties });
    const args = Object.fromEntries(Array.from({ length: 50 }, (_, index) => [`p${index}`, "x"]));
    const message = errorOf(validate(args));
    expect(message.length).toBeLessThanOrEqual(MAX);
    expect(message).toMatch(/ … \[\d+ more characters cut\]; … and 42 more$/);
  });

  it("bounds zod's messages too: a huge enum through defineTool", () => {
    const values = Array.from({ length: 1_000 }, (_, index) => `value-${index}`) as [string, ...string[]];
    const defined = defineTool({
      name: "pick",
      description: "pick a value",
      parameters: z.object({ mode: z.enum(values), other: z.enum(values) }),
      execute: () => "ok",
    });
    const result = defined.parseArguments({ mode: "nope", other: "nope" });
    const message = errorOf(result);
    expect(message.length).toBeLessThanOrEqual(MAX);
    expect(message).toMatch(MARKER);
    expect(message.startsWith('mode: Invalid option: expected one of "value-0"|"value-1"|')).toBe(true);
  });
});

describe("only the arguments' own properties count", () => {
  // Arguments arrive as JSON: a `__proto__` key is an own property of the parsed object, and
  // `{}` has no `constructor`, whatever Object.prototype holds.
  const PROTOTYPE_NAMES = ["constructor", "toString", "valueOf", "hasOwnProperty", "__proto__"];
  const schemaOf = (json: string) => JSON.parse(json) as Record<string, unknown>;
  const sent = (name: string, value: unknown) => JSON.parse(`{${JSON.stringify(name)}:${JSON.stringify(value)}}`);

  it.each(PROTOTYPE_NAMES)("an optional property named %s: {} is accepted", (name) => {
    const validate = compileJsonSchemaValidator(
      schemaOf(`{"type":"object","properties":{"${name}":{"type":"string"}}}`),
    );
    expect(validate({})).toEqual({ success: true, data: {} });
    expect(validate(JSON.parse("{}"))).toMatchObject({ success: true });
  });

  it.each(PROTOTYPE_NAMES)("a required property named %s: {} is refused as missing", (name) => {
    const validate = compileJsonSchemaValidator(schemaOf(`{"type":"object","required":["${name}"]}`));
    expect(errorOf(validate({}))).toBe(`${name}: required property is missing`);
    expect(validate(sent(name, 1)).success).toBe(true);
  });

  it.each(PROTOTYPE_NAMES)("a declared property named %s: sent, it is checked against its schema", (name) => {
    const validate = compileJsonSchemaValidator(
      schemaOf(`{"type":"object","properties":{"${name}":{"type":"string"}},"additionalProperties":false}`),
    );
    expect(validate(sent(name, "text")).success).toBe(true);
    expect(errorOf(validate(sent(name, 5)))).toBe(`${name}: must be string`);
    expect(errorOf(validate(sent("other", 1)))).toBe("other: unknown property is not allowed");
  });

  it("with more than 8 declared properties (Ajv then looks names up in the schema) too", () => {
    const names = [...PROTOTYPE_NAMES, "a", "b", "c", "d", "e"];
    const properties = Object.fromEntries(names.map((name) => [name, { type: "string" }]));
    // Built through JSON, so that "__proto__" is a key of `properties`, not its prototype.
    const schema = schemaOf(JSON.stringify({ type: "object", properties, additionalProperties: false }));
    const validate = compileJsonSchemaValidator(schema);
    expect(validate({}).success).toBe(true);
    expect(validate(sent("__proto__", "x")).success).toBe(true);
    expect(errorOf(validate(sent("__proto__", 1)))).toBe("__proto__: must be string");
  });

  it("end to end: a registered tool runs with {} and refuses a missing required toString", async () => {
    const registry = new ToolRegistry();
    const optional = tool("optional", schemaOf('{"type":"object","properties":{"constructor":{"type":"string"}}}'));
    const required = tool("required", schemaOf('{"type":"object","required":["toString"]}'));
    registry.register(optional);
    registry.register(required);
    expect((await registry.execute("optional", {})).forLLM).toBe("ran");
    expect((await registry.execute("required", {})).forLLM).toBe(
      'invalid arguments for tool "required": toString: required property is missing',
    );
    expect((await registry.execute("required", { toString: "yes" })).forLLM).toBe("ran");
  });

  it("leaves the user's schema as it was (toolloop compiles a copy)", () => {
    const schema = schemaOf('{"type":"object","properties":{"__proto__":{"type":"string"}}}');
    const before = JSON.stringify(schema);
    compileJsonSchemaValidator(schema);
    expect(JSON.stringify(schema)).toBe(before);
    expect(Object.hasOwn(schema, "patternProperties")).toBe(false);
  });
});

describe("a draft-07 dependencies entry keyed __proto__ (which Ajv skips) is checked", () => {
  const schemaOf = (json: string) => JSON.parse(json) as Record<string, unknown>;
  const sent = (json: string) => JSON.parse(json) as Record<string, unknown>;

  it("as names: an own __proto__ requires them", () => {
    const validate = compileJsonSchemaValidator(
      schemaOf('{"type":"object","dependencies":{"__proto__":["b"],"a":["c"]}}'),
    );
    expect(errorOf(validate(sent('{"__proto__":1}')))).toMatch(/^b: required property is missing/);
    expect(validate(sent('{"__proto__":1,"b":2}')).success).toBe(true);
    expect(validate(sent("{}")).success).toBe(true);
    expect(validate(sent('{"b":2}')).success).toBe(true);
    // The other entries are still checked.
    expect(errorOf(validate(sent('{"a":1}')))).toBe("(root): must have property c when property a is present");
  });

  it("as a schema: an own __proto__ makes the value match it", () => {
    const validate = compileJsonSchemaValidator(
      schemaOf(
        '{"type":"object","dependencies":{"__proto__":{"properties":{"b":{"type":"string"}},"required":["b"]}}}',
      ),
    );
    expect(validate(sent('{"__proto__":1}')).success).toBe(false);
    expect(errorOf(validate(sent('{"__proto__":1,"b":2}')))).toMatch(/^b: must be string/);
    expect(validate(sent('{"__proto__":1,"b":"x"}')).success).toBe(true);
    expect(validate(sent('{"b":2}')).success).toBe(true);
  });

  it("beside an allOf of the schema's own, which still applies; the user's schema is left as it was", () => {
    const schema = schemaOf('{"type":"object","allOf":[{"required":["z"]}],"dependencies":{"__proto__":["b"]}}');
    const before = JSON.stringify(schema);
    const validate = compileJsonSchemaValidator(schema);
    expect(validate(sent('{"__proto__":1,"z":0}')).success).toBe(false);
    expect(validate(sent('{"__proto__":1}')).success).toBe(false);
    expect(validate(sent('{"__proto__":1,"b":1,"z":0}')).success).toBe(true);
    expect(JSON.stringify(schema)).toBe(before);
  });
});

describe("a schema's enum is checked against its meta-schema in linear time", () => {
  it("refuses duplicate enum values as Ajv does (draft-07's meta-schema asks for unique items)", () => {
    expect(() => compileJsonSchemaValidator({ type: "object", properties: { x: { enum: [1, 2, 1] } } })).toThrow(
      "schema is invalid: data/properties/x/enum must NOT have duplicate items (items ## 0 and 2 are identical)",
    );
  });

  // Ajv's own check compares the values pair by pair: this enum took 18 s to register.
  it("registers an enum of 60,000 distinct arrays", { timeout: 15_000 }, () => {
    const values = Array.from({ length: 60_000 }, (_, index) => [index]);
    const validate = compileJsonSchemaValidator({ type: "object", properties: { x: { enum: values } } });
    expect(validate({ x: [59_999] }).success).toBe(true);
    expect(validate({ x: [60_000] }).success).toBe(false);
  });
});
