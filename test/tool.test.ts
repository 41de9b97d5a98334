import { describe, expect, it } from "vitest";
import {
  isAsyncTool,
  isContextualTool,
  isMetadataAwareTool,
  newToolResult,
  type Tool,
  ToolRegistry,
  toolToSchema,
} from "../src/index.js";

const base: Tool = {
  name: "read_file",
  description: "Read the contents of a file at the given path.",
  parameters: {
    type: "object",
    properties: { path: { type: "string", description: "Path to the file to read" } },
    required: ["path"],
  },
  execute: () => newToolResult("ok"),
};

const noop = () => {};

describe("mixin guards", () => {
  it.each([
    ["a plain tool", base, { contextual: false, async: false, metadata: false }],
    ["setContext", { ...base, setContext: noop }, { contextual: true, async: false, metadata: false }],
    ["setCallback", { ...base, setCallback: noop }, { contextual: false, async: true, metadata: false }],
    ["setMetadata", { ...base, setMetadata: noop }, { contextual: false, async: false, metadata: true }],
    [
      "all three",
      { ...base, setContext: noop, setCallback: noop, setMetadata: noop },
      { contextual: true, async: true, metadata: true },
    ],
    [
      "non-function properties of those names",
      { ...base, setContext: "x", setCallback: 1, setMetadata: {} },
      { contextual: false, async: false, metadata: false },
    ],
  ])("%s", (_case, tool, expected) => {
    expect({
      contextual: isContextualTool(tool),
      async: isAsyncTool(tool),
      metadata: isMetadataAwareTool(tool),
    }).toEqual(expected);
  });

  it("recognises methods of a class (on the prototype)", () => {
    class Messenger implements Tool {
      readonly name = "message";
      readonly description = "Send a message";
      readonly parameters = { type: "object" };
      channel = "";
      setContext(channel: string): void {
        this.channel = channel;
      }
      execute() {
        return newToolResult(this.channel);
      }
    }
    const tool = new Messenger();
    expect(isContextualTool(tool)).toBe(true);
    expect(isAsyncTool(tool)).toBe(false);
  });
});

describe("toolToSchema", () => {
  it("gives the OpenAI-style definition of seed 000", () => {
    expect(toolToSchema(base)).toMatchInlineSnapshot(`
      {
        "function": {
          "description": "Read the contents of a file at the given path.",
          "name": "read_file",
          "parameters": {
            "properties": {
              "path": {
                "description": "Path to the file to read",
                "type": "string",
              },
            },
            "required": [
              "path",
            ],
            "type": "object",
          },
        },
        "type": "function",
      }
    `);
  });
});

// Moved from review-regressions.test.ts (findings of the independent review; each failed before its fix).
describe("mixin guards on anything (review regressions)", () => {
  it.each([undefined, null, 42, "setContext"])("the mixin guards answer false for %j", (value) => {
    expect(isContextualTool(value)).toBe(false);
    expect(isAsyncTool(value)).toBe(false);
    expect(isMetadataAwareTool(value)).toBe(false);
  });

  it("isContextualTool accepts registry.get() output directly", () => {
    const registry = new ToolRegistry();
    expect(isContextualTool(registry.get("missing"))).toBe(false);
  });
});
