import { describe, expect, it } from "vitest";
import { newToolResult, type ProgressUpdate, type Tool, type ToolContext, ToolRegistry } from "../src/index.js";

const flush = () => new Promise((resolve) => setImmediate(resolve));

/** A tool that reports progress each time the test releases it, until it is told to finish. */
function steppedTool() {
  let step: ((value: "next" | "finish") => void) | undefined;
  const signals: AbortSignal[] = [];
  const tool: Tool = {
    name: "stepped",
    description: "reports progress step by step",
    parameters: { type: "object" },
    async execute(_args, context: ToolContext) {
      signals.push(context.signal);
      for (let index = 1; ; index++) {
        const command = await new Promise<"next" | "finish">((resolve, reject) => {
          step = resolve;
          context.signal.addEventListener("abort", () => reject(context.signal.reason), { once: true });
        });
        if (command === "finish") return "finished";
        context.reportProgress(index / 4, `step ${index}`);
      }
    },
  };
  return { tool, signals, send: (command: "next" | "finish") => step?.(command) };
}

async function collect(progress: AsyncIterable<ProgressUpdate>): Promise<ProgressUpdate[]> {
  const updates: ProgressUpdate[] = [];
  for await (const update of progress) updates.push(update);
  return updates;
}

describe("executeAsync", () => {
  it("starts at once and returns the handle; progress yields every update then the final one and ends", async () => {
    const { tool, send } = steppedTool();
    const registry = new ToolRegistry();
    registry.register(tool);
    const execution = registry.executeAsync({ id: "job-1", name: "stepped", parameters: {} });
    expect(execution.id).toBe("job-1");
    const updates = collect(execution.progress);
    await flush();
    send("next");
    await flush();
    send("next");
    await flush();
    send("finish");
    const result = await execution.result;
    expect(result.forLLM).toBe("finished");
    expect(result.metadata).toMatchObject({ toolName: "stepped", toolCallId: "job-1", parameters: {} });
    expect(await updates).toEqual([
      { toolCallId: "job-1", toolName: "stepped", progress: 0.25, message: "step 1", status: "running" },
      { toolCallId: "job-1", toolName: "stepped", progress: 0.5, message: "step 2", status: "running" },
      { toolCallId: "job-1", toolName: "stepped", status: "completed" },
    ]);
  });

  it("updates read after the call ended are still there (buffered), and onProgress sees them too", async () => {
    const tool: Tool = {
      name: "quick",
      description: "reports and ends",
      parameters: { type: "object" },
      execute: (_args, context) => {
        context.reportProgress(0.1);
        context.reportProgress(0.9, "almost");
        return "done";
      },
    };
    const registry = new ToolRegistry();
    registry.register(tool);
    const seen: ProgressUpdate[] = [];
    const execution = registry.executeAsync(
      { name: "quick", parameters: {} },
      { toolCallId: "call_7", onProgress: (update) => seen.push(update) },
    );
    await execution.result;
    const updates = await collect(execution.progress);
    expect(updates.map((update) => update.status)).toEqual(["running", "running", "completed"]);
    expect(updates[0]?.toolCallId).toBe("call_7");
    expect(seen).toEqual(updates);
  });

  it("cancel() aborts the tool's signal and settles result with an aborted error result; the last update is cancelled", async () => {
    const { tool, signals } = steppedTool();
    const registry = new ToolRegistry();
    registry.register(tool);
    const execution = registry.executeAsync({ name: "stepped", parameters: {} });
    const updates = collect(execution.progress);
    await flush();
    execution.cancel();
    const result = await execution.result;
    expect(signals[0]?.aborted).toBe(true);
    expect(result.isError).toBe(true);
    expect(result.err).toMatchObject({ name: "ToolExecutionError", code: "aborted" });
    expect(result.forLLM).toMatchInlineSnapshot(`"tool "stepped" was aborted before it finished"`);
    expect((await updates).at(-1)).toMatchObject({ status: "cancelled" });
    execution.cancel("again"); // no effect once ended
  });

  it("cancel() also ends a tool that ignores its signal, with the given reason as the cause", async () => {
    const registry = new ToolRegistry();
    registry.register({
      name: "deaf",
      description: "never ends, never reads its signal",
      parameters: { type: "object" },
      execute: () => new Promise<string>(() => {}),
    });
    const execution = registry.executeAsync({ name: "deaf", parameters: {} });
    const reason = new Error("user pressed stop");
    execution.cancel(reason);
    const result = await execution.result;
    expect(result.err?.cause).toBe(reason);
  });

  it("the caller's signal aborts it, and an already aborted one keeps the tool from running", async () => {
    const { tool, signals } = steppedTool();
    const registry = new ToolRegistry();
    registry.register(tool);
    const controller = new AbortController();
    const execution = registry.executeAsync({ name: "stepped", parameters: {} }, { signal: controller.signal });
    await flush();
    controller.abort();
    expect((await execution.result).err).toMatchObject({ code: "aborted" });

    const again = registry.executeAsync({ name: "stepped", parameters: {} }, { signal: controller.signal });
    expect((await again.result).forLLM).toMatchInlineSnapshot(`"tool "stepped" was not run: the call was aborted"`);
    expect(signals).toHaveLength(1);
  });

  it("leaves no listener on the caller's signal once it ended", async () => {
    const registry = new ToolRegistry();
    registry.register({ name: "t", description: "t", parameters: { type: "object" }, execute: async () => "ok" });
    const controller = new AbortController();
    let added = 0;
    let removed = 0;
    const signal = controller.signal;
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = ((...args: Parameters<typeof add>) => {
      added++;
      add(...args);
    }) as typeof add;
    signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
      removed++;
      remove(...args);
    }) as typeof remove;
    for (let index = 0; index < 5; index++)
      await registry.executeAsync({ name: "t", parameters: {} }, { signal }).result;
    expect(added).toBeGreaterThan(0);
    expect(removed).toBe(added);
  });

  it("without ids it makes a unique one; unknown tools and invalid arguments are error results with metadata", async () => {
    const registry = new ToolRegistry();
    registry.register({
      name: "needs",
      description: "needs x",
      parameters: { type: "object", properties: { x: { type: "string" } }, required: ["x"] },
      execute: () => "ok",
    });
    const first = registry.executeAsync({ name: "nope", parameters: {} });
    const second = registry.executeAsync({ name: "needs", parameters: {} });
    expect(first.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(first.id).not.toBe(second.id);
    expect((await first.result).err).toMatchObject({ code: "tool_not_found" });
    expect((await first.result).metadata?.toolCallId).toBe(first.id);
    expect((await second.result).err).toMatchObject({ code: "invalid_arguments" });
    expect((await collect(second.progress)).map((update) => update.status)).toEqual(["failed"]);
  });

  it("a slow consumer never blocks the tool: at most 1,000 unread updates are kept, the final one always", async () => {
    const registry = new ToolRegistry();
    registry.register({
      name: "chatty",
      description: "reports a lot",
      parameters: { type: "object" },
      execute: (_args, context) => {
        for (let index = 0; index < 100_000; index++) context.reportProgress(index / 100_000, `update ${index}`);
        return "done";
      },
    });
    const execution = registry.executeAsync({ name: "chatty", parameters: {} });
    expect((await execution.result).forLLM).toBe("done");
    const updates = await collect(execution.progress);
    expect(updates).toHaveLength(1_000);
    expect(updates.at(-1)?.status).toBe("completed");
    expect(updates.at(-2)?.message).toBe("update 99999");
  });

  it("a consumer that stops early (break) discards the rest", async () => {
    const { tool, send } = steppedTool();
    const registry = new ToolRegistry();
    registry.register(tool);
    const execution = registry.executeAsync({ name: "stepped", parameters: {} });
    await flush();
    send("next");
    for await (const update of execution.progress) {
      expect(update.message).toBe("step 1");
      break;
    }
    await flush();
    send("next");
    await flush();
    send("finish");
    await execution.result;
    expect(await collect(execution.progress)).toEqual([]);
  });

  it.each<[string, unknown, unknown, string]>([
    ["a request that is not an object", "echo", {}, 'executeAsync: request must be a request object, got "echo"'],
    ["a request without a name", { parameters: {} }, {}, "executeAsync: request.name must be a string, got undefined"],
    [
      "dependencies",
      { name: "t", parameters: {}, dependsOn: ["a"] },
      {},
      'executeAsync: request.dependsOn must be absent (dependencies are for executeBatch), got ["a"]',
    ],
    [
      "an id that is not a string",
      { id: 1, name: "t", parameters: {} },
      {},
      "executeAsync: request.id must be a string, got 1",
    ],
    [
      "onProgress not a function",
      { name: "t", parameters: {} },
      { onProgress: "x" },
      'executeAsync: onProgress must be a function, got "x"',
    ],
    [
      "a bad signal",
      { name: "t", parameters: {} },
      { signal: {} },
      "executeAsync: signal must be an AbortSignal, got {}",
    ],
    ["a bad timeout", { name: "t", parameters: {} }, { timeoutMs: 0 }, "executeAsync: timeoutMs must be"],
    [
      "bad metadata",
      { name: "t", parameters: {} },
      { metadata: 5 },
      "executeAsync: metadata must be an object of strings, got 5",
    ],
  ])("%s is a TypeError, thrown at once", (_label, request, options, message) => {
    expect(() => new ToolRegistry().executeAsync(request as never, options as never)).toThrow(message);
  });

  it("a result with a throwing getter becomes an error result: result resolves and progress ends", async () => {
    const registry = new ToolRegistry();
    registry.register({
      name: "odd",
      description: "returns a result whose own isError getter throws",
      parameters: { type: "object" },
      execute: () =>
        Object.defineProperty(newToolResult("x"), "isError", {
          enumerable: true,
          get() {
            throw new Error("isError accessor broke");
          },
        }),
    });
    const execution = registry.executeAsync({ name: "odd", parameters: {} });
    const result = await execution.result;
    expect(result.err).toMatchObject({ code: "no_result" });
    expect(result.forLLM).toMatchInlineSnapshot(
      `"tool "odd" returned a result that cannot be read: isError accessor broke"`,
    );
    expect((await collect(execution.progress)).map((update) => update.status)).toEqual(["failed"]);
    const direct = await registry.execute("odd", {}, { onProgress: () => {} });
    expect(direct.err).toMatchObject({ code: "no_result" });
  });
});
