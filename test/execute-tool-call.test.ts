import { getEventListeners } from "node:events";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as z from "zod";
import {
  type AsyncCallback,
  type AsyncTool,
  asyncResult,
  defineTool,
  errorResult,
  isToolExecutionError,
  newToolResult,
  type Tool,
  type ToolContext,
  ToolRegistry,
  type ToolResult,
} from "../src/index.js";
import { captureLogger } from "./helpers/capture-logger.js";
import { registryWith, tool } from "./helpers/loop-tools.js";

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}

/** A tool that never settles and records the context it was given. */
function hungTool(name = "hang") {
  const contexts: ToolContext[] = [];
  const hung = tool(name, (_args, context) => {
    contexts.push(context);
    return new Promise<ToolResult>(() => {});
  });
  return { tool: hung, contexts };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("failures become error results naming the tool, with err set", () => {
  it.each([
    [
      "throws an Error",
      () => {
        throw new Error("disk full");
      },
      'tool "t" failed: disk full',
    ],
    [
      "rejects with an Error",
      async () => Promise.reject(new RangeError("out of range")),
      'tool "t" failed: out of range',
    ],
    [
      "throws a string",
      () => {
        throw "plain text";
      },
      'tool "t" failed: plain text',
    ],
    [
      "throws a number",
      () => {
        throw 42;
      },
      'tool "t" failed: 42',
    ],
    [
      "rejects with an object",
      () => Promise.reject({ code: "E_BUSY" }),
      'tool "t" failed: threw a non-Error value: object',
    ],
    [
      "throws undefined",
      () => {
        throw undefined;
      },
      'tool "t" failed: undefined',
    ],
    [
      "throws null",
      () => {
        throw null;
      },
      'tool "t" failed: null',
    ],
  ])("a tool that %s", async (_case, execute, message) => {
    const result = await registryWith(tool("t", execute as Tool["execute"])).execute("t", {});
    expect(result.isError).toBe(true);
    expect(result.forLLM).toBe(message);
    expect(result.contentForLLM()).toBe(message);
    expect(isToolExecutionError(result.err)).toBe(true);
    expect(result.err).toMatchObject({ toolName: "t", code: "tool_failed", message });
  });

  it("keeps the original Error as the cause", async () => {
    const original = new Error("disk full");
    const result = await registryWith(
      tool("t", () => {
        throw original;
      }),
    ).execute("t", {});
    expect(result.err?.cause).toBe(original);
  });

  it("keeps a thrown non-Error value itself as err.cause, not a wrapper", async () => {
    const thrown = { code: "E_BUSY" };
    const result = await registryWith(tool("t", () => Promise.reject(thrown))).execute("t", {});
    expect(result.err?.cause).toBe(thrown);
  });

  it.each([
    ["undefined", () => undefined],
    ["null", () => null],
    ["a promise of undefined", async () => undefined],
  ])("a tool that returns %s gets an error result naming it", async (_case, execute) => {
    const result = await registryWith(tool("quiet", execute as unknown as Tool["execute"])).execute("quiet", {});
    expect(result.isError).toBe(true);
    expect(result.forLLM).toMatchInlineSnapshot(`"tool "quiet" returned no result"`);
    expect(result.err).toMatchObject({ toolName: "quiet", code: "no_result" });
  });

  it.each([
    ["a number", () => 42, "number"],
    ["a plain object", () => ({ forLLM: "looks like a result" }), "object"],
  ])("a tool that returns %s gets an error result", async (_case, execute, type) => {
    const result = await registryWith(tool("odd", execute as unknown as Tool["execute"])).execute("odd", {});
    expect(result.forLLM).toBe(`tool "odd" returned an invalid result: expected a ToolResult or a string, got ${type}`);
    expect(result.err).toMatchObject({ code: "no_result" });
  });

  it.each([
    ["parts that are not an array", { 0: "x" }, "parts must be an array, got object"],
    ["a part with an unknown key", [{ type: "text", text: "x", evil: 1 }], 'parts[0] has an unknown key "evil"'],
    [
      "a part with a data: URL",
      [{ type: "file", mediaType: "application/pdf", data: `data:application/pdf;base64,${"A".repeat(1_000_000)}` }],
      "parts[0] data must be base64 without a data: prefix",
    ],
  ])("a tool that returns %s gets an invalid-result answer (no_result), bounded", async (_case, parts, problem) => {
    const shot = tool("shot", () => ({ forLLM: "x", parts, [Symbol.for("toolloop.ToolResult")]: true }) as never);
    const result = await registryWith(shot).execute("shot", {});
    expect(result.forLLM).toBe(`tool "shot" returned an invalid result: ${problem}`);
    expect(result.err).toMatchObject({ code: "no_result" });
  });

  it("accepts a string and a ToolResult from another copy of toolloop", async () => {
    const foreign = Object.assign(Object.create({ [Symbol.for("toolloop.ToolResult")]: true }), {
      forLLM: "from elsewhere",
    }) as ToolResult;
    const registry = registryWith(
      tool("text", () => "plain" as unknown as ToolResult),
      tool("foreign", () => foreign),
    );
    expect((await registry.execute("text", {})).forLLM).toBe("plain");
    // A copy carrying this call's metadata (issue 10), of the same prototype; the tool's own object is untouched.
    const result = await registry.execute("foreign", {});
    expect(result).not.toBe(foreign);
    expect(Object.getPrototypeOf(result)).toBe(Object.getPrototypeOf(foreign));
    expect(result.forLLM).toBe("from elsewhere");
    expect(result.metadata?.toolName).toBe("foreign");
    expect(foreign.metadata).toBeUndefined();
  });

  it("other calls running at the same time are unaffected", async () => {
    const registry = registryWith(
      tool("ok", async () => newToolResult("fine")),
      tool("bad", async () => {
        throw new Error("boom");
      }),
      tool("none", () => undefined as unknown as ToolResult),
    );
    const [bad, ok, none, ok2] = await Promise.all([
      registry.execute("bad", {}),
      registry.execute("ok", {}),
      registry.execute("none", {}),
      registry.execute("ok", {}),
    ]);
    expect([bad?.isError, ok?.isError, none?.isError, ok2?.isError]).toEqual([true, false, true, false]);
    expect(ok?.forLLM).toBe("fine");
    expect(ok2?.forLLM).toBe("fine");
  });
});

describe("timeouts", () => {
  it("turns a hung tool into an error result naming it, and aborts its signal", async () => {
    const { tool: hung, contexts } = hungTool();
    const result = await registryWith(hung).execute("hang", {}, { timeoutMs: 5 });
    expect(result.isError).toBe(true);
    expect(result.forLLM).toMatchInlineSnapshot(`"tool "hang" timed out after 5 ms"`);
    expect(result.err).toMatchObject({ toolName: "hang", code: "timeout" });
    expect(contexts[0]?.signal.aborted).toBe(true);
    expect(contexts[0]?.signal.reason).toMatchObject({ name: "TimeoutError" });
  });

  it("fires on the timer (fake timers), not before", async () => {
    vi.useFakeTimers();
    const { tool: hung, contexts } = hungTool();
    let settled: ToolResult | undefined;
    const pending = registryWith(hung)
      .execute("hang", {}, { timeoutMs: 1000 })
      .then((result) => {
        settled = result;
      });
    await vi.advanceTimersByTimeAsync(999);
    expect(settled).toBeUndefined();
    expect(contexts[0]?.signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await pending;
    expect(settled?.err).toMatchObject({ code: "timeout" });
  });

  it("does not touch a tool that finishes in time and clears its timer", async () => {
    vi.useFakeTimers();
    const result = await registryWith(tool("fast", async () => newToolResult("done"))).execute(
      "fast",
      {},
      { timeoutMs: 1000 },
    );
    expect(result.forLLM).toBe("done");
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a tool that honours its signal ends with the timeout result too", async () => {
    const polite = tool(
      "polite",
      (_args, context) =>
        new Promise<ToolResult>((_resolve, reject) => {
          context.signal.addEventListener("abort", () => reject(context.signal.reason));
        }),
    );
    const result = await registryWith(polite).execute("polite", {}, { timeoutMs: 5 });
    expect(result.forLLM).toBe('tool "polite" timed out after 5 ms');
  });
});

describe("aborts", () => {
  it("a call whose signal is already aborted does not run the tool", async () => {
    const execute = vi.fn(() => newToolResult("ran"));
    const controller = new AbortController();
    controller.abort(new Error("user cancelled"));
    const result = await registryWith(tool("t", execute)).execute("t", {}, { signal: controller.signal });
    expect(execute).not.toHaveBeenCalled();
    expect(result.forLLM).toMatchInlineSnapshot(`"tool "t" was not run: the call was aborted"`);
    expect(result.err).toMatchObject({ code: "aborted", cause: controller.signal.reason });
  });

  it.each([
    ["without a timeout", undefined],
    ["with a timeout", 60_000],
  ])("an abort while running ends the call at once and aborts the tool's signal (%s)", async (_case, timeoutMs) => {
    const { tool: hung, contexts } = hungTool();
    const controller = new AbortController();
    const pending = registryWith(hung).execute(
      "hang",
      {},
      {
        signal: controller.signal,
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
      },
    );
    await vi.waitFor(() => expect(contexts).toHaveLength(1));
    expect(contexts[0]?.signal.aborted).toBe(false);
    const reason = new Error("stop");
    controller.abort(reason);
    const result = await pending;
    expect(result.forLLM).toMatchInlineSnapshot(`"tool "hang" was aborted before it finished"`);
    expect(result.err).toMatchObject({ toolName: "hang", code: "aborted", cause: reason });
    expect(contexts[0]?.signal.aborted).toBe(true);
    expect(contexts[0]?.signal.reason).toBe(reason);
  });

  it("removes its abort listeners from the caller's signal when the call ends", async () => {
    const controller = new AbortController();
    const registry = registryWith(tool("t", async () => newToolResult("ok")));
    await registry.execute("t", {}, { signal: controller.signal, timeoutMs: 1000 });
    await registry.execute("t", {}, { signal: controller.signal });
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("nothing a tool adds to its signal outlives the call: 5,000 calls leave no listener on the caller's signal (D04)", async () => {
    const controller = new AbortController(); // a long-lived signal that never aborts, reused for every call
    const registry = registryWith(
      tool("leaky", async (_args, context) => {
        context.signal.addEventListener("abort", () => {}); // added and forgotten
        return "ok";
      }),
    );
    for (let index = 0; index < 5_000; index++) {
      const result = await registry.execute("leaky", {}, { signal: controller.signal });
      expect(result.forLLM).toBe("ok");
    }
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("a caller's signal shared by many concurrent calls carries one listener of ours, and aborting it ends them all", async () => {
    const { tool: hung, contexts } = hungTool();
    const registry = registryWith(hung);
    const controller = new AbortController();
    const pending = Array.from({ length: 200 }, () => registry.execute("hang", {}, { signal: controller.signal }));
    await vi.waitFor(() => expect(contexts).toHaveLength(200));
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    const signals = contexts.map((context) => context.signal);
    expect(new Set(signals).size).toBe(200); // every call its own signal
    controller.abort(new Error("stop"));
    const results = await Promise.all(pending);
    expect(results.every((result) => result.err?.message === 'tool "hang" was aborted before it finished')).toBe(true);
    expect(signals.every((signal) => signal.aborted)).toBe(true);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("the call's signal is made only when the tool reads it", async () => {
    const created = vi.fn();
    const Original = globalThis.AbortController;
    globalThis.AbortController = class extends Original {
      constructor() {
        super();
        created();
      }
    };
    try {
      const caller = new Original();
      const registry = registryWith(
        tool("quiet", () => "ok"),
        tool("reader", (_args, context) => (context.signal.aborted ? "aborted" : "running")),
      );
      await registry.execute("quiet", {}, { signal: caller.signal, timeoutMs: 1000 });
      await registry.execute("quiet", {}, { signal: caller.signal });
      expect(created).not.toHaveBeenCalled();
      await registry.execute("reader", {}, { signal: caller.signal });
      expect(created).toHaveBeenCalledTimes(1);
    } finally {
      globalThis.AbortController = Original;
    }
  });

  it("without a caller's signal or timeout, listeners tools forget stay bounded (a shared never-aborting signal, renewed)", async () => {
    const signals = new Set<AbortSignal>();
    const registry = registryWith(
      tool("leaky", (_args, context) => {
        context.signal.addEventListener("abort", () => {});
        signals.add(context.signal);
        return "ok";
      }),
    );
    for (let index = 0; index < 5_000; index++) await registry.execute("leaky", {});
    const counts = [...signals].map((signal) => getEventListeners(signal, "abort").length);
    expect(Math.max(...counts)).toBeLessThanOrEqual(256);
    expect(counts.reduce((sum, count) => sum + count, 0)).toBe(5_000);
    expect([...signals].every((signal) => !signal.aborted)).toBe(true);
  });

  it("once the call has ended, its signal no longer follows the caller's", async () => {
    const contexts: ToolContext[] = [];
    const kept = tool("t", (_args, context) => {
      contexts.push(context);
      void context.signal; // read during the call: the call's own signal exists
      return "ok";
    });
    const controller = new AbortController();
    await registryWith(kept).execute("t", {}, { signal: controller.signal });
    controller.abort();
    expect(contexts[0]?.signal.aborted).toBe(false);
  });

  it("a spread context is complete, its signal included", async () => {
    const copies: ToolContext[] = [];
    const controller = new AbortController();
    const { tool: hung, contexts } = hungTool();
    const registry = registryWith(hung);
    const pending = registry.execute("hang", {}, { signal: controller.signal, toolCallId: "c1" });
    await vi.waitFor(() => expect(contexts).toHaveLength(1));
    const context = contexts[0] as ToolContext;
    copies.push({ ...context, chatId: "other" });
    expect(copies[0]).toMatchObject({ chatId: "other", channel: "", toolCallId: "c1" });
    expect(copies[0]?.signal).toBe(context.signal);
    controller.abort();
    await pending;
    expect(copies[0]?.signal.aborted).toBe(true);
  });

  it("gives every call a signal even when the caller has none", async () => {
    const seen: AbortSignal[] = [];
    await registryWith(
      tool("t", (_args, context) => {
        seen.push(context.signal);
        return newToolResult("ok");
      }),
    ).execute("t", {});
    expect(seen[0]).toBeInstanceOf(AbortSignal);
    expect(seen[0]?.aborted).toBe(false);
  });
});

describe("context and mixins", () => {
  it("executeWithContext passes channel, chatId, metadata and toolCallId in the call's context", async () => {
    const contexts: ToolContext[] = [];
    const registry = registryWith(
      tool("t", (_args, context) => {
        contexts.push(context);
        return newToolResult("ok");
      }),
    );
    const metadata = { message_id: "m1", user_id: "u1" };
    await registry.executeWithContext("t", {}, "telegram", "chat-42", undefined, { metadata, toolCallId: "call_1" });
    expect(contexts[0]).toMatchObject({ channel: "telegram", chatId: "chat-42", metadata, toolCallId: "call_1" });
    await registry.execute("t", {});
    expect(contexts[1]).toMatchObject({ channel: "", chatId: "", metadata: {} });
    expect(contexts[1]?.toolCallId).toBeUndefined();
  });

  it.each([
    ["telegram", "42", true],
    ["telegram", "", false],
    ["", "42", false],
    ["", "", false],
  ])("setContext(%j, %j) is called: %s", async (channel, chatId, called) => {
    const setContext = vi.fn();
    await registryWith(tool("t", () => newToolResult("ok"), { setContext })).executeWithContext(
      "t",
      {},
      channel,
      chatId,
    );
    expect(setContext.mock.calls).toEqual(called ? [[channel, chatId]] : []);
  });

  it("setCallback is always called: with the caller's callback, or a no-op when there is none", async () => {
    const setCallback = vi.fn();
    const registry = registryWith(tool("t", () => newToolResult("ok"), { setCallback }));
    const callback: AsyncCallback = () => {};
    await registry.executeWithContext("t", {}, "c", "1", callback);
    await registry.executeWithContext("t", {}, "c", "1");
    expect(setCallback).toHaveBeenCalledTimes(2);
    expect(setCallback.mock.calls[0]?.[0]).toBe(callback);
    expect(setCallback.mock.calls[1]?.[0]).toBeTypeOf("function");
    expect(setCallback.mock.calls[1]?.[0]).not.toBe(callback);
  });

  it("an earlier caller's callback never fires for a later caller's call (Go-style AsyncTool)", async () => {
    // picoclaw #1080: the shared instance kept the previous callback when the next caller gave none.
    class Backup implements AsyncTool {
      readonly name = "backup";
      readonly description = "Back up in the background";
      readonly parameters = { type: "object" };
      #callback: AsyncCallback | undefined;
      setCallback(callback: AsyncCallback): void {
        this.#callback = callback;
      }
      execute(): ToolResult {
        const callback = this.#callback;
        queueMicrotask(() => void callback?.(newToolResult("done")));
        return asyncResult("started");
      }
    }
    const registry = registryWith(new Backup());
    const first = vi.fn();
    await registry.executeWithContext("backup", {}, "c", "1", first);
    await vi.waitFor(() => expect(first).toHaveBeenCalledTimes(1));
    await registry.executeWithContext("backup", {}, "c", "2");
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(first).toHaveBeenCalledTimes(1);
  });

  it("context.asyncCallback is each call's own callback: two concurrent callers of one AsyncTool get only their own result", async () => {
    const gate = deferred();
    class Worker implements AsyncTool {
      readonly name = "work";
      readonly description = "Work in the background";
      readonly parameters = { type: "object", properties: { job: { type: "string" } } };
      setCallback(): void {}
      execute(args: Record<string, unknown>, context: ToolContext): ToolResult {
        const { asyncCallback } = context;
        void gate.promise.then(() => asyncCallback?.(newToolResult(`finished ${String(args.job)}`)));
        return asyncResult(`started ${String(args.job)}`);
      }
    }
    const registry = registryWith(new Worker());
    const alice = vi.fn();
    const bob = vi.fn();
    const [first, second] = await Promise.all([
      registry.executeWithContext("work", { job: "alice" }, "c", "1", alice),
      registry.executeWithContext("work", { job: "bob" }, "c", "2", bob),
    ]);
    expect([first.forLLM, second.forLLM]).toEqual(["started alice", "started bob"]);
    gate.resolve();
    await vi.waitFor(() => expect(bob).toHaveBeenCalledTimes(1));
    await vi.waitFor(() => expect(alice).toHaveBeenCalledTimes(1));
    expect(alice.mock.calls[0]?.[0].forLLM).toBe("finished alice");
    expect(bob.mock.calls[0]?.[0].forLLM).toBe("finished bob");
  });

  it("context.asyncCallback is set for any tool when the caller gives one, absent otherwise", async () => {
    const contexts: ToolContext[] = [];
    const registry = registryWith(
      tool("t", (_args, context) => {
        contexts.push(context);
        return "ok";
      }),
    );
    const callback: AsyncCallback = () => {};
    await registry.executeWithContext("t", {}, "", "", callback);
    await registry.execute("t", {});
    expect(contexts[0]?.asyncCallback).toBe(callback);
    expect(contexts[1] && "asyncCallback" in contexts[1]).toBe(false);
  });

  it("setMetadata receives a copy of the metadata (empty when none)", async () => {
    const setMetadata = vi.fn();
    const registry = registryWith(tool("t", () => newToolResult("ok"), { setMetadata }));
    const metadata = { message_id: "m1" };
    await registry.executeWithContext("t", {}, "c", "1", undefined, { metadata });
    await registry.execute("t", {});
    expect(setMetadata.mock.calls).toEqual([[{ message_id: "m1" }], [{}]]);
    expect(setMetadata.mock.calls[0]?.[0]).not.toBe(metadata);
  });

  it("the mixins are called synchronously right before execute, never for a call that does not run", async () => {
    const events: string[] = [];
    const mixinTool = tool(
      "t",
      (args) => {
        events.push(`execute ${args.n}`);
        return newToolResult("ok");
      },
      {
        parameters: { type: "object", properties: { n: { type: "number" } } },
        setContext: (channel: string) => events.push(`setContext ${channel}`),
        setCallback: () => events.push("setCallback"),
        setMetadata: (metadata: Record<string, string>) => events.push(`setMetadata ${metadata.id}`),
      },
    );
    const registry = registryWith(mixinTool);
    const callback = () => {};
    // Both calls are started before either is awaited: nothing may interleave between a call's
    // mixins and its execute.
    const first = registry.executeWithContext("t", { n: 1 }, "a", "1", callback, { metadata: { id: "1" } });
    const second = registry.executeWithContext("t", { n: 2 }, "b", "2", callback, { metadata: { id: "2" } });
    const invalid = registry.executeWithContext("t", { n: "x" }, "c", "3", callback, { metadata: { id: "3" } });
    await Promise.all([first, second, invalid]);
    expect(events).toEqual([
      "setContext a",
      "setCallback",
      "setMetadata 1",
      "execute 1",
      "setContext b",
      "setCallback",
      "setMetadata 2",
      "execute 2",
    ]);
  });

  it("two concurrent calls of one tool instance each see their own context", async () => {
    const gate = deferred();
    class Messenger implements Tool {
      readonly name = "message";
      readonly description = "Send a message to the current chat";
      readonly parameters = { type: "object" };
      lastChannel = "";
      setContext(channel: string): void {
        this.lastChannel = channel;
      }
      async execute(_args: Record<string, unknown>, context: ToolContext): Promise<ToolResult> {
        await gate.promise;
        return newToolResult(`${context.channel}/${context.chatId}/${context.metadata.user_id}/${context.toolCallId}`);
      }
    }
    const messenger = new Messenger();
    const registry = registryWith(messenger);
    const first = registry.executeWithContext("message", {}, "telegram", "1", undefined, {
      metadata: { user_id: "alice" },
      toolCallId: "a",
    });
    const second = registry.executeWithContext("message", {}, "discord", "2", undefined, {
      metadata: { user_id: "bob" },
      toolCallId: "b",
    });
    gate.resolve();
    expect((await first).forLLM).toBe("telegram/1/alice/a");
    expect((await second).forLLM).toBe("discord/2/bob/b");
    // The shared instance only remembers the last call: the race the per-call context avoids.
    expect(messenger.lastChannel).toBe("discord");
  });

  it("a throwing mixin becomes an error result and the tool does not run", async () => {
    const execute = vi.fn(() => newToolResult("ran"));
    const result = await registryWith(
      tool("t", execute, {
        setMetadata: () => {
          throw new Error("bad metadata");
        },
      }),
    ).execute("t", {});
    expect(execute).not.toHaveBeenCalled();
    expect(result.forLLM).toBe('tool "t" failed: bad metadata');
  });
});

// Moved from review-regressions.test.ts (findings of the independent review; each failed before its fix).
describe("the call's context and options (review regressions)", () => {
  const capture = (contexts: ToolContext[]): Tool => ({
    name: "capture",
    description: "keeps its context",
    parameters: { type: "object" },
    execute: (_args, context) => {
      contexts.push(context);
      return newToolResult("ok");
    },
  });

  it("a copied ToolContext keeps signal and logger", async () => {
    const contexts: ToolContext[] = [];
    const registry = new ToolRegistry();
    registry.register(capture(contexts));
    const controller = new AbortController();
    await registry.execute("capture", {}, { signal: controller.signal, toolCallId: "c1" });
    const copy = { ...contexts[0] } as ToolContext;
    expect(Object.keys(copy).sort()).toEqual([
      "channel",
      "chatId",
      "logger",
      "metadata",
      "reportProgress",
      "signal",
      "toolCallId",
    ]);
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
});

describe("a defineTool tool's function is called directly (issue 9)", () => {
  const echo = () =>
    defineTool({
      name: "echo",
      description: "Echo",
      parameters: z.object({ text: z.string() }),
      execute: async ({ text }) => `echo:${text}`,
    });

  it("answers as its execute method does: a string, a ToolResult, a throw, nothing", async () => {
    const summary = ({ forLLM, isError, err }: ToolResult) => ({
      forLLM,
      isError,
      code: (err as { code?: string })?.code,
    });
    const answers = [
      async () => "text",
      () => errorResult("bad"),
      () => Promise.reject(new Error("boom")),
      () => undefined,
    ];
    for (const answer of answers) {
      const defined = defineTool({ name: "t", description: "t", parameters: z.object({}), execute: answer as never });
      const direct = await registryWith(defined).execute("t", {});
      const viaMethod = await registryWith(tool("t", defined.execute)).execute("t", {});
      expect(summary(direct)).toEqual(summary(viaMethod));
    }
  });

  it("a replaced execute method is the one that runs", async () => {
    const defined = echo();
    const registry = registryWith(defined);
    const original = defined.execute;
    defined.execute = async (args, context) => newToolResult(`wrapped ${(await original(args, context)).forLLM}`);
    expect((await registry.execute("echo", { text: "hi" })).forLLM).toBe("wrapped echo:hi");
  });

  it("calls the function as the method does, without a `this`", async () => {
    const execute = vi.fn(function (this: unknown) {
      return this === undefined ? "no this" : "a this";
    });
    const defined = defineTool({ name: "d", description: "d", parameters: z.object({}), execute });
    expect((await registryWith(defined).execute("d", {})).forLLM).toBe("no this");
    expect(execute.mock.contexts[0]).toBeUndefined();
  });

  it("a copy with its own execute runs that one: the spread does not carry the direct function", async () => {
    const defined = echo();
    const copy = { ...defined, execute: async () => newToolResult("the copy's") };
    expect((await registryWith(copy).execute("echo", { text: "hi" })).forLLM).toBe("the copy's");
    expect((await registryWith({ ...defined }).execute("echo", { text: "hi" })).forLLM).toBe("echo:hi");
  });
});

describe("a result whose isError getter throws (found by the session 21 review)", () => {
  it.each(["no logger", "a warn logger"])("fails its call, with %s, instead of rejecting", async (mode) => {
    const { logger } = captureLogger("warn");
    const registry = new ToolRegistry(mode === "no logger" ? {} : { logger });
    const hostile = () =>
      Object.defineProperty(newToolResult("x"), "isError", {
        get() {
          throw new Error("isError getter");
        },
      });
    registry.register(tool("h", hostile as never));
    const result = await registry.execute("h", {});
    expect(result).toMatchObject({
      isError: true,
      forLLM: 'tool "h" returned a result that cannot be read: isError getter',
    });
  });
});
