import { describe, expect, it, vi } from "vitest";
import { runToolLoop } from "../../src/index.js";
import {
  CallIds,
  MAX_ARGUMENT_DEPTH,
  normalizeToolCall,
  resumedToolCall,
} from "../../src/internal/normalize-tool-call.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing/index.js";

/** Normalises one call with fresh ids and `fallback` as the id for a call without one. */
function normalize(raw: unknown, fallback = "call_0") {
  return normalizeToolCall(raw, fallback, new CallIds());
}

describe("CallIds", () => {
  it("gives an unused id back, and a repeated one the next free suffix from _2", () => {
    const ids = new CallIds();
    expect(ids.unique("a")).toBe("a");
    expect(ids.unique("b")).toBe("b");
    expect(ids.unique("a")).toBe("a_2");
    expect(ids.unique("a")).toBe("a_3");
    expect(ids.unique("b")).toBe("b_2");
  });

  it("never gives an id already in the transcript (added, or given as a suffix)", () => {
    const ids = new CallIds();
    ids.add("a");
    ids.add("a_2");
    expect(ids.unique("a")).toBe("a_3");
    expect(ids.unique("a_3")).toBe("a_3_2");
    ids.add("a_4");
    expect(ids.unique("a")).toBe("a_5");
    expect(ids.unique("a_2")).toBe("a_2_2");
  });

  it("a repeated id costs O(1) amortised: 10,000 repeats make a bounded number of set lookups", () => {
    const ids = new CallIds();
    const n = 10_000;
    const has = vi.spyOn(Set.prototype, "has");
    const given: string[] = [];
    for (let index = 0; index < n; index++) given.push(ids.unique("dup"));
    const lookups = has.mock.calls.length;
    has.mockRestore();
    expect(given[0]).toBe("dup");
    expect(given[1]).toBe("dup_2");
    expect(given[n - 1]).toBe(`dup_${n}`);
    expect(new Set(given).size).toBe(n);
    expect(lookups).toBeGreaterThanOrEqual(n); // the spy sees the lookups
    // A linear search from _2 each time would take about n²/2 = 50,000,000.
    expect(lookups).toBeLessThan(3 * n);
  });
});

describe("normalizeToolCall", () => {
  it("keeps a well-formed call, with the arguments' JSON text", () => {
    expect(normalize({ id: "c1", name: "read", arguments: { path: "a.txt" } })).toEqual({
      call: {
        id: "c1",
        type: "function",
        name: "read",
        arguments: { path: "a.txt" },
        function: { name: "read", arguments: '{"path":"a.txt"}' },
      },
    });
  });

  it("reads name and arguments from an OpenAI-style function, keeping the text as sent", () => {
    const text = '{ "path" : "a.txt" }';
    const { call, argumentsError } = normalize({
      id: "c1",
      type: "function",
      function: { name: "read", arguments: text },
    });
    expect(argumentsError).toBeUndefined();
    expect(call.name).toBe("read");
    expect(call.arguments).toEqual({ path: "a.txt" });
    expect(call.function).toEqual({ name: "read", arguments: text });
  });

  it("prefers the top-level name and arguments object, keeping the function's text when both are given", () => {
    const { call } = normalize({
      id: "c1",
      name: "top",
      arguments: { a: 1 },
      function: { name: "nested", arguments: '{"a": 1}' },
    });
    expect(call.name).toBe("top");
    expect(call.function).toEqual({ name: "top", arguments: '{"a": 1}' });
    expect(call.arguments).toEqual({ a: 1 });
  });

  it("parses top-level arguments given as JSON text", () => {
    const { call, argumentsError } = normalize({ id: "c1", name: "t", arguments: '{"n":2}' });
    expect(argumentsError).toBeUndefined();
    expect(call.arguments).toEqual({ n: 2 });
    expect(call.function?.arguments).toBe('{"n":2}');
  });

  it.each([
    ["no arguments", {}],
    ["null arguments", { arguments: null }],
    ["empty text", { arguments: "" }],
    ["blank text", { arguments: "  \n" }],
    // Blank as String.prototype.trim sees it, beyond ASCII (a no-break space, a byte-order mark).
    ["text of Unicode blanks", { arguments: "\u00a0\ufeff\u2028" }],
    ["an empty function text", { function: { name: "t", arguments: "" } }],
  ])('%s means {} (recorded as "{}")', (_case, fields) => {
    const { call, argumentsError } = normalize({ id: "c1", name: "t", ...fields });
    expect(argumentsError).toBeUndefined();
    expect(call.arguments).toEqual({});
    expect(call.function?.arguments).toBe("{}");
  });

  it("JSON text with blanks around it is parsed and recorded as sent", () => {
    const text = '\n {"n": 3} \t';
    const { call, argumentsError } = normalize({ id: "c1", name: "t", arguments: text });
    expect(argumentsError).toBeUndefined();
    expect(call.arguments).toEqual({ n: 3 });
    expect(call.function?.arguments).toBe(text);
  });

  it("invalid JSON is an argumentsError telling the model how to fix it; the text is recorded as sent", () => {
    const { call, argumentsError } = normalize({ id: "c1", name: "read", arguments: '{"path": ' });
    expect(argumentsError).toMatch(
      /^invalid JSON in arguments for tool "read": .+\. Send the arguments as one JSON object\.$/,
    );
    expect(call.arguments).toEqual({});
    expect(call.function?.arguments).toBe('{"path": ');
  });

  it.each([
    ["[1,2]", "array"],
    ["42", "number"],
    ['"text"', "string"],
    ["null", "null"],
    ["true", "boolean"],
  ])("JSON text %s that is no object is an argumentsError naming its type", (text, type) => {
    const { call, argumentsError } = normalize({ id: "c1", name: "t", function: { name: "t", arguments: text } });
    expect(argumentsError).toBe(`arguments for tool "t" must be a JSON object, got ${type}`);
    expect(call.arguments).toEqual({});
  });

  it.each([
    [[1, 2], "array"],
    [7, "number"],
    [false, "boolean"],
    [new Date(0), "Date"],
  ])("top-level arguments %j that are no object are an argumentsError, never run as {}", (value, type) => {
    const { call, argumentsError } = normalize({ id: "c1", name: "t", arguments: value });
    expect(argumentsError).toBe(`arguments for tool "t" must be a JSON object, got ${type}`);
    expect(call.arguments).toEqual({});
  });

  it("arguments without a JSON form are refused and recorded as {}", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const args of [cyclic, { big: 1n }]) {
      const { call, argumentsError } = normalize({ id: "c1", name: "t", arguments: args });
      expect(argumentsError).toMatch(/^arguments for tool "t" cannot be sent as JSON: /);
      expect(call.arguments).toEqual({});
      expect(call.function?.arguments).toBe("{}");
    }
  });

  it.each([null, undefined, "read", 42, [{ name: "read" }]])("a call that is no object (%j) is malformed", (raw) => {
    const { call, argumentsError } = normalize(raw, "call_7");
    expect(argumentsError).toMatch(
      /^malformed tool call: expected an object, got (null|undefined|string|number|array)$/,
    );
    expect(call).toEqual({
      id: "call_7",
      type: "function",
      name: "",
      arguments: {},
      function: { name: "", arguments: "{}" },
    });
  });

  it.each([
    ["a missing id", {}],
    ["an empty id", { id: "" }],
    ["a numeric id", { id: 5 }],
  ])("%s gets the fallback id, made unique too", (_case, fields) => {
    const ids = new CallIds();
    ids.add("call_1");
    const { call } = normalizeToolCall({ name: "t", ...fields }, "call_1", ids);
    expect(call.id).toBe("call_1_2");
  });

  it("ids are made unique across the calls normalised with one CallIds", () => {
    const ids = new CallIds();
    const given = ["x", "x", "", "x"].map(
      (id, index) => normalizeToolCall({ id, name: "t" }, `f${index}`, ids).call.id,
    );
    expect(given).toEqual(["x", "x_2", "f2", "x_3"]);
  });

  it("a name that is no string is empty; a long one is cut in messages", () => {
    expect(normalize({ id: "c1", name: 12 }).call.name).toBe("");
    const long = "n".repeat(1_000);
    const { call, argumentsError } = normalize({ id: "c1", name: long, arguments: "{" });
    expect(call.name).toBe(long);
    expect(argumentsError).toContain(`"${"n".repeat(80)}…"`);
    expect(argumentsError?.length).toBeLessThan(300);
  });

  it("a __proto__ key in the arguments is data: an own property, no prototype changed", () => {
    const { call, argumentsError } = normalize({
      id: "c1",
      name: "t",
      arguments: '{"__proto__": {"polluted": true}, "a": 1}',
    });
    expect(argumentsError).toBeUndefined();
    expect(Object.hasOwn(call.arguments, "__proto__")).toBe(true);
    expect(Object.getPrototypeOf(call.arguments)).toBe(Object.prototype);
    expect((call.arguments as { polluted?: unknown }).polluted).toBeUndefined();
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    expect(call.arguments.a).toBe(1);
  });

  it("a call named __proto__ keeps that name", () => {
    const { call } = normalize({ id: "c1", name: "__proto__", arguments: {} });
    expect(call.name).toBe("__proto__");
    expect(call.function?.name).toBe("__proto__");
  });

  it("copies plain providerMetadata unchanged and drops anything else", () => {
    const providerMetadata = { google: { thoughtSignature: "sig" } };
    expect(normalize({ id: "c1", name: "t", providerMetadata }).call.providerMetadata).toBe(providerMetadata);
    for (const other of ["sig", [1], null, new Map()]) {
      const { call } = normalize({ id: "c1", name: "t", providerMetadata: other });
      expect(Object.hasOwn(call, "providerMetadata")).toBe(false);
    }
  });

  it("never keeps a provider's extra fields on the call", () => {
    const { call } = normalize({ id: "c1", name: "t", index: 0, extra: "x", type: "custom" });
    expect(Object.keys(call).sort()).toEqual(["arguments", "function", "id", "name", "type"]);
    expect(call.type).toBe("function");
  });
});

describe("resumedToolCall (a checkpoint's open call, run again)", () => {
  it.each<[string, unknown]>([
    ["JSON text that is not an object", "[1, 2]"],
    ["malformed JSON text", "{not json"],
    ["a JSON string", '"rm -rf /"'],
  ])("refuses %s with the message the model got the first time", (_case, text) => {
    const first = normalize({ id: "c", name: "t", arguments: text });
    expect(first.argumentsError).toBeDefined();
    const again = resumedToolCall(first.call);
    expect(again).toEqual(first);
    expect(again.call).toBe(first.call);
  });

  it.each<[string, Record<string, unknown>]>([
    ["JSON text of an object", { function: { name: "t", arguments: '{"a":1}' } }],
    [
      "text that differs from the parsed arguments (OpenAI strict mode's removed nulls)",
      { function: { name: "t", arguments: '{"a":1,"b":null}' } },
    ],
    ["empty text", { function: { name: "t", arguments: "" } }],
    ["blank text", { function: { name: "t", arguments: " \n\u00a0" } }],
    ["no function (a caller's own history)", {}],
  ])("runs a call with %s with its arguments", (_case, extra) => {
    const call = { id: "c", type: "function" as const, name: "t", arguments: { a: 1 }, ...extra };
    expect(resumedToolCall(call)).toEqual({ call });
  });
});

describe("arguments nested too deep (a hostile model's 5,000 levels in 30 KB)", () => {
  const message = `invalid arguments for tool "t": more than ${MAX_ARGUMENT_DEPTH} levels of nested objects and arrays. Send flatter arguments.`;

  /** JSON text of an object whose key `a` holds arrays nested `levels - 1` deep: `levels` levels in all. */
  function deepText(levels: number): string {
    return `{"a":${"[".repeat(levels - 1)}${"]".repeat(levels - 1)}}`;
  }

  /** An object nested `levels` deep (`{ k: { k: … {} } }`), built without recursion. */
  function deepObject(levels: number, key = "k"): Record<string, unknown> {
    const root: Record<string, unknown> = {};
    let inner = root;
    for (let level = 1; level < levels; level++) {
      const next: Record<string, unknown> = {};
      inner[key] = next;
      inner = next;
    }
    return root;
  }

  /** How deep a value nests (objects and arrays), measured without recursion. */
  function depthOf(value: unknown): number {
    let deepest = 0;
    const stack: [unknown, number][] = [[value, 1]];
    for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
      const [node, depth] = entry;
      if (typeof node !== "object" || node === null) continue;
      deepest = Math.max(deepest, depth);
      for (const child of Object.values(node)) stack.push([child, depth + 1]);
    }
    return deepest;
  }

  /** The call is refused as invalid_arguments, and what the transcript keeps serialises and nests at most one level past the bound. */
  function expectRefused({ call, argumentsError, errorCode }: ReturnType<typeof normalize>): void {
    expect(argumentsError).toBe(message);
    expect(errorCode).toBe("invalid_arguments");
    expect(call.arguments).toEqual({});
    const text = call.function?.arguments ?? "";
    expect(text.length).toBeLessThan(2_000);
    expect(depthOf(JSON.parse(text))).toBe(MAX_ARGUMENT_DEPTH + 1);
    expect(() => JSON.stringify(call)).not.toThrow();
  }

  it.each([
    ["as JSON text in function.arguments", { function: { name: "t", arguments: deepText(5_000) } }],
    ["as top-level JSON text", { arguments: deepText(5_000) }],
    ["as an object (Anthropic, Gemini, Ollama)", { arguments: deepObject(5_000) }],
    [
      "as an object with its text (OpenAI's strict mode)",
      { arguments: deepObject(5_000), function: { name: "t", arguments: deepText(5_000) } },
    ],
  ])("5,000 levels %s: refused with invalid_arguments, recorded as {} and a cut text", (_case, fields) => {
    expect(deepText(5_000).length).toBeGreaterThan(9_000);
    expectRefused(normalize({ id: "c1", name: "t", ...fields }));
  });

  it(`${MAX_ARGUMENT_DEPTH} levels are accepted as sent; one more is refused`, () => {
    const atBound = normalize({ id: "c1", name: "t", arguments: deepText(MAX_ARGUMENT_DEPTH) });
    expect(atBound.argumentsError).toBeUndefined();
    expect(depthOf(atBound.call.arguments)).toBe(MAX_ARGUMENT_DEPTH);
    expect(atBound.call.function?.arguments).toBe(deepText(MAX_ARGUMENT_DEPTH));
    const objectAtBound = normalize({ id: "c1", name: "t", arguments: deepObject(MAX_ARGUMENT_DEPTH) });
    expect(objectAtBound.argumentsError).toBeUndefined();
    expectRefused(normalize({ id: "c1", name: "t", arguments: deepText(MAX_ARGUMENT_DEPTH + 1) }));
    expectRefused(normalize({ id: "c1", name: "t", arguments: deepObject(MAX_ARGUMENT_DEPTH + 1) }));
  });

  it("the check is iterative: 100,000 levels as an object, 20,000 as text, refuse without overflowing the stack", () => {
    expectRefused(normalize({ id: "c1", name: "t", arguments: deepObject(100_000) }));
    expectRefused(normalize({ id: "c1", name: "t", arguments: deepText(20_000) }));
  });

  it("the check is linear: it visits each object once and stops one level past the bound", () => {
    const keys = vi.spyOn(Object, "keys");
    normalize({ id: "c1", name: "t", arguments: deepObject(100_000) });
    expect(keys.mock.calls.length).toBeLessThanOrEqual(MAX_ARGUMENT_DEPTH + 1);
    keys.mockClear();
    // Wide and shallow: 10,000 objects side by side, each looked at once.
    const wide = { items: Array.from({ length: 10_000 }, (_, index) => ({ index, tags: [index] })) };
    const { argumentsError } = normalize({ id: "c1", name: "t", arguments: wide });
    expect(argumentsError).toBeUndefined();
    expect(keys.mock.calls.length).toBeLessThanOrEqual(2 * 10_000 + 2);
    keys.mockRestore();
  });

  it("the cut text keeps the path's keys, each cut to a readable length", () => {
    const { call } = normalize({ id: "c1", name: "t", arguments: deepObject(200, "k".repeat(10_000)) });
    const text = call.function?.arguments ?? "";
    expect(text.startsWith(`{"${"k".repeat(80)}…":{`)).toBe(true);
    expect(text.length).toBeLessThan((MAX_ARGUMENT_DEPTH + 1) * 100);
  });

  it("an object met twice (shared, or a cycle) is walked once; a cycle stays refused as not sendable as JSON", () => {
    const shared = deepObject(10);
    expect(normalize({ id: "c1", name: "t", arguments: { a: shared, b: shared } }).argumentsError).toBeUndefined();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(normalize({ id: "c1", name: "t", arguments: cyclic }).argumentsError).toMatch(/cannot be sent as JSON/);
  });

  it("a resumed checkpoint's call is refused again with the same message and code", () => {
    for (const args of [deepText(5_000), deepObject(5_000)]) {
      const first = normalize({ id: "c", name: "t", arguments: args });
      expect(JSON.parse(JSON.stringify(resumedToolCall(JSON.parse(JSON.stringify(first.call)))))).toEqual(first);
    }
    // A hostile checkpoint: the text is harmless, the arguments object is not.
    const call = { id: "c", type: "function" as const, name: "t", arguments: deepObject(5_000) };
    expect(resumedToolCall(call)).toEqual({ call, argumentsError: message, errorCode: "invalid_arguments" });
    const withText = { ...call, function: { name: "t", arguments: "{}" } };
    expect(resumedToolCall(withText).errorCode).toBe("invalid_arguments");
  });

  it("in the loop: the tool never runs, the model is answered invalid_arguments, and every checkpoint serialises", async () => {
    let ran = 0;
    const checkpoints: string[] = [];
    const provider = new ScriptedProvider([
      toolCallResponse({ id: "deep", name: "t", arguments: deepText(5_000) }),
      textResponse("done"),
    ]);
    const result = await runToolLoop(
      {
        provider,
        tools: [{ name: "t", description: "t", parameters: { type: "object" }, execute: () => String(++ran) }],
        maxIterations: 3,
        onCheckpoint: (checkpoint) => {
          checkpoints.push(JSON.stringify(checkpoint));
        },
      },
      [{ role: "user", content: "go" }],
    ).catch((error: unknown) => {
      // Not the error itself: its transcript holds the deep arguments (reporting it would overflow too).
      throw new Error(`the run failed: ${error instanceof Error ? error.message : "?"}`);
    });
    expect(ran).toBe(0);
    const answer = result.messages.find((each) => each.role === "tool");
    expect(answer).toMatchObject({ toolCallId: "deep", isError: true, content: message });
    expect(checkpoints.length).toBeGreaterThan(0);
    expect(() => JSON.stringify(result.messages)).not.toThrow();
    // The provider got the transcript back on its next call: it serialises too.
    expect(() => JSON.stringify(provider.calls.at(-1))).not.toThrow();
  });
});
