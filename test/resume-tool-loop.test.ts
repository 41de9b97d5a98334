import { describe, expect, it } from "vitest";
import {
  isToolLoopError,
  type Message,
  newToolResult,
  resumeToolLoop,
  runToolLoop,
  type Tool,
  type ToolLoopCheckpoint,
  type ToolLoopConfig,
  type ToolLoopEvent,
  type ToolLoopResult,
  ToolRegistry,
  ToolResult,
} from "../src/index.js";
import { ScriptedProvider, type ScriptStep, textResponse, toolCallResponse } from "../src/testing/index.js";

function tool(name: string, execute: Tool["execute"], extra: Record<string, unknown> = {}): Tool {
  return { name, description: `the ${name} tool`, parameters: { type: "object" }, execute, ...extra };
}

function registryWith(...tools: Tool[]): ToolRegistry {
  const registry = new ToolRegistry();
  for (const each of tools) registry.register(each);
  return registry;
}

/** A tool that counts its executions per call id and answers `<name>:<id>`. */
function countingTool(name: string, runs: Map<string, number>, extra: Record<string, unknown> = {}): Tool {
  return tool(
    name,
    (_args, context) => {
      const id = context.toolCallId ?? "";
      runs.set(id, (runs.get(id) ?? 0) + 1);
      return newToolResult(`${name}:${id}`);
    },
    extra,
  );
}

const user: Message[] = [{ role: "user", content: "hi" }];

/** A script of two tool turns and a final answer (fixed ids, so two plays of it compare equal). */
function script(): ScriptStep[] {
  return [
    toolCallResponse(
      [
        { id: "a1", name: "work", arguments: { n: 1 } },
        { id: "a2", name: "work", arguments: { n: 2 } },
      ],
      "turn one",
    ),
    toolCallResponse({ id: "b1", name: "work", arguments: { n: 3 } }, "turn two"),
    textResponse("all done"),
  ];
}

/** Runs `steps` with checkpoints; returns the result (or the error) and every checkpoint as JSON text. */
async function runSaving(config: Omit<ToolLoopConfig, "onCheckpoint">, messages: Message[] = user) {
  const saved: string[] = [];
  const outcome: { result?: ToolLoopResult; error?: unknown } = await runToolLoop(
    { ...config, onCheckpoint: (c) => void saved.push(JSON.stringify(c)) },
    messages,
  )
    .then((result) => ({ result }))
    .catch((error: unknown) => ({ error }));
  return { ...outcome, saved, checkpoints: saved.map((text) => JSON.parse(text) as ToolLoopCheckpoint) };
}

/** The tool call ids answered in a transcript, in order. */
function answeredIds(messages: readonly Message[]): string[] {
  return messages.filter((message) => message.role === "tool").map((message) => message.toolCallId as string);
}

describe("onCheckpoint", () => {
  it("is awaited after each assistant message (before its calls run, the final answer included) and after each turn's answers", async () => {
    const { result, checkpoints } = await runSaving({
      provider: new ScriptedProvider(script()),
      tools: [tool("work", () => "ok")],
      maxIterations: 5,
    });
    expect(result?.stopReason).toBe("completed");
    expect(checkpoints.map((c) => [c.iterations, c.messages.length, c.messages.at(-1)?.role])).toEqual([
      [1, 2, "assistant"], // turn one's calls, not run yet
      [1, 4, "tool"], // their answers
      [2, 5, "assistant"],
      [2, 6, "tool"],
      [3, 7, "assistant"], // the final answer
    ]);
    expect(checkpoints.every((c) => c.version === 1 && c.pendingAsync.length === 0)).toBe(true);
    expect(checkpoints.at(-1)?.messages).toEqual(result?.messages);
  });

  it("holds the loop until it settles: no call runs before the checkpoint of its message is saved", async () => {
    const order: string[] = [];
    let release!: () => void;
    const provider = new ScriptedProvider([toolCallResponse({ id: "x", name: "work" }), textResponse("ok")]);
    const running = runToolLoop(
      {
        provider,
        tools: [tool("work", () => (order.push("run"), "done"))],
        maxIterations: 3,
        onCheckpoint: (c) => {
          order.push(`checkpoint ${c.messages.length}`);
          if (c.messages.length === 2) return new Promise<void>((resolve) => (release = resolve));
        },
      },
      user,
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(order).toEqual(["checkpoint 2"]);
    release();
    await running;
    expect(order).toEqual(["checkpoint 2", "run", "checkpoint 3", "checkpoint 4"]);
  });

  it("a throwing onCheckpoint rejects the run with a ToolLoopError (code internal), the calls answered as not run", async () => {
    const runs = new Map<string, number>();
    const provider = new ScriptedProvider([toolCallResponse({ id: "x", name: "work" }), textResponse("never")]);
    const error = await runToolLoop(
      {
        provider,
        tools: [countingTool("work", runs)],
        maxIterations: 3,
        onCheckpoint: () => {
          throw new Error("disk full");
        },
      },
      user,
    ).catch((failure: unknown) => failure);
    expect(isToolLoopError(error)).toBe(true);
    if (!isToolLoopError(error)) return;
    expect([error.code, error.message, (error.cause as Error).message]).toEqual([
      "internal",
      "onCheckpoint threw: disk full",
      "disk full",
    ]);
    expect(runs.size).toBe(0);
    expect(error.messages.at(-1)).toMatchObject({
      role: "tool",
      toolCallId: "x",
      isError: true,
      content: 'tool "work" was not run: the loop is stopping',
    });
    expect(provider.calls).toHaveLength(1);
  });

  it.each([
    ["after the turn's answers", 2],
    ["after the final answer", 3],
  ])("a rejecting onCheckpoint %s rejects the run with the transcript intact", async (_when, failAt) => {
    let seen = 0;
    const provider = new ScriptedProvider([toolCallResponse({ id: "x", name: "work" }), textResponse("done")]);
    const error = await runToolLoop(
      {
        provider,
        tools: [tool("work", () => "ok")],
        maxIterations: 3,
        onCheckpoint: async () => {
          if (++seen === failAt) throw new Error("storage down");
        },
      },
      user,
    ).catch((failure: unknown) => failure);
    expect(isToolLoopError(error) && [error.code, error.message]).toEqual([
      "internal",
      "onCheckpoint threw: storage down",
    ]);
    if (!isToolLoopError(error)) return;
    expect(error.messages.length).toBe(failAt + 1);
    expect(answeredIds(error.messages)).toEqual(["x"]);
  });

  it("a checkpoint is a snapshot: later turns do not change a saved one", async () => {
    const kept: ToolLoopCheckpoint[] = [];
    await runToolLoop(
      {
        provider: new ScriptedProvider(script()),
        tools: [tool("work", () => "ok")],
        maxIterations: 5,
        onCheckpoint: (c) => void kept.push(c),
      },
      user,
    );
    expect(kept.map((c) => c.messages.length)).toEqual([2, 4, 5, 6, 7]);
  });
});

describe("resumeToolLoop", () => {
  it("resumed from any checkpoint after a JSON round trip, gives the uninterrupted run's result; no call runs twice", async () => {
    const uninterruptedRuns = new Map<string, number>();
    const { result: whole, saved } = await runSaving({
      provider: new ScriptedProvider(script()),
      tools: [countingTool("work", uninterruptedRuns)],
      maxIterations: 5,
    });
    expect(saved).toHaveLength(5);
    for (let index = 0; index < saved.length; index++) {
      const checkpoint = JSON.parse(saved[index] as string) as ToolLoopCheckpoint;
      const runs = new Map<string, number>();
      const played = script().slice(checkpoint.iterations);
      const provider = new ScriptedProvider(played);
      const resumed = await resumeToolLoop(
        { provider, tools: [countingTool("work", runs)], maxIterations: 5 },
        checkpoint,
      );
      expect(resumed).toEqual(whole);
      provider.assertDone();
      // Only the calls that had no answer in the checkpoint ran, each once.
      const answered = new Set(answeredIds(checkpoint.messages));
      const expected = ["a1", "a2", "b1"].filter((id) => !answered.has(id));
      expect([...runs.keys()]).toEqual(expected);
      expect([...runs.values()].every((count) => count === 1)).toBe(true);
    }
  });
});
