import { describe, expectTypeOf, it } from "vitest";
import type {
  LLMResponse,
  ModelCallRequest,
  RunRequest,
  ToolCallRequest,
  ToolLoopConfig,
  ToolLoopMiddleware,
  ToolLoopResult,
  ToolResult,
} from "../src/index.js";

describe("ToolLoopMiddleware", () => {
  it("each hook takes its request and a next of the same shape", () => {
    const middleware: ToolLoopMiddleware = {
      name: "typed",
      async wrapRun(request, next) {
        expectTypeOf(request).toEqualTypeOf<RunRequest>();
        expectTypeOf(next).returns.toEqualTypeOf<Promise<ToolLoopResult>>();
        return next(request);
      },
      async wrapModelCall(request, next) {
        expectTypeOf(request).toEqualTypeOf<ModelCallRequest>();
        expectTypeOf(request.iteration).toEqualTypeOf<number>();
        expectTypeOf(next).returns.toEqualTypeOf<Promise<LLMResponse>>();
        return next({ ...request, options: { ...request.options, temperature: 0 } });
      },
      async wrapToolCall(request, next) {
        expectTypeOf(request).toEqualTypeOf<ToolCallRequest>();
        expectTypeOf(request.context.signal).toEqualTypeOf<AbortSignal>();
        expectTypeOf(next).returns.toEqualTypeOf<Promise<ToolResult>>();
        return next(request);
      },
    };
    expectTypeOf(middleware).toMatchTypeOf<NonNullable<ToolLoopConfig["middleware"]>[number]>();
  });

  it("a name is required; every hook is optional", () => {
    expectTypeOf<{ name: string }>().toMatchTypeOf<ToolLoopMiddleware>();
    expectTypeOf<{ wrapRun: ToolLoopMiddleware["wrapRun"] }>().not.toMatchTypeOf<ToolLoopMiddleware>();
  });
});
