// Regression tests for findings of the independent review of the core (each failed before its fix).
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  defineTool,
  isAsyncTool,
  isContextualTool,
  isMetadataAwareTool,
  isToolResult,
  newToolResult,
  runToolLoop,
  type Tool,
  type ToolContext,
  ToolRegistry,
} from "../src/index.js";
import { raceAbort } from "../src/internal/abort.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../src/testing/index.js";

const capture = (contexts: ToolContext[]): Tool => ({
  name: "capture",
  description: "keeps its context",
  parameters: { type: "object" },
  execute: (_args, context) => {
    contexts.push(context);
    return newToolResult("ok");
  },
});

describe("review regressions", () => {
  it("a copied ToolContext keeps signal and logger", async () => {
    const contexts: ToolContext[] = [];
    const registry = new ToolRegistry();
    registry.register(capture(contexts));
    const controller = new AbortController();
    await registry.execute("capture", {}, { signal: controller.signal, toolCallId: "c1" });
    const copy = { ...contexts[0] } as ToolContext;
    expect(Object.keys(copy).sort()).toEqual(["channel", "chatId", "logger", "metadata", "signal", "toolCallId"]);
    expect(copy.signal).toBeInstanceOf(AbortSignal);
    expect(typeof copy.logger.info).toBe("function");
  });

  it("a context without a call id has no toolCallId property", async () => {
    const contexts: ToolContext[] = [];
    const registry = new ToolRegistry();
    registry.register(capture(contexts));
    await registry.execute("capture", {});
    expect(Object.hasOwn(contexts[0] as object, "toolCallId")).toBe(false);
  });

  it.each([undefined, null, 42, "setContext"])("the mixin guards answer false for %j", (value) => {
    expect(isContextualTool(value)).toBe(false);
    expect(isAsyncTool(value)).toBe(false);
    expect(isMetadataAwareTool(value)).toBe(false);
  });

  it("isContextualTool accepts registry.get() output directly", () => {
    const registry = new ToolRegistry();
    expect(isContextualTool(registry.get("missing"))).toBe(false);
  });

  it("a turn of 16 calls under a caller's signal makes Node print no listener warning", async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    try {
      const tool: Tool = {
        name: "wait",
        description: "waits on its signal",
        parameters: { type: "object" },
        execute: async (_args, { signal }) => {
          signal.addEventListener("abort", () => {}); // as fetch(…, { signal }) would
          await new Promise((resolve) => setImmediate(resolve));
          return newToolResult("done");
        },
      };
      const registry = new ToolRegistry();
      registry.register(tool);
      const calls = Array.from({ length: 16 }, (_, index) => ({ name: "wait", id: `c${index}` }));
      const provider = new ScriptedProvider([toolCallResponse(calls), textResponse("ok")]);
      const controller = new AbortController();
      const result = await runToolLoop({ provider, tools: registry, maxIterations: 2, toolTimeoutMs: 10_000 }, [], {
        signal: controller.signal,
      });
      expect(result.messages.filter((message) => message.role === "tool")).toHaveLength(16);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.map((warning) => warning.name)).not.toContain("MaxListenersExceededWarning");
    } finally {
      process.off("warning", onWarning);
    }
  });

  it("many runs under one long-lived signal leave no listener behind on it", async () => {
    const controller = new AbortController();
    let added = 0;
    let removed = 0;
    const add = controller.signal.addEventListener.bind(controller.signal);
    const remove = controller.signal.removeEventListener.bind(controller.signal);
    controller.signal.addEventListener = ((...args: Parameters<typeof add>) => {
      added++;
      add(...args);
    }) as typeof add;
    controller.signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
      removed++;
      remove(...args);
    }) as typeof remove;
    for (let run = 0; run < 20; run++) {
      const provider = new ScriptedProvider([textResponse("ok")]);
      await runToolLoop({ provider, maxIterations: 1 }, [], { signal: controller.signal });
    }
    expect(added).toBe(20);
    expect(removed).toBe(20);
  });

  it("a 2019-09 schema with tuple items registers and validates", async () => {
    const registry = new ToolRegistry();
    registry.register({
      name: "pair",
      description: "a pair",
      parameters: {
        $schema: "https://json-schema.org/draft/2019-09/schema",
        type: "object",
        properties: {
          pair: { type: "array", items: [{ type: "string" }, { type: "number" }], additionalItems: false },
        },
        required: ["pair"],
      },
      execute: () => newToolResult("ok"),
    });
    expect((await registry.execute("pair", { pair: ["a", 1] })).isError).toBe(false);
    expect((await registry.execute("pair", { pair: ["a", 1, 2] })).forLLM).toMatch(/invalid arguments for tool "pair"/);
  });

  it("two different schemas with the same $id can both be registered", () => {
    const registry = new ToolRegistry();
    const schema = (type: string) => ({
      $id: "https://example.com/args.json",
      type: "object",
      properties: { value: { type } },
    });
    registry.register({ name: "a", description: "a", parameters: schema("string"), execute: () => newToolResult("") });
    expect(() =>
      registry.register({
        name: "b",
        description: "b",
        parameters: schema("number"),
        execute: () => newToolResult(""),
      }),
    ).not.toThrow();
  });

  it("registry timeoutMs: Infinity means none, and a delay setTimeout cannot honour is a TypeError", async () => {
    const registry = new ToolRegistry();
    registry.register({
      name: "later",
      description: "resolves on the next turn of the event loop",
      parameters: { type: "object" },
      execute: () => new Promise((resolve) => setTimeout(() => resolve(newToolResult("done")), 5)),
    });
    const result = await registry.execute("later", {}, { timeoutMs: Number.POSITIVE_INFINITY });
    expect(result.forLLM).toBe("done");
    for (const timeoutMs of [0, -1, Number.NaN, 2 ** 31]) {
      expect(() => registry.execute("later", {}, { timeoutMs })).toThrow(TypeError);
    }
  });

  it("ScriptedProvider.assertDone() also reports a script that was overrun", async () => {
    const provider = new ScriptedProvider([textResponse("one")]);
    await provider.chat([], undefined, "m", {});
    await expect(provider.chat([], undefined, "m", {})).rejects.toThrow(/the script has 1 steps/);
    expect(provider.remaining).toBe(0);
    expect(() => provider.assertDone()).toThrow(/called 2 times but the script has only 1 steps/);
  });

  it("raceAbort on an aborted signal leaves no unhandled rejection when the callee rejects later", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const controller = new AbortController();
      controller.abort(new Error("stop"));
      let rejectLater: (error: Error) => void = () => {};
      const callee = new Promise<never>((_, reject) => {
        rejectLater = reject;
      });
      await expect(raceAbort(callee, controller.signal)).rejects.toThrow("stop");
      rejectLater(new Error("late failure"));
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });

  it("a defined tool called directly returns a ToolResult for a string", async () => {
    const tool = defineTool({
      name: "hello",
      description: "says hello",
      parameters: z.object({ name: z.string() }),
      execute: ({ name }) => `hello ${name}`,
    });
    const context = {} as ToolContext;
    const direct = await tool.execute({ name: "Ada" }, context);
    expect(isToolResult(direct)).toBe(true);
    expect(direct.forLLM).toBe("hello Ada");
    const asyncTool = defineTool({
      name: "hello_async",
      description: "says hello later",
      parameters: z.object({}),
      execute: async () => "later",
    });
    expect(isToolResult(await asyncTool.execute({}, context))).toBe(true);
  });
});
