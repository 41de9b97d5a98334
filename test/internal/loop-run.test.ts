import { describe, expect, it } from "vitest";
import {
  isToolLoopError,
  type Message,
  type ProgressUpdate,
  runToolLoop,
  type Tool,
  type ToolLoopEvent,
  ToolRegistry,
} from "../../src/index.js";
import { resolveLogger } from "../../src/internal/logger.js";
import { LoopRun, MAX_QUEUED_PROGRESS_EVENTS } from "../../src/internal/loop-run.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing/index.js";

function tool(name: string, execute: Tool["execute"]): Tool {
  return { name, description: `the ${name} tool`, parameters: { type: "object" }, execute };
}

function registryWith(...tools: Tool[]): ToolRegistry {
  const registry = new ToolRegistry();
  for (const each of tools) registry.register(each);
  return registry;
}

const user: Message[] = [{ role: "user", content: "go" }];
const tick = () => new Promise((resolve) => setImmediate(resolve));

/** A tool that calls reportProgress `count` times (in `bursts` synchronous runs, yielding between them). */
function flooding(name: string, count: number, bursts = 1): Tool {
  return tool(name, async (_args, context) => {
    const each = Math.ceil(count / bursts);
    for (let sent = 0; sent < count; ) {
      for (let index = 0; index < each && sent < count; index++, sent++) context.reportProgress(sent / count, "busy");
      await tick();
    }
    return "flooded";
  });
}

describe("tool-progress events are coalesced per call (a tool reporting in a loop cannot grow the queue)", () => {
  it.each([
    ["one synchronous burst of 1e6 reports", 1_000_000, 1],
    ["1e5 reports in 100 bursts, yielding between them", 100_000, 100],
  ])(
    "%s: a bounded number of tool-progress events, the final one delivered, every other event delivered",
    async (_case, count, bursts) => {
      const events: ToolLoopEvent[] = [];
      let onProgressCalls = 0;
      const provider = new ScriptedProvider([
        toolCallResponse([
          { id: "flood", name: "flood" },
          { id: "quiet", name: "quiet" },
        ]),
        textResponse("done"),
      ]);
      const result = await runToolLoop(
        {
          provider,
          tools: registryWith(
            flooding("flood", count, bursts),
            tool("quiet", () => "calm"),
          ),
          maxIterations: 3,
          onProgress: () => {
            onProgressCalls++;
          },
          // A slow listener: every event waits for a macrotask.
          onEvent: async (event) => {
            await tick();
            events.push(event);
          },
        },
        user,
      );
      // onProgress is not coalesced: every report and both final updates.
      expect(onProgressCalls).toBe(count + 2);
      const progress = events.flatMap((event) => (event.type === "tool-progress" ? [event.update] : []));
      const flood = progress.filter((update) => update.toolCallId === "flood");
      // At most MAX_QUEUED_PROGRESS_EVENTS waiting per burst the listener could not keep up with.
      expect(flood.length).toBeLessThanOrEqual(MAX_QUEUED_PROGRESS_EVENTS * bursts + bursts);
      expect(flood.at(-1)).toEqual({ toolCallId: "flood", toolName: "flood", status: "completed" });
      expect(flood.slice(0, -1).every((update) => update.status === "running")).toBe(true);
      // The latest reports survive, in order.
      const ratios = flood.slice(0, -1).map((update) => update.progress as number);
      expect(ratios).toEqual([...ratios].sort((a, b) => a - b));
      expect(ratios.at(-1)).toBe((count - 1) / count);
      expect(progress.filter((update) => update.toolCallId === "quiet")).toEqual([
        { toolCallId: "quiet", toolName: "quiet", status: "completed" },
      ]);
      // Nothing else is dropped: every message and call end, in order.
      const others = events.filter((event) => event.type !== "tool-progress").map((event) => event.type);
      expect(others).toEqual([
        "step-start",
        "message",
        "tool-call-start",
        "tool-call-start",
        "tool-call-end",
        "tool-call-end",
        "message",
        "message",
        "step-end",
        "step-start",
        "message",
        "step-end",
        "loop-end",
      ]);
      const finalAt = events.findIndex(
        (event) =>
          event.type === "tool-progress" && event.update.toolCallId === "flood" && event.update.status !== "running",
      );
      const endAt = events.findIndex((event) => event.type === "tool-call-end" && event.toolCallId === "flood");
      expect(finalAt).toBeLessThan(endAt);
      expect(result.messages.filter((message) => message.role === "tool").map((message) => message.content)).toEqual([
        "flooded",
        "calm",
      ]);
    },
    60_000,
  );

  it("a fast listener still receives every update (nothing is coalesced when nothing waits)", async () => {
    const updates: ProgressUpdate[] = [];
    const provider = new ScriptedProvider([toolCallResponse({ id: "f", name: "flood" }), textResponse("done")]);
    await runToolLoop(
      {
        provider,
        tools: registryWith(flooding("flood", 50, 50)),
        maxIterations: 3,
        onEvent: (event) => {
          if (event.type === "tool-progress") updates.push(event.update);
        },
      },
      user,
    );
    expect(updates).toHaveLength(51);
  });

  it("streamToolLoop's consumer gets the same bound (it is an onEvent)", async () => {
    const { streamToolLoop } = await import("../../src/index.js");
    const provider = new ScriptedProvider([toolCallResponse({ id: "f", name: "flood" }), textResponse("done")]);
    const stream = streamToolLoop(
      { provider, tools: registryWith(flooding("flood", 100_000)), maxIterations: 3 },
      user,
    );
    let progress = 0;
    let ends = 0;
    for await (const event of stream) {
      if (event.type === "tool-progress") progress++;
      if (event.type === "tool-call-end") ends++;
    }
    expect(progress).toBeLessThanOrEqual(MAX_QUEUED_PROGRESS_EVENTS + 1);
    expect(ends).toBe(1);
    expect((await stream.result).content).toBe("done");
  });
});

describe("once a listener failed, no call still waiting for its maxConcurrency slot runs", () => {
  /** Six payments in one turn: each reports progress, then yields before it returns. */
  function sixPayments(extra: Partial<Tool> = {}) {
    const paid: string[] = [];
    const pay: Tool = {
      ...tool("pay", async (_args, context) => {
        paid.push(context.toolCallId ?? "");
        context.reportProgress(0.5, "charging");
        await tick();
        return "paid";
      }),
      ...extra,
    };
    const ids = ["p0", "p1", "p2", "p3", "p4", "p5"];
    const provider = new ScriptedProvider([
      toolCallResponse(ids.map((id) => ({ id, name: "pay" }))),
      textResponse("never"),
    ]);
    return { paid, ids, provider, tools: registryWith(pay) };
  }

  it.each<[string, ToolLoopEvent["type"], "throws" | "rejects"]>([
    ["throws at the first payment's tool-call-end", "tool-call-end", "throws"],
    ["rejects at the first payment's tool-call-end", "tool-call-end", "rejects"],
    ["throws at the first payment's tool-progress (while it runs)", "tool-progress", "throws"],
    ["rejects at the first payment's tool-progress (while it runs)", "tool-progress", "rejects"],
  ])("an onEvent that %s: only that payment ran; the other five are answered as not run", async (_case, type, how) => {
    const { paid, ids, provider, tools } = sixPayments();
    let failed = false;
    const failure = await runToolLoop(
      {
        provider,
        tools,
        maxIterations: 3,
        maxConcurrency: 1,
        onEvent: (event) => {
          if (failed || event.type !== type) return;
          failed = true;
          if (how === "throws") throw new Error("listener down");
          return tick().then(() => Promise.reject(new Error("listener down")));
        },
      },
      user,
    ).catch((error: unknown) => error);
    expect(isToolLoopError(failure)).toBe(true);
    if (!isToolLoopError(failure)) return;
    expect(failure.message).toBe("onEvent threw: listener down");
    expect(paid).toEqual(["p0"]);
    const answers = failure.messages.filter((message) => message.role === "tool");
    expect(answers.map((message) => message.toolCallId)).toEqual(ids);
    for (const answer of answers.slice(1)) {
      expect(answer.content).toBe('tool "pay" was not run: the loop is stopping');
    }
    expect(provider.calls).toHaveLength(1);
  });

  it("a call approved after the failure is not run either (the approval wait holds no slot)", async () => {
    const { paid, provider, tools } = sixPayments({ needsApproval: true });
    let release: () => void = () => {};
    const approvals = new Promise<void>((resolve) => {
      release = resolve;
    });
    const failure = await runToolLoop(
      {
        provider,
        tools,
        maxIterations: 3,
        maxConcurrency: 1,
        approve: async () => {
          await approvals;
          return true;
        },
        onEvent: (event) => {
          if (event.type === "tool-call-start" && event.toolCallId === "p5") {
            // Every call waits for its approval now; the listener fails before any is given.
            setImmediate(release);
            throw new Error("listener down");
          }
        },
      },
      user,
    ).catch((error: unknown) => error);
    expect(isToolLoopError(failure)).toBe(true);
    expect(paid).toEqual([]);
  });
});

describe("calls the loop answers without running them get their final progress update", () => {
  it("calls refused because a listener failed (the loop is stopping)", async () => {
    const updates: ProgressUpdate[] = [];
    const provider = new ScriptedProvider([
      toolCallResponse([
        { id: "a", name: "t" },
        { id: "b", name: "t" },
      ]),
    ]);
    const failure = await runToolLoop(
      {
        provider,
        tools: registryWith(tool("t", () => "ran")),
        maxIterations: 3,
        onProgress: (update) => updates.push(update),
        onEvent: (event) => {
          if (event.type === "message") throw new Error("listener down");
        },
      },
      user,
    ).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(updates).toEqual([
      { toolCallId: "a", toolName: "t", status: "failed" },
      { toolCallId: "b", toolName: "t", status: "failed" },
    ]);
  });

  it("calls of the final turn (finalAnswerOnMaxIterations) refused with an error result", async () => {
    const updates: ProgressUpdate[] = [];
    const events: ToolLoopEvent[] = [];
    const provider = new ScriptedProvider([
      toolCallResponse({ id: "a", name: "t" }),
      toolCallResponse({ id: "b", name: "t" }),
    ]);
    const result = await runToolLoop(
      {
        provider,
        tools: registryWith(tool("t", () => "ran")),
        maxIterations: 1,
        finalAnswerOnMaxIterations: true,
        onProgress: (update) => updates.push(update),
        onEvent: (event) => {
          events.push(event);
        },
      },
      user,
    );
    expect(result.stopReason).toBe("max_iterations");
    expect(updates).toEqual([
      { toolCallId: "a", toolName: "t", status: "completed" },
      { toolCallId: "b", toolName: "t", status: "failed" },
    ]);
    const forB = events.filter(
      (event) =>
        (event.type === "tool-progress" && event.update.toolCallId === "b") ||
        (event.type === "tool-call-end" && event.toolCallId === "b"),
    );
    expect(forB.map((event) => event.type)).toEqual(["tool-progress", "tool-call-end"]);
  });
});

describe("LoopRun.create: no hooks unless an option asks for them", () => {
  const provider = new ScriptedProvider([]);
  const create = (config: Record<string, unknown>) =>
    LoopRun.create({ provider, maxIterations: 1, ...config }, provider, 1, resolveLogger(undefined, "test"), "test");

  it("without onCheckpoint (or any loop-control option) the loop runs without hooks: nothing extra per call", () => {
    expect(create({})).toBeUndefined();
    expect(create({ onCheckpoint: undefined })).toBeUndefined();
  });

  it("onCheckpoint alone turns them on; one that is not a function is a TypeError", () => {
    expect(create({ onCheckpoint: () => {} })).toBeInstanceOf(LoopRun);
    expect(() => create({ onCheckpoint: "save" })).toThrow(
      new TypeError('test: onCheckpoint must be a function, got "save"'),
    );
  });
});
