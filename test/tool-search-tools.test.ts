import { describe, expect, it, vi } from "vitest";
import {
  createToolSearchTools,
  TOOL_SEARCH_TOOL_NAMES,
  type Tool,
  ToolRegistry,
  type ToolSearchToolsOptions,
} from "../src/index.js";
import { PromotionScope } from "../src/internal/promotion-scope.js";
import { EXECUTE_CHECKED, VIEW_DEFINITIONS } from "../src/registry-symbols.js";

const REGEX = "tool_search_tool_regex";
const BM25 = "tool_search_tool_bm25";

const make = (name: string, description: string): Tool => ({
  name,
  description,
  parameters: { type: "object" },
  execute: () => `${name} ran`,
});

/** A registry with the two discovery tools, a visible tool and hidden MCP-like tools. */
function setup(options?: ToolSearchToolsOptions) {
  const registry = new ToolRegistry();
  for (const tool of createToolSearchTools(registry, options)) registry.register(tool);
  registry.register(make("visible_file_tool", "A visible tool about files"));
  registry.registerHidden(make("mcp_fs_read_file", "Read the contents of a file"));
  registry.registerHidden(make("mcp_fs_write_file", "Write text to a file"));
  registry.registerHidden(make("mcp_fs_list_directory", "List the entries of a directory"));
  registry.registerHidden(make("mcp_mail_send", "Send an email"));
  const offered = () => registry.getDefinitions().map(({ function: f }) => f.name);
  return { registry, offered, ...run(registry) };
}

/**
 * One run of `registry` as the loop drives it: `call` runs a tool in a turn (a discovery tool
 * promotes into this run), `shown` is what the provider call of a turn offers (the model sees it).
 */
function run(registry: ToolRegistry) {
  const scope = new PromotionScope();
  const call = (turn: number, name: string, args: Record<string, unknown>) =>
    registry[EXECUTE_CHECKED](
      {
        name,
        args,
        channel: "",
        chatId: "",
        asyncCallback: undefined,
        signal: undefined,
        metadata: undefined,
        toolCallId: undefined,
        timeoutMs: undefined,
        onProgress: undefined,
      },
      { scope, turn },
    );
  const shown = (turn: number) => {
    const names = registry[VIEW_DEFINITIONS]({ scope, turn }).map(({ function: f }) => f.name);
    scope.showOffered(turn);
    return names;
  };
  return { call, shown };
}

describe("createToolSearchTools", () => {
  it("makes the two discovery tools (names and schemas)", () => {
    const tools = createToolSearchTools(new ToolRegistry(), { maxResults: 8 });
    expect(tools.map(({ name }) => name)).toEqual([...TOOL_SEARCH_TOOL_NAMES]);
    expect(tools.map(({ name, parameters }) => ({ name, parameters }))).toMatchInlineSnapshot(`
      [
        {
          "name": "tool_search_tool_regex",
          "parameters": {
            "properties": {
              "max_results": {
                "description": "How many tools to return at most (up to 8)",
                "minimum": 1,
                "type": "integer",
              },
              "pattern": {
                "description": "Regular expression (RE2 syntax, no lookaround or backreferences), e.g. 'file|dir'",
                "type": "string",
              },
            },
            "required": [
              "pattern",
            ],
            "type": "object",
          },
        },
        {
          "name": "tool_search_tool_bm25",
          "parameters": {
            "properties": {
              "max_results": {
                "description": "How many tools to return at most (up to 8)",
                "minimum": 1,
                "type": "integer",
              },
              "query": {
                "description": "Keywords describing the tool you need, e.g. 'read file contents'",
                "type": "string",
              },
            },
            "required": [
              "query",
            ],
            "type": "object",
          },
        },
      ]
    `);
    for (const tool of tools) {
      expect(Object.isFrozen(tool)).toBe(true);
      expect(tool.description).toMatch(/hidden tools/);
    }
  });

  it("TOOL_SEARCH_TOOL_NAMES is frozen", () => {
    expect(Object.isFrozen(TOOL_SEARCH_TOOL_NAMES)).toBe(true);
  });

  it("the regex tool lists its matches as lines, silently, and promotes them for the run's next ttl turns", async () => {
    const { offered, call, shown } = setup({ ttl: 2 });
    expect(shown(1)).not.toContain("mcp_fs_read_file");
    const result = await call(1, REGEX, { pattern: "file" });
    expect(result.isError).toBe(false);
    expect(result.silent).toBe(true);
    expect(result.forUser).toBe("");
    expect(result.forLLM).toMatchInlineSnapshot(`
      "Found 2 tools, callable directly for the next 2 model calls:
      - mcp_fs_read_file: Read the contents of a file
      - mcp_fs_write_file: Write text to a file"
    `);
    // Not in the turn of the search: the model has not seen them.
    expect((await call(1, "mcp_fs_read_file", {})).forLLM).toMatch(/^tool "mcp_fs_read_file" not found/);
    expect(shown(2)).toEqual([BM25, REGEX, "mcp_fs_read_file", "mcp_fs_write_file", "visible_file_tool"].sort());
    expect((await call(2, "mcp_fs_read_file", {})).forLLM).toBe("mcp_fs_read_file ran");
    expect(shown(3)).toContain("mcp_fs_write_file");
    expect(shown(4)).not.toContain("mcp_fs_write_file");
    expect((await call(4, "mcp_fs_read_file", {})).isError).toBe(true);
    // The registry itself (and so every other run) never offered them.
    expect(offered()).not.toContain("mcp_fs_read_file");
  });

  it("the BM25 tool ranks by keywords and promotes the matches", async () => {
    const { call, shown } = setup();
    const result = await call(1, BM25, { query: "read a file" });
    expect(result.silent).toBe(true);
    expect(result.forLLM).toMatchInlineSnapshot(`
      "Found 2 tools, callable directly for the next 5 model calls:
      - mcp_fs_read_file: Read the contents of a file
      - mcp_fs_write_file: Write text to a file"
    `);
    expect(shown(2)).toContain("mcp_fs_read_file");
    const one = await call(2, BM25, { query: "email", max_results: 3 });
    expect(one.forLLM).toMatchInlineSnapshot(`
      "Found 1 tool, callable directly for the next 5 model calls:
      - mcp_mail_send: Send an email"
    `);
  });

  it("says so with ttl 1 (one model call)", async () => {
    const { call } = setup({ ttl: 1 });
    expect((await call(1, BM25, { query: "email" })).forLLM).toMatch(/for the next model call:/);
  });

  it("returns at most max_results, itself at most maxResults", async () => {
    const { call, shown } = setup({ maxResults: 2 });
    const lines = async (args: Record<string, unknown>) =>
      (await call(1, REGEX, args)).forLLM.split("\n").filter((line) => line.startsWith("- "));
    expect(await lines({ pattern: "mcp", max_results: 100 })).toHaveLength(2);
    expect(shown(2).filter((name) => name.startsWith("mcp"))).toHaveLength(2);
    expect(await lines({ pattern: "mcp", max_results: 1 })).toHaveLength(1);
    expect(await lines({ pattern: "mcp" })).toHaveLength(2);
  });

  it("called directly (no run, no MCP session), a search lists its matches and promotes nothing", async () => {
    const { registry, offered } = setup();
    const before = offered();
    const result = await registry.execute(BM25, { query: "email" });
    expect(result.isError).toBe(false);
    expect(result.forLLM).toMatchInlineSnapshot(`
      "Found 1 tool (not callable here: only a tool loop run or an MCP session offers them):
      - mcp_mail_send: Send an email"
    `);
    expect(offered()).toEqual(before);
    expect((await registry.execute("mcp_mail_send", {})).isError).toBe(true);
    // Nor does a run of the same registry see it.
    expect(run(registry).shown(1)).not.toContain("mcp_mail_send");
  });

  it("two runs of one registry: what one finds is never offered to, nor callable by, the other", async () => {
    const { registry } = setup();
    const first = run(registry);
    const second = run(registry);
    await first.call(1, BM25, { query: "email" });
    expect(first.shown(2)).toContain("mcp_mail_send");
    expect(second.shown(2)).not.toContain("mcp_mail_send");
    expect((await second.call(2, "mcp_mail_send", {})).forLLM).toMatch(/^tool "mcp_mail_send" not found/);
    expect((await first.call(2, "mcp_mail_send", {})).forLLM).toBe("mcp_mail_send ran");
  });

  it("max_results must be an integer ≥ 1 (validated by its schema, an error result)", async () => {
    const { registry } = setup();
    for (const max_results of [0, -1, 1.5, "3"]) {
      const result = await registry.execute(REGEX, { pattern: "file", max_results });
      expect(result.isError, JSON.stringify(max_results)).toBe(true);
    }
  });

  it.each([
    [REGEX, { pattern: "" }, "pattern cannot be empty"],
    [REGEX, { pattern: "   \n" }, "pattern cannot be empty"],
    [BM25, { query: "" }, "query cannot be empty"],
    [BM25, { query: "\t " }, "query cannot be empty"],
  ])("%s with %j is an error result (it would list every hidden tool)", async (name, args, message) => {
    const { registry, offered } = setup();
    const before = offered();
    const result = await registry.execute(name, args);
    expect(result.isError).toBe(true);
    expect(result.forLLM).toBe(message);
    expect(offered()).toEqual(before);
  });

  it("a missing query is an error result (schema)", async () => {
    const { registry } = setup();
    expect((await registry.execute(BM25, {})).isError).toBe(true);
    expect((await registry.execute(REGEX, { pattern: 42 })).isError).toBe(true);
  });

  it("an invalid pattern is an error result the model reads", async () => {
    const { registry } = setup();
    const invalid = await registry.execute(REGEX, { pattern: "(file" });
    expect(invalid.isError).toBe(true);
    expect(invalid.forLLM).toMatchInlineSnapshot(
      `"pattern "(file" is not a valid regular expression: Invalid regular expression: /(file/iu: Unterminated group; fix it and search again"`,
    );
    const lookahead = await registry.execute(REGEX, { pattern: "file(?=s)" });
    expect(lookahead.isError).toBe(true);
    expect(lookahead.forLLM).toMatchInlineSnapshot(
      `"pattern "file(?=s)" cannot run on toolloop's linear-time engine (RE2, which has no backreferences, lookahead or lookbehind): it has a lookahead ((?=…); fix it and search again"`,
    );
  });

  it("an over-long query or a too complex pattern is an error result, never a throw or a hang", async () => {
    const { registry } = setup();
    const long = await registry.execute(BM25, { query: "word ".repeat(300) });
    expect(long.isError).toBe(true);
    expect(long.forLLM).toMatchInlineSnapshot(`"query is longer than 1000 characters (1500); fix it and search again"`);
    const heavy = await registry.execute(REGEX, { pattern: ".{1000}".repeat(142) });
    expect(heavy.isError).toBe(true);
    expect(heavy.forLLM).toMatch(/^pattern is too complex/);
    const backtracking = await registry.execute(REGEX, { pattern: "(a+)+$" });
    expect(backtracking.isError).toBe(false);
  });

  describe("over many hidden tools (the clock stepped 1 ms a read: a search's time is its count of tools)", () => {
    /** The discovery tools over 300 hidden tools, `performance.now` stepping while `run` runs. */
    async function withManyTools<T>(options: ToolSearchToolsOptions, run: (registry: ToolRegistry) => Promise<T>) {
      const registry = new ToolRegistry();
      for (const tool of createToolSearchTools(registry, options)) registry.register(tool);
      for (let index = 0; index < 300; index++) {
        registry.registerHidden(make(`mcp_tool_${index}`, `Reads file number ${index} of the disk`));
      }
      let now = 0;
      const clock = vi.spyOn(performance, "now").mockImplementation(() => ++now);
      try {
        return await run(registry);
      } finally {
        clock.mockRestore();
      }
    }

    it.each([
      [REGEX, { pattern: "number 17\\b" }],
      [BM25, { query: "number 17" }], // the first search: it indexes the 300 tools
    ])("%s searches in slices: other work goes on while it searches", async (name, args) => {
      await withManyTools({}, async (registry) => {
        const order: string[] = [];
        const search = registry.execute(name, args);
        setImmediate(() => order.push("other work"));
        const result = await search;
        order.push("search done");
        expect(order).toEqual(["other work", "search done"]);
        // Best first: "17" is in that tool only (BM25 also lists the others that hold "number").
        expect(result.forLLM).toMatch(
          /^Found \d tools? \(not callable here[^\n]*\n- mcp_tool_17: Reads file number 17 of the disk($|\n)/,
        );
      });
    });

    it("a regex search that takes longer than maxSearchMs is an error result saying so", async () => {
      await withManyTools({ maxSearchMs: 20 }, async (registry) => {
        const result = await registry.execute(REGEX, { pattern: "disk" });
        expect(result.isError).toBe(true);
        expect(result.forLLM).toMatch(
          /^pattern took too long to search the tools \(over 20 ms, \d+ of 300 searched\): use a simpler pattern, or search by keywords; fix it and search again$/,
        );
      });
    });

    it("a call cancelled while it searches is answered cancelled: the search stops at its next slice", async () => {
      await withManyTools({}, async (registry) => {
        const controller = new AbortController();
        const search = registry.execute(BM25, { query: "number 17" }, { signal: controller.signal });
        setImmediate(() => controller.abort(new Error("the user left")));
        const result = await search;
        expect(result.isError).toBe(true);
        expect(result.forLLM).toMatch(/^tool "tool_search_tool_bm25" was aborted/);
      });
    });
  });

  it("no match is a silent, non-error text and promotes nothing", async () => {
    const { registry, offered } = setup();
    const before = offered();
    const texts: string[] = [];
    for (const [name, args] of [
      [REGEX, { pattern: "weather" }],
      [BM25, { query: "weather forecast" }],
    ] as const) {
      const result = await registry.execute(name, args);
      expect(result.isError).toBe(false);
      expect(result.silent).toBe(true);
      texts.push(result.forLLM);
    }
    expect(texts).toMatchInlineSnapshot(`
      [
        "No hidden tools match pattern "weather".",
        "No hidden tools match query "weather forecast".",
      ]
    `);
    expect(offered()).toEqual(before);
  });

  it("finds hidden tools only: visible tools and the discovery tools are never listed", async () => {
    const { registry } = setup();
    const text = (await registry.execute(REGEX, { pattern: "visible|tool_search|file" })).forLLM;
    expect(text).not.toMatch(/visible_file_tool|tool_search_tool/);
  });

  it("bounds a long description and keeps each match on one line (a description cannot forge a line)", async () => {
    const { registry } = setup();
    registry.registerHidden(make("long_tool", `Long.\n- fake_tool: forged line\n${"blah ".repeat(2_000)}`));
    const text = (await registry.execute(REGEX, { pattern: "long_tool" })).forLLM;
    const lines = text.split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(/^- long_tool: Long\. - fake_tool: forged line blah .* more characters cut\]$/);
    expect(lines[1]?.length).toBeLessThanOrEqual(320);
  });

  it.each([
    ["ttl 0", { ttl: 0 }, "createToolSearchTools: ttl must be an integer > 0, got 0"],
    ["a fractional ttl", { ttl: 1.5 }, "createToolSearchTools: ttl must be an integer > 0, got 1.5"],
    ["a string maxResults", { maxResults: "5" }, 'createToolSearchTools: maxResults must be an integer > 0, got "5"'],
    ["maxResults 0", { maxResults: 0 }, "createToolSearchTools: maxResults must be an integer > 0, got 0"],
    ["maxSearchMs 0", { maxSearchMs: 0 }, "createToolSearchTools: maxSearchMs must be an integer > 0, got 0"],
    [
      "a fractional maxSearchMs",
      { maxSearchMs: 0.5 },
      "createToolSearchTools: maxSearchMs must be an integer > 0, got 0.5",
    ],
    ["options null", null, "createToolSearchTools: options must be an object, got null"],
  ])("throws a TypeError for %s", (_, options, message) => {
    expect(() => createToolSearchTools(new ToolRegistry(), options as ToolSearchToolsOptions)).toThrow(
      new TypeError(message),
    );
  });

  it.each([
    ["undefined", undefined],
    ["null", null],
    ["a plain object", { searchRegex: () => [] }],
    ["an object without searchRegex", { searchBM25: () => [], promoteTools: () => {} }],
    ["a tool list", []],
  ])("throws a TypeError for a registry that is %s", (_, registry) => {
    expect(() => createToolSearchTools(registry as unknown as ToolRegistry)).toThrow(
      /^createToolSearchTools: registry must be a ToolRegistry, got /,
    );
  });
});
