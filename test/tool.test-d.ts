import type { Logger as PinoLogger } from "pino";
import { describe, expectTypeOf, it } from "vitest";
import type { AsyncCallback, Logger, Tool, ToolContext, ToolLoopConfig, ToolResult, ToolReturn } from "../src/index.js";
import { createToolContext } from "../src/testing/index.js";

describe("Tool and ToolContext types", () => {
  it("a plain Tool's execute may return a string, a ToolResult, or a promise of either", () => {
    const text: Tool = { name: "a", description: "", parameters: {}, execute: () => "done" };
    const later: Tool = { name: "b", description: "", parameters: {}, execute: async () => "done" };
    expectTypeOf(text.execute).returns.toEqualTypeOf<ToolReturn | Promise<ToolReturn>>();
    expectTypeOf<ToolReturn>().toEqualTypeOf<ToolResult | string>();
    expectTypeOf(later).toExtend<Tool>();
    // @ts-expect-error a number is not a tool result
    const wrong: Tool = { name: "c", description: "", parameters: {}, execute: () => 42 };
    void wrong;
  });

  it("ToolContext has a read-only signal and an optional per-call asyncCallback", () => {
    expectTypeOf<ToolContext["asyncCallback"]>().toEqualTypeOf<AsyncCallback | undefined>();
    const context = createToolContext();
    // @ts-expect-error the call's signal cannot be replaced
    context.signal = new AbortController().signal;
  });

  it("console and minimal objects are Loggers; tools may be an array", () => {
    expectTypeOf(console).toExtend<Logger>();
    expectTypeOf<PinoLogger>().toExtend<Logger>();
    expectTypeOf<{ debug(): void; info(): void; warn(): void; error(): void }>().toExtend<Logger>();
    expectTypeOf<{ debug(): void }>().not.toExtend<Logger>();
    expectTypeOf<Tool[]>().toExtend<NonNullable<ToolLoopConfig["tools"]>>();
  });
});
