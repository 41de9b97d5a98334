import * as fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  errorResult,
  isToolLoopError,
  type LLMProvider,
  type LLMResponse,
  type Message,
  newToolResult,
  runToolLoop,
  type Tool,
  type ToolLoopEvent,
  ToolRegistry,
} from "../src/index.js";
import { MIN_RESULT_CHARS } from "../src/internal/loop-policies.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../src/testing/index.js";

function tool(name: string, execute: Tool["execute"]): Tool {
  return { name, description: `the ${name} tool`, parameters: { type: "object" }, execute };
}

function registryWith(...tools: Tool[]): ToolRegistry {
  const registry = new ToolRegistry();
  for (const each of tools) registry.register(each);
  return registry;
}

const echo = tool("echo", (args) => newToolResult(`echo:${JSON.stringify(args)}`));
const user: Message[] = [{ role: "user", content: "hi" }];

/** A provider with chatStream: each response's content is streamed in pieces of `size` characters. */
function streamingProvider(scripted: ScriptedProvider, size = 2): LLMProvider & { streamed: number } {
  const provider = {
    streamed: 0,
    chat: (...args: Parameters<LLMProvider["chat"]>) => scripted.chat(...args),
    getDefaultModel: () => scripted.getDefaultModel(),
    async *chatStream(...args: Parameters<LLMProvider["chat"]>) {
      provider.streamed++;
      const response: LLMResponse = await scripted.chat(...args);
      for (let index = 0; index < response.content.length; index += size) {
        yield { type: "text-delta" as const, delta: response.content.slice(index, index + size) };
      }
      yield { type: "response" as const, response };
    },
  };
  return provider;
}

/** The events with the volatile parts (results, durations) reduced to what the test reads. */
function shape(event: ToolLoopEvent): unknown {
  switch (event.type) {
    case "tool-call-end":
      return [event.type, event.iteration, event.toolCallId, event.result.forLLM];
    case "tool-call-start":
      return [event.type, event.iteration, event.toolCallId, event.toolName];
    case "message":
      return [event.type, event.message.role, event.message.toolCallId ?? event.message.content];
    case "step-start":
      return [event.type, event.iteration];
    case "step-end":
      return [event.type, event.iteration, event.finishReason];
    case "text-delta":
    case "reasoning-delta":
      return [event.type, event.delta];
    case "tool-input-start":
      return [event.type, event.iteration, event.toolCallId, event.toolName];
    case "tool-input-delta":
      return [event.type, event.iteration, event.toolCallId, event.delta];
    case "tool-progress":
      return [event.type, event.update.toolCallId, event.update.status];
    case "loop-end":
      return [event.type, event.result.stopReason];
  }
}

describe("events (issue 12)", () => {
  it("come in order: step-start, message, tool-call-start … end, tool messages in call order, step-end, loop-end", async () => {
    const events: ToolLoopEvent[] = [];
    const provider = new ScriptedProvider([
      toolCallResponse([
        { id: "a", name: "echo", arguments: { n: 1 } },
        { id: "b", name: "echo", arguments: { n: 2 } },
      ]),
      { ...textResponse("done"), usage: { promptTokens: 1, completionTokens: 2, totalTokens: 3 } },
    ]);
    const result = await runToolLoop(
      {
        provider,
        tools: registryWith(echo),
        maxIterations: 5,
        onEvent: (event) => {
          events.push(event);
        },
      },
      user,
    );
    // Each call's final progress update comes before its end (tested below).
    expect(events.filter((event) => event.type !== "tool-progress").map(shape)).toEqual([
      ["step-start", 1],
      ["message", "assistant", ""],
      ["tool-call-start", 1, "a", "echo"],
      ["tool-call-start", 1, "b", "echo"],
      ["tool-call-end", 1, "a", 'echo:{"n":1}'],
      ["tool-call-end", 1, "b", 'echo:{"n":2}'],
      ["message", "tool", "a"],
      ["message", "tool", "b"],
      ["step-end", 1, "tool_calls"],
      ["step-start", 2],
      ["message", "assistant", "done"],
      ["step-end", 2, "stop"],
      ["loop-end", "completed"],
    ]);
    expect(events.at(-2)).toEqual({
      type: "step-end",
      iteration: 2,
      finishReason: "stop",
      usage: { promptTokens: 1, completionTokens: 2, totalTokens: 3 },
    });
    expect(events.at(-1)).toEqual({ type: "loop-end", result });
    const start = events.find((event) => event.type === "tool-call-start");
    expect(start).toMatchObject({ arguments: { n: 1 } });
    const end = events.find((event) => event.type === "tool-call-end");
    expect(end?.type === "tool-call-end" && end.durationMs).toBeGreaterThanOrEqual(0);
  });

  it("tool-progress wraps the ProgressUpdates, and onProgress still receives them", async () => {
    const events: ToolLoopEvent[] = [];
    const updates: unknown[] = [];
    const working = tool("work", (_args, context) => {
      context.reportProgress(0.5, "half");
      return "ok";
    });
    const provider = new ScriptedProvider([toolCallResponse({ id: "w", name: "work" }), textResponse("done")]);
    await runToolLoop(
      {
        provider,
        tools: registryWith(working),
        maxIterations: 3,
        onProgress: (update) => updates.push(update),
        onEvent: (event) => {
          events.push(event);
        },
      },
      user,
    );
    expect(updates).toHaveLength(2);
    expect(events.map(shape).slice(3, 6)).toEqual([
      ["tool-progress", "w", "running"],
      ["tool-progress", "w", "completed"],
      ["tool-call-end", 1, "w", "ok"],
    ]);
    expect(events[3]).toEqual({
      type: "tool-progress",
      update: { toolCallId: "w", toolName: "work", progress: 0.5, message: "half", status: "running" },
    });
  });

  it("replaying the message events onto the caller's messages gives exactly result.messages (property)", async () => {
    const step = fc.oneof(
      fc.string().map((text) => textResponse(text)),
      fc
        .array(fc.record({ name: fc.constantFrom("echo", "fail", "missing"), n: fc.integer() }), {
          minLength: 1,
          maxLength: 4,
        })
        .map((calls) => toolCallResponse(calls.map(({ name, n }) => ({ name, arguments: { n } })))),
    );
    const fail = tool("fail", () => errorResult("no ".repeat(60))); // longer than maxResultChars: cut
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 1, max: 6 }),
        async (steps, maxIterations) => {
          const history: Message[] = [{ role: "user", content: "go" }];
          const replayed = structuredClone(history);
          const provider = new ScriptedProvider([...steps, textResponse("end"), textResponse("end")]);
          const result = await runToolLoop(
            {
              provider,
              tools: registryWith(echo, fail),
              maxIterations,
              maxResultChars: MIN_RESULT_CHARS,
              finalAnswerOnMaxIterations: true,
              onEvent: (event) => {
                if (event.type === "message") replayed.push(structuredClone(event.message));
              },
            },
            history,
          );
          expect(replayed).toEqual(result.messages);
        },
      ),
      { numRuns: 60 },
    );
  });

  it("a throwing onEvent rejects with ToolLoopError; the transcript has every call answered, and no tool runs after", async () => {
    let ran = 0;
    const counted = tool("counted", () => {
      ran++;
      return "ok";
    });
    const provider = new ScriptedProvider([
      toolCallResponse([
        { id: "a", name: "counted" },
        { id: "b", name: "counted" },
      ]),
      textResponse("never"),
    ]);
    const failure = await runToolLoop(
      {
        provider,
        tools: registryWith(counted),
        maxIterations: 5,
        onEvent: (event) => {
          if (event.type === "message" && event.message.role === "assistant") throw new Error("listener down");
        },
      },
      user,
    ).catch((error: unknown) => error);
    expect(isToolLoopError(failure)).toBe(true);
    if (!isToolLoopError(failure)) return;
    expect(failure.message).toBe("onEvent threw: listener down");
    expect(failure.code).toBe("internal");
    expect(failure.cause).toEqual(new Error("listener down"));
    expect(ran).toBe(0);
    expect(provider.calls).toHaveLength(1);
    expect(failure.messages.slice(1).map((message) => [message.role, message.toolCallId])).toEqual([
      ["assistant", undefined],
      ["tool", "a"],
      ["tool", "b"],
    ]);
    expect(failure.messages[2]?.content).toBe('tool "counted" was not run: the loop is stopping');
  });

  it("an onEvent that rejects at loop-end rejects the run too (nothing is lost silently)", async () => {
    const provider = new ScriptedProvider([textResponse("hi")]);
    const failure = await runToolLoop(
      {
        provider,
        maxIterations: 1,
        onEvent: async (event) => {
          if (event.type === "loop-end") throw new Error("disk full");
        },
      },
      user,
    ).catch((error: unknown) => error);
    expect(isToolLoopError(failure) && failure.message).toBe("onEvent threw: disk full");
    expect(isToolLoopError(failure) && failure.messages.at(-1)).toEqual({ role: "assistant", content: "hi" });
  });

  it.each<ToolLoopEvent["type"]>(["step-start", "message", "tool-call-start", "tool-call-end", "step-end", "loop-end"])(
    "an onEvent that never settles (at %s) does not hold the run past an abort: the usual abort, every call answered",
    async (hangAt) => {
      const controller = new AbortController();
      const provider = new ScriptedProvider([
        toolCallResponse([
          { id: "a", name: "echo" },
          { id: "b", name: "echo" },
        ]),
        textResponse("never"),
      ]);
      let hung = false;
      const running = runToolLoop(
        {
          provider,
          tools: registryWith(echo),
          maxIterations: 3,
          onEvent: (event) => {
            if (event.type !== hangAt || hung) return;
            hung = true;
            setTimeout(() => controller.abort(new Error("user left")), 1);
            return new Promise<void>(() => {});
          },
        },
        user,
        { signal: controller.signal },
      );
      const failure = await running.catch((error: unknown) => error);
      expect(hung).toBe(true);
      // At loop-end the run had already completed: the abort only stops the wait.
      if (hangAt === "loop-end") {
        expect(failure).toMatchObject({ stopReason: "completed" });
        return;
      }
      expect(isToolLoopError(failure) && failure.code).toBe("aborted");
      if (!isToolLoopError(failure)) return;
      const calls = failure.messages
        .filter((message) => message.role === "assistant")
        .flatMap((m) => m.toolCalls ?? []);
      const answers = failure.messages.filter((message) => message.role === "tool").map((m) => m.toolCallId);
      expect(answers).toEqual(calls.map((call) => call.id));
    },
  );

  it("maxIterations 0: an onEvent that never settles at loop-end does not hold the run past an abort", async () => {
    const controller = new AbortController();
    const running = runToolLoop(
      {
        provider: new ScriptedProvider([]),
        maxIterations: 0,
        onEvent: () => {
          setTimeout(() => controller.abort(new Error("user left")), 1);
          return new Promise<void>(() => {});
        },
      },
      user,
      { signal: controller.signal },
    );
    await expect(running).resolves.toMatchObject({ stopReason: "max_iterations", iterations: 0 });
  });

  it("a slow onEvent holds the loop (back-pressure): nothing runs ahead of it, nothing is dropped", async () => {
    const seen: string[] = [];
    let inside = 0;
    let overlapped = false;
    const provider = new ScriptedProvider([
      toolCallResponse([
        { id: "a", name: "echo" },
        { id: "b", name: "echo" },
        { id: "c", name: "echo" },
      ]),
      textResponse("done"),
    ]);
    await runToolLoop(
      {
        provider,
        tools: registryWith(echo),
        maxIterations: 3,
        onEvent: async (event) => {
          inside++;
          if (inside > 1) overlapped = true;
          await new Promise((resolve) => setTimeout(resolve, 1));
          seen.push(event.type);
          inside--;
        },
      },
      user,
    );
    expect(overlapped).toBe(false);
    expect(seen.filter((type) => type === "tool-call-end")).toHaveLength(3);
    expect(seen.at(-1)).toBe("loop-end");
    // The provider was asked again only after the first step's events were all handled.
    expect(seen.indexOf("step-end")).toBeLessThan(seen.lastIndexOf("step-start"));
  });
});

describe("streaming (issue 12)", () => {
  it("with chatStream and a listener, the loop streams: text-deltas before the assistant message", async () => {
    const events: ToolLoopEvent[] = [];
    const provider = streamingProvider(
      new ScriptedProvider([toolCallResponse({ id: "a", name: "echo" }), textResponse("Hello!")]),
    );
    const result = await runToolLoop(
      { provider, tools: registryWith(echo), maxIterations: 3, onEvent: (event) => void events.push(event) },
      user,
    );
    expect(provider.streamed).toBe(2);
    expect(result.content).toBe("Hello!");
    expect(events.map(shape).slice(-7, -1)).toEqual([
      ["step-start", 2],
      ["text-delta", "He"],
      ["text-delta", "ll"],
      ["text-delta", "o!"],
      ["message", "assistant", "Hello!"],
      ["step-end", 2, "stop"],
    ]);
  });

  it("streams reasoning and tool input: a call's input-start before its deltas, tool-call-start after the answer (issue 29)", async () => {
    const events: ToolLoopEvent[] = [];
    const provider = new ScriptedProvider([
      {
        ...toolCallResponse(
          [
            { id: "a", name: "echo", arguments: { n: 1 } },
            { id: "b", name: "echo", arguments: { n: 22 } },
          ],
          "On it",
        ),
        streamParts: [
          { type: "reasoning-delta", delta: "Two " },
          { type: "reasoning-delta", delta: "calls." },
          { type: "text-delta", delta: "On it" },
          { type: "tool-input-start", toolCallId: "a", toolName: "echo" },
          { type: "tool-input-delta", toolCallId: "a", delta: '{"n":' },
          { type: "tool-input-start", toolCallId: "b", toolName: "echo" },
          { type: "tool-input-delta", toolCallId: "b", delta: '{ "n": 22' },
          { type: "tool-input-delta", toolCallId: "a", delta: " 1}" },
          { type: "tool-input-delta", toolCallId: "b", delta: " }" },
        ],
      },
      textResponse("done"),
    ]);
    const result = await runToolLoop(
      { provider, tools: registryWith(echo), maxIterations: 2, onEvent: (event) => void events.push(event) },
      user,
    );
    expect(result.messages[1]?.content).toBe("On it");
    expect(events.map(shape).slice(0, 13)).toEqual([
      ["step-start", 1],
      ["reasoning-delta", "Two "],
      ["reasoning-delta", "calls."],
      ["text-delta", "On it"],
      ["tool-input-start", 1, "a", "echo"],
      ["tool-input-delta", 1, "a", '{"n":'],
      ["tool-input-start", 1, "b", "echo"],
      ["tool-input-delta", 1, "b", '{ "n": 22'],
      ["tool-input-delta", 1, "a", " 1}"],
      ["tool-input-delta", 1, "b", " }"],
      ["message", "assistant", "On it"],
      ["tool-call-start", 1, "a", "echo"],
      ["tool-call-start", 1, "b", "echo"],
    ]);
    // Per id, the pieces joined parse to the call's arguments in the transcript.
    const calls = result.messages[1]?.toolCalls ?? [];
    for (const call of calls) {
      const input = events
        .filter((event) => event.type === "tool-input-delta" && event.toolCallId === call.id)
        .map((event) => (event as { delta: string }).delta)
        .join("");
      expect(JSON.parse(input)).toEqual(call.arguments);
    }
    expect(events.filter((event) => event.type === "tool-call-start")).toHaveLength(2);
  });

  it("drops a tool-input-delta of a call never started, a second start, and malformed parts (issue 29)", async () => {
    const events: ToolLoopEvent[] = [];
    const parts = [
      { type: "tool-input-delta", toolCallId: "ghost", delta: "{}" },
      { type: "tool-input-start", toolCallId: "a", toolName: "echo" },
      { type: "tool-input-start", toolCallId: "a", toolName: "other" },
      { type: "tool-input-start", toolCallId: 7, toolName: "echo" },
      { type: "tool-input-delta", toolCallId: "a", delta: 42 },
      { type: "reasoning-delta", delta: ["x"] },
      { type: "tool-input-delta", toolCallId: "a", delta: "{}" },
      null,
      "text",
    ];
    const provider = new ScriptedProvider([
      { ...toolCallResponse({ id: "a", name: "echo" }), streamParts: parts as never },
      textResponse("done"),
    ]);
    await runToolLoop(
      { provider, tools: registryWith(echo), maxIterations: 2, onEvent: (event) => void events.push(event) },
      user,
    );
    expect(events.map(shape).slice(1, 4)).toEqual([
      ["tool-input-start", 1, "a", "echo"],
      ["tool-input-delta", 1, "a", "{}"],
      ["message", "assistant", ""],
    ]);
  });

  it("passes megabytes of streamed arguments through piece by piece, never joined per delta (issue 29)", async () => {
    const piece = `"${"x".repeat(1_022)}",`;
    const count = 2_048; // 2 MiB
    const streamParts = [
      { type: "tool-input-start" as const, toolCallId: "big", toolName: "echo" },
      { type: "tool-input-delta" as const, toolCallId: "big", delta: '{"list":[' },
      ...Array.from({ length: count }, () => ({ type: "tool-input-delta" as const, toolCallId: "big", delta: piece })),
      { type: "tool-input-delta" as const, toolCallId: "big", delta: '""]}' },
    ];
    const provider = new ScriptedProvider([
      { ...toolCallResponse({ id: "big", name: "echo", arguments: { list: [] } }), streamParts },
      textResponse("done"),
    ]);
    let deltas = 0;
    let longest = 0;
    await runToolLoop(
      {
        provider,
        tools: registryWith(echo),
        maxIterations: 2,
        onEvent: (event) => {
          if (event.type !== "tool-input-delta") return;
          deltas++;
          longest = Math.max(longest, event.delta.length);
        },
      },
      user,
    );
    expect(deltas).toBe(count + 2);
    expect(longest).toBe(piece.length);
  });

  it("without a listener the loop calls chat, even when the provider can stream", async () => {
    const provider = streamingProvider(new ScriptedProvider([textResponse("Hello!")]));
    await runToolLoop({ provider, maxIterations: 3, maxResultChars: 1_000 }, user);
    expect(provider.streamed).toBe(0);
  });

  it.each([
    ["ends without a response part", [{ type: "text-delta", delta: "x" }], "invalid_response"],
    ["throws", "throw", "provider_failed"],
  ])("a stream that %s rejects like a failed chat", async (_case, parts, code) => {
    // A broken stream, whatever LLMProvider.chatStream's part type says.
    const broken = {
      chat: () => Promise.reject(new Error("not used")),
      getDefaultModel: () => "m",
      async *chatStream() {
        if (parts === "throw") throw new Error("connection reset");
        yield* parts as object[];
      },
    };
    const provider = broken as unknown as LLMProvider;
    const failure = await runToolLoop({ provider, maxIterations: 1, onEvent: () => {} }, user).catch(
      (error: unknown) => error,
    );
    expect(isToolLoopError(failure) && failure.code).toBe(code);
  });
});
