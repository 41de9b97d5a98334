import { describe, expect, it } from "vitest";
import {
  errorResult,
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
  taskCompletionTool,
} from "../src/index.js";
import { ScriptedProvider, type ScriptStep, textResponse, toolCallResponse } from "../src/testing/index.js";
import { captureLogger } from "./helpers/capture-logger.js";
import { backgroundTool, tool } from "./helpers/loop-tools.js";

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
        tools: [
          tool("work", () => {
            order.push("run");
            return "done";
          }),
        ],
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

  it("is plain JSON data: its JSON round trip is equal to it (provider metadata and cut results included)", async () => {
    const kept: ToolLoopCheckpoint[] = [];
    const provider = new ScriptedProvider([
      {
        content: "",
        toolCalls: [
          {
            id: "m",
            name: "work",
            arguments: { text: "é😀" },
            providerMetadata: { thoughtSignature: "sig", nested: [1, { a: null }] },
          },
        ],
      },
      textResponse("done"),
    ]);
    await runToolLoop(
      {
        provider,
        tools: [tool("work", () => "x".repeat(500))],
        maxIterations: 3,
        maxResultChars: 200,
        onCheckpoint: (c) => void kept.push(c),
      },
      user,
    );
    expect(kept).toHaveLength(3);
    for (const checkpoint of kept) expect(JSON.parse(JSON.stringify(checkpoint))).toEqual(checkpoint);
    expect(kept[1]?.messages.at(-1)?.content.length).toBeLessThanOrEqual(200);
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

describe("pendingAsync", () => {
  const asyncScript = (): ScriptStep[] => [
    toolCallResponse([
      { id: "bg", name: "background" },
      { id: "s", name: "sync" },
    ]),
    textResponse("waiting for the background job"),
  ];

  it("without awaitAsync or onAsyncResult: every async call, from the turn's answers on", async () => {
    const { background } = backgroundTool();
    const { checkpoints } = await runSaving({
      provider: new ScriptedProvider(asyncScript()),
      tools: [background, tool("sync", () => "ok")],
      maxIterations: 3,
    });
    expect(checkpoints.map((c) => c.pendingAsync)).toEqual([
      [], // the calls have not run yet: resuming runs them
      [{ toolCallId: "bg", toolName: "background" }],
      [{ toolCallId: "bg", toolName: "background" }],
    ]);
  });

  it("with onAsyncResult: until the callback fires", async () => {
    const { background, callbacks } = backgroundTool();
    const provider = new ScriptedProvider([
      ...asyncScript().slice(0, 1),
      async () => {
        await callbacks[0]?.(newToolResult("finished"));
        return textResponse("ok");
      },
    ]);
    const { checkpoints } = await runSaving({
      provider,
      tools: [background, tool("sync", () => "ok")],
      maxIterations: 3,
      onAsyncResult: () => {},
    });
    expect(checkpoints.map((c) => c.pendingAsync)).toEqual([
      [],
      [{ toolCallId: "bg", toolName: "background" }],
      [], // received (by onAsyncResult) before the final answer
    ]);
  });

  it("with awaitAsync: until the completion is fed back into the transcript (received and not fed back still counts)", async () => {
    const { background, callbacks } = backgroundTool();
    const seen: ToolLoopCheckpoint[] = [];
    const provider = new ScriptedProvider([...asyncScript(), textResponse("the job is done")]);
    const result = await runToolLoop(
      {
        provider,
        tools: [background, tool("sync", () => "ok")],
        maxIterations: 5,
        awaitAsync: { timeoutMs: 5_000 },
        onCheckpoint: async (c) => {
          seen.push(c);
          // After the first answer: the completion arrives, but is not in the transcript yet.
          if (seen.length === 3) await callbacks[0]?.(newToolResult("job output"));
        },
      },
      user,
    );
    expect(result.content).toBe("the job is done");
    expect(seen.map((c) => [c.messages.at(-1)?.role, c.pendingAsync.map((p) => p.toolCallId)])).toEqual([
      ["assistant", []],
      ["tool", ["bg"]],
      ["assistant", ["bg"]], // the answer while bg was pending
      ["user", []], // `[async result from background (bg)] job output` fed back
      ["assistant", []],
    ]);
    // Resuming the checkpoint that ends with the fed-back completion asks the model again.
    const again = new ScriptedProvider([textResponse("the job is done")]);
    const resumed = await resumeToolLoop(
      { provider: again, tools: [background, tool("sync", () => "ok")], maxIterations: 5 },
      JSON.parse(JSON.stringify(seen[3])) as ToolLoopCheckpoint,
    );
    expect(resumed).toEqual(result);
  });

  it("a resumed run keeps its checkpoint's pendingAsync in every later checkpoint (no callback can reach it)", async () => {
    const { background } = backgroundTool();
    const { checkpoints } = await runSaving({
      provider: new ScriptedProvider(asyncScript()),
      tools: [background, tool("sync", () => "ok")],
      maxIterations: 3,
      onAsyncResult: () => {},
    });
    const from = checkpoints[1] as ToolLoopCheckpoint;
    const later: ToolLoopCheckpoint[] = [];
    const { background: again } = backgroundTool();
    await resumeToolLoop(
      {
        provider: new ScriptedProvider([toolCallResponse({ id: "bg2", name: "background" }), textResponse("ok")]),
        tools: [again, tool("sync", () => "ok")],
        maxIterations: 5,
        onAsyncResult: () => {},
        onCheckpoint: (c) => void later.push(c),
      },
      from,
    );
    expect(later.map((c) => c.pendingAsync.map((p) => p.toolCallId))).toEqual([["bg"], ["bg", "bg2"], ["bg", "bg2"]]);
  });
});

describe("resumeToolLoop: where the checkpoint ends", () => {
  const runs = new Map<string, number>();
  const config = (provider: ScriptedProvider, extra: Partial<ToolLoopConfig> = {}): ToolLoopConfig => ({
    provider,
    tools: [countingTool("work", runs)],
    maxIterations: 5,
    ...extra,
  });
  const call = (id: string, args: Record<string, unknown> = {}) => ({
    id,
    type: "function" as const,
    name: "work",
    arguments: args,
    function: { name: "work", arguments: JSON.stringify(args) },
  });
  const answer = (id: string): Message => ({
    role: "tool",
    content: `work:${id}`,
    toolCallId: id,
    toolName: "work",
    isError: false,
  });
  const checkpoint = (messages: Message[], iterations = 1): ToolLoopCheckpoint => ({
    version: 1,
    messages,
    iterations,
    pendingAsync: [],
  });

  it("a partly answered turn: exactly the calls without an answer run, in call order, then the loop goes on", async () => {
    runs.clear();
    const provider = new ScriptedProvider([textResponse("done")]);
    const turn: Message = { role: "assistant", content: "", toolCalls: [call("a"), call("b"), call("c")] };
    const result = await resumeToolLoop(config(provider), checkpoint([...user, turn, answer("b")]));
    expect([...runs]).toEqual([
      ["a", 1],
      ["c", 1],
    ]);
    expect(answeredIds(result.messages)).toEqual(["b", "a", "c"]);
    expect(result).toMatchObject({ content: "done", iterations: 2, stopReason: "completed" });
    // The model is asked with every call answered.
    expect(provider.calls[0]?.messages).toEqual(result.messages.slice(0, -1));
  });

  it("its 'tool loop finished' info line counts only the calls this run answered, not the checkpoint's", async () => {
    runs.clear();
    const { logger, lines } = captureLogger("info");
    const provider = new ScriptedProvider([toolCallResponse({ id: "d", name: "work" }), textResponse("done")]);
    const turn: Message = {
      role: "assistant",
      content: "",
      toolCalls: [call("a"), call("b"), { ...call("c"), name: "ghost", function: { name: "ghost", arguments: "{}" } }],
    };
    const failedBefore: Message = { ...answer("b"), content: "it broke", isError: true };
    const result = await resumeToolLoop(
      config(provider, { logger }),
      checkpoint([
        ...user,
        { role: "assistant", content: "", toolCalls: [call("z")] },
        answer("z"),
        turn,
        failedBefore,
      ]),
    );
    expect(answeredIds(result.messages)).toEqual(["z", "b", "a", "c", "d"]);
    const runLines = lines.filter((line) => line.msg === "tool loop finished");
    expect(runLines).toEqual([
      expect.objectContaining({
        level: 30,
        iterations: 3,
        stopReason: "completed",
        toolCalls: 3,
        failedCalls: 1,
        durationMs: expect.any(Number),
      }),
    ]);
    // A finished checkpoint resolves at once: a line with no calls of its own.
    const again = captureLogger("info");
    await resumeToolLoop(
      config(new ScriptedProvider([]), { logger: again.logger }),
      checkpoint([...result.messages], result.iterations),
    );
    expect(again.lines).toEqual([
      expect.objectContaining({ msg: "tool loop finished", iterations: 3, stopReason: "completed", toolCalls: 0 }),
    ]);
  });

  it("a finished run resolves at once with the same result, without a provider call or a tool run", async () => {
    runs.clear();
    const { result, checkpoints } = await runSaving(config(new ScriptedProvider(script())));
    const provider = new ScriptedProvider([]);
    const resumed = await resumeToolLoop(config(provider), checkpoints.at(-1) as ToolLoopCheckpoint);
    expect(resumed).toEqual(result);
    expect(provider.calls).toHaveLength(0);
    expect(runs.size).toBe(3); // the first run's only
  });

  it("a finished run whose answer came past the cap (finalAnswerOnMaxIterations) resolves max_iterations with its text", async () => {
    const steps = script().slice(0, 1).concat(textResponse("what I have"));
    const { result, checkpoints } = await runSaving(
      config(new ScriptedProvider(steps), { maxIterations: 1, finalAnswerOnMaxIterations: true }),
    );
    expect(result).toMatchObject({ stopReason: "max_iterations", content: "what I have", iterations: 2 });
    const provider = new ScriptedProvider([]);
    const resumed = await resumeToolLoop(
      config(provider, { maxIterations: 1, finalAnswerOnMaxIterations: true }),
      checkpoints.at(-1) as ToolLoopCheckpoint,
    );
    expect(resumed).toEqual(result);
    expect(provider.calls).toHaveLength(0);
  });

  it("a run stopped by a loop-breaking tool resolves at once with the same result; a failed one does not stop", async () => {
    const steps = (): ScriptStep[] => [
      toolCallResponse([
        { id: "w", name: "work" },
        { id: "t", name: "task_completion", arguments: { result: "Deployed v2." } },
      ]),
      textResponse("never"),
    ];
    const tools = () => [countingTool("work", new Map()), taskCompletionTool];
    const { result, checkpoints } = await runSaving({
      provider: new ScriptedProvider(steps()),
      tools: tools(),
      maxIterations: 5,
    });
    expect(result).toMatchObject({ stopReason: "loop_breaking_tool", stoppedBy: { toolCallId: "t" } });
    const provider = new ScriptedProvider([]);
    const resumed = await resumeToolLoop(
      { provider, tools: tools(), maxIterations: 5 },
      checkpoints.at(-1) as ToolLoopCheckpoint,
    );
    expect(resumed).toEqual(result);
    expect(provider.calls).toHaveLength(0);

    // The same turn with the loop-breaking call failed: the loop went on, and so does its resume.
    const failed = structuredClone(checkpoints.at(-1) as ToolLoopCheckpoint);
    Object.assign(failed.messages.at(-1) as Message, { isError: true, content: "result cannot be empty" });
    const again = new ScriptedProvider([textResponse("retrying later")]);
    const goesOn = await resumeToolLoop({ provider: again, tools: tools(), maxIterations: 5 }, failed);
    expect(goesOn).toMatchObject({ stopReason: "completed", content: "retrying later" });
  });

  it.each<[string, Partial<ToolLoopConfig>, Tool, string]>([
    [
      "every result handled the response",
      {},
      tool("reply", () => newToolResult("sent").withResponseHandled()),
      "response_handled",
    ],
    [
      "repeated failures",
      { maxRepeatedFailures: 1 },
      tool("reply", () => errorResult("disk full")),
      "repeated_failure",
    ],
  ])(
    "a run stopped after a turn because %s resolves at once with the same result (checkpoint.stopped)",
    async (_, extra, stopper, reason) => {
      const steps = (): ScriptStep[] => [toolCallResponse({ id: "r", name: "reply" }), textResponse("never")];
      const { result, checkpoints } = await runSaving({
        provider: new ScriptedProvider(steps()),
        tools: [stopper],
        maxIterations: 5,
        ...extra,
      });
      expect(result?.stopReason).toBe(reason);
      const last = checkpoints.at(-1) as ToolLoopCheckpoint;
      expect(last.stopped).toEqual({ reason, content: result?.content });
      const provider = new ScriptedProvider([textResponse("asked again")]);
      const resumed = await resumeToolLoop({ provider, tools: [stopper], maxIterations: 5, ...extra }, last);
      expect(resumed).toEqual(result);
      expect(provider.calls).toHaveLength(0);
      // Earlier checkpoints carry no stop.
      expect(checkpoints.slice(0, -1).every((checkpoint) => checkpoint.stopped === undefined)).toBe(true);
    },
  );

  it("iterations and maxIterations carry over: the checkpoint's iterations count toward the cap", async () => {
    runs.clear();
    const provider = new ScriptedProvider([toolCallResponse({ id: "n", name: "work" }), textResponse("never")]);
    const result = await resumeToolLoop(config(provider, { maxIterations: 3 }), checkpoint([...user], 2));
    expect(result).toMatchObject({ stopReason: "max_iterations", iterations: 3, content: "" });
    expect(provider.calls).toHaveLength(1);
    expect([...runs.keys()]).toEqual(["n"]);
  });

  it("at the cap, the open calls still run and the run stops without a provider call", async () => {
    runs.clear();
    const provider = new ScriptedProvider([]);
    const turn: Message = { role: "assistant", content: "", toolCalls: [call("last")] };
    const result = await resumeToolLoop(config(provider, { maxIterations: 3 }), checkpoint([...user, turn], 3));
    expect(result).toMatchObject({ stopReason: "max_iterations", iterations: 3 });
    expect(answeredIds(result.messages)).toEqual(["last"]);
    expect(provider.calls).toHaveLength(0);
  });

  it("the open calls of finalAnswerOnMaxIterations' turn are refused again, not run", async () => {
    runs.clear();
    const turn: Message = { role: "assistant", content: "", toolCalls: [call("late")] };
    const result = await resumeToolLoop(
      config(new ScriptedProvider([]), { maxIterations: 1, finalAnswerOnMaxIterations: true }),
      checkpoint([...user, turn], 2),
    );
    expect(runs.size).toBe(0);
    expect(result).toMatchObject({ stopReason: "max_iterations", content: "", iterations: 2 });
    expect(result.messages.at(-1)).toMatchObject({ toolCallId: "late", isError: true });
  });

  it("a checkpoint ending with a user message (or all calls answered) asks the model", async () => {
    runs.clear();
    const provider = new ScriptedProvider([textResponse("hello again")]);
    const result = await resumeToolLoop(config(provider), checkpoint([...user], 0));
    expect(result).toMatchObject({ content: "hello again", iterations: 1, stopReason: "completed" });
    const turn: Message = { role: "assistant", content: "", toolCalls: [call("x")] };
    const next = new ScriptedProvider([textResponse("fine")]);
    const answered = await resumeToolLoop(config(next), checkpoint([...user, turn, answer("x")]));
    expect(answered).toMatchObject({ content: "fine", iterations: 2 });
    expect(runs.size).toBe(0);
  });

  it("an open call whose arguments the model sent as malformed JSON is refused again with the same message", async () => {
    runs.clear();
    const provider = new ScriptedProvider([
      toolCallResponse({ id: "bad", name: "work", arguments: "{not json" }),
      textResponse("sorry"),
    ]);
    const { result, checkpoints } = await runSaving(config(provider));
    const resumed = await resumeToolLoop(
      config(new ScriptedProvider([textResponse("sorry")])),
      checkpoints[0] as ToolLoopCheckpoint,
    );
    expect(runs.size).toBe(0);
    expect(resumed).toEqual(result);
    expect(resumed.messages[2]?.content).toMatch(/^invalid JSON in arguments for tool "work"/);
  });

  it("the resumed turn's events: tool-call-start/end with the checkpoint's iteration and its messages, no step-start or step-end", async () => {
    runs.clear();
    const events: ToolLoopEvent[] = [];
    const turn: Message = { role: "assistant", content: "", toolCalls: [call("r")] };
    await resumeToolLoop(
      config(new ScriptedProvider([textResponse("ok")]), { onEvent: (event) => void events.push(event) }),
      checkpoint([...user, turn], 4),
    );
    expect(events.map((event) => ("iteration" in event ? `${event.type} ${event.iteration}` : event.type))).toEqual([
      "tool-call-start 4",
      "tool-progress",
      "tool-call-end 4",
      "message",
      "step-start 5",
      "message",
      "step-end 5",
      "loop-end",
    ]);
  });

  it("the checkpoint's call ids stay taken: a new call reusing one gets the next free suffix", async () => {
    runs.clear();
    const turn: Message = { role: "assistant", content: "", toolCalls: [call("x")] };
    const provider = new ScriptedProvider([toolCallResponse({ id: "x", name: "work" }), textResponse("ok")]);
    const result = await resumeToolLoop(config(provider), checkpoint([...user, turn, answer("x")]));
    expect(answeredIds(result.messages)).toEqual(["x", "x_2"]);
    expect([...runs.keys()]).toEqual(["x_2"]);
  });

  it("an aborted signal rejects the resumed run before any call runs", async () => {
    runs.clear();
    const turn: Message = { role: "assistant", content: "", toolCalls: [call("s")] };
    const error = await resumeToolLoop(config(new ScriptedProvider([])), checkpoint([...user, turn], 1), {
      signal: AbortSignal.abort(new Error("shutting down")),
    }).catch((failure: unknown) => failure);
    expect(isToolLoopError(error) && [error.code, error.iterations]).toEqual(["aborted", 1]);
    expect(runs.size).toBe(0);
  });

  it("config and context are checked as in runToolLoop, named resumeToolLoop", async () => {
    const ok = checkpoint([...user], 0);
    await expect(resumeToolLoop({ ...config(new ScriptedProvider([])), maxIterations: -1 }, ok)).rejects.toThrow(
      new TypeError("resumeToolLoop: maxIterations must be an integer ≥ 0, got -1"),
    );
    await expect(
      resumeToolLoop(config(new ScriptedProvider([])), ok, { channel: 7 as unknown as string }),
    ).rejects.toThrow(new TypeError("resumeToolLoop: context.channel must be a string, got 7"));
  });

  it("a failing resumed run rejects with the whole transcript (the checkpoint's messages first) and its iterations", async () => {
    const turn: Message = { role: "assistant", content: "", toolCalls: [call("z")] };
    const error = await resumeToolLoop(
      config(new ScriptedProvider([new Error("model down")])),
      checkpoint([...user, turn], 2),
    ).catch((failure: unknown) => failure);
    expect(isToolLoopError(error) && [error.code, error.iterations, answeredIds(error.messages)]).toEqual([
      "provider_failed",
      3,
      ["z"],
    ]);
  });
});

describe("resumeToolLoop: a malformed checkpoint is a TypeError naming the problem, before anything runs", () => {
  const call = (id: string, extra: Record<string, unknown> = {}) => ({
    id,
    type: "function",
    name: "work",
    arguments: {},
    function: { name: "work", arguments: "{}" },
    ...extra,
  });
  const answer = (id: string) => ({ role: "tool", content: "ok", toolCallId: id });
  const assistant = (...calls: unknown[]) => ({ role: "assistant", content: "", toolCalls: calls });
  const hi = { role: "user", content: "hi" };
  const checkpoint = (extra: Record<string, unknown>) => ({
    version: 1,
    messages: [hi, assistant(call("open"))],
    iterations: 1,
    pendingAsync: [],
    ...extra,
  });

  it.each<[string, unknown, string]>([
    ["not an object", null, "checkpoint must be a ToolLoopCheckpoint object, got null"],
    ["an array", [], "checkpoint must be a ToolLoopCheckpoint object, got []"],
    ["a wrong version", checkpoint({ version: 2 }), "checkpoint.version must be 1, got 2"],
    [
      "a stop that is not one",
      checkpoint({ stopped: { reason: "completed", content: "" } }),
      'checkpoint.stopped must be { reason: "response_handled" | "repeated_failure", content: string }, got {"reason":"completed","content":""}',
    ],
    ["no version", checkpoint({ version: undefined }), "checkpoint.version must be 1, got undefined"],
    ["messages not an array", checkpoint({ messages: {} }), "checkpoint.messages must be an array of messages, got {}"],
    [
      "a message that is not one",
      checkpoint({ messages: [hi, 3] }),
      "checkpoint.messages[1] must be a message object, got 3",
    ],
    [
      "a message with an unknown role",
      checkpoint({ messages: [{ role: "root", content: "" }] }),
      'checkpoint.messages[0].role must be "system", "user", "assistant" or "tool", got "root"',
    ],
    [
      "a tool answer without its call",
      checkpoint({ messages: [hi, answer("x")] }),
      'checkpoint.messages[1] answers tool call "x", which the assistant message before it did not make (a tool answer without its call)',
    ],
    [
      "a tool answer to a call of an earlier turn",
      checkpoint({ messages: [hi, assistant(call("a")), answer("a"), assistant(call("b")), answer("a")] }),
      'checkpoint.messages[4] answers tool call "a", which the assistant message before it did not make (a tool answer without its call)',
    ],
    [
      "a call answered twice",
      checkpoint({ messages: [hi, assistant(call("a"), call("b")), answer("a"), answer("a")] }),
      'checkpoint.messages[3] answers tool call "a" a second time',
    ],
    [
      "a call without an answer before a later message",
      checkpoint({ messages: [hi, assistant(call("a")), hi] }),
      'checkpoint.messages[1] has tool call "a" without an answer before checkpoint.messages[2]',
    ],
    [
      "an open call with the id of an answered call of an earlier turn",
      checkpoint({ messages: [hi, assistant(call("a")), answer("a"), assistant(call("b"), call("a"))] }),
      'checkpoint.messages[3] has tool call "a" without an answer, with the id of a call of checkpoint.messages[1], which has its answer',
    ],
    [
      "two calls with one id",
      checkpoint({ messages: [hi, assistant(call("a"), call("a"))] }),
      'checkpoint.messages[1] has two tool calls with the id "a"',
    ],
    [
      "a call without an id",
      checkpoint({ messages: [hi, assistant({ name: "work", arguments: {} })] }),
      "checkpoint.messages[1].toolCalls[0].id must be a non-empty string, got undefined",
    ],
    [
      "a tool message without toolCallId",
      checkpoint({ messages: [hi, assistant(call("a")), { role: "tool", content: "" }] }),
      "checkpoint.messages[2].toolCallId must be a string, got undefined",
    ],
    [
      "an open call whose arguments are not an object",
      checkpoint({ messages: [hi, assistant(call("a", { arguments: "rm -rf" }))] }),
      'checkpoint.messages[1].toolCalls[0].arguments must be an object, got "rm -rf"',
    ],
    [
      "an open call whose function.arguments is not text",
      checkpoint({ messages: [hi, assistant(call("a", { function: { name: "work", arguments: {} } }))] }),
      'checkpoint.messages[1].toolCalls[0].function must be an object { name, arguments: <JSON text> }, got {"name":"work","arguments":{}}',
    ],
    ["negative iterations", checkpoint({ iterations: -1 }), "checkpoint.iterations must be an integer ≥ 0, got -1"],
    ["iterations as text", checkpoint({ iterations: "2" }), 'checkpoint.iterations must be an integer ≥ 0, got "2"'],
    [
      "huge iterations",
      checkpoint({ iterations: 2 ** 60 }),
      "checkpoint.iterations must be an integer ≥ 0, got 1152921504606847000",
    ],
    [
      "pendingAsync not an array",
      checkpoint({ pendingAsync: {} }),
      "checkpoint.pendingAsync must be an array of { toolCallId, toolName }, got {}",
    ],
    [
      "pendingAsync naming no call",
      checkpoint({ pendingAsync: [{ toolCallId: "nope", toolName: "work" }] }),
      'checkpoint.pendingAsync[0].toolCallId must be the id of a tool call in checkpoint.messages, got "nope"',
    ],
    [
      "pendingAsync without a tool name",
      checkpoint({ pendingAsync: [{ toolCallId: "open" }] }),
      "checkpoint.pendingAsync[0].toolName must be a string, got undefined",
    ],
  ])("%s", async (_case, bad, message) => {
    const runs = new Map<string, number>();
    const provider = new ScriptedProvider([textResponse("never")]);
    const error = await resumeToolLoop(
      { provider, tools: [countingTool("work", runs)], maxIterations: 5 },
      bad as ToolLoopCheckpoint,
    ).catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as TypeError).message).toBe(`resumeToolLoop: ${message}`);
    expect(runs.size).toBe(0);
    expect(provider.calls).toHaveLength(0);
  });
});

describe("resumeToolLoop: a checkpoint from storage an attacker could touch", () => {
  it("__proto__ keys (as JSON.parse makes them) pollute nothing and are not read as fields", async () => {
    const runs = new Map<string, number>();
    const proto = (value: string) => `"__proto__":{"polluted":"${value}","version":2,"toolCalls":[{"id":"ghost"}]}`;
    const text = `{${proto("top")},"version":1,"iterations":1,
      "pendingAsync":[{${proto("entry")},"toolCallId":"p","toolName":"work"}],
      "messages":[
        {${proto("message")},"role":"user","content":"hi"},
        {"role":"assistant","content":"","toolCalls":[{${proto("call")},"id":"p","type":"function","name":"work",
          "arguments":{${proto("arguments")},"path":"/tmp"},
          "function":{"name":"work","arguments":"{\\"__proto__\\":{\\"polluted\\":\\"text\\"},\\"path\\":\\"/tmp\\"}"}}]}]}`;
    const checkpoint = JSON.parse(text) as ToolLoopCheckpoint;
    expect(Object.hasOwn(checkpoint, "__proto__")).toBe(true);
    expect(Object.hasOwn(checkpoint.messages[0] as object, "__proto__")).toBe(true);
    expect(Object.hasOwn(checkpoint.messages[1]?.toolCalls?.[0]?.arguments as object, "__proto__")).toBe(true);
    let received: unknown;
    const provider = new ScriptedProvider([textResponse("done")]);
    const result = await resumeToolLoop(
      {
        provider,
        tools: [
          tool("work", (args, context) => {
            received = args;
            return countingTool("work", runs).execute(args, context);
          }),
        ],
        maxIterations: 5,
      },
      checkpoint,
    );
    expect(result.content).toBe("done");
    expect(runs).toEqual(new Map([["p", 1]]));
    expect(Object.getPrototypeOf(received)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty("polluted");
    expect(Object.prototype).not.toHaveProperty("version");
  });

  it("a checkpoint whose fields sit on its prototype is not read through it", async () => {
    const inherited = Object.create({
      version: 1,
      messages: [{ role: "user", content: "hi" }],
      iterations: 0,
      pendingAsync: [],
    }) as ToolLoopCheckpoint;
    const error = await resumeToolLoop({ provider: new ScriptedProvider([]), maxIterations: 1 }, inherited).catch(
      (failure: unknown) => failure,
    );
    expect((error as TypeError).message).toBe(
      "resumeToolLoop: checkpoint must be a ToolLoopCheckpoint object, got Object",
    );
  });

  it("a sparse messages array of length 2**32 - 1 fails at once at its first hole", async () => {
    const sparse: Message[] = [{ role: "user", content: "hi" }];
    sparse.length = 2 ** 32 - 1;
    // Counted, not timed: each element read goes through the proxy (a scan would make billions).
    let reads = 0;
    const messages = new Proxy(sparse, {
      get(target, key, receiver) {
        if (typeof key === "string" && /^\d+$/.test(key)) reads++;
        return Reflect.get(target, key, receiver);
      },
    });
    const error = await resumeToolLoop(
      { provider: new ScriptedProvider([]), maxIterations: 1 },
      { version: 1, messages, iterations: 0, pendingAsync: [] },
    ).catch((failure: unknown) => failure);
    expect((error as TypeError).message).toBe(
      "resumeToolLoop: checkpoint.messages[1] must be a message object, got undefined",
    );
    expect(reads).toBeLessThan(10);
  });

  it("huge arrays are read in linear time: 20 000 answered calls, 20 000 pending async entries", async () => {
    const count = 20_000;
    // Work, not time (no machine load changes it): the element reads of the three arrays, counted
    // behind proxies. Reading them in linear time costs a few reads per element; a search of one
    // array per element of another would cost count² = 4e8, and throws at the budget instead.
    let reads = 0;
    const budget = 20 * count;
    const counted = <T extends object>(array: T[]): T[] =>
      new Proxy(array, {
        get(target, key, receiver) {
          if (typeof key === "string" && key !== "" && Number.isInteger(Number(key)) && ++reads > budget) {
            throw new Error(`more than ${budget} reads of the checkpoint's arrays`);
          }
          return Reflect.get(target, key, receiver);
        },
      });
    const calls = Array.from({ length: count }, (_, index) => ({
      id: `c${index}`,
      type: "function" as const,
      name: "work",
      arguments: {},
    }));
    const messages: Message[] = counted([
      { role: "user", content: "hi" },
      { role: "assistant", content: "", toolCalls: counted(calls) },
      ...calls.map((call) => ({ role: "tool" as const, content: "ok", toolCallId: call.id })),
      { role: "assistant", content: "finished" },
    ]);
    const pendingAsync = counted(calls.map((call) => ({ toolCallId: call.id, toolName: "work" })));
    const result = await resumeToolLoop(
      { provider: new ScriptedProvider([]), maxIterations: 5 },
      { version: 1, messages, iterations: 2, pendingAsync },
    );
    expect(result).toMatchObject({ content: "finished", stopReason: "completed", iterations: 2 });
    expect(reads).toBeGreaterThanOrEqual(3 * count); // the proxies see the reads
    expect(reads).toBeLessThanOrEqual(budget);
  });
});

describe("a crash mid-turn, resumed from the last saved checkpoint", () => {
  it("answers every call exactly once: none of an earlier turn runs again, the interrupted turn's calls run once", async () => {
    const store: string[] = []; // what a database would hold
    const executions = new Map<string, number>(); // completed runs per tool call id
    const count = (context: { toolCallId?: string | undefined }) => {
      const id = context.toolCallId ?? "";
      executions.set(id, (executions.get(id) ?? 0) + 1);
    };
    let processAlive = true;
    const controller = new AbortController();
    const tools = [
      tool("work", async (_args, context) => {
        count(context);
        return "worked";
      }),
      // The process dies while this call runs: it never completes in the first process.
      tool("deploy", (_args, context) => {
        if (processAlive) {
          processAlive = false;
          controller.abort(new Error("SIGKILL"));
          return new Promise<string>(() => {});
        }
        count(context);
        return "deployed";
      }),
    ];
    const steps: ScriptStep[] = [
      toolCallResponse([
        { id: "w1", name: "work" },
        { id: "w2", name: "work" },
      ]),
      toolCallResponse([
        { id: "d1", name: "deploy" },
        { id: "w3", name: "work" },
      ]),
      textResponse("deployed and done"),
    ];
    const first = await runToolLoop(
      {
        provider: new ScriptedProvider(steps),
        tools,
        maxIterations: 5,
        maxConcurrency: 1,
        onCheckpoint: (c) => void store.push(JSON.stringify(c)),
      },
      user,
      { signal: controller.signal },
    ).catch((error: unknown) => error);
    expect(isToolLoopError(first) && first.code).toBe("aborted");
    expect(executions).toEqual(
      new Map([
        ["w1", 1],
        ["w2", 1],
      ]),
    );

    // A new process: only the store survived.
    const last = JSON.parse(store.at(-1) as string) as ToolLoopCheckpoint;
    expect(last.messages.at(-1)?.toolCalls?.map((call) => call.id)).toEqual(["d1", "w3"]);
    const provider = new ScriptedProvider(steps.slice(last.iterations));
    const result = await resumeToolLoop({ provider, tools, maxIterations: 5, maxConcurrency: 1 }, last);

    expect(result).toMatchObject({ content: "deployed and done", stopReason: "completed", iterations: 3 });
    expect(answeredIds(result.messages)).toEqual(["w1", "w2", "d1", "w3"]);
    expect(executions).toEqual(
      new Map([
        ["w1", 1],
        ["w2", 1],
        ["d1", 1],
        ["w3", 1],
      ]),
    );
    provider.assertDone();
  });

  it("a call that finished in the interrupted turn before the crash runs again (its answer was not saved yet)", async () => {
    const store: string[] = [];
    const executions = new Map<string, number>();
    let alive = true;
    const controller = new AbortController();
    const tools = [
      tool("work", (_args, context) => {
        const id = context.toolCallId ?? "";
        executions.set(id, (executions.get(id) ?? 0) + 1);
        if (id === "second" && alive) {
          alive = false;
          controller.abort(new Error("SIGKILL"));
          return new Promise<string>(() => {});
        }
        return "ok";
      }),
    ];
    const steps: ScriptStep[] = [
      toolCallResponse([
        { id: "first", name: "work" },
        { id: "second", name: "work" },
      ]),
      textResponse("done"),
    ];
    await runToolLoop(
      {
        provider: new ScriptedProvider(steps),
        tools,
        maxIterations: 5,
        maxConcurrency: 1,
        onCheckpoint: (c) => void store.push(JSON.stringify(c)),
      },
      user,
      { signal: controller.signal },
    ).catch(() => {});
    const last = JSON.parse(store.at(-1) as string) as ToolLoopCheckpoint;
    const result = await resumeToolLoop(
      { provider: new ScriptedProvider(steps.slice(last.iterations)), tools, maxIterations: 5 },
      last,
    );
    expect(answeredIds(result.messages)).toEqual(["first", "second"]);
    // Checkpoints come per turn: "first" ran in the dead process and again on resume.
    expect(executions).toEqual(
      new Map([
        ["first", 2],
        ["second", 2],
      ]),
    );
  });
});
