import { describe, expect, it } from "vitest";
import {
  askQuestionTool,
  converseTool,
  forgeTools,
  loopBreakingTools,
  runToolLoop,
  ToolRegistry,
  taskCompletionTool,
} from "../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../src/testing/index.js";

const registry = new ToolRegistry();
for (const tool of loopBreakingTools()) registry.register(tool);

describe("loopBreakingTools()", () => {
  it("returns the three loop-breaking tools in Forge's order, in a new array each time", () => {
    const tools = loopBreakingTools();
    expect(tools.map((tool) => tool.name)).toEqual(["task_completion", "ask_question", "converse"]);
    expect(tools.every((tool) => tool.loopBreaking === true)).toBe(true);
    expect(loopBreakingTools()).not.toBe(tools);
    expect(forgeTools).toBe(loopBreakingTools);
    expect(tools).toEqual([taskCompletionTool, askQuestionTool, converseTool]);
  });

  it("exposes Forge's schemas", () => {
    expect(registry.getDefinitions().map((definition) => definition.function)).toMatchInlineSnapshot(`
      [
        {
          "description": "Ask the user a question when you need more information; optionally offer up to 4 suggested answers.",
          "name": "ask_question",
          "parameters": {
            "properties": {
              "question": {
                "description": "The question to ask the user",
                "type": "string",
              },
              "suggestions": {
                "description": "Up to 4 suggested answers",
                "items": {
                  "type": "string",
                },
                "maxItems": 4,
                "type": "array",
              },
            },
            "required": [
              "question",
            ],
            "type": "object",
          },
        },
        {
          "description": "Reply to the user conversationally when no task needs to be done.",
          "name": "converse",
          "parameters": {
            "properties": {
              "message": {
                "description": "The message to the user",
                "type": "string",
              },
            },
            "required": [
              "message",
            ],
            "type": "object",
          },
        },
        {
          "description": "Call this when the task is complete, with the final result for the user.",
          "name": "task_completion",
          "parameters": {
            "properties": {
              "result": {
                "description": "The final result of the task",
                "type": "string",
              },
            },
            "required": [
              "result",
            ],
            "type": "object",
          },
        },
      ]
    `);
  });
});

describe("task_completion", () => {
  it("returns the result for the model and the user", async () => {
    const result = await registry.execute("task_completion", { result: "Report written." });
    expect(result.isError).toBe(false);
    expect(result.forLLM).toBe("Report written.");
    expect(result.forUser).toBe("Report written.");
  });

  it.each([[""], ["   "]])("an empty result %j is an error result", async (value) => {
    const result = await registry.execute("task_completion", { result: value });
    expect(result.isError).toBe(true);
    expect(result.forLLM).toBe("result cannot be empty");
  });
});

describe("ask_question", () => {
  it("returns the question, with question and suggestions as data for a UI", async () => {
    const result = await registry.execute("ask_question", { question: "Which format?", suggestions: ["PDF", "HTML"] });
    expect(result.forLLM).toBe("Which format?");
    expect(result.forUser).toBe("Which format?");
    expect(result.data).toEqual({ question: "Which format?", suggestions: ["PDF", "HTML"] });
    const bare = await registry.execute("ask_question", { question: "Why?" });
    expect(bare.data).toEqual({ question: "Why?", suggestions: [] });
  });

  it("more than 4 suggestions, an empty question or a wrong type are error results", async () => {
    const five = await registry.execute("ask_question", { question: "Q?", suggestions: ["1", "2", "3", "4", "5"] });
    expect(five.isError).toBe(true);
    expect(five.forLLM).toContain("suggestions");
    expect((await registry.execute("ask_question", { question: "" })).forLLM).toBe("question cannot be empty");
    expect((await registry.execute("ask_question", { question: 42 })).isError).toBe(true);
    expect((await registry.execute("ask_question", { question: "Q?", suggestions: [1] })).isError).toBe(true);
  });

  it("a hostile __proto__ key does not reach the data", async () => {
    const args = JSON.parse('{"question":"Q?","__proto__":{"polluted":true}}') as Record<string, unknown>;
    const result = await registry.execute("ask_question", args);
    expect(result.data).toEqual({ question: "Q?", suggestions: [] });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("converse", () => {
  it("returns the message; an empty one is an error result", async () => {
    expect((await registry.execute("converse", { message: "Hello!" })).forLLM).toBe("Hello!");
    const empty = await registry.execute("converse", { message: "" });
    expect(empty.isError).toBe(true);
    expect(empty.forLLM).toBe("message cannot be empty");
    expect((await registry.execute("converse", {})).isError).toBe(true);
  });
});

describe("in the loop", () => {
  it("task_completion ends a Forge-style agent with its result", async () => {
    const provider = new ScriptedProvider([
      toolCallResponse({ id: "t1", name: "task_completion", arguments: { result: "" } }),
      toolCallResponse({ id: "t2", name: "task_completion", arguments: { result: "Done: 42" } }),
      textResponse("never asked"),
    ]);
    const result = await runToolLoop({ provider, tools: loopBreakingTools(), maxIterations: 5 }, [
      { role: "user", content: "compute" },
    ]);
    expect(result.stopReason).toBe("loop_breaking_tool");
    expect(result.content).toBe("Done: 42");
    expect(result.stoppedBy).toEqual({ toolName: "task_completion", toolCallId: "t2" });
    expect(provider.calls).toHaveLength(2);
  });
});
