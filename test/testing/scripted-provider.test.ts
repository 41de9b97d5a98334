import { describe, expect, it } from "vitest";
import {
  type LLMResponse,
  type LLMStreamPart,
  type Message,
  runToolLoop,
  type ToolLoopEvent,
  ToolRegistry,
} from "../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing/index.js";

const user: Message[] = [{ role: "user", content: "hi" }];

describe("ScriptedProvider", () => {
  it("plays the steps in order and records every call", async () => {
    const provider = new ScriptedProvider([textResponse("one"), textResponse("two")]);
    const tools = [{ type: "function" as const, function: { name: "t", description: "d", parameters: {} } }];
    const signal = new AbortController().signal;

    expect(await provider.chat(user, tools, "m1", { temperature: 0 }, signal)).toEqual(textResponse("one"));
    expect(await provider.chat(user, undefined, "m2", {})).toEqual(textResponse("two"));

    expect(provider.calls).toEqual([
      { messages: user, tools, model: "m1", options: { temperature: 0 }, signal },
      { messages: user, tools: undefined, model: "m2", options: {}, signal: undefined },
    ]);
    expect(provider.remaining).toBe(0);
    expect(() => provider.assertDone()).not.toThrow();
  });

  it("records a snapshot of the messages, not the caller's array", async () => {
    const provider = new ScriptedProvider([textResponse("ok")]);
    const messages: Message[] = [{ role: "user", content: "before" }];
    await provider.chat(messages, undefined, "m", {});
    messages.push({ role: "assistant", content: "later" });
    (messages[0] as Message).content = "changed";
    expect(provider.calls[0]?.messages).toEqual([{ role: "user", content: "before" }]);
  });

  it("records messages with parts as they were sent (a copy: a later change to a part is not seen)", async () => {
    const part = { type: "image" as const, mediaType: "image/png", data: "iVBORw0KGgo=" };
    const messages: Message[] = [{ role: "user", content: [{ type: "text", text: "look" }, part] }];
    const provider = new ScriptedProvider([(call) => textResponse(`${call.messages[0]?.content.length} parts`)]);
    const result = await runToolLoop({ provider, maxIterations: 1 }, messages);
    part.data = "AAAA";
    expect(provider.calls[0]?.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "look" },
          { ...part, data: "iVBORw0KGgo=" },
        ],
      },
    ]);
    expect(result.content).toBe("2 parts");
  });

  it("hands out copies of scripted responses, so the loop cannot change the script", async () => {
    const step = toolCallResponse({ id: "a", name: "t", arguments: { x: 1 } });
    const provider = new ScriptedProvider([step, step]);
    const first = await provider.chat(user, undefined, "m", {});
    (first.toolCalls?.[0]?.arguments as Record<string, unknown>).x = 2;
    const second = await provider.chat(user, undefined, "m", {});
    expect(second.toolCalls?.[0]?.arguments).toEqual({ x: 1 });
  });

  it("rejects with an Error step", async () => {
    const error = new Error("rate limited");
    const provider = new ScriptedProvider([error]);
    await expect(provider.chat(user, undefined, "m", {})).rejects.toBe(error);
  });

  it("calls a function step with the recorded call", async () => {
    const provider = new ScriptedProvider([
      (call) => textResponse(`model=${call.model} messages=${call.messages.length}`),
      async (call) => textResponse(`options=${JSON.stringify(call.options)}`),
    ]);
    expect((await provider.chat(user, undefined, "m", {})).content).toBe("model=m messages=1");
    expect((await provider.chat(user, undefined, "m", { a: 1 })).content).toBe('options={"a":1}');
  });

  it("rejects when chat() is called more often than the script has steps", async () => {
    const provider = new ScriptedProvider([textResponse("only")]);
    await provider.chat(user, undefined, "m", {});
    await expect(provider.chat(user, undefined, "m", {})).rejects.toThrowErrorMatchingInlineSnapshot(
      `[Error: ScriptedProvider: the script has 1 steps but chat() was called 2 times]`,
    );
  });

  it("assertDone() says when the script was not used up", async () => {
    const provider = new ScriptedProvider([textResponse("a"), textResponse("b"), textResponse("c")]);
    await provider.chat(user, undefined, "m", {});
    expect(provider.remaining).toBe(2);
    expect(() => provider.assertDone()).toThrowErrorMatchingInlineSnapshot(
      `[Error: ScriptedProvider: 2 of 3 scripted steps were not used (chat() was called 1 times)]`,
    );
  });

  it("rejects with the signal's reason when the signal is already aborted", async () => {
    const provider = new ScriptedProvider([textResponse("never")]);
    const controller = new AbortController();
    const reason = new Error("stop");
    controller.abort(reason);
    await expect(provider.chat(user, undefined, "m", {}, controller.signal)).rejects.toBe(reason);
  });

  it("has a default model, which can be set", () => {
    expect(new ScriptedProvider([]).getDefaultModel()).toBe("scripted-model");
    expect(new ScriptedProvider([], { defaultModel: "gpt-test" }).getDefaultModel()).toBe("gpt-test");
  });

  it.each([
    ["undefined", undefined],
    ["a response", textResponse("x")],
    ["a string", "x"],
  ])("throws a TypeError for %s instead of an array", (_case, steps) => {
    expect(() => new ScriptedProvider(steps as unknown as LLMResponse[])).toThrow(TypeError);
  });
});

describe("response builders", () => {
  it("textResponse is a final answer", () => {
    expect(textResponse("done")).toEqual({ content: "done", toolCalls: [], finishReason: "stop" });
  });

  it("toolCallResponse makes one or more calls, numbering missing ids uniquely", () => {
    const single = toolCallResponse({ name: "a", arguments: { x: 1 } }, "let me check");
    expect(single).toMatchObject({
      content: "let me check",
      finishReason: "tool_calls",
      toolCalls: [{ type: "function", name: "a", arguments: { x: 1 } }],
    });
    const many = toolCallResponse([{ name: "a" }, { name: "b", id: "mine", arguments: '{"y":2}' }]);
    expect(many.toolCalls).toMatchObject([
      { type: "function", name: "a", arguments: {} },
      { id: "mine", type: "function", name: "b", arguments: '{"y":2}' },
    ]);
    const ids = [single, many].flatMap((response) => response.toolCalls?.map((call) => call.id) ?? []);
    expect(new Set(ids).size).toBe(3);
    expect(ids.every((id) => typeof id === "string" && id !== "")).toBe(true);
  });
});

// Moved from review-regressions.test.ts (findings of the independent review; each failed before its fix).
describe("ScriptedProvider overrun (review regressions)", () => {
  it("ScriptedProvider.assertDone() also reports a script that was overrun", async () => {
    const provider = new ScriptedProvider([textResponse("one")]);
    await provider.chat([], undefined, "m", {});
    await expect(provider.chat([], undefined, "m", {})).rejects.toThrow(/the script has 1 steps/);
    expect(provider.remaining).toBe(0);
    expect(() => provider.assertDone()).toThrow(/called 2 times but the script has only 1 steps/);
  });
});

describe("ScriptedProvider streamed text (chatStream)", () => {
  async function parts(provider: ScriptedProvider, signal?: AbortSignal): Promise<LLMStreamPart[]> {
    const { chatStream } = provider;
    if (chatStream === undefined) throw new Error("no chatStream");
    const seen: LLMStreamPart[] = [];
    for await (const part of chatStream(user, undefined, "m", {}, signal)) seen.push(part);
    return seen;
  }

  it("streams a step's textDeltas piece by piece, then the response with the pieces joined", async () => {
    const provider = new ScriptedProvider([{ textDeltas: ["It is ", "sunny ", "in Paris."] }]);
    expect(await parts(provider)).toEqual([
      { type: "text-delta", delta: "It is " },
      { type: "text-delta", delta: "sunny " },
      { type: "text-delta", delta: "in Paris." },
      { type: "response", response: { content: "It is sunny in Paris.", toolCalls: [], finishReason: "stop" } },
    ]);
    expect(provider.calls).toEqual([{ messages: user, tools: undefined, model: "m", options: {}, signal: undefined }]);
    provider.assertDone();
  });

  it("streams a step's streamParts as written; content defaults to their text pieces joined (issue 29)", async () => {
    const streamParts = [
      { type: "reasoning-delta" as const, delta: "Hmm." },
      { type: "text-delta" as const, delta: "Checking " },
      { type: "tool-input-start" as const, toolCallId: "c", toolName: "t" },
      { type: "tool-input-delta" as const, toolCallId: "c", delta: "{}" },
      { type: "text-delta" as const, delta: "now" },
    ];
    const provider = new ScriptedProvider([{ streamParts, toolCalls: [{ id: "c", name: "t" }] }]);
    expect(provider.chatStream).toBeDefined();
    expect(await parts(provider)).toEqual([
      ...streamParts,
      {
        type: "response",
        response: { content: "Checking now", toolCalls: [{ id: "c", name: "t" }], finishReason: "tool_calls" },
      },
    ]);
  });

  it("chat plays a streamed step as a whole answer, without the pieces", async () => {
    const provider = new ScriptedProvider([{ textDeltas: ["a", "b"], toolCalls: [{ id: "c", name: "t" }] }]);
    expect(await provider.chat(user, undefined, "m", {})).toEqual({
      content: "ab",
      toolCalls: [{ id: "c", name: "t" }],
      finishReason: "tool_calls",
    });
  });

  it("keeps a content given beside textDeltas as written (to script a stream that disagrees)", async () => {
    const provider = new ScriptedProvider([{ content: "whole", textDeltas: ["pie", "ces"] }]);
    expect(await parts(provider)).toEqual([
      { type: "text-delta", delta: "pie" },
      { type: "text-delta", delta: "ces" },
      { type: "response", response: { content: "whole", toolCalls: [], finishReason: "stop" } },
    ]);
  });

  it("has no chatStream for a script without textDeltas, so existing scripts run exactly as before", () => {
    expect(new ScriptedProvider([textResponse("x"), () => textResponse("y")]).chatStream).toBeUndefined();
    expect(new ScriptedProvider([{ textDeltas: ["x"] }], { stream: false }).chatStream).toBeUndefined();
  });

  it("with stream: true streams every step: the content as one piece (none when empty), calls in the response", async () => {
    const call = toolCallResponse({ id: "c1", name: "t" });
    const provider = new ScriptedProvider([textResponse("hello"), call, () => textResponse("computed")], {
      stream: true,
    });
    expect(await parts(provider)).toEqual([
      { type: "text-delta", delta: "hello" },
      { type: "response", response: textResponse("hello") },
    ]);
    expect(await parts(provider)).toEqual([{ type: "response", response: call }]);
    expect(await parts(provider)).toEqual([
      { type: "text-delta", delta: "computed" },
      { type: "response", response: textResponse("computed") },
    ]);
  });

  it("an Error step rejects the stream; a stream beyond the script rejects as chat does", async () => {
    const error = new Error("rate limited");
    const provider = new ScriptedProvider([error], { stream: true });
    await expect(parts(provider)).rejects.toBe(error);
    await expect(parts(provider)).rejects.toThrow("the script has 1 steps but chat() was called 2 times");
  });

  it("an abort ends the stream with the signal's reason, before or between pieces", async () => {
    const before = new AbortController();
    before.abort(new Error("early"));
    const provider = new ScriptedProvider([{ textDeltas: ["a", "b"] }, { textDeltas: ["c", "d"] }]);
    await expect(parts(provider, before.signal)).rejects.toThrow("early");

    const between = new AbortController();
    const { chatStream } = provider;
    const seen: LLMStreamPart[] = [];
    const run = (async () => {
      for await (const part of chatStream?.(user, undefined, "m", {}, between.signal) ?? []) {
        seen.push(part);
        between.abort(new Error("late"));
      }
    })();
    await expect(run).rejects.toThrow("late");
    expect(seen).toEqual([{ type: "text-delta", delta: "c" }]);
  });

  it("refuses a stream option that is not a boolean", () => {
    expect(() => new ScriptedProvider([], { stream: "yes" as unknown as boolean })).toThrowErrorMatchingInlineSnapshot(
      `[TypeError: ScriptedProvider: stream must be a boolean, got "yes"]`,
    );
  });

  it("a loop with a listener streams the scripted pieces as text-delta events", async () => {
    const provider = new ScriptedProvider([{ textDeltas: ["Hel", "lo"] }]);
    const events: ToolLoopEvent[] = [];
    const result = await runToolLoop(
      { provider, tools: new ToolRegistry(), maxIterations: 2, onEvent: (event) => void events.push(event) },
      user,
    );
    expect(events.filter((event) => event.type === "text-delta").map((event) => event.delta)).toEqual(["Hel", "lo"]);
    expect(result.content).toBe("Hello");
  });
});
