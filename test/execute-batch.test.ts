import { describe, expect, it, vi } from "vitest";
import {
  errorResult,
  isToolExecutionError,
  type ProgressUpdate,
  type Tool,
  type ToolContext,
  ToolRegistry,
  type ToolRequest,
  ToolResult,
} from "../src/index.js";

/** A tool that waits for its release, and records when it started and ended. */
function gatedTool(name: string, log: string[]): Tool & { release: (id: string) => void } {
  const gates = new Map<string, () => void>();
  const waiters = new Map<string, Promise<void>>();
  const gate = (id: string) => {
    let promise = waiters.get(id);
    if (promise === undefined) {
      promise = new Promise<void>((resolve) => gates.set(id, resolve));
      waiters.set(id, promise);
    }
    return promise;
  };
  return {
    name,
    description: name,
    parameters: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
    async execute(args) {
      const id = String(args.id);
      log.push(`start ${id}`);
      await gate(id);
      log.push(`end ${id}`);
      return `done ${id}`;
    },
    release(id: string) {
      void gate(id);
      gates.get(id)?.();
    },
  };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

function registryWith(...tools: Tool[]): ToolRegistry {
  const registry = new ToolRegistry();
  for (const tool of tools) registry.register(tool);
  return registry;
}

const echo: Tool = {
  name: "echo",
  description: "echo",
  parameters: { type: "object", properties: { text: { type: "string" } } },
  execute: (args) => String(args.text ?? ""),
};
const fail: Tool = {
  name: "fail",
  description: "always fails",
  parameters: { type: "object" },
  execute: () => {
    throw new Error("boom");
  },
};

describe("executeBatch", () => {
  it("runs every request and keys results by id (default: the index as a string), with metadata", async () => {
    const registry = registryWith(echo);
    const batch = await registry.executeBatch([
      { name: "echo", parameters: { text: "a" } },
      { id: "named", name: "echo", parameters: { text: "b" } },
    ]);
    expect(Object.keys(batch.results)).toEqual(["0", "named"]);
    expect(batch.results["0"]?.forLLM).toBe("a");
    expect(batch.results.named?.forLLM).toBe("b");
    expect(Object.keys(batch.errors)).toEqual([]);
    expect(batch.results.named?.metadata).toMatchObject({
      toolName: "echo",
      toolCallId: "named",
      parameters: { text: "b" },
    });
    expect(batch.endTime).toBeGreaterThanOrEqual(batch.startTime);
    expect(batch.durationMs).toBeGreaterThanOrEqual(0);
    expect(batch.endTime - batch.startTime).toBeCloseTo(batch.durationMs, 2);
  });

  it("an empty batch resolves at once with nothing in it", async () => {
    const batch = await new ToolRegistry().executeBatch([]);
    expect(batch.results).toEqual({});
    expect(batch.errors).toEqual({});
    expect(batch.durationMs).toBe(0);
  });

  it("runs independent requests concurrently (default: unbounded)", async () => {
    const log: string[] = [];
    const slow = gatedTool("slow", log);
    const registry = registryWith(slow);
    const pending = registry.executeBatch(["a", "b", "c"].map((id) => ({ id, name: "slow", parameters: { id } })));
    await flush();
    expect(log).toEqual(["start a", "start b", "start c"]);
    for (const id of ["c", "a", "b"]) slow.release(id);
    const batch = await pending;
    expect(log.slice(3)).toEqual(["end c", "end a", "end b"]);
    expect(batch.results.a?.forLLM).toBe("done a");
    expect(batch.results.c?.forLLM).toBe("done c");
  });

  it("runs at most `concurrency` requests at once", async () => {
    const log: string[] = [];
    const slow = gatedTool("slow", log);
    const registry = registryWith(slow);
    const pending = registry.executeBatch(
      ["a", "b", "c", "d"].map((id) => ({ id, name: "slow", parameters: { id } })),
      { concurrency: 2 },
    );
    await flush();
    expect(log).toEqual(["start a", "start b"]);
    slow.release("b");
    await flush();
    expect(log).toEqual(["start a", "start b", "end b", "start c"]);
    for (const id of ["a", "c", "d"]) slow.release(id);
    const batch = await pending;
    expect(Object.keys(batch.results).sort()).toEqual(["a", "b", "c", "d"]);
  });

  it("starts a request only after every dependency finished", async () => {
    const log: string[] = [];
    const slow = gatedTool("slow", log);
    const registry = registryWith(slow);
    const pending = registry.executeBatch([
      { id: "c", name: "slow", parameters: { id: "c" }, dependsOn: ["a", "b"] },
      { id: "a", name: "slow", parameters: { id: "a" } },
      { id: "b", name: "slow", parameters: { id: "b" } },
    ]);
    await flush();
    expect(log).toEqual(["start a", "start b"]);
    slow.release("a");
    await flush();
    expect(log).not.toContain("start c");
    slow.release("b");
    await flush();
    expect(log).toContain("start c");
    slow.release("c");
    const batch = await pending;
    expect(batch.results.c?.forLLM).toBe("done c");
  });

  it("does not run a dependent of a failed request: an error result names the dependency, in errors too; the chain follows", async () => {
    const registry = registryWith(echo, fail);
    const spy = vi.spyOn(echo, "execute");
    const batch = await registry.executeBatch([
      { id: "first", name: "fail", parameters: {} },
      { id: "second", name: "echo", parameters: { text: "x" }, dependsOn: ["first"] },
      { id: "third", name: "echo", parameters: { text: "y" }, dependsOn: ["second"] },
      { id: "free", name: "echo", parameters: { text: "z" } },
    ]);
    expect(spy).toHaveBeenCalledTimes(1);
    spy.mockRestore();
    expect(batch.results.free?.forLLM).toBe("z");
    expect(batch.results.second?.isError).toBe(true);
    expect(batch.results.second?.forLLM).toMatchInlineSnapshot(
      `"tool "echo" was not run: its dependency "first" failed"`,
    );
    expect(batch.results.third?.forLLM).toMatchInlineSnapshot(
      `"tool "echo" was not run: its dependency "second" failed"`,
    );
    expect(Object.keys(batch.errors).sort()).toEqual(["first", "second", "third"]);
    expect(batch.errors.first?.code).toBe("tool_failed");
    expect(batch.errors.second?.code).toBe("dependency_failed");
    expect(isToolExecutionError(batch.errors.second)).toBe(true);
    expect(batch.results.second?.metadata).toMatchObject({ toolName: "echo", toolCallId: "second", durationMs: 0 });
  });

  it("errors holds the ToolExecutionError of every failed request: unknown tool, invalid arguments, an error result without err", async () => {
    const plainError: Tool = {
      name: "plain_error",
      description: "returns an error result without err",
      parameters: { type: "object" },
      execute: () => errorResult("quota exceeded"),
    };
    const registry = registryWith(echo, plainError);
    const batch = await registry.executeBatch([
      { id: "unknown", name: "nope", parameters: {} },
      { id: "invalid", name: "echo", parameters: { text: 5 } },
      { id: "plain", name: "plain_error", parameters: {} },
    ]);
    expect(batch.errors.unknown?.code).toBe("tool_not_found");
    expect(batch.errors.invalid?.code).toBe("invalid_arguments");
    expect(batch.errors.plain?.code).toBe("tool_failed");
    expect(batch.errors.plain?.message).toBe("quota exceeded");
    expect(batch.errors.plain?.toolName).toBe("plain_error");
    for (const id of ["unknown", "invalid", "plain"]) expect(batch.errors[id]).toBe(batch.results[id]?.err);
    for (const id of ["unknown", "invalid", "plain"]) expect(batch.results[id]?.metadata?.toolCallId).toBe(id);
  });

  it("a long chain behind a failure is answered without growing the stack", async () => {
    const registry = registryWith(echo, fail);
    const requests: ToolRequest[] = [{ id: "r0", name: "fail", parameters: {} }];
    for (let index = 1; index < 20_000; index++) {
      requests.push({ id: `r${index}`, name: "echo", parameters: {}, dependsOn: [`r${index - 1}`] });
    }
    const batch = await registry.executeBatch(requests);
    expect(Object.keys(batch.errors)).toHaveLength(20_000);
    expect(batch.results.r19999?.forLLM).toContain('its dependency "r19998" failed');
  });

  it.each<[string, unknown, RegExp]>([
    ["not an array", { name: "echo" }, /requests must be an array of requests, got \{"name":"echo"\}/],
    [
      "a hole in a sparse array",
      Object.assign(new Array(2), { 1: { name: "echo", parameters: {} } }),
      /requests\[0\] must be a request object, got undefined/,
    ],
    [
      "a hole at the end (nothing runs before the TypeError)",
      [{ name: "echo", parameters: {} }, undefined],
      /requests\[1\] must be a request object, got undefined/,
    ],
    ["a request that is not an object", ["echo"], /requests\[0\] must be a request object, got "echo"/],
    ["a request without a string name", [{ parameters: {} }], /requests\[0\]\.name must be a string, got undefined/],
    [
      "an id that is not a string",
      [{ id: 7, name: "echo", parameters: {} }],
      /requests\[0\]\.id must be a string, got 7/,
    ],
    [
      "an id used twice (an explicit id equal to a default one too)",
      [
        { name: "echo", parameters: {} },
        { id: "0", name: "echo", parameters: {} },
      ],
      /requests\[1\]\.id "0" is used by an earlier request/,
    ],
    [
      "an unknown dependency",
      [{ name: "echo", parameters: {}, dependsOn: ["ghost"] }],
      /requests\[0\]\.dependsOn must be ids of requests in this batch, got "ghost"/,
    ],
    [
      "dependsOn that is not an array",
      [{ name: "echo", parameters: {}, dependsOn: "0" }],
      /requests\[0\]\.dependsOn must be an array of request ids, got "0"/,
    ],
    [
      "a request depending on itself",
      [{ id: "a", name: "echo", parameters: {}, dependsOn: ["a"] }],
      /cycle: "a" → "a" \(each depends on the next\)/,
    ],
    [
      "a cycle of three behind a free request",
      [
        { id: "free", name: "echo", parameters: {} },
        { id: "a", name: "echo", parameters: {}, dependsOn: ["c", "free"] },
        { id: "b", name: "echo", parameters: {}, dependsOn: ["a"] },
        { id: "c", name: "echo", parameters: {}, dependsOn: ["b"] },
        { id: "after", name: "echo", parameters: {}, dependsOn: ["c"] },
      ],
      /cycle: "a" → "c" → "b" → "a" \(each depends on the next\)/,
    ],
  ])("%s is a TypeError before anything runs", (_label, requests, message) => {
    const registry = registryWith(echo);
    const spy = vi.spyOn(echo, "execute");
    expect(() => registry.executeBatch(requests as ToolRequest[])).toThrow(TypeError);
    expect(() => registry.executeBatch(requests as ToolRequest[])).toThrow(message);
    expect(spy).not.toHaveBeenCalled();
    spy.mockRestore();
  });

  it.each<[string, unknown, string]>([
    ["concurrency 0", { concurrency: 0 }, "executeBatch: concurrency must be an integer ≥ 1 or Infinity, got 0"],
    ["concurrency 1.5", { concurrency: 1.5 }, "executeBatch: concurrency must be an integer ≥ 1 or Infinity, got 1.5"],
    ["a negative timeout", { timeoutMs: -1 }, "executeBatch: timeoutMs must be"],
    ["a signal that is not one", { signal: "stop" }, 'executeBatch: signal must be an AbortSignal, got "stop"'],
    ["onProgress not a function", { onProgress: 1 }, "executeBatch: onProgress must be a function, got 1"],
    ["options null", null, "executeBatch: options must be an object, got null"],
  ])("%s is a TypeError", (_label, options, message) => {
    expect(() => registryWith(echo).executeBatch([], options as never)).toThrow(message);
  });

  it("hostile ids (__proto__, constructor) are plain keys of null-prototype objects", async () => {
    const registry = registryWith(echo, fail);
    const batch = await registry.executeBatch([
      { id: "__proto__", name: "echo", parameters: { text: "p" } },
      { id: "constructor", name: "fail", parameters: {} },
      { id: "toString", name: "echo", parameters: {}, dependsOn: ["constructor", "__proto__"] },
    ]);
    expect(Object.getPrototypeOf(batch.results)).toBeNull();
    expect(Object.getPrototypeOf(batch.errors)).toBeNull();
    expect(Object.keys(batch.results).sort()).toEqual(["__proto__", "constructor", "toString"]);
    expect(batch.results["__proto__" as string]?.forLLM).toBe("p");
    expect(batch.results["toString" as string]?.forLLM).toContain('its dependency "constructor" failed');
    expect(({} as Record<string, unknown>).forLLM).toBeUndefined();
  });

  it("timeoutMs applies to each request", async () => {
    const hang: Tool = {
      name: "hang",
      description: "never ends",
      parameters: { type: "object" },
      execute: () => new Promise<string>(() => {}),
    };
    const registry = registryWith(hang, echo);
    const batch = await registry.executeBatch(
      [
        { id: "h", name: "hang", parameters: {} },
        { id: "e", name: "echo", parameters: { text: "ok" }, dependsOn: ["h"] },
      ],
      { timeoutMs: 20 },
    );
    expect(batch.errors.h?.code).toBe("timeout");
    expect(batch.errors.e?.code).toBe("dependency_failed");
  });

  it("the signal aborts running requests, and those not started yet are answered 'aborted' without running", async () => {
    const controller = new AbortController();
    const seen: AbortSignal[] = [];
    const waits: Tool = {
      name: "waits",
      description: "waits for its signal",
      parameters: { type: "object" },
      execute: (_args, context: ToolContext) =>
        new Promise<string>((_resolve, reject) => {
          seen.push(context.signal);
          context.signal.addEventListener("abort", () => reject(context.signal.reason));
        }),
    };
    const registry = registryWith(waits, echo);
    const spy = vi.spyOn(echo, "execute");
    const pending = registry.executeBatch(
      [
        { id: "w", name: "waits", parameters: {} },
        { id: "queued", name: "echo", parameters: {} },
        { id: "after", name: "echo", parameters: {}, dependsOn: ["w"] },
      ],
      { signal: controller.signal, concurrency: 1 },
    );
    await flush();
    controller.abort(new Error("user stop"));
    const batch = await pending;
    expect(seen[0]?.aborted).toBe(true);
    expect(spy).not.toHaveBeenCalled();
    spy.mockRestore();
    expect(batch.errors.w?.code).toBe("aborted");
    expect(batch.errors.queued?.code).toBe("aborted");
    expect(batch.errors.after?.code).toBe("aborted");
  });

  it("onProgress gets every request's updates with its id, and a final one per request (also one not run)", async () => {
    const reporting: Tool = {
      name: "reporting",
      description: "reports twice",
      parameters: { type: "object" },
      execute: (_args, context) => {
        context.reportProgress(0.5, "half");
        context.reportProgress(1);
        return "ok";
      },
    };
    const updates: ProgressUpdate[] = [];
    await registryWith(reporting, fail).executeBatch(
      [
        { id: "r", name: "reporting", parameters: {} },
        { id: "f", name: "fail", parameters: {} },
        { id: "d", name: "reporting", parameters: {}, dependsOn: ["f"] },
      ],
      { onProgress: (update) => updates.push(update) },
    );
    expect(updates.filter((update) => update.toolCallId === "r")).toEqual([
      { toolCallId: "r", toolName: "reporting", progress: 0.5, message: "half", status: "running" },
      { toolCallId: "r", toolName: "reporting", progress: 1, status: "running" },
      { toolCallId: "r", toolName: "reporting", status: "completed" },
    ]);
    expect(updates.filter((update) => update.toolCallId !== "r")).toEqual([
      { toolCallId: "f", toolName: "fail", status: "failed" },
      { toolCallId: "d", toolName: "reporting", status: "failed" },
    ]);
  });

  it("two requests of one tool that returns the same ToolResult instance get results of their own", async () => {
    const shared = new ToolResult({ forLLM: "same" });
    const same: Tool = { name: "same", description: "same", parameters: { type: "object" }, execute: () => shared };
    const batch = await registryWith(same).executeBatch([
      { name: "same", parameters: {} },
      { name: "same", parameters: {} },
    ]);
    expect(batch.results["0"]).not.toBe(batch.results["1"]);
    expect(batch.results["0"]?.metadata?.toolCallId).toBe("0");
    expect(batch.results["1"]?.metadata?.toolCallId).toBe("1");
    expect(shared.metadata).toBeUndefined();
  });

  it("a cycle of 100,000 requests is named by its first ids, in a bounded message", () => {
    const registry = registryWith(echo);
    const size = 100_000;
    const requests: ToolRequest[] = Array.from({ length: size }, (_, index) => ({
      id: `r${index}`,
      name: "echo",
      parameters: {},
      dependsOn: [`r${(index + 1) % size}`],
    }));
    let message = "";
    try {
      registry.executeBatch(requests);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(
      /form a cycle: "r0" → "r1" → .* → "r9" → … \(99990 more\) → "r0" \(each depends on the next\)$/,
    );
    expect(message.length).toBeLessThan(400);
  });

  it("a result whose getters throw still settles the batch: the request is an error, its dependents are not run", async () => {
    // A result class whose err is a prototype getter that throws (a copy keeps the prototype).
    class Broken extends ToolResult {}
    Object.defineProperty(Broken.prototype, "err", {
      get() {
        throw new Error("err accessor broke");
      },
      set() {},
    });
    const broken: Tool = {
      name: "broken",
      description: "returns an unreadable error result",
      parameters: { type: "object" },
      execute: () => new Broken({ forLLM: "x", isError: true }),
    };
    const registry = registryWith(broken, echo);
    const batch = await registry.executeBatch([
      { id: "b", name: "broken", parameters: {} },
      { id: "after", name: "echo", parameters: {}, dependsOn: ["b"] },
    ]);
    expect(batch.errors.b?.code).toBe("no_result");
    expect(batch.errors.after?.code).toBe("dependency_failed");
  });
});
