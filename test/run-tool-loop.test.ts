import { getEventListeners } from "node:events";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as z from "zod";
import {
  type ContentPart,
  createToolSearchTools,
  defineTool,
  errorResult,
  InvalidProviderResponseError,
  isInvalidProviderResponseError,
  isToolLoopError,
  type LLMProvider,
  type LLMResponse,
  type Message,
  mediaResult,
  newToolResult,
  type ProgressUpdate,
  resumeToolLoop,
  runToolLoop,
  type Tool,
  type ToolContext,
  type ToolLoopCheckpoint,
  type ToolLoopConfig,
  ToolLoopError,
  ToolRegistry,
  ToolResult,
} from "../src/index.js";
import { MIN_RESULT_CHARS } from "../src/internal/loop-policies.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../src/testing/index.js";
import { captureLogger } from "./helpers/capture-logger.js";
import { backgroundTool, tool } from "./helpers/loop-tools.js";

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}

function registryWith(...tools: Tool[]): ToolRegistry {
  const registry = new ToolRegistry();
  for (const each of tools) registry.register(each);
  return registry;
}

const echo = tool("echo", (args) => newToolResult(`echo:${JSON.stringify(args)}`));
const user: Message[] = [{ role: "user", content: "hi" }];
/** vi.waitFor polls; a short interval keeps the tests quick (no duration is asserted). */
const POLL = { interval: 1, timeout: 5000 };

/** Every assistant tool call is followed by exactly one tool message with its id, in call order. */
/** A provider scripted with one turn of two calls (ids "a" and "b"), then the answer "ok". */
function twoCallsThenOk(first: string, second: string): ScriptedProvider {
  return new ScriptedProvider([
    toolCallResponse([
      { name: first, id: "a" },
      { name: second, id: "b" },
    ]),
    textResponse("ok"),
  ]);
}

function expectEveryCallAnswered(messages: Message[]): void {
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index] as Message;
    if (message.role === "tool") {
      const owner = messages
        .slice(0, index)
        .findLast((candidate) => candidate.role === "assistant" && candidate.toolCalls !== undefined);
      expect(owner?.toolCalls?.some((call) => call.id === message.toolCallId)).toBe(true);
    }
    if (message.role !== "assistant" || message.toolCalls === undefined) continue;
    const answers = messages.slice(index + 1, index + 1 + message.toolCalls.length);
    expect(answers.map((answer) => [answer.role, answer.toolCallId])).toEqual(
      message.toolCalls.map((call) => ["tool", call.id]),
    );
  }
}

afterEach(() => {
  vi.useRealTimers();
});

describe("the loop (Go's algorithm)", () => {
  it("finishes with the content when the model makes no tool call", async () => {
    const provider = new ScriptedProvider([textResponse("Hello!")]);
    const result = await runToolLoop({ provider, tools: registryWith(echo), maxIterations: 5 }, user);
    expect(result).toEqual({
      content: "Hello!",
      iterations: 1,
      stopReason: "completed",
      messages: [...user, { role: "assistant", content: "Hello!" }],
    });
    expect(provider.calls[0]).toMatchObject({ model: "scripted-model", options: {}, messages: user });
    provider.assertDone();
  });

  it("runs the calls, appends assistant and tool messages, and asks again", async () => {
    const provider = new ScriptedProvider([
      toolCallResponse(
        [
          { id: "call_a", name: "echo", arguments: { text: "one" } },
          { id: "call_b", name: "echo", arguments: { text: "two" } },
        ],
        "Let me echo that.",
      ),
      textResponse("Done."),
    ]);
    const result = await runToolLoop(
      { provider, tools: registryWith(echo), maxIterations: 5, model: "gpt-test", llmOptions: { temperature: 0 } },
      user,
    );
    expect(result.content).toBe("Done.");
    expect(result.iterations).toBe(2);
    expect(result.stopReason).toBe("completed");
    expect(result.messages).toMatchInlineSnapshot(`
      [
        {
          "content": "hi",
          "role": "user",
        },
        {
          "content": "Let me echo that.",
          "role": "assistant",
          "toolCalls": [
            {
              "arguments": {
                "text": "one",
              },
              "function": {
                "arguments": "{"text":"one"}",
                "name": "echo",
              },
              "id": "call_a",
              "name": "echo",
              "type": "function",
            },
            {
              "arguments": {
                "text": "two",
              },
              "function": {
                "arguments": "{"text":"two"}",
                "name": "echo",
              },
              "id": "call_b",
              "name": "echo",
              "type": "function",
            },
          ],
        },
        {
          "content": "echo:{"text":"one"}",
          "isError": false,
          "role": "tool",
          "toolCallId": "call_a",
          "toolName": "echo",
        },
        {
          "content": "echo:{"text":"two"}",
          "isError": false,
          "role": "tool",
          "toolCallId": "call_b",
          "toolName": "echo",
        },
        {
          "content": "Done.",
          "role": "assistant",
        },
      ]
    `);
    expect(provider.calls.map((call) => [call.model, call.options])).toEqual([
      ["gpt-test", { temperature: 0 }],
      ["gpt-test", { temperature: 0 }],
    ]);
    expect(provider.calls[1]?.messages).toEqual(result.messages.slice(0, 4));
  });

  it("asks the registry for definitions on every iteration", async () => {
    const registry = registryWith(
      tool("install", () => {
        registry.register(tool("late", () => newToolResult("late ran")));
        return newToolResult("installed");
      }),
    );
    const provider = new ScriptedProvider([
      toolCallResponse({ name: "install" }),
      toolCallResponse({ name: "late" }),
      textResponse("ok"),
    ]);
    const result = await runToolLoop({ provider, tools: registry, maxIterations: 5 }, user);
    const offered = provider.calls.map((call) => call.tools?.map((definition) => definition.function.name));
    expect(offered).toEqual([["install"], ["install", "late"], ["install", "late"]]);
    expect(result.messages.filter((message) => message.role === "tool").map((message) => message.content)).toEqual([
      "installed",
      "late ran",
    ]);
  });

  it("offers no definitions (undefined) when the registry is empty or absent", async () => {
    for (const tools of [new ToolRegistry(), null, undefined]) {
      const provider = new ScriptedProvider([textResponse("ok")]);
      const config: ToolLoopConfig = { provider, maxIterations: 1 };
      if (tools !== undefined) config.tools = tools;
      await runToolLoop(config, user);
      expect(provider.calls[0]?.tools).toBeUndefined();
    }
  });

  it("does not mutate the caller's messages", async () => {
    const messages: Message[] = [
      { role: "system", content: "be brief" },
      { role: "user", content: "hi" },
    ];
    const before = structuredClone(messages);
    const provider = new ScriptedProvider([toolCallResponse({ name: "echo" }), textResponse("ok")]);
    const result = await runToolLoop({ provider, tools: registryWith(echo), maxIterations: 3 }, messages);
    expect(messages).toEqual(before);
    expect(result.messages).not.toBe(messages);
    expect(result.messages.slice(0, 2)).toEqual(before);
    expect(result.messages).toHaveLength(5);
  });

  it("uses contentForLLM: the error text when forLLM is empty, and marks errors", async () => {
    const registry = registryWith(
      tool("broken", () => new ToolResult({ forLLM: "", isError: true, err: new Error("disk full") })),
      echo,
    );
    const provider = new ScriptedProvider([
      toolCallResponse([
        { id: "1", name: "broken" },
        { id: "2", name: "echo" },
      ]),
      textResponse("sorry"),
    ]);
    const { messages } = await runToolLoop({ provider, tools: registry, maxIterations: 2 }, user);
    expect(messages.slice(2, 4)).toEqual([
      { role: "tool", content: "disk full", toolCallId: "1", toolName: "broken", isError: true },
      { role: "tool", content: "echo:{}", toolCallId: "2", toolName: "echo", isError: false },
    ]);
  });

  it("failing tools do not affect the other calls of the turn", async () => {
    const registry = registryWith(
      echo,
      tool("throws", () => {
        throw new Error("kaput");
      }),
      tool("rejects", () => Promise.reject("nope")),
      tool("empty", () => undefined as unknown as ToolResult),
    );
    const provider = new ScriptedProvider([
      toolCallResponse([
        { id: "1", name: "throws" },
        { id: "2", name: "echo", arguments: { a: 1 } },
        { id: "3", name: "rejects" },
        { id: "4", name: "missing" },
        { id: "5", name: "empty" },
        { id: "6", name: "echo", arguments: { a: 2 } },
      ]),
      textResponse("ok"),
    ]);
    const { messages } = await runToolLoop({ provider, tools: registry, maxIterations: 2 }, user);
    expect(
      messages.filter((message) => message.role === "tool").map((message) => message.content),
    ).toMatchInlineSnapshot(`
      [
        "tool "throws" failed: kaput",
        "echo:{"a":1}",
        "tool "rejects" failed: nope",
        "tool "missing" not found. Available tools: echo, empty, rejects, throws.",
        "tool "empty" returned no result",
        "echo:{"a":2}",
      ]
    `);
    expectEveryCallAnswered(messages);
  });

  it("stops at the cap with empty content and stopReason max_iterations, every call answered", async () => {
    const provider = new ScriptedProvider([toolCallResponse({ name: "echo" }), toolCallResponse({ name: "echo" })]);
    const result = await runToolLoop({ provider, tools: registryWith(echo), maxIterations: 2 }, user);
    expect(result.content).toBe("");
    expect(result.stopReason).toBe("max_iterations");
    expect(result.iterations).toBe(2);
    expect(result.messages.at(-1)?.role).toBe("tool");
    expectEveryCallAnswered(result.messages);
    provider.assertDone();
  });

  it("makes no provider call with maxIterations 0", async () => {
    const provider = new ScriptedProvider([textResponse("never")]);
    const result = await runToolLoop({ provider, tools: registryWith(echo), maxIterations: 0 }, user);
    expect(provider.calls).toHaveLength(0);
    expect(result).toEqual({ content: "", iterations: 0, stopReason: "max_iterations", messages: user });
  });

  it.each([
    ["null", null],
    ["absent", undefined],
  ])("answers every call 'No tools available' when tools is %s", async (_case, tools) => {
    const provider = new ScriptedProvider([
      toolCallResponse([
        { id: "1", name: "echo" },
        { id: "2", name: "other" },
      ]),
      textResponse("ok"),
    ]);
    const config: ToolLoopConfig = { provider, maxIterations: 2 };
    if (tools !== undefined) config.tools = tools;
    const { messages } = await runToolLoop(config, user);
    expect(messages.slice(2, 4).map((message) => message.content)).toMatchInlineSnapshot(`
      [
        "No tools available: tool "echo" cannot be called.",
        "No tools available: tool "other" cannot be called.",
      ]
    `);
    expect(messages.slice(2, 4).every((message) => message.isError)).toBe(true);
  });

  it("sums the usage of the calls that report it", async () => {
    const provider = new ScriptedProvider([
      { ...toolCallResponse({ name: "echo" }), usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 } },
      toolCallResponse({ name: "echo" }),
      { ...textResponse("ok"), usage: { promptTokens: 20, completionTokens: 7, totalTokens: 27 } },
    ]);
    const result = await runToolLoop({ provider, tools: registryWith(echo), maxIterations: 3 }, user);
    expect(result.usage).toEqual({ promptTokens: 30, completionTokens: 12, totalTokens: 42 });

    const silent = await runToolLoop({ provider: new ScriptedProvider([textResponse("ok")]), maxIterations: 1 }, user);
    expect(silent).not.toHaveProperty("usage");
  });

  it("sums cached, cache-write and reasoning tokens only as reported: absent stays absent, a reported 0 is kept (issue 29)", async () => {
    const base = { promptTokens: 10, completionTokens: 5, totalTokens: 15 };
    const provider = new ScriptedProvider([
      { ...toolCallResponse({ name: "echo" }), usage: { ...base, cachedInputTokens: 4, reasoningTokens: 0 } },
      { ...toolCallResponse({ name: "echo" }), usage: base },
      { ...toolCallResponse({ name: "echo" }) },
      { ...textResponse("ok"), usage: { ...base, cachedInputTokens: 6 } },
    ]);
    const result = await runToolLoop({ provider, tools: registryWith(echo), maxIterations: 4 }, user);
    expect(result.usage).toStrictEqual({
      promptTokens: 30,
      completionTokens: 15,
      totalTokens: 45,
      cachedInputTokens: 10,
      reasoningTokens: 0,
    });
    expect(result.usage).not.toHaveProperty("cacheWriteTokens");

    // A detail reported by a later call only, and a non-number (a hostile provider's), which adds nothing.
    const later = new ScriptedProvider([
      { ...toolCallResponse({ name: "echo" }), usage: base },
      { ...textResponse("ok"), usage: { ...base, cacheWriteTokens: 3, reasoningTokens: "7" as unknown as number } },
    ]);
    const second = await runToolLoop({ provider: later, tools: registryWith(echo), maxIterations: 2 }, user);
    expect(second.usage).toStrictEqual({
      promptTokens: 20,
      completionTokens: 10,
      totalTokens: 30,
      cacheWriteTokens: 3,
    });
  });

  it("copies providerMetadata onto the transcript's call unchanged", async () => {
    const providerMetadata = { thoughtSignature: "abc" };
    const provider = new ScriptedProvider([
      { content: "", toolCalls: [{ id: "g1", name: "echo", arguments: {}, providerMetadata }] },
      textResponse("ok"),
    ]);
    const { messages } = await runToolLoop({ provider, tools: registryWith(echo), maxIterations: 2 }, user);
    expect(messages[1]?.toolCalls?.[0]?.providerMetadata).toEqual(providerMetadata);
  });

  it("passes a 5 MB result to the transcript intact", async () => {
    const big = `${"x".repeat(5 * 1024 * 1024 - 1)}!`;
    const provider = new ScriptedProvider([toolCallResponse({ name: "big" }), textResponse("ok")]);
    const { messages } = await runToolLoop(
      { provider, tools: registryWith(tool("big", () => newToolResult(big))), maxIterations: 2 },
      user,
    );
    const content = messages[2]?.content ?? "";
    expect(content.length).toBe(big.length);
    expect(content === big).toBe(true);
  });
});

describe("tool calls as providers return them", () => {
  const recorder = () => {
    const seen: Record<string, unknown>[] = [];
    return {
      seen,
      tool: tool("rec", (args) => {
        seen.push(args);
        return newToolResult("ok");
      }),
    };
  };

  it("parses calls that carry only function: { name, arguments: '<json>' }", async () => {
    const { seen, tool: rec } = recorder();
    const provider = new ScriptedProvider([
      {
        content: "",
        toolCalls: [{ id: "c1", type: "function", function: { name: "rec", arguments: '{"city":"Paris","n":2}' } }],
      },
      textResponse("ok"),
    ]);
    const { messages } = await runToolLoop({ provider, tools: registryWith(rec), maxIterations: 2 }, user);
    expect(seen).toEqual([{ city: "Paris", n: 2 }]);
    expect(messages[1]?.toolCalls).toEqual([
      {
        id: "c1",
        type: "function",
        name: "rec",
        arguments: { city: "Paris", n: 2 },
        function: { name: "rec", arguments: '{"city":"Paris","n":2}' },
      },
    ]);
  });

  it.each([
    ["a JSON string in arguments", { name: "rec", arguments: '{"a":1}' }, { a: 1 }, '{"a":1}'],
    ["an object in arguments", { name: "rec", arguments: { a: 1 } }, { a: 1 }, '{"a":1}'],
    ["empty argument text", { name: "rec", arguments: "" }, {}, "{}"],
    ["whitespace argument text", { name: "rec", function: { name: "rec", arguments: "  " } }, {}, "{}"],
    ["no arguments at all", { name: "rec" }, {}, "{}"],
    ["null arguments", { name: "rec", arguments: null }, {}, "{}"],
  ])("accepts %s", async (_case, call, args, text) => {
    const { seen, tool: rec } = recorder();
    const provider = new ScriptedProvider([
      { content: "", toolCalls: [{ id: "c1", ...call } as never] },
      textResponse("ok"),
    ]);
    const { messages } = await runToolLoop({ provider, tools: registryWith(rec), maxIterations: 2 }, user);
    expect(seen).toEqual([args]);
    expect(messages[1]?.toolCalls?.[0]).toMatchObject({ arguments: args, function: { name: "rec", arguments: text } });
  });

  it.each([
    ["invalid JSON", '{"city": "Par'],
    ["a JSON array", "[1,2]"],
    ["a JSON string", '"Paris"'],
    ["JSON null", "null"],
  ])("answers %s with an error tool message and does not run the tool", async (_case, text) => {
    const { seen, tool: rec } = recorder();
    const provider = new ScriptedProvider([
      { content: "", toolCalls: [{ id: "c1", function: { name: "rec", arguments: text } }] },
      textResponse("ok"),
    ]);
    const { messages } = await runToolLoop({ provider, tools: registryWith(rec), maxIterations: 2 }, user);
    expect(seen).toEqual([]);
    expect(messages[2]).toMatchObject({ role: "tool", toolCallId: "c1", isError: true });
    expect(messages[2]?.content).toMatch(
      /^(invalid JSON in arguments for tool "rec": |arguments for tool "rec" must be a JSON object, got )/,
    );
    expect(messages[1]?.toolCalls?.[0]).toMatchObject({ arguments: {}, function: { arguments: text } });
  });

  it("tells the model how to fix invalid JSON", async () => {
    const provider = new ScriptedProvider([
      { content: "", toolCalls: [{ id: "c1", name: "echo", arguments: "{oops" }] },
      textResponse("ok"),
    ]);
    const { messages } = await runToolLoop({ provider, tools: registryWith(echo), maxIterations: 2 }, user);
    // The middle is V8's JSON.parse message, which varies across Node versions.
    expect(messages[2]?.content).toMatch(
      /^invalid JSON in arguments for tool "echo": .*position 1.*\. Send the arguments as one JSON object\.$/,
    );
  });

  it.each([
    ["an array", [1, 2]],
    ["a number", 7],
    ["a boolean", true],
  ])("answers arguments that are %s with an error and does not run the tool", async (_case, value) => {
    const { seen, tool: rec } = recorder();
    const provider = new ScriptedProvider([
      { content: "", toolCalls: [{ id: "c1", name: "rec", arguments: value as never }] },
      textResponse("ok"),
    ]);
    const { messages } = await runToolLoop({ provider, tools: registryWith(rec), maxIterations: 2 }, user);
    expect(seen).toEqual([]);
    expect(messages[2]).toMatchObject({ role: "tool", toolCallId: "c1", isError: true });
    expect(messages[2]?.content).toMatch(/^arguments for tool "rec" must be a JSON object, got /);
  });

  it("gives missing, empty and duplicate ids unique ids, and answers each", async () => {
    const provider = new ScriptedProvider([
      {
        content: "",
        toolCalls: [
          { name: "echo" },
          { id: "", name: "echo" },
          { id: "dup", name: "echo" },
          { id: "dup", name: "echo" },
        ],
      },
      textResponse("ok"),
    ]);
    const { messages } = await runToolLoop({ provider, tools: registryWith(echo), maxIterations: 2 }, user);
    const ids = messages[1]?.toolCalls?.map((call) => call.id) ?? [];
    expect(ids).toHaveLength(4);
    expect(new Set(ids).size).toBe(4);
    expect(ids.every((id) => id !== "")).toBe(true);
    expect(ids[2]).toBe("dup");
    expectEveryCallAnswered(messages);
  });

  it("keeps ids unique across turns and against the caller's history", async () => {
    const history: Message[] = [
      { role: "user", content: "earlier" },
      { role: "assistant", content: "", toolCalls: [{ id: "same", name: "echo", arguments: {} }] },
      { role: "tool", content: "echo:{}", toolCallId: "same" },
      { role: "assistant", content: "done" },
      { role: "user", content: "again" },
    ];
    const provider = new ScriptedProvider([
      { content: "", toolCalls: [{ id: "same", name: "echo", arguments: {} }] },
      { content: "", toolCalls: [{ id: "same", name: "echo", arguments: {} }] },
      textResponse("ok"),
    ]);
    const { messages } = await runToolLoop({ provider, tools: registryWith(echo), maxIterations: 3 }, history);
    const ids = messages.flatMap((message) => message.toolCalls?.map((call) => call.id) ?? []);
    expect(ids).toHaveLength(3);
    expect(new Set(ids).size).toBe(3);
    expectEveryCallAnswered(messages);
  });

  it.each([["__proto__"], ["constructor"], ["toString"], ["hasOwnProperty"], [""]])(
    "answers a call of %j as an unknown tool",
    async (name) => {
      const provider = new ScriptedProvider([{ content: "", toolCalls: [{ id: "c1", name }] }, textResponse("ok")]);
      const { messages } = await runToolLoop({ provider, tools: registryWith(echo), maxIterations: 2 }, user);
      expect(messages[2]?.content).toBe(`tool ${JSON.stringify(name)} not found. Available tools: echo.`);
    },
  );

  it("answers a call that is not an object", async () => {
    const provider = new ScriptedProvider([
      { content: "", toolCalls: [42, null, "echo"] as never },
      textResponse("ok"),
    ]);
    const { messages } = await runToolLoop({ provider, tools: registryWith(echo), maxIterations: 2 }, user);
    expect(messages.slice(2, 5).map((message) => message.content)).toEqual([
      "malformed tool call: expected an object, got number",
      "malformed tool call: expected an object, got null",
      "malformed tool call: expected an object, got string",
    ]);
    expectEveryCallAnswered(messages);
  });

  it("validates arguments of zod tools before running them", async () => {
    const execute = vi.fn(() => "sunny");
    const weather = defineTool({
      name: "weather",
      description: "d",
      parameters: z.object({ city: z.string() }),
      execute,
    });
    const provider = new ScriptedProvider([
      toolCallResponse({ id: "c1", name: "weather", arguments: { city: 5 } }),
      textResponse("ok"),
    ]);
    const { messages } = await runToolLoop({ provider, tools: registryWith(weather), maxIterations: 2 }, user);
    expect(execute).not.toHaveBeenCalled();
    expect(messages[2]?.content).toMatchInlineSnapshot(
      `"invalid arguments for tool "weather": city: Invalid input: expected string, received number"`,
    );
  });
});

describe("malformed turns", () => {
  it("20,000 calls with one repeated id get unique suffixes in order (D08)", async () => {
    const calls = Array.from({ length: 20_000 }, () => ({ name: "echo", id: "same" }));
    const provider = new ScriptedProvider([toolCallResponse(calls), textResponse("ok")]);
    const history: Message[] = [
      { role: "assistant", content: "", toolCalls: [{ id: "same_3", name: "echo", arguments: {} }] },
      { role: "tool", content: "x", toolCallId: "same_3" },
      ...user,
    ];
    const result = await runToolLoop({ provider, tools: registryWith(echo), maxIterations: 2 }, history);
    const ids = result.messages[3]?.toolCalls?.map((call) => call.id) ?? [];
    expect(ids.slice(0, 4)).toEqual(["same", "same_2", "same_4", "same_5"]);
    expect(new Set(ids).size).toBe(20_000);
    expect(result.messages.slice(4, -1).map((message) => message.toolCallId)).toEqual(ids);
  });

  it("a sparse toolCalls array: every hole is a malformed call with its own answer (D11)", async () => {
    const toolCalls = new Array(3);
    toolCalls[1] = { id: "b", name: "echo", arguments: {} };
    const provider = new ScriptedProvider([{ content: "", toolCalls }, textResponse("ok")]);
    const result = await runToolLoop({ provider, tools: registryWith(echo), maxIterations: 2 }, user);
    expect(result.messages.slice(2, 5).map((message) => [message.toolCallId, message.content])).toEqual([
      ["call_1_0", "malformed tool call: expected an object, got undefined"],
      ["b", "echo:{}"],
      ["call_1_2", "malformed tool call: expected an object, got undefined"],
    ]);
  });

  it("arguments that cannot be sent as JSON are refused, never recorded as something else (D14)", async () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    const execute = vi.fn(() => "ran");
    const provider = new ScriptedProvider([
      () => ({
        content: "",
        toolCalls: [
          { id: "x", name: "t", arguments: cyclic },
          { id: "y", name: "t", arguments: { big: 1n } },
        ],
      }),
      textResponse("ok"),
    ]);
    const result = await runToolLoop({ provider, tools: [tool("t", execute)], maxIterations: 2 }, user);
    expect(execute).not.toHaveBeenCalled();
    const recorded = result.messages[1]?.toolCalls ?? [];
    for (const call of recorded) {
      expect(call.arguments).toEqual({});
      expect(call.function?.arguments).toBe("{}");
    }
    expect(result.messages[2]?.content).toMatch(
      /^arguments for tool "t" cannot be sent as JSON: Converting circular structure/,
    );
    expect(result.messages[3]?.content).toMatch(
      /^arguments for tool "t" cannot be sent as JSON: Do not know how to serialize a BigInt/,
    );
  });
});

describe("concurrency and order", () => {
  function gatedTool() {
    const gates = new Map<string, () => void>();
    let inFlight = 0;
    let maxInFlight = 0;
    const started: string[] = [];
    const gated = tool("gated", async (args) => {
      const id = String(args.id);
      started.push(id);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise<void>((resolve) => gates.set(id, resolve));
      inFlight--;
      return newToolResult(`result ${id}`);
    });
    return {
      tool: gated,
      gates,
      started,
      stats: () => ({ inFlight, maxInFlight }),
    };
  }

  const fiveCalls = () =>
    toolCallResponse(["1", "2", "3", "4", "5"].map((id) => ({ id: `call_${id}`, name: "gated", arguments: { id } })));

  it("runs a turn's calls concurrently and writes results back in call order", async () => {
    const gated = gatedTool();
    const provider = new ScriptedProvider([fiveCalls(), textResponse("ok")]);
    const run = runToolLoop({ provider, tools: registryWith(gated.tool), maxIterations: 2 }, user);
    // All five start before any finishes: they run at the same time.
    await vi.waitFor(() => expect(gated.started).toHaveLength(5), POLL);
    expect(gated.stats().inFlight).toBe(5);
    // Finish them in reverse order.
    for (const id of ["5", "4", "3", "2", "1"]) {
      gated.gates.get(id)?.();
      await vi.waitFor(() => expect(gated.stats().inFlight).toBe(Number(id) - 1), POLL);
    }
    const { messages } = await run;
    expect(messages.slice(2, 7).map((message) => [message.toolCallId, message.content])).toEqual([
      ["call_1", "result 1"],
      ["call_2", "result 2"],
      ["call_3", "result 3"],
      ["call_4", "result 4"],
      ["call_5", "result 5"],
    ]);
  });

  it.each([1, 2, 3])("runs at most maxConcurrency = %i calls at once", async (maxConcurrency) => {
    const gated = gatedTool();
    const provider = new ScriptedProvider([fiveCalls(), textResponse("ok")]);
    const run = runToolLoop({ provider, tools: registryWith(gated.tool), maxIterations: 2, maxConcurrency }, user);
    const released = new Set<string>();
    while (released.size < 5) {
      await vi.waitFor(() => expect(gated.started.length).toBe(Math.min(5, released.size + maxConcurrency)), POLL);
      expect(gated.stats().inFlight).toBeLessThanOrEqual(maxConcurrency);
      // Release the most recently started call first, so completion order differs from call order.
      const next = [...gated.started].reverse().find((id) => !released.has(id)) as string;
      released.add(next);
      gated.gates.get(next)?.();
    }
    const { messages } = await run;
    expect(gated.stats().maxInFlight).toBe(maxConcurrency);
    expect(messages.slice(2, 7).map((message) => message.toolCallId)).toEqual([
      "call_1",
      "call_2",
      "call_3",
      "call_4",
      "call_5",
    ]);
  });
});

describe("failures of the loop itself", () => {
  it("a provider error rejects with ToolLoopError carrying cause, iterations and a complete transcript", async () => {
    const cause = new Error("503 Service Unavailable");
    const provider = new ScriptedProvider([toolCallResponse({ id: "c1", name: "echo" }), cause]);
    const error = await runToolLoop({ provider, tools: registryWith(echo), maxIterations: 5 }, user).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ToolLoopError);
    expect(isToolLoopError(error)).toBe(true);
    const loopError = error as ToolLoopError;
    expect(loopError.message).toMatchInlineSnapshot(`"LLM call failed: 503 Service Unavailable"`);
    expect(loopError.code).toBe("provider_failed");
    expect(loopError.cause).toBe(cause);
    expect(loopError.iterations).toBe(2);
    expect(loopError.messages.map((message) => [message.role, message.toolCallId])).toEqual([
      ["user", undefined],
      ["assistant", undefined],
      ["tool", "c1"],
    ]);
    expectEveryCallAnswered(loopError.messages);
  });

  it("an adapter's InvalidProviderResponseError rejects with code invalid_response", async () => {
    const cause = new InvalidProviderResponseError("Gemini: the response has no candidates", {
      provider: "Gemini",
      body: {},
    });
    const provider = new ScriptedProvider([cause]);
    const error = await runToolLoop({ provider, maxIterations: 1 }, user).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: "ToolLoopError", code: "invalid_response", cause });
  });

  it("a provider that throws synchronously is a provider error too", async () => {
    const provider: LLMProvider = {
      getDefaultModel: () => "m",
      chat: () => {
        throw new TypeError("bad request");
      },
    };
    await expect(runToolLoop({ provider, maxIterations: 1 }, user)).rejects.toMatchObject({
      name: "ToolLoopError",
      code: "provider_failed",
      message: "LLM call failed: bad request",
      iterations: 1,
    });
  });

  it.each([
    [
      "null",
      null,
      "LLM call failed: the provider returned an invalid response: expected an LLMResponse object, got null",
    ],
    [
      "a string",
      "hello",
      "LLM call failed: the provider returned an invalid response: expected an LLMResponse object, got string",
    ],
    [
      "toolCalls that is not an array",
      { content: "", toolCalls: { id: "x" } },
      "LLM call failed: the provider returned an invalid response: toolCalls must be an array, got object",
    ],
    [
      "snake_case tool_calls beside an empty toolCalls",
      { content: "", toolCalls: [], tool_calls: [{ id: "a", function: { name: "echo", arguments: "{}" } }] },
      'LLM call failed: the provider returned an invalid response: it has "tool_calls" but no "toolCalls": an LLMProvider returns its calls as toolCalls (camelCase)',
    ],
    [
      "snake_case tool_calls instead of toolCalls",
      { content: "", tool_calls: [{ id: "a", function: { name: "echo", arguments: "{}" } }] },
      'LLM call failed: the provider returned an invalid response: it has "tool_calls" but no "toolCalls": an LLMProvider returns its calls as toolCalls (camelCase)',
    ],
  ])(
    "an invalid response (%s) rejects with ToolLoopError, never a silent final answer",
    async (_case, response, message) => {
      // A bare provider: ScriptedProvider would fill in a missing toolCalls.
      const provider: LLMProvider = {
        chat: async () => response as unknown as LLMResponse,
        getDefaultModel: () => "m",
      };
      const error = await runToolLoop({ provider, maxIterations: 1 }, user).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ name: "ToolLoopError", code: "invalid_response", message, iterations: 1 });
      expect(error).toMatchObject({ messages: user });
      const cause = (error as ToolLoopError).cause;
      expect(isInvalidProviderResponseError(cause)).toBe(true);
      const body = typeof response === "string" ? response : JSON.stringify(response);
      expect(cause).toMatchObject({ provider: "LLMProvider", body });
    },
  );
});

describe("abort", () => {
  it("50 concurrent runs on one caller signal: one listener on it, no MaxListenersExceededWarning, nothing left after (D10)", async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => void warnings.push(warning);
    process.on("warning", onWarning);
    try {
      const controller = new AbortController();
      const gate = deferred();
      const waitingTool = tool("wait", async (_args, context) => {
        context.signal.addEventListener("abort", () => {}); // a tool listening on its signal
        await gate.promise;
        return "done";
      });
      // Like an SDK's fetch: every request listens on the signal it is given.
      const listeningProvider = (): LLMProvider => {
        let step = 0;
        return {
          getDefaultModel: () => "m",
          chat: async (_messages, _tools, _model, _options, signal) => {
            signal?.addEventListener("abort", () => {});
            step++;
            return step === 1 ? toolCallResponse([{ name: "wait" }, { name: "wait" }]) : textResponse("ok");
          },
        };
      };
      const runs = Array.from({ length: 50 }, () =>
        runToolLoop({ provider: listeningProvider(), tools: [waitingTool], maxIterations: 3 }, user, {
          signal: controller.signal,
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
      gate.resolve();
      const results = await Promise.all(runs);
      expect(results.every((result) => result.content === "ok")).toBe(true);
      await new Promise((resolve) => setImmediate(resolve));
      expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
      expect(warnings.filter((warning) => warning.name === "MaxListenersExceededWarning")).toEqual([]);
    } finally {
      process.off("warning", onWarning);
    }
  });

  it.each([
    ["synchronous", echo],
    ["asynchronous", tool("later", async () => "done")],
  ])(
    "a turn of 20,000 %s calls on a caller signal adds no listener per call to any signal (D08)",
    async (_case, used) => {
      const controller = new AbortController();
      // Node's EventTarget removes a listener by a linear search: a listener per call made a turn quadratic.
      const add = vi.spyOn(EventTarget.prototype, "addEventListener");
      const calls = Array.from({ length: 20_000 }, (_, index) => ({ name: used.name, id: `c${index}` }));
      const provider = new ScriptedProvider([toolCallResponse(calls), textResponse("ok")]);
      const result = await runToolLoop({ provider, tools: [used], maxIterations: 2, toolTimeoutMs: 60_000 }, user, {
        signal: controller.signal,
      });
      expect(result.messages).toHaveLength(1 + 1 + 20_000 + 1);
      expect(result.messages.filter((message) => message.isError)).toEqual([]);
      expect(add.mock.calls.length).toBeLessThan(10);
      expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    },
  );

  it("before the start: rejects without calling the provider", async () => {
    const controller = new AbortController();
    controller.abort(new Error("user left"));
    const provider = new ScriptedProvider([textResponse("never")]);
    const error = (await runToolLoop({ provider, maxIterations: 3 }, user, { signal: controller.signal }).catch(
      (caught: unknown) => caught,
    )) as ToolLoopError;
    expect(error).toBeInstanceOf(ToolLoopError);
    expect(error.message).toMatchInlineSnapshot(`"tool loop aborted: user left"`);
    expect(error.code).toBe("aborted");
    expect(error.cause).toBe(controller.signal.reason);
    expect(error.iterations).toBe(0);
    expect(error.messages).toEqual(user);
    expect(provider.calls).toHaveLength(0);
  });

  it("during the provider call: the signal reaches the provider, the loop rejects even if the provider ignores it", async () => {
    const controller = new AbortController();
    const received: (AbortSignal | undefined)[] = [];
    const provider = new ScriptedProvider([
      toolCallResponse({ id: "c1", name: "echo" }),
      (call) => {
        received.push(call.signal);
        return new Promise<LLMResponse>(() => {});
      },
      textResponse("never"),
    ]);
    const execute = vi.spyOn(echo, "execute");
    const run = runToolLoop({ provider, tools: registryWith(echo), maxIterations: 5 }, user, {
      signal: controller.signal,
    });
    await vi.waitFor(() => expect(received).toHaveLength(1), POLL);
    expect(received[0]?.aborted).toBe(false);
    controller.abort(new Error("stop"));
    const error = (await run.catch((caught: unknown) => caught)) as ToolLoopError;
    expect(isToolLoopError(error)).toBe(true);
    expect(error.message).toBe("tool loop aborted: stop");
    expect(received[0]?.aborted).toBe(true);
    expect(error.iterations).toBe(2);
    expect(provider.calls).toHaveLength(2);
    expect(execute).toHaveBeenCalledTimes(1);
    expectEveryCallAnswered(error.messages);
    expect(error.messages.at(-1)).toMatchObject({ role: "tool", toolCallId: "c1" });
  });

  it("during the tools: running tools see the abort, queued tools never run, every call is answered, no further provider call", async () => {
    const controller = new AbortController();
    const started = deferred();
    const signals: AbortSignal[] = [];
    const slow = tool("slow", (_args, context) => {
      signals.push(context.signal);
      started.resolve();
      return new Promise<ToolResult>(() => {});
    });
    const never = vi.fn(() => newToolResult("ran"));
    const provider = new ScriptedProvider([
      toolCallResponse([
        { id: "c1", name: "slow" },
        { id: "c2", name: "queued" },
        { id: "c3", name: "queued" },
      ]),
      textResponse("never"),
    ]);
    const run = runToolLoop(
      { provider, tools: registryWith(slow, tool("queued", never)), maxIterations: 5, maxConcurrency: 1 },
      user,
      { signal: controller.signal },
    );
    await started.promise;
    controller.abort(new Error("stop"));
    const error = (await run.catch((caught: unknown) => caught)) as ToolLoopError;
    expect(error).toBeInstanceOf(ToolLoopError);
    expect(error.cause).toBe(controller.signal.reason);
    expect(signals[0]?.aborted).toBe(true);
    expect(never).not.toHaveBeenCalled();
    expect(provider.calls).toHaveLength(1);
    expectEveryCallAnswered(error.messages);
    expect(error.messages.slice(2).map((message) => message.content)).toMatchInlineSnapshot(`
      [
        "tool "slow" was aborted before it finished",
        "tool "queued" was not run: the call was aborted",
        "tool "queued" was not run: the call was aborted",
      ]
    `);
  });

  it("at the last iteration, an abort during the tools still rejects", async () => {
    const controller = new AbortController();
    const provider = new ScriptedProvider([toolCallResponse({ id: "c1", name: "stop" })]);
    const stopper = tool("stop", () => {
      controller.abort(new Error("stop"));
      return newToolResult("stopped");
    });
    const error = await runToolLoop({ provider, tools: registryWith(stopper), maxIterations: 1 }, user, {
      signal: controller.signal,
    }).catch((caught: unknown) => caught);
    expect(isToolLoopError(error)).toBe(true);
    expectEveryCallAnswered((error as ToolLoopError).messages);
  });
});

describe("timeouts", () => {
  it("toolTimeoutMs turns a hung tool into an error result, aborts its signal, and the loop goes on", async () => {
    const signals: AbortSignal[] = [];
    const hung = tool("hang", (_args, context) => {
      signals.push(context.signal);
      return new Promise<ToolResult>(() => {});
    });
    const provider = new ScriptedProvider([
      toolCallResponse([
        { id: "c1", name: "hang" },
        { id: "c2", name: "echo" },
      ]),
      textResponse("moved on"),
    ]);
    const result = await runToolLoop(
      { provider, tools: registryWith(hung, echo), maxIterations: 3, toolTimeoutMs: 5 },
      user,
    );
    expect(result.content).toBe("moved on");
    expect(result.messages.slice(2, 4).map((message) => message.content)).toEqual([
      'tool "hang" timed out after 5 ms',
      "echo:{}",
    ]);
    expect(signals[0]?.aborted).toBe(true);
  });

  it("the timeout fires on the clock (fake timers)", async () => {
    vi.useFakeTimers();
    const hung = tool("hang", () => new Promise<ToolResult>(() => {}));
    const provider = new ScriptedProvider([toolCallResponse({ id: "c1", name: "hang" }), textResponse("ok")]);
    let done = false;
    const run = runToolLoop(
      { provider, tools: registryWith(hung), maxIterations: 2, toolTimeoutMs: 30_000 },
      user,
    ).then((result) => {
      done = true;
      return result;
    });
    await vi.advanceTimersByTimeAsync(29_999);
    expect(done).toBe(false);
    expect(provider.calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    const result = await run;
    expect(result.messages[2]?.content).toBe('tool "hang" timed out after 30000 ms');
  });
});

describe("the cost of a signal and a timeout per call (issue 9)", () => {
  const steps = (count: number, calls: number) => [
    ...Array.from({ length: count }, (_, step) =>
      toolCallResponse(Array.from({ length: calls }, (_, index) => ({ id: `c${step}_${index}`, name: "later" }))),
    ),
    textResponse("ok"),
  ];

  it("a run's calls share the caller signal's one listener and one timer; nothing stays armed after the run", async () => {
    // A timeout no other test uses: the timers armed with it are the run's, whatever else the
    // process runs meanwhile (the test reads their state, never the process's count of timers).
    const timeoutMs = 29_989;
    const controller = new AbortController();
    const armed: Array<ReturnType<typeof setTimeout>> = [];
    const during: Array<{ listeners: number; timers: number; ref: boolean | undefined }> = [];
    const later = tool("later", async () => {
      await new Promise((resolve) => setImmediate(resolve)); // I/O: the call is pending across a macrotask
      const listeners = getEventListeners(controller.signal, "abort").length;
      during.push({ listeners, timers: armed.length, ref: armed[0]?.hasRef() });
      return "done";
    });
    const add = vi.spyOn(EventTarget.prototype, "addEventListener");
    const remove = vi.spyOn(EventTarget.prototype, "removeEventListener");
    const original = globalThis.setTimeout;
    vi.spyOn(globalThis, "setTimeout").mockImplementation(((...args: Parameters<typeof setTimeout>) => {
      const timer = original(...args);
      // The queue arms for the oldest deadline: the timeout, less the time since that call started.
      const delay = args[1] ?? 0;
      if (delay <= timeoutMs && delay > timeoutMs - 1_000) armed.push(timer);
      return timer;
    }) as typeof setTimeout);
    const provider = new ScriptedProvider(steps(10, 2));
    const result = await runToolLoop({ provider, tools: [later], maxIterations: 11, toolTimeoutMs: timeoutMs }, user, {
      signal: controller.signal,
    });
    expect(result.content).toBe("ok");
    expect(result.messages.filter((message) => message.isError)).toEqual([]);
    expect(during).toHaveLength(20);
    // One listener on the caller's signal throughout; one timer, ref()ed while a call is pending.
    expect(during.every(({ listeners }) => listeners === 1)).toBe(true);
    expect(during).toEqual(during.map(() => ({ listeners: 1, timers: 1, ref: true })));
    // In all: one listener on the caller's signal, added once and removed once; none on the run's own.
    expect(add).toHaveBeenCalledTimes(1);
    expect(remove).toHaveBeenCalledTimes(1);
    expect(armed).toHaveLength(1);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    // Nothing stays armed: the run's release cleared its timer.
    expect((armed[0] as unknown as { _destroyed: boolean })._destroyed).toBe(true);
  });

  it("a provider that freezes the run's signal it was given: the run still resolves, nothing left on the caller's signal", async () => {
    const controller = new AbortController();
    const scripted = new ScriptedProvider([textResponse("ok")]);
    const provider = {
      getDefaultModel: () => scripted.getDefaultModel(),
      chat: (...args: Parameters<ScriptedProvider["chat"]>) => {
        Object.freeze(args[4]);
        return scripted.chat(...args);
      },
    };
    const result = await runToolLoop({ provider, maxIterations: 1 }, user, { signal: controller.signal });
    expect(result.content).toBe("ok");
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("a provider freezes the run's signal, then the caller aborts: that run and another on the same signal both end", async () => {
    const controller = new AbortController();
    const reason = new Error("stop");
    const hangs = (freeze: boolean) => ({
      getDefaultModel: () => "m",
      chat: (...args: Parameters<ScriptedProvider["chat"]>) => {
        if (freeze) Object.freeze(args[4]);
        return new Promise<never>(() => {});
      },
    });
    const first = runToolLoop({ provider: hangs(true), maxIterations: 1 }, user, { signal: controller.signal });
    const second = runToolLoop({ provider: hangs(false), maxIterations: 1 }, user, { signal: controller.signal });
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort(reason);
    const [frozen, other] = await Promise.allSettled([first, second]);
    // The frozen signal never aborts (Node cannot abort it), so that run reads its provider call's
    // end as the provider's failure; the other run is aborted as usual.
    expect(frozen).toMatchObject({ status: "rejected", reason: { name: "ToolLoopError", cause: reason } });
    expect(other).toMatchObject({
      status: "rejected",
      reason: { name: "ToolLoopError", code: "aborted", cause: reason },
    });
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("aborting the caller's signal aborts every call in flight, each through the run's one subscription", async () => {
    const controller = new AbortController();
    const started = deferred();
    const signals: AbortSignal[] = [];
    const later = tool("later", (_args, context) => {
      signals.push(context.signal);
      if (signals.length === 4) started.resolve();
      return new Promise<ToolResult>(() => {});
    });
    const provider = new ScriptedProvider(steps(1, 4));
    const run = runToolLoop({ provider, tools: [later], maxIterations: 2, toolTimeoutMs: 30_000 }, user, {
      signal: controller.signal,
    });
    await started.promise;
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    const reason = new Error("stop");
    controller.abort(reason);
    const error = await run.catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: "ToolLoopError", code: "aborted", cause: reason });
    expect(signals.every((signal) => signal.aborted && signal.reason === reason)).toBe(true);
    expectEveryCallAnswered((error as ToolLoopError).messages);
  });

  it("a hung call of a run still times out (the shared timer is ref()ed while it is pending)", async () => {
    const calls: string[] = [];
    const mixed = tool("later", async (_args, context) => {
      calls.push(context.toolCallId ?? "");
      if (calls.length === 3) return new Promise<ToolResult>(() => {}); // the third call hangs
      return "done";
    });
    const provider = new ScriptedProvider(steps(3, 1));
    const result = await runToolLoop({ provider, tools: [mixed], maxIterations: 4, toolTimeoutMs: 20 }, user);
    expect(result.messages.map((message) => message.content).filter((content) => content !== "done")).toEqual([
      "hi",
      "",
      "",
      "",
      'tool "later" timed out after 20 ms',
      "ok",
    ]);
  });
});

describe("context reaching the tools", () => {
  it("channel, chatId, metadata, signal and the call id reach every call's context and the mixins", async () => {
    const controller = new AbortController();
    const contexts: ToolContext[] = [];
    const setContext = vi.fn();
    const setMetadata = vi.fn();
    const contextual = tool(
      "ctx",
      (_args, context) => {
        contexts.push(context);
        return newToolResult("ok");
      },
      { setContext, setMetadata },
    );
    const provider = new ScriptedProvider([
      toolCallResponse([
        { id: "c1", name: "ctx" },
        { id: "c2", name: "ctx" },
      ]),
      textResponse("ok"),
    ]);
    const metadata = { message_id: "m1", user_id: "u1" };
    await runToolLoop({ provider, tools: registryWith(contextual), maxIterations: 2 }, user, {
      channel: "telegram",
      chatId: "42",
      metadata,
      signal: controller.signal,
    });
    expect(contexts.map((context) => context.toolCallId)).toEqual(["c1", "c2"]);
    for (const context of contexts) {
      expect(context).toMatchObject({ channel: "telegram", chatId: "42", metadata });
    }
    expect(setContext.mock.calls).toEqual([
      ["telegram", "42"],
      ["telegram", "42"],
    ]);
    expect(setMetadata.mock.calls).toEqual([[metadata], [metadata]]);
    // The provider gets the run's signal; each tool call its own, all following the caller's.
    expect(provider.calls[0]?.signal?.aborted).toBe(false);
    expect(provider.calls[0]?.signal).not.toBe(controller.signal);
    expect(contexts[0]?.signal).toBeInstanceOf(AbortSignal);
    expect(contexts[0]?.signal).not.toBe(contexts[1]?.signal);
  });

  it("without context, tools get empty channel, chatId and metadata, and setContext is not called", async () => {
    const contexts: ToolContext[] = [];
    const setContext = vi.fn();
    const plain = tool(
      "ctx",
      (_args, context) => {
        contexts.push(context);
        return newToolResult("ok");
      },
      { setContext },
    );
    const provider = new ScriptedProvider([toolCallResponse({ name: "ctx" }), textResponse("ok")]);
    await runToolLoop({ provider, tools: registryWith(plain), maxIterations: 2 }, user);
    expect(contexts[0]).toMatchObject({ channel: "", chatId: "", metadata: {} });
    expect(setContext).not.toHaveBeenCalled();
  });
});

describe("progress (issue 10, seed 003)", () => {
  it("onProgress receives every call's updates with its toolCallId, and one final update per call", async () => {
    const slow = tool("slow", async (args, context) => {
      context.reportProgress(0.5, `half of ${String(args.n)}`);
      await new Promise((resolve) => setImmediate(resolve));
      context.reportProgress(2, "more than done");
      return "ok";
    });
    const failing = tool("failing", () => {
      throw new Error("nope");
    });
    const updates: ProgressUpdate[] = [];
    const result = await runToolLoop(
      {
        provider: new ScriptedProvider([
          toolCallResponse([
            { id: "a", name: "slow", arguments: { n: 1 } },
            { id: "b", name: "failing" },
            { id: "c", name: "missing" },
          ]),
          textResponse("done"),
        ]),
        tools: registryWith(slow, failing),
        maxIterations: 3,
        onProgress: (update) => updates.push(update),
      },
      user,
    );
    expect(result.content).toBe("done");
    expect(updates.filter((update) => update.toolCallId === "a")).toEqual([
      { toolCallId: "a", toolName: "slow", progress: 0.5, message: "half of 1", status: "running" },
      { toolCallId: "a", toolName: "slow", progress: 1, message: "more than done", status: "running" },
      { toolCallId: "a", toolName: "slow", status: "completed" },
    ]);
    expect(updates.filter((update) => update.toolCallId !== "a")).toEqual([
      { toolCallId: "b", toolName: "failing", status: "failed" },
      { toolCallId: "c", toolName: "missing", status: "failed" },
    ]);
    // The transcript reads no progress and no metadata.
    expect(result.messages.filter((message) => message.role === "tool").map((message) => message.content)).toEqual([
      "ok",
      'tool "failing" failed: nope',
      expect.stringContaining('tool "missing" not found'),
    ]);
  });

  it.each<[string, ToolRegistry | null, string]>([
    ["arguments that are not JSON", registryWith(tool("t", () => "ran")), "{not json"],
    ["arguments that are not an object", registryWith(tool("t", () => "ran")), "[1, 2]"],
    ["tools: null", null, "{}"],
  ])(
    "a call refused before dispatch (%s) gets its one final update, and a tool-progress event before its end",
    async (_case, tools, args) => {
      const updates: ProgressUpdate[] = [];
      const events: string[] = [];
      const provider = new ScriptedProvider([
        toolCallResponse({ id: "r", name: "t", arguments: args }),
        textResponse("done"),
      ]);
      const result = await runToolLoop(
        { provider, tools, maxIterations: 2, onProgress: (update) => updates.push(update) },
        user,
      );
      expect(result.messages[2]).toMatchObject({ role: "tool", isError: true });
      expect(updates).toEqual([{ toolCallId: "r", toolName: "t", status: "failed" }]);
      await runToolLoop(
        {
          provider: new ScriptedProvider([
            toolCallResponse({ id: "r", name: "t", arguments: args }),
            textResponse("done"),
          ]),
          tools,
          maxIterations: 2,
          onEvent: (event) => {
            if (event.type === "tool-progress") events.push(`progress ${event.update.status}`);
            if (event.type === "tool-call-end") events.push("end");
          },
        },
        user,
      );
      expect(events).toEqual(["progress failed", "end"]);
    },
  );

  it("a throwing onProgress is logged and never fails the call; without onProgress reportProgress does nothing", async () => {
    const reporting = tool("reporting", (_args, context) => {
      context.reportProgress(0.3, "working");
      return "fine";
    });
    const { logger, lines } = captureLogger();
    const registry = new ToolRegistry({ logger });
    registry.register(reporting);
    const run = await runToolLoop(
      {
        provider: new ScriptedProvider([toolCallResponse({ name: "reporting" }), textResponse("done")]),
        tools: registry,
        maxIterations: 2,
        onProgress: () => {
          throw new Error("listener broke");
        },
      },
      user,
    );
    expect(run.messages.find((message) => message.role === "tool")?.content).toBe("fine");
    expect(lines.filter((line) => line.msg === "progress listener threw")).toMatchObject([
      { level: 40, tool: "reporting", error: "listener broke" },
      { level: 40, tool: "reporting", error: "listener broke" },
    ]);
    const quiet = await runToolLoop(
      {
        provider: new ScriptedProvider([toolCallResponse({ name: "reporting" }), textResponse("done")]),
        tools: [reporting],
        maxIterations: 2,
      },
      user,
    );
    expect(quiet.messages.find((message) => message.role === "tool")?.content).toBe("fine");
  });
});

describe("logging", () => {
  it("the loop logs each iteration through its logger; the registry logs each call", async () => {
    const loopLog = captureLogger("debug");
    const registryLog = captureLogger("debug");
    const registry = new ToolRegistry({ logger: registryLog.logger });
    registry.register(echo);
    const provider = new ScriptedProvider([toolCallResponse({ id: "c1", name: "echo" }), textResponse("ok")]);
    await runToolLoop({ provider, tools: registry, maxIterations: 3, logger: loopLog.logger }, user);
    const iterations = loopLog.lines.filter((line) => line.msg === "llm call").map((line) => line.iteration);
    expect(iterations).toEqual([1, 2]);
    expect(loopLog.lines.find((line) => line.msg === "running tool calls")).toMatchObject({
      iteration: 1,
      toolCalls: ["echo"],
    });
    expect(loopLog.lines.at(-2)).toMatchObject({ msg: "tool loop completed", iteration: 2 });
    expect(loopLog.lines.at(-1)).toMatchObject({ level: 30, msg: "tool loop finished", iterations: 2 });
    expect(registryLog.lines).toEqual([
      expect.objectContaining({ level: 20, msg: "tool call started", tool: "echo", toolCallId: "c1" }),
      expect.objectContaining({
        level: 20,
        msg: "tool call completed",
        tool: "echo",
        toolCallId: "c1",
        durationMs: expect.any(Number),
      }),
    ]);
  });

  it.each([
    [
      "invalid JSON",
      { name: "echo", arguments: "{oops" },
      "invalid_json",
      /^invalid JSON in arguments for tool "echo"/,
    ],
    ["non-object arguments", { name: "echo", arguments: "[1,2]" }, "invalid_json", /must be a JSON object, got array$/],
    ["an unknown tool", { name: "ghost", arguments: {} }, "tool_not_found", /^tool "ghost" not found/],
  ])(
    "a call refused before dispatch (%s) is logged like a tool that threw, by the registry's logger (D09)",
    async (_case, call, code, error) => {
      const { logger, lines } = captureLogger("warn");
      const registry = new ToolRegistry({ logger });
      registry.register(echo);
      registry.register(tool("boom", () => Promise.reject(new Error("kaput"))));
      const provider = new ScriptedProvider([
        toolCallResponse([
          { ...call, id: "refused" },
          { name: "boom", id: "threw" },
        ]),
        textResponse("ok"),
      ]);
      await runToolLoop({ provider, tools: registry, maxIterations: 2 }, user);
      expect(lines).toHaveLength(2);
      const [refused, threw] = lines;
      expect(Object.keys(refused ?? {}).sort()).toEqual(Object.keys(threw ?? {}).sort());
      expect(refused).toMatchObject({
        level: threw?.level,
        msg: "tool call failed",
        tool: call.name,
        toolCallId: "refused",
        durationMs: expect.any(Number),
        err: expect.objectContaining({ code }),
        error: expect.stringMatching(error),
      });
    },
  );

  it.each<[string, Partial<ToolLoopConfig>, string, RegExp]>([
    ["no approver", {}, "guarded", /requires approval, but no approver is configured/],
    ["approval denied", { approve: () => false }, "guarded", /^denied by the user$/],
    [
      "the loop is stopping (onEvent threw)",
      {
        onEvent: (event) => {
          if (event.type === "message" && event.message.role === "assistant") throw new Error("listener down");
        },
      },
      "echo",
      /the loop is stopping/,
    ],
    ["the final turn of finalAnswerOnMaxIterations", { finalAnswerOnMaxIterations: true }, "echo", /iteration limit/],
  ])(
    "a call the loop-control gate refuses (%s) is logged by the registry's logger too",
    async (_case, extra, name, error) => {
      const { logger, lines } = captureLogger("warn");
      const registry = new ToolRegistry({ logger });
      registry.register(echo);
      registry.register(tool("guarded", () => "ran", { needsApproval: true }));
      const provider = new ScriptedProvider([
        toolCallResponse({ name, id: "first" }),
        toolCallResponse({ name, id: "refused" }),
        textResponse("ok"),
      ]);
      await runToolLoop({ provider, tools: registry, maxIterations: 1, ...extra }, user).catch(() => {});
      // In the final turn the refused call is the second; otherwise the first is refused.
      const refusedId = extra.finalAnswerOnMaxIterations === true ? "refused" : "first";
      const line = lines.find((each) => each.msg === "tool call failed" && each.toolCallId === refusedId);
      expect(line).toMatchObject({ tool: name, toolCallId: refusedId, error: expect.stringMatching(error) });
    },
  );

  it("with tools: null, refused calls are logged by the loop's logger", async () => {
    const { logger, lines } = captureLogger("warn");
    const provider = new ScriptedProvider([toolCallResponse({ name: "echo", id: "x" }), textResponse("ok")]);
    await runToolLoop({ provider, tools: null, maxIterations: 2, logger }, user);
    expect(lines).toEqual([
      expect.objectContaining({
        msg: "tool call failed",
        tool: "echo",
        toolCallId: "x",
        err: expect.objectContaining({ code: "tool_not_found" }),
      }),
    ]);
  });

  it("console works as the loop's logger", async () => {
    vi.mocked(console.debug).mockImplementation(() => {});
    const provider = new ScriptedProvider([toolCallResponse({ name: "echo" }), textResponse("ok")]);
    await expect(
      runToolLoop({ provider, tools: [echo], maxIterations: 2, logger: console }, user),
    ).resolves.toMatchObject({ content: "ok" });
    expect(vi.mocked(console.debug)).toHaveBeenCalledWith(expect.objectContaining({ iteration: 1 }), "llm call");
    expect(vi.mocked(console.info)).toHaveBeenCalledWith(
      expect.objectContaining({ iterations: 2, stopReason: "completed", toolCalls: 1, failedCalls: 0 }),
      "tool loop finished",
    );
    for (const method of ["debug", "info", "warn"] as const) vi.mocked(console[method]).mockClear();
  });

  it("a logger that throws (its levels, isLevelEnabled, child) never breaks the run or leaves a call unanswered", async () => {
    const fail = () => {
      throw new Error("disk full");
    };
    const throwing = { debug: fail, info: fail, warn: fail, error: fail, isLevelEnabled: fail, child: fail };
    const provider = new ScriptedProvider([
      toolCallResponse([
        { name: "echo", id: "a" },
        { name: "ghost", id: "b" },
        { name: "echo", id: "c", arguments: "{" },
      ]),
      textResponse("ok"),
    ]);
    const result = await runToolLoop({ provider, tools: [echo], maxIterations: 2, logger: throwing }, user);
    expect(result.content).toBe("ok");
    expectEveryCallAnswered(result.messages);
    expect(result.messages[2]).toMatchObject({ content: "echo:{}", isError: false });
  });

  it("anything else that breaks mid-run rejects with ToolLoopError, never a raw error (D11)", async () => {
    const real = registryWith(echo);
    let counted = 0;
    const breaking = {
      count: () => {
        if (++counted > 1) throw new Error("registry gone");
        return real.count();
      },
      toProviderDefs: () => real.toProviderDefs(),
      executeWithContext: real.executeWithContext.bind(real),
    };
    const provider = new ScriptedProvider([toolCallResponse({ name: "echo", id: "a" }), textResponse("ok")]);
    const error = await runToolLoop({ provider, tools: breaking as never, maxIterations: 2 }, user).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ToolLoopError);
    expect(error).toMatchObject({ code: "internal", message: "tool loop failed: registry gone", iterations: 2 });
    expectEveryCallAnswered((error as ToolLoopError).messages);
  });

  it("a tool result whose text cannot be read still gives the call one answer", async () => {
    const unreadable = tool("odd", () =>
      errorResult("").withError({
        get message(): string {
          throw new Error("boom");
        },
      } as Error),
    );
    const provider = new ScriptedProvider([toolCallResponse({ name: "odd", id: "a" }), textResponse("ok")]);
    const { logger } = captureLogger("debug");
    const result = await runToolLoop({ provider, tools: [unreadable], maxIterations: 2, logger }, user);
    expect(result.messages[2]).toMatchObject({ toolCallId: "a", isError: true });
    expect(result.messages[2]?.content).toBe("the tool's result cannot be read: boom");
  });

  it("logs the stop at the cap", async () => {
    const { logger, lines } = captureLogger("debug");
    const provider = new ScriptedProvider([toolCallResponse({ name: "echo" })]);
    await runToolLoop({ provider, tools: registryWith(echo), maxIterations: 1, logger }, user);
    expect(lines.at(-2)).toMatchObject({ msg: "tool loop stopped at maxIterations", iterations: 1 });
    expect(lines.at(-1)).toMatchObject({ msg: "tool loop finished", iterations: 1, stopReason: "max_iterations" });
  });
});

describe("the run's info line, tool loop finished (issue 9)", () => {
  const RUN_LINE = "tool loop finished";
  /** The fields a pino line carries besides the run line's own. */
  const PINO = new Set(["level", "time", "pid", "hostname", "msg"]);
  const runLines = (lines: Record<string, unknown>[]) => lines.filter((line) => line.msg === RUN_LINE);
  const ownFields = (line: Record<string, unknown> | undefined) =>
    Object.keys(line ?? {}).filter((key) => !PINO.has(key));

  it.each<[string, () => ScriptedProvider, Partial<ToolLoopConfig>, Record<string, unknown>]>([
    [
      "completed, with failing calls",
      () =>
        new ScriptedProvider([
          toolCallResponse([
            { name: "echo", id: "a" },
            { name: "ghost", id: "b" },
            { name: "echo", id: "c", arguments: "{" },
          ]),
          toolCallResponse({ name: "echo", id: "d" }),
          textResponse("ok"),
        ]),
      {},
      { iterations: 3, stopReason: "completed", toolCalls: 4, failedCalls: 2 },
    ],
    [
      "completed at once",
      () => new ScriptedProvider([textResponse("ok")]),
      {},
      { iterations: 1, stopReason: "completed", toolCalls: 0, failedCalls: 0 },
    ],
    [
      "at the cap",
      () => new ScriptedProvider([toolCallResponse({ name: "echo" }), toolCallResponse({ name: "echo" })]),
      { maxIterations: 2 },
      { iterations: 2, stopReason: "max_iterations", toolCalls: 2, failedCalls: 0 },
    ],
    [
      "stopped by a loop-breaking tool",
      () => new ScriptedProvider([toolCallResponse([{ name: "echo" }, { name: "stop" }]), textResponse("never")]),
      {
        tools: registryWith(
          echo,
          tool("stop", () => newToolResult("bye"), { loopBreaking: true }),
        ),
      },
      { iterations: 1, stopReason: "loop_breaking_tool", toolCalls: 2, failedCalls: 0 },
    ],
  ])(
    "one info line per run (%s): iterations, stopReason, toolCalls, failedCalls, durationMs",
    async (_case, provider, extra, expected) => {
      const { logger, lines } = captureLogger("info");
      const result = await runToolLoop(
        { provider: provider(), tools: registryWith(echo), maxIterations: 5, logger, ...extra },
        user,
      );
      const [line, ...more] = runLines(lines);
      expect(more).toEqual([]);
      expect(line).toMatchObject({ level: 30, ...expected, durationMs: expect.any(Number) });
      expect(ownFields(line)).toEqual(["iterations", "stopReason", "toolCalls", "failedCalls", "durationMs"]);
      expect(line).toMatchObject({ iterations: result.iterations, stopReason: result.stopReason });
      // Nothing else at info: the per-call success lines are debug.
      expect(lines.filter((each) => each.level === 30)).toEqual([line]);
    },
  );

  it("durationMs is the run's wall time in milliseconds, to the microsecond", async () => {
    const { logger, lines } = captureLogger("info");
    const provider = new ScriptedProvider([
      async () => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        return textResponse("ok");
      },
    ]);
    await runToolLoop({ provider, maxIterations: 2, logger }, user);
    const durationMs = runLines(lines)[0]?.durationMs;
    expect(durationMs).toBeGreaterThan(4);
    expect(durationMs).toBeLessThan(5_000);
    expect(String(durationMs)).toMatch(/^\d+(\.\d{1,3})?$/);
  });

  it("durationMs counts the run's synchronous start too (a provider that works before its first await)", async () => {
    const { logger, lines } = captureLogger("info");
    const busy: LLMProvider = {
      chat: () => {
        const until = performance.now() + 5;
        while (performance.now() < until) {
          // a provider building its request synchronously
        }
        return Promise.resolve(textResponse("ok"));
      },
      getDefaultModel: () => "busy",
    };
    await runToolLoop({ provider: busy, maxIterations: 2, logger }, user);
    await runToolLoop({ provider: busy, maxIterations: 2, logger }, user, { signal: new AbortController().signal });
    expect(lines.map(({ durationMs }) => durationMs)).toEqual([expect.any(Number), expect.any(Number)]);
    for (const { durationMs } of lines) expect(durationMs).toBeGreaterThanOrEqual(5);
  });

  it.each<[string, () => ScriptedProvider, () => AbortSignal | undefined, Record<string, unknown>]>([
    [
      "the provider throws",
      () =>
        new ScriptedProvider([
          toolCallResponse([
            { name: "echo", id: "a" },
            { name: "ghost", id: "b" },
          ]),
          new Error("503"),
        ]),
      () => undefined,
      { iterations: 2, error: "provider_failed", toolCalls: 2, failedCalls: 1 },
    ],
    [
      "the caller's signal is aborted before the start",
      () => new ScriptedProvider([textResponse("never")]),
      () => AbortSignal.abort(new Error("user left")),
      { iterations: 0, error: "aborted", toolCalls: 0, failedCalls: 0 },
    ],
  ])(
    "a rejected run (%s) logs the line with the error code and still rejects with the same ToolLoopError",
    async (_case, provider, signal, expected) => {
      const { logger, lines } = captureLogger("info");
      const run = (config: Partial<ToolLoopConfig>) =>
        runToolLoop({ provider: provider(), tools: registryWith(echo), maxIterations: 5, ...config }, user, {
          signal: signal(),
        }).catch((caught: unknown) => caught);
      const error = (await run({ logger })) as ToolLoopError;
      const unlogged = (await run({})) as ToolLoopError;
      expect(error).toBeInstanceOf(ToolLoopError);
      expect(error).toMatchObject({ code: expected.error, message: unlogged.message, iterations: unlogged.iterations });
      expect(error.messages).toEqual(unlogged.messages);
      const [line, ...more] = runLines(lines);
      expect(more).toEqual([]);
      expect(line).toMatchObject({ level: 30, ...expected, durationMs: expect.any(Number) });
      expect(ownFields(line)).toEqual(["iterations", "error", "toolCalls", "failedCalls", "durationMs"]);
    },
  );

  it("a run aborted during its tools logs error aborted, counting the calls it answered", async () => {
    const controller = new AbortController();
    const started = deferred();
    const slow = tool("slow", () => {
      started.resolve();
      return new Promise<ToolResult>(() => {});
    });
    const { logger, lines } = captureLogger("info");
    const provider = new ScriptedProvider([
      toolCallResponse([{ name: "echo" }, { name: "slow" }]),
      textResponse("never"),
    ]);
    const run = runToolLoop({ provider, tools: registryWith(echo, slow), maxIterations: 5, logger }, user, {
      signal: controller.signal,
    }).catch((caught: unknown) => caught);
    await started.promise;
    controller.abort(new Error("stop"));
    expect(await run).toMatchObject({ code: "aborted" });
    expect(runLines(lines)).toEqual([
      expect.objectContaining({ iterations: 1, error: "aborted", toolCalls: 2, failedCalls: 1 }),
    ]);
  });

  it("with info off: no line, no info() call, no clock read", async () => {
    const { logger: warnOnly, lines } = captureLogger("warn");
    const now = vi.spyOn(performance, "now");
    await runToolLoop(
      { provider: new ScriptedProvider([textResponse("ok")]), maxIterations: 2, logger: warnOnly },
      user,
    );
    await runToolLoop(
      { provider: new ScriptedProvider([new Error("down")]), maxIterations: 2, logger: warnOnly },
      user,
    ).catch(() => {});
    expect(now).not.toHaveBeenCalled();
    expect(runLines(lines)).toEqual([]);
    const custom = {
      debug: vi.fn(),
      info: vi.fn(),
      warn: vi.fn(),
      error: vi.fn(),
      isLevelEnabled: vi.fn((level: string) => level === "warn" || level === "error"),
      child: vi.fn(),
    };
    await runToolLoop({ provider: new ScriptedProvider([textResponse("ok")]), maxIterations: 2, logger: custom }, user);
    expect(custom.info).not.toHaveBeenCalled();
    expect(custom.isLevelEnabled).toHaveBeenCalledWith("info");
    // The check: with info on, the same run reads the clock (twice: start and end).
    const { logger: infoOn } = captureLogger("info");
    await runToolLoop({ provider: new ScriptedProvider([textResponse("ok")]), maxIterations: 2, logger: infoOn }, user);
    expect(now).toHaveBeenCalledTimes(2);
  });

  it("asks the loop's logger whether debug is on once per run, not at every step, and writes its debug lines", async () => {
    const custom = {
      debug: vi.fn(),
      info: vi.fn(),
      warn: vi.fn(),
      error: vi.fn(),
      isLevelEnabled: vi.fn((_level: string) => true),
      child: vi.fn(),
    };
    const script = [
      ...Array.from({ length: 5 }, (_, step) => toolCallResponse({ name: "echo", id: `c${step}` })),
      textResponse("ok"),
    ];
    await runToolLoop(
      { provider: new ScriptedProvider(script), tools: registryWith(echo), maxIterations: 6, logger: custom },
      user,
    );
    expect(custom.isLevelEnabled.mock.calls.filter(([level]) => level === "debug")).toHaveLength(1);
    const lines = custom.debug.mock.calls.map(([, message]) => message);
    expect(lines.filter((message) => message === "llm call")).toHaveLength(6);
    expect(lines.filter((message) => message === "running tool calls")).toHaveLength(5);
  });

  it("a logger whose info() throws never changes the result or the rejection", async () => {
    const throwing = {
      debug() {},
      warn() {},
      error() {},
      info: vi.fn((_fields: object, _message?: string) => {
        throw new Error("disk full");
      }),
      isLevelEnabled: () => true,
      child() {
        return throwing;
      },
    };
    const script = () => twoCallsThenOk("echo", "ghost");
    const result = await runToolLoop(
      { provider: script(), tools: registryWith(echo), maxIterations: 3, logger: throwing },
      user,
    );
    const plain = await runToolLoop({ provider: script(), tools: registryWith(echo), maxIterations: 3 }, user);
    expect(result).toEqual(plain);
    const failing = () => new ScriptedProvider([toolCallResponse({ name: "echo", id: "a" }), new Error("503")]);
    const error = await runToolLoop(
      { provider: failing(), tools: registryWith(echo), maxIterations: 3, logger: throwing },
      user,
    ).catch((caught: unknown) => caught);
    const unlogged = await runToolLoop(
      { provider: failing(), tools: registryWith(echo), maxIterations: 3 },
      user,
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ToolLoopError);
    expect(error).toMatchObject({ code: "provider_failed", message: (unlogged as ToolLoopError).message });
    expect((error as ToolLoopError).messages).toEqual((unlogged as ToolLoopError).messages);
    // Both runs tried to write their line (and nothing else at info).
    expect(throwing.info.mock.calls.map(([, message]) => message)).toEqual([
      "tool loop finished",
      "tool loop finished",
    ]);
  });

  it("with an info-level logger no per-call 'tool call completed' line is written; at debug one per call", async () => {
    const script = () => twoCallsThenOk("echo", "echo");
    const atInfo = captureLogger("info");
    await runToolLoop({ provider: script(), tools: [echo], maxIterations: 3, logger: atInfo.logger }, user);
    expect(atInfo.lines.map(({ msg }) => msg)).toEqual([RUN_LINE]);
    const atDebug = captureLogger("debug");
    await runToolLoop({ provider: script(), tools: [echo], maxIterations: 3, logger: atDebug.logger }, user);
    expect(atDebug.lines.filter(({ msg }) => msg === "tool call completed")).toEqual([
      expect.objectContaining({ level: 20, tool: "echo", toolCallId: "a" }),
      expect.objectContaining({ level: 20, tool: "echo", toolCallId: "b" }),
    ]);
    expect(runLines(atDebug.lines)).toHaveLength(1);
  });

  it("a model-sent 1 MB tool name never reaches the run line (it names no tool)", async () => {
    const { logger, lines } = captureLogger("info");
    const name = "n".repeat(1_000_000);
    const provider = new ScriptedProvider([toolCallResponse({ name, id: "x" }), textResponse("ok")]);
    await runToolLoop({ provider, tools: registryWith(echo), maxIterations: 3, logger }, user);
    const [line] = runLines(lines);
    expect(line).toMatchObject({ toolCalls: 1, failedCalls: 1 });
    expect(JSON.stringify(line).length).toBeLessThan(300);
    expect(JSON.stringify(line)).not.toContain("nnnn");
  });

  it("a malformed ToolLoopError passed through from a registry rejects the run unchanged with an info logger", async () => {
    const weird = new ToolLoopError("mine", { messages: undefined as unknown as Message[], iterations: 0 });
    const tools = {
      count: () => {
        throw weird;
      },
      executeWithContext: async () => newToolResult("x"),
      toProviderDefs: () => [],
    };
    const run = (logger?: ToolLoopConfig["logger"]) =>
      runToolLoop(
        { provider: new ScriptedProvider([textResponse("ok")]), tools: tools as never, maxIterations: 3, logger },
        user,
      ).catch((error: unknown) => error);
    expect(await run()).toBe(weird);
    const { logger, lines } = captureLogger("info");
    expect(await run(logger)).toBe(weird);
    expect(runLines(lines)).toEqual([]);
  });
});

describe("configuration", () => {
  const provider = () => new ScriptedProvider([textResponse("ok")]);

  it("a result whose isError getter throws fails its call, not the run, with a warn logger (review, session 21)", async () => {
    const { logger } = captureLogger("warn");
    const registry = new ToolRegistry({ logger });
    registry.register(
      tool("h", () =>
        Object.defineProperty(newToolResult("x"), "isError", {
          get() {
            throw new Error("isError getter");
          },
        }),
      ),
    );
    const scripted = new ScriptedProvider([toolCallResponse({ name: "h", id: "a" }), textResponse("ok")]);
    const result = await runToolLoop({ provider: scripted, tools: registry, maxIterations: 2 }, user);
    expect(result.messages[2]).toMatchObject({
      content: 'tool "h" returned a result that cannot be read: isError getter',
      isError: true,
    });
    expect(result.content).toBe("ok");
  });

  it("a stand-in registry that borrows executeWithContext from a ToolRegistry takes the public path", async () => {
    const real = new ToolRegistry();
    real.register(tool("echo", () => "echoed"));
    const standIn = {
      count: () => real.count(),
      toProviderDefs: () => real.toProviderDefs(),
      executeWithContext: real.executeWithContext,
    };
    const scripted = new ScriptedProvider([toolCallResponse({ name: "echo", id: "a" }), textResponse("ok")]);
    const result = await runToolLoop({ provider: scripted, tools: standIn as never, maxIterations: 2 }, user);
    // Unbound, the method cannot reach the registry's tools: the call is answered, the run completes.
    expect(result.messages[2]).toMatchObject({ isError: true });
    expect(result.content).toBe("ok");
  });

  it("a ToolRegistry subclass that overrides executeWithContext gets every call, with the run's options", async () => {
    const seen: unknown[] = [];
    class Audited extends ToolRegistry {
      override executeWithContext(...args: Parameters<ToolRegistry["executeWithContext"]>): Promise<ToolResult> {
        const [name, callArgs, channel, chatId, , options] = args;
        seen.push({ name, callArgs, channel, chatId, toolCallId: options?.toolCallId, timeoutMs: options?.timeoutMs });
        return name === "echo" ? super.executeWithContext(...args) : Promise.resolve(newToolResult("audited"));
      }
    }
    const registry = new Audited();
    registry.register(tool("echo", (args) => `echo:${JSON.stringify(args)}`));
    const scripted = new ScriptedProvider([
      toolCallResponse([
        { name: "echo", id: "a", arguments: { x: 1 } },
        { name: "other", id: "b" },
      ]),
      textResponse("done"),
    ]);
    const result = await runToolLoop(
      { provider: scripted, tools: registry, maxIterations: 2, toolTimeoutMs: 5000 },
      user,
      { channel: "web", chatId: "42" },
    );
    expect(seen).toEqual([
      { name: "echo", callArgs: { x: 1 }, channel: "web", chatId: "42", toolCallId: "a", timeoutMs: 5000 },
      { name: "other", callArgs: {}, channel: "web", chatId: "42", toolCallId: "b", timeoutMs: 5000 },
    ]);
    expect(result.messages.slice(2).map((message) => message.content)).toEqual(['echo:{"x":1}', "audited", "done"]);
  });

  it.each([
    ["maxIterations -1", { maxIterations: -1 }, "runToolLoop: maxIterations must be an integer ≥ 0, got -1"],
    ["maxIterations 1.5", { maxIterations: 1.5 }, "got 1.5"],
    ["maxIterations NaN", { maxIterations: Number.NaN }, "got NaN"],
    ["maxIterations Infinity", { maxIterations: Number.POSITIVE_INFINITY }, "got Infinity"],
    ['maxIterations "3"', { maxIterations: "3" }, 'got "3"'],
    ["maxIterations missing", { maxIterations: undefined }, "got undefined"],
    [
      "maxConcurrency 0",
      { maxConcurrency: 0 },
      "runToolLoop: maxConcurrency must be an integer ≥ 1 or Infinity, got 0",
    ],
    ["maxConcurrency 2.5", { maxConcurrency: 2.5 }, "got 2.5"],
    [
      "toolTimeoutMs 0",
      { toolTimeoutMs: 0 },
      "runToolLoop: toolTimeoutMs must be a number of milliseconds > 0 and ≤ 2147483647, or Infinity for none, got 0",
    ],
    ["toolTimeoutMs -5", { toolTimeoutMs: -5 }, "got -5"],
    ["toolTimeoutMs 2^31 (setTimeout would fire at once)", { toolTimeoutMs: 2 ** 31 }, "got 2147483648"],
    ["toolTimeoutMs NaN", { toolTimeoutMs: Number.NaN }, "got NaN"],
    ["llmOptions as an array", { llmOptions: [1] }, "runToolLoop: llmOptions must be an object, got [1]"],
    ["a numeric model", { model: 4 }, "runToolLoop: model must be a string, got 4"],
    ["onProgress not a function", { onProgress: true }, "runToolLoop: onProgress must be a function, got true"],
    ["no provider", { provider: undefined }, "runToolLoop: provider must be an LLMProvider"],
    [
      "a provider without chat",
      { provider: { getDefaultModel: () => "m" } },
      "runToolLoop: provider must be an LLMProvider",
    ],
  ])("%s is a TypeError echoing the value", async (_case, overrides, message) => {
    const config = { provider: provider(), maxIterations: 1, ...overrides } as unknown as ToolLoopConfig;
    await expect(runToolLoop(config, user)).rejects.toThrow(TypeError);
    await expect(runToolLoop(config, user)).rejects.toThrow(message);
  });

  it.each([
    ["config", null, user],
    ["messages", { maxIterations: 1 }, "hi"],
  ])("a %s that is not the right shape is a TypeError", async (_case, config, messages) => {
    const full = config === null ? null : { provider: provider(), ...config };
    await expect(runToolLoop(full as never, messages as never)).rejects.toThrow(TypeError);
  });

  it.each([
    [
      "tools as a string",
      { tools: "echo" },
      'runToolLoop: tools must be a ToolRegistry, an array of tools or null, got "echo"',
    ],
    [
      "tools as a Map",
      { tools: new Map() },
      "runToolLoop: tools must be a ToolRegistry, an array of tools or null, got Map",
    ],
    [
      "a tool in the array without execute",
      { tools: [{ name: "x", description: "", parameters: {} }] },
      'runToolLoop: tools[0]: tool "x": execute must be a function, got undefined',
    ],
    [
      "the same name twice in the array",
      { tools: [echo, echo] },
      'runToolLoop: tools[1] must be a tool with a name not used before in the array, got "echo"',
    ],
    [
      "a logger without warn",
      { logger: { debug() {}, info() {}, error() {} } },
      "runToolLoop: logger must be an object with debug, info, warn and error methods (missing: warn()), got {}",
    ],
  ])("%s is a TypeError echoing the value", async (_case, overrides, message) => {
    const config = { provider: provider(), maxIterations: 1, ...overrides } as unknown as ToolLoopConfig;
    await expect(runToolLoop(config, user)).rejects.toThrow(new TypeError(message));
  });

  it.each([
    ["a context that is a string", "telegram", 'runToolLoop: context must be an object, got "telegram"'],
    ["a numeric chatId", { chatId: 42 }, "runToolLoop: context.chatId must be a string, got 42"],
    [
      "a signal that is not an AbortSignal",
      { signal: { aborted: false } },
      'runToolLoop: context.signal must be an AbortSignal, got {"aborted":false}',
    ],
    [
      "metadata with a number",
      { metadata: { user: 1 } },
      'runToolLoop: context.metadata["user"] must be a string, got 1',
    ],
  ])("%s is a TypeError before the provider is called", async (_case, context, message) => {
    const scripted = provider();
    await expect(runToolLoop({ provider: scripted, maxIterations: 1 }, user, context as never)).rejects.toThrow(
      new TypeError(message),
    );
    expect(scripted.calls).toHaveLength(0);
  });

  it.each([
    ["a message that is null", [null], "runToolLoop: messages[0] must be a message object, got null"],
    [
      "an unknown role",
      [{ role: "bot", content: "hi" }],
      'runToolLoop: messages[0].role must be "system", "user", "assistant" or "tool", got "bot"',
    ],
    [
      "content that is neither a string nor parts",
      [{ role: "user", content: 3 }],
      "runToolLoop: messages[0].content must be a string or an array of content parts, got 3",
    ],
    [
      "content parts that are not parts",
      [{ role: "user", content: ["hi"] }],
      "runToolLoop: messages[0].content[0] must be a content part object, got string",
    ],
    [
      "toolCalls that is not an array",
      [{ role: "assistant", content: "", toolCalls: {} }],
      "runToolLoop: messages[0].toolCalls must be an array, got {}",
    ],
  ])("messages with %s are a TypeError before the provider is called", async (_case, messages, message) => {
    const scripted = provider();
    await expect(runToolLoop({ provider: scripted, maxIterations: 1 }, messages as never)).rejects.toThrow(
      new TypeError(message),
    );
    expect(scripted.calls).toHaveLength(0);
  });

  it("tools may be an array: a registry is built once per run, and string results are tool results", async () => {
    const plain: Tool = {
      name: "greet",
      description: "Greets",
      parameters: { type: "object" },
      execute: () => "hello",
    };
    const scripted = new ScriptedProvider([
      toolCallResponse({ name: "greet", id: "g" }),
      toolCallResponse({ name: "greet", id: "h" }),
      textResponse("ok"),
    ]);
    const result = await runToolLoop({ provider: scripted, tools: [plain, echo], maxIterations: 3 }, user);
    expect(scripted.calls[0]?.tools?.map((definition) => definition.function.name)).toEqual(["echo", "greet"]);
    expect(scripted.calls[1]?.tools).toBe(scripted.calls[0]?.tools); // built once, cached for the run
    expect(result.messages.filter((message) => message.role === "tool").map((message) => message.content)).toEqual([
      "hello",
      "hello",
    ]);
  });

  it("a ToolRegistry from another copy of toolloop works (no private fields read across copies) (D13)", async () => {
    // A query string makes Vite load the module a second time: a second copy of the class.
    const secondCopy = "../src/tool-registry.ts?another-copy";
    const other = (await import(/* @vite-ignore */ secondCopy)) as typeof import("../src/tool-registry.js");
    expect(other.ToolRegistry).not.toBe(ToolRegistry);
    const registry = new other.ToolRegistry();
    registry.register(echo);
    const scripted = new ScriptedProvider([
      toolCallResponse({ name: "echo", id: "e", arguments: { a: 1 } }),
      textResponse("ok"),
    ]);
    const result = await runToolLoop({ provider: scripted, tools: registry, maxIterations: 2 }, user);
    expect(result.messages[2]).toMatchObject({ role: "tool", content: 'echo:{"a":1}', toolCallId: "e" });
  });

  it("a registry-like object with only the public methods works too", async () => {
    const real = registryWith(echo);
    const like = {
      count: () => real.count(),
      toProviderDefs: () => real.toProviderDefs(),
      executeWithContext: real.executeWithContext.bind(real),
    };
    const scripted = new ScriptedProvider([toolCallResponse({ name: "echo", id: "e" }), textResponse("ok")]);
    const result = await runToolLoop({ provider: scripted, tools: like as never, maxIterations: 2 }, user);
    expect(result.messages[2]).toMatchObject({ content: "echo:{}" });
    expect(scripted.calls[0]?.tools).toEqual(real.getDefinitions());
  });

  it("toolTimeoutMs Infinity means no timeout: a slow tool still answers", async () => {
    const slow = tool("slow", () => new Promise((resolve) => setTimeout(() => resolve(newToolResult("late")), 5)));
    const result = await runToolLoop(
      {
        provider: new ScriptedProvider([toolCallResponse({ name: "slow", id: "s1" }), textResponse("ok")]),
        tools: registryWith(slow),
        maxIterations: 2,
        toolTimeoutMs: Number.POSITIVE_INFINITY,
      },
      user,
    );
    expect(result.messages.find((message) => message.role === "tool")).toMatchObject({
      content: "late",
      isError: false,
    });
  });

  it("maxConcurrency Infinity is accepted", async () => {
    await expect(
      runToolLoop({ provider: provider(), maxIterations: 1, maxConcurrency: Number.POSITIVE_INFINITY }, user),
    ).resolves.toMatchObject({ content: "ok" });
  });
});

// Moved from review-regressions.test.ts (findings of the independent review; each failed before its fix).
describe("listeners on the caller's signal (review regressions)", () => {
  it("a turn of 16 calls under a caller's signal makes Node print no listener warning", async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    try {
      const tool: Tool = {
        name: "wait",
        description: "waits on its signal",
        parameters: { type: "object" },
        execute: async (_args, { signal }) => {
          signal.addEventListener("abort", () => {}); // as fetch(…, { signal }) would
          await new Promise((resolve) => setImmediate(resolve));
          return newToolResult("done");
        },
      };
      const registry = new ToolRegistry();
      registry.register(tool);
      const calls = Array.from({ length: 16 }, (_, index) => ({ name: "wait", id: `c${index}` }));
      const provider = new ScriptedProvider([toolCallResponse(calls), textResponse("ok")]);
      const controller = new AbortController();
      const result = await runToolLoop({ provider, tools: registry, maxIterations: 2, toolTimeoutMs: 10_000 }, [], {
        signal: controller.signal,
      });
      expect(result.messages.filter((message) => message.role === "tool")).toHaveLength(16);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.map((warning) => warning.name)).not.toContain("MaxListenersExceededWarning");
    } finally {
      process.off("warning", onWarning);
    }
  });

  it("many runs under one long-lived signal leave no listener behind on it", async () => {
    const controller = new AbortController();
    let added = 0;
    let removed = 0;
    const add = controller.signal.addEventListener.bind(controller.signal);
    const remove = controller.signal.removeEventListener.bind(controller.signal);
    controller.signal.addEventListener = ((...args: Parameters<typeof add>) => {
      added++;
      add(...args);
    }) as typeof add;
    controller.signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
      removed++;
      remove(...args);
    }) as typeof remove;
    for (let run = 0; run < 20; run++) {
      const provider = new ScriptedProvider([textResponse("ok")]);
      await runToolLoop({ provider, maxIterations: 1 }, [], { signal: controller.signal });
    }
    expect(added).toBe(20);
    expect(removed).toBe(20);
  });
});

describe("loop-breaking tools (Forge's IsLoopBreaking, issue 10)", () => {
  const done = tool("done", () => new ToolResult({ forLLM: "for the model", forUser: "All done." }), {
    loopBreaking: true,
  });
  const plain = tool("plain", () => "ok");

  it("a successful loop-breaking call ends the loop without another provider call; the whole turn is answered", async () => {
    const provider = new ScriptedProvider([
      toolCallResponse([
        { id: "a", name: "plain" },
        { id: "b", name: "done" },
        { id: "c", name: "plain" },
      ]),
      textResponse("never asked"),
    ]);
    const result = await runToolLoop({ provider, tools: [plain, done], maxIterations: 5 }, user);
    expect(provider.calls).toHaveLength(1);
    expect(result.stopReason).toBe("loop_breaking_tool");
    expect(result.stoppedBy).toEqual({ toolName: "done", toolCallId: "b" });
    expect(result.content).toBe("All done.");
    expect(result.iterations).toBe(1);
    expect(result.messages.filter((message) => message.role === "tool").map((m) => m.toolCallId)).toEqual([
      "a",
      "b",
      "c",
    ]);
    expectEveryCallAnswered(result.messages);
  });

  it("content is forLLM when forUser is empty; the first loop-breaking call in call order wins", async () => {
    const first = tool("first", () => "first answer", { loopBreaking: true });
    const second = tool("second", () => "second answer", { loopBreaking: true });
    const provider = new ScriptedProvider([
      toolCallResponse([
        { id: "x", name: "second" },
        { id: "y", name: "first" },
      ]),
    ]);
    const result = await runToolLoop({ provider, tools: [first, second], maxIterations: 3 }, user);
    expect(result.content).toBe("second answer");
    expect(result.stoppedBy).toEqual({ toolName: "second", toolCallId: "x" });
  });

  it.each([
    [
      "throws",
      tool(
        "breaker",
        () => {
          throw new Error("boom");
        },
        { loopBreaking: true },
      ),
      {},
    ],
    ["returns an error result", tool("breaker", () => errorResult("nope"), { loopBreaking: true }), {}],
    [
      "gets invalid arguments",
      tool("breaker", () => "ok", {
        loopBreaking: true,
        parameters: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
      }),
      { n: "not a number" },
    ],
  ])("a loop-breaking call that %s does not stop the loop: the model reads the error", async (_, breaker, args) => {
    const provider = new ScriptedProvider([
      toolCallResponse({ id: "k", name: "breaker", arguments: args as Record<string, unknown> }),
      textResponse("recovered"),
    ]);
    const result = await runToolLoop({ provider, tools: [breaker], maxIterations: 3 }, user);
    expect(result.stopReason).toBe("completed");
    expect(result.content).toBe("recovered");
    expect(result.stoppedBy).toBeUndefined();
    expect(result.messages.find((message) => message.role === "tool")?.isError).toBe(true);
  });

  it("on the last allowed iteration it is loop_breaking_tool, not max_iterations", async () => {
    const provider = new ScriptedProvider([toolCallResponse({ id: "z", name: "done" })]);
    const result = await runToolLoop({ provider, tools: [done], maxIterations: 1 }, user);
    expect(result.stopReason).toBe("loop_breaking_tool");
  });

  it("a tool without loopBreaking never stops the loop, and a model-sent name cannot make one loop-breaking", async () => {
    const provider = new ScriptedProvider([
      toolCallResponse([
        { id: "p", name: "plain" },
        { id: "q", name: "__proto__" },
      ]),
      textResponse("end"),
    ]);
    const result = await runToolLoop({ provider, tools: [plain, done], maxIterations: 3 }, user);
    expect(result.stopReason).toBe("completed");
    expect(result.stoppedBy).toBeUndefined();
  });

  it("follows the registry: unregistering or replacing a loop-breaking tool ends its power", async () => {
    const registry = registryWith(done, plain);
    registry.register(tool("done", () => "replaced"));
    let provider = new ScriptedProvider([toolCallResponse({ id: "r", name: "done" }), textResponse("went on")]);
    expect((await runToolLoop({ provider, tools: registry, maxIterations: 3 }, user)).stopReason).toBe("completed");
    registry.register(done);
    registry.unregister("done");
    registry.register(tool("done", () => "plain again"));
    provider = new ScriptedProvider([toolCallResponse({ id: "s", name: "done" }), textResponse("went on")]);
    expect((await runToolLoop({ provider, tools: registry, maxIterations: 3 }, user)).stopReason).toBe("completed");
  });

  it("works with a registry of another copy (no symbol protocol) through its get()", async () => {
    const inner = registryWith(done);
    const foreign = {
      count: () => inner.count(),
      toProviderDefs: () => inner.toProviderDefs(),
      executeWithContext: inner.executeWithContext.bind(inner),
      get: (name: string) => inner.get(name),
    };
    const provider = new ScriptedProvider([toolCallResponse({ id: "f", name: "done" }), textResponse("x")]);
    const result = await runToolLoop({ provider, tools: foreign as unknown as ToolRegistry, maxIterations: 3 }, user);
    expect(result.stopReason).toBe("loop_breaking_tool");
  });

  it("defineTool passes loopBreaking through and refuses a non-boolean", () => {
    const defined = defineTool({
      name: "finish",
      description: "finish",
      parameters: z.object({}),
      loopBreaking: true,
      execute: () => "ok",
    });
    expect(defined.loopBreaking).toBe(true);
    expect(
      "loopBreaking" in defineTool({ name: "n", description: "n", parameters: z.object({}), execute: () => "ok" }),
    ).toBe(false);
    expect(() =>
      defineTool({
        name: "bad",
        description: "bad",
        parameters: z.object({}),
        loopBreaking: "yes" as unknown as boolean,
        execute: () => "ok",
      }),
    ).toThrowErrorMatchingInlineSnapshot(`[TypeError: defineTool("bad"): loopBreaking must be a boolean, got "yes"]`);
  });
});

describe("loop control (issue 12)", () => {
  describe("delivery: onUserMessage", () => {
    it("receives forUser of every result that has one and is not silent, in call order, with the call's id", async () => {
      const delivered: unknown[] = [];
      const shout = tool("shout", (args) => new ToolResult({ forLLM: "said", forUser: String(args.text) }));
      const quiet = tool("quiet", () => new ToolResult({ forLLM: "x", forUser: "hidden", silent: true }));
      const provider = new ScriptedProvider([
        toolCallResponse([
          { id: "1", name: "shout", arguments: { text: "first" } },
          { id: "2", name: "quiet" },
          { id: "3", name: "echo" },
          { id: "4", name: "shout", arguments: { text: "second" } },
        ]),
        textResponse("done"),
      ]);
      await runToolLoop(
        {
          provider,
          tools: registryWith(shout, quiet, echo),
          maxIterations: 3,
          onUserMessage: (message) => void delivered.push(message),
        },
        user,
      );
      expect(delivered).toEqual([
        { content: "first", toolName: "shout", toolCallId: "1" },
        { content: "second", toolName: "shout", toolCallId: "4" },
      ]);
    });

    it("a throwing onUserMessage rejects the run with ToolLoopError, the turn answered", async () => {
      const shout = tool("shout", () => new ToolResult({ forLLM: "said", forUser: "hi" }));
      const provider = new ScriptedProvider([toolCallResponse({ id: "1", name: "shout" }), textResponse("never")]);
      const failure = await runToolLoop(
        {
          provider,
          tools: registryWith(shout),
          maxIterations: 3,
          onUserMessage: () => {
            throw new Error("channel closed");
          },
        },
        user,
      ).catch((error: unknown) => error);
      expect(isToolLoopError(failure) && failure.message).toBe("onUserMessage threw: channel closed");
      expect(isToolLoopError(failure) && failure.messages.at(-1)).toMatchObject({ role: "tool", toolCallId: "1" });
      expect(provider.calls).toHaveLength(1);
    });
  });

  describe("async tools", () => {
    it("without onAsyncResult or awaitAsync, no callback is passed (as in Go)", async () => {
      const { background, callbacks } = backgroundTool();
      const provider = new ScriptedProvider([toolCallResponse({ name: "background" }), textResponse("ok")]);
      await runToolLoop({ provider, tools: registryWith(background), maxIterations: 3 }, user);
      expect(callbacks).toEqual([undefined]);
    });

    it("onAsyncResult receives completions with the call's name and id, also after the loop ended; forUser is delivered", async () => {
      const { background, callbacks } = backgroundTool();
      const received: unknown[] = [];
      const delivered: unknown[] = [];
      const provider = new ScriptedProvider([toolCallResponse({ id: "bg", name: "background" }), textResponse("ok")]);
      await runToolLoop(
        {
          provider,
          tools: registryWith(background),
          maxIterations: 3,
          onAsyncResult: (result, info) => void received.push([result.forLLM, info]),
          onUserMessage: (message) => void delivered.push(message),
        },
        user,
      );
      const callback = callbacks[0] as (result: ToolResult) => void;
      expect(callback(new ToolResult({ forLLM: "backup done", forUser: "Your backup is ready" }))).toBeUndefined();
      await vi.waitFor(() => expect(delivered).toHaveLength(1), POLL);
      expect(received).toEqual([["backup done", { toolName: "background", toolCallId: "bg" }]]);
      expect(delivered).toEqual([{ content: "Your backup is ready", toolName: "background", toolCallId: "bg" }]);
    });

    it("onAsyncResult: a completion during the run reaches onUserMessage in order with the loop's deliveries; a throw rejects the run", async () => {
      const { background, callbacks } = backgroundTool();
      const say = tool("say", () => new ToolResult({ forLLM: "said", forUser: "sync says hi" }));
      const seen: string[] = [];
      let inFlight = 0;
      const provider = new ScriptedProvider([
        (_call) => {
          return toolCallResponse([
            { id: "bg", name: "background" },
            { id: "s", name: "say" },
          ]);
        },
        async () => {
          await vi.waitFor(() => expect(seen).toContain("end bg says hi"), POLL);
          return textResponse("never read");
        },
      ]);
      const failure = await runToolLoop(
        {
          provider,
          tools: registryWith(background, say),
          maxIterations: 3,
          onAsyncResult: () => {},
          onUserMessage: async (message) => {
            if (message.content === "sync says hi") {
              setTimeout(() => callbacks[0]?.(new ToolResult({ forLLM: "bg done", forUser: "bg says hi" })), 1);
            }
            inFlight++;
            seen.push(`start ${message.content} (${inFlight})`);
            await new Promise((resolve) => setTimeout(resolve, 20));
            inFlight--;
            seen.push(`end ${message.content}`);
            if (message.content === "bg says hi") throw new Error("UI crashed");
          },
        },
        user,
      ).catch((error: unknown) => error);
      expect(seen).toEqual(["start sync says hi (1)", "end sync says hi", "start bg says hi (1)", "end bg says hi"]);
      expect(isToolLoopError(failure) && failure.message).toBe("onUserMessage threw: UI crashed");
    });

    it("a callback called twice, after the loop ended, or with listeners that throw never throws into the tool", async () => {
      const { background, callbacks } = backgroundTool();
      const received: unknown[] = [];
      const provider = new ScriptedProvider([toolCallResponse({ id: "bg", name: "background" }), textResponse("ok")]);
      await runToolLoop(
        {
          provider,
          tools: registryWith(background),
          maxIterations: 3,
          onAsyncResult: (result) => {
            received.push(result.forLLM);
            throw new Error("listener broke");
          },
        },
        user,
      );
      const callback = callbacks[0] as (result: unknown) => void;
      expect(() => callback(newToolResult("one"))).not.toThrow();
      expect(() => callback(newToolResult("two"))).not.toThrow();
      expect(() => (callbacks[0] as (result: unknown) => void)("not a result")).not.toThrow();
      await new Promise((resolve) => setTimeout(resolve, 5));
      expect(received).toEqual(["one"]);
    });

    it("awaitAsync: the loop waits and feeds each completion back as a user message and a new turn", async () => {
      const { background, callbacks } = backgroundTool();
      const provider = new ScriptedProvider([
        toolCallResponse({ id: "bg", name: "background" }),
        (call) => {
          // The model answers while the work is pending; it completes a little later.
          setTimeout(
            () => callbacks[0]?.(new ToolResult({ forLLM: "12 files backed up", forUser: "Backup ready" })),
            5,
          );
          return textResponse(call.messages.length === 3 ? "working on it" : "?");
        },
        textResponse("Backup complete: 12 files."),
      ]);
      const delivered: unknown[] = [];
      const replayed: Message[] = [...user];
      const result = await runToolLoop(
        {
          provider,
          tools: registryWith(background),
          maxIterations: 5,
          awaitAsync: { timeoutMs: 5_000 },
          onUserMessage: (message) => void delivered.push(message),
          onEvent: (event) => {
            if (event.type === "message") replayed.push(event.message);
          },
        },
        user,
      );
      expect(delivered).toEqual([{ content: "Backup ready", toolName: "background", toolCallId: "bg" }]);
      expect(replayed).toEqual(result.messages);
      expect(result.content).toBe("Backup complete: 12 files.");
      expect(result.iterations).toBe(3);
      expect(result.messages.slice(-3)).toEqual([
        { role: "assistant", content: "working on it" },
        { role: "user", content: "[async result from background (bg)] 12 files backed up" },
        { role: "assistant", content: "Backup complete: 12 files." },
      ]);
    });

    it("awaitAsync: after the timeout the loop ends; what completes later goes to onAsyncResult", async () => {
      vi.useFakeTimers();
      const { background, callbacks } = backgroundTool();
      const received: string[] = [];
      const provider = new ScriptedProvider([
        toolCallResponse({ id: "bg", name: "background" }),
        textResponse("later"),
      ]);
      const running = runToolLoop(
        {
          provider,
          tools: registryWith(background),
          maxIterations: 5,
          awaitAsync: { timeoutMs: 1_000 },
          onAsyncResult: (result) => void received.push(result.forLLM),
        },
        user,
      );
      await vi.advanceTimersByTimeAsync(1_000);
      const result = await running;
      expect(result).toMatchObject({ content: "later", iterations: 2, stopReason: "completed" });
      callbacks[0]?.(newToolResult("finally"));
      await vi.advanceTimersByTimeAsync(0);
      expect(received).toEqual(["finally"]);
    });

    it("awaitAsync: an abort while waiting is the usual abort", async () => {
      const { background } = backgroundTool();
      const controller = new AbortController();
      const provider = new ScriptedProvider([toolCallResponse({ id: "bg", name: "background" }), textResponse("wait")]);
      const running = runToolLoop(
        {
          provider,
          tools: registryWith(background),
          maxIterations: 5,
          awaitAsync: { timeoutMs: Number.POSITIVE_INFINITY },
          onAsyncResult: () => {},
        },
        user,
        { signal: controller.signal },
      );
      await vi.waitFor(() => expect(provider.calls).toHaveLength(2), POLL);
      controller.abort(new Error("stop waiting"));
      await expect(running).rejects.toMatchObject({ code: "aborted", iterations: 2 });
    });

    it("awaitAsync: a completion that arrived before an abort while waiting reaches onAsyncResult", async () => {
      const { background, callbacks } = backgroundTool();
      const controller = new AbortController();
      const received: unknown[] = [];
      const provider = new ScriptedProvider([
        toolCallResponse([
          { id: "fast", name: "background" },
          { id: "slow", name: "background" },
        ]),
        textResponse("wait"),
      ]);
      const running = runToolLoop(
        {
          provider,
          tools: registryWith(background),
          maxIterations: 5,
          awaitAsync: { timeoutMs: Number.POSITIVE_INFINITY },
          onAsyncResult: (result, info) => void received.push([result.forLLM, info.toolCallId]),
        },
        user,
        { signal: controller.signal },
      );
      await vi.waitFor(() => expect(provider.calls).toHaveLength(2), POLL);
      callbacks[0]?.(newToolResult("fast done"));
      controller.abort(new Error("stop waiting"));
      const failure = await running.catch((error: unknown) => error);
      expect(failure).toMatchObject({ code: "aborted", iterations: 2 });
      await vi.waitFor(() => expect(received).toEqual([["fast done", "fast"]]), POLL);
    });

    it("awaitAsync rejects a bad timeout", async () => {
      await expect(
        runToolLoop({ provider: new ScriptedProvider([]), maxIterations: 1, awaitAsync: { timeoutMs: -1 } }, user),
      ).rejects.toThrow(/runToolLoop: awaitAsync.timeoutMs must be a number of milliseconds/);
    });
  });

  describe("responseHandled", () => {
    it.each<[string, Partial<ToolLoopConfig>]>([
      ["no other loop-control option (review regression)", {}],
      ["maxResultChars set", { maxResultChars: 1_000 }],
      ["onEvent set", { onEvent: () => {} }],
    ])(
      "when every result of a turn has it, the loop ends without another provider call (%s)",
      async (_label, extra) => {
        const send = tool("send_file", () => newToolResult("sent").withResponseHandled());
        const provider = new ScriptedProvider([toolCallResponse({ id: "s", name: "send_file" })]);
        const result = await runToolLoop({ provider, tools: registryWith(send), maxIterations: 5, ...extra }, user);
        expect(result).toMatchObject({ content: "", iterations: 1, stopReason: "response_handled" });
        expect(result.messages.at(-1)).toMatchObject({ role: "tool", content: "sent" });
        provider.assertDone();
      },
    );

    it("precedence after a turn: loop-breaking > response_handled > repeated_failure and the final turn", async () => {
      const handled = tool("handled", () => errorResult("sent").withResponseHandled());
      const breaker = tool("finish", () => newToolResult("finished"), { loopBreaking: true });
      const stopAt = async (calls: Parameters<typeof toolCallResponse>[0], extra: Partial<ToolLoopConfig>) =>
        (
          await runToolLoop(
            {
              provider: new ScriptedProvider([toolCallResponse(calls), toolCallResponse(calls), textResponse("x")]),
              tools: registryWith(handled, breaker),
              maxIterations: 1,
              ...extra,
            },
            user,
          )
        ).stopReason;
      expect(await stopAt([{ name: "handled" }, { name: "finish" }], {})).toBe("loop_breaking_tool");
      expect(await stopAt({ name: "handled" }, { maxRepeatedFailures: 1 })).toBe("response_handled");
      // At the cap: no extra final-answer call after a handled turn.
      expect(await stopAt({ name: "handled" }, { finalAnswerOnMaxIterations: true })).toBe("response_handled");
    });

    it("one result without it keeps the loop going", async () => {
      const send = tool("send_file", () => newToolResult("sent").withResponseHandled());
      const provider = new ScriptedProvider([
        toolCallResponse([
          { id: "s", name: "send_file" },
          { id: "e", name: "echo" },
        ]),
        textResponse("done"),
      ]);
      const result = await runToolLoop({ provider, tools: registryWith(send, echo), maxIterations: 5 }, user);
      expect(result.stopReason).toBe("completed");
    });
  });

  describe("finalAnswerOnMaxIterations", () => {
    it("at the cap, one more call without tools and with a note; its text is content, stopReason stays max_iterations", async () => {
      const provider = new ScriptedProvider([
        toolCallResponse({ id: "a", name: "echo" }),
        toolCallResponse({ id: "b", name: "echo" }),
        textResponse("Here is what I found so far."),
      ]);
      const result = await runToolLoop(
        { provider, tools: registryWith(echo), maxIterations: 2, finalAnswerOnMaxIterations: true },
        user,
      );
      expect(result).toMatchObject({
        content: "Here is what I found so far.",
        iterations: 3,
        stopReason: "max_iterations",
      });
      const last = provider.calls[2];
      expect(last?.tools).toBeUndefined();
      expect(last?.messages.at(-1)).toMatchInlineSnapshot(`
        {
          "content": "You have reached the limit of tool calls for this task. Do not call any tool: answer now with what you have.",
          "role": "system",
        }
      `);
      // The note is sent, not recorded.
      expect(result.messages.at(-1)).toEqual({ role: "assistant", content: "Here is what I found so far." });
      expectEveryCallAnswered(result.messages);
    });

    it("if the model still calls tools, they are answered with an error and content is empty", async () => {
      const provider = new ScriptedProvider([
        toolCallResponse({ id: "a", name: "echo" }),
        toolCallResponse({ id: "b", name: "echo", arguments: { again: true } }),
      ]);
      const result = await runToolLoop(
        { provider, tools: registryWith(echo), maxIterations: 1, finalAnswerOnMaxIterations: true },
        user,
      );
      expect(result).toMatchObject({ content: "", iterations: 2, stopReason: "max_iterations" });
      expect(result.messages.at(-1)).toMatchObject({
        role: "tool",
        toolCallId: "b",
        isError: true,
        content: "no tool can be called: the iteration limit was reached",
      });
      expectEveryCallAnswered(result.messages);
    });

    it("a failure of the extra call is logged and the run resolves max_iterations as without the option", async () => {
      const { logger, lines } = captureLogger();
      const seen: Array<{ tools: unknown; options: Record<string, unknown> }> = [];
      const provider: LLMProvider = {
        getDefaultModel: () => "m",
        chat: async (_messages, tools, _model, options) => {
          seen.push({ tools, options });
          if (tools === undefined) throw new Error("400: requests with tool_use blocks must define tools");
          return toolCallResponse({ name: "echo" });
        },
      };
      const llmOptions = { temperature: 0.1, tool_choice: "required", toolChoice: "any", parallel_tool_calls: false };
      const result = await runToolLoop(
        { provider, tools: registryWith(echo), maxIterations: 2, finalAnswerOnMaxIterations: true, llmOptions, logger },
        user,
      );
      expect(result).toMatchObject({ content: "", iterations: 3, stopReason: "max_iterations" });
      expect(result.messages).toHaveLength(5);
      expectEveryCallAnswered(result.messages);
      expect(seen.map(({ options }) => options)).toEqual([llmOptions, llmOptions, { temperature: 0.1 }]);
      expect(lines.filter((line) => line.level === 40).map((line) => [line.msg, line.error])).toEqual([
        ["final answer call failed", "400: requests with tool_use blocks must define tools"],
      ]);
    });

    it("an abort during the extra call is still the usual abort", async () => {
      const controller = new AbortController();
      const provider: LLMProvider = {
        getDefaultModel: () => "m",
        chat: async (_messages, tools) => {
          if (tools !== undefined) return toolCallResponse({ name: "echo" });
          controller.abort(new Error("user left"));
          throw new Error("request aborted");
        },
      };
      await expect(
        runToolLoop({ provider, tools: registryWith(echo), maxIterations: 1, finalAnswerOnMaxIterations: true }, user, {
          signal: controller.signal,
        }),
      ).rejects.toMatchObject({ code: "aborted" });
    });

    it("off by default, and maxIterations 0 still makes no call", async () => {
      const provider = new ScriptedProvider([]);
      const result = await runToolLoop({ provider, maxIterations: 0, finalAnswerOnMaxIterations: true }, user);
      expect(result).toMatchObject({ iterations: 0, stopReason: "max_iterations" });
      await expect(
        runToolLoop({ provider, maxIterations: 1, finalAnswerOnMaxIterations: "yes" as never }, user),
      ).rejects.toThrow('runToolLoop: finalAnswerOnMaxIterations must be a boolean, got "yes"');
    });
  });

  describe("maxRepeatedFailures", () => {
    it("a model repeating a failing call forever is stopped at the n-th identical failure, told why", async () => {
      const broken = tool("read_file", () => errorResult("no such file: /nope"));
      let asked = 0;
      const provider: LLMProvider = {
        getDefaultModel: () => "m",
        chat: async () => {
          asked++;
          return toolCallResponse({ name: "read_file", arguments: { path: "/nope" } });
        },
      };
      const result = await runToolLoop(
        { provider, tools: registryWith(broken), maxIterations: 1_000, maxRepeatedFailures: 3 },
        user,
      );
      expect(asked).toBe(3);
      expect(result).toMatchObject({
        iterations: 3,
        stopReason: "repeated_failure",
        content: 'stopped: tool "read_file" failed 3 times in a row with the same error: no such file: /nope',
      });
      expect(result.messages.at(-1)?.content).toMatchInlineSnapshot(`
        "no such file: /nope

        [This call failed 3 times in a row with the same error. Stop retrying it.]"
      `);
      expectEveryCallAnswered(result.messages);
    });

    it("a different error or a success in between starts the count over", async () => {
      let n = 0;
      const flaky = tool("flaky", () => (++n % 2 === 0 ? "ok" : errorResult("down")));
      const provider = new ScriptedProvider([
        ...Array.from({ length: 6 }, () => toolCallResponse({ name: "flaky" })),
        textResponse("done"),
      ]);
      const result = await runToolLoop(
        { provider, tools: registryWith(flaky), maxIterations: 10, maxRepeatedFailures: 2 },
        user,
      );
      expect(result.stopReason).toBe("completed");
    });

    it.each([0, -1, 1.5, "3"])("rejects %j", async (value) => {
      await expect(
        runToolLoop(
          { provider: new ScriptedProvider([]), maxIterations: 1, maxRepeatedFailures: value as never },
          user,
        ),
      ).rejects.toThrow(/runToolLoop: maxRepeatedFailures must be an integer > 0/);
    });
  });

  describe("maxResultChars", () => {
    it("a 50 MB result is cut in the transcript; result.forLLM stays whole for the caller", async () => {
      const huge = "a".repeat(50 * 1024 * 1024);
      const events: string[] = [];
      let whole: ToolResult | undefined;
      const dump = tool("dump", () => newToolResult(huge));
      const provider = new ScriptedProvider([toolCallResponse({ id: "d", name: "dump" }), textResponse("ok")]);
      const result = await runToolLoop(
        {
          provider,
          tools: registryWith(dump),
          maxIterations: 3,
          maxResultChars: 1_000,
          onEvent: (event) => {
            if (event.type === "tool-call-end") whole = event.result;
            if (event.type === "message" && event.message.role === "tool") events.push(event.message.content as string);
          },
        },
        user,
      );
      const answer = (result.messages[2]?.content ?? "") as string;
      expect(answer.length).toBeLessThanOrEqual(1_000);
      expect(answer.endsWith(`[… ${huge.length - answer.indexOf("\n[…")} characters cut]`)).toBe(true);
      expect(events).toEqual([answer]);
      expect(whole?.forLLM.length).toBe(huge.length);
      expect(provider.calls[1]?.messages[2]?.content).toBe(answer);
    });

    it("never splits a surrogate pair", async () => {
      const emoji = tool("emoji", () => "😀".repeat(1_000));
      const provider = new ScriptedProvider([toolCallResponse({ name: "emoji" }), textResponse("ok")]);
      for (const max of [200, 201]) {
        const result = await runToolLoop(
          {
            provider: new ScriptedProvider([toolCallResponse({ name: "emoji" }), textResponse("ok")]),
            tools: registryWith(emoji),
            maxIterations: 2,
            maxResultChars: max,
          },
          user,
        );
        const kept = ((result.messages[2]?.content ?? "") as string).split("\n[…")[0] ?? "";
        expect(kept).toBe("😀".repeat(kept.length / 2));
      }
      expect(provider.calls).toHaveLength(0);
    });

    it.each([0, Number.NaN, "100"])("rejects %j", async (value) => {
      await expect(
        runToolLoop({ provider: new ScriptedProvider([]), maxIterations: 1, maxResultChars: value as never }, user),
      ).rejects.toThrow(/runToolLoop: maxResultChars must be an integer > 0/);
    });

    it.each([1, 20, MIN_RESULT_CHARS - 1])("rejects %j: below the room the marker and the note need", async (value) => {
      await expect(
        runToolLoop({ provider: new ScriptedProvider([]), maxIterations: 1, maxResultChars: value }, user),
      ).rejects.toThrow(`runToolLoop: maxResultChars must be an integer ≥ ${MIN_RESULT_CHARS}`);
    });

    it.each([
      [MIN_RESULT_CHARS, 500],
      [200, 500],
      [200, 150], // fits alone, not with the note
      [1_000, 5_000],
    ])(
      "with the repeated-failure note, the tool message is still at most %i characters (error of %i)",
      async (max, size) => {
        const big = tool("big", () => errorResult("e".repeat(size)));
        const result = await runToolLoop(
          {
            provider: new ScriptedProvider([toolCallResponse({ name: "big" })]),
            tools: registryWith(big),
            maxIterations: 3,
            maxResultChars: max,
            maxRepeatedFailures: 1,
          },
          user,
        );
        const answer = result.messages.at(-1)?.content ?? "";
        expect(result.stopReason).toBe("repeated_failure");
        expect(answer.length).toBeLessThanOrEqual(max);
        expect(answer).toMatch(
          /characters cut\]\n\n\[This call failed 1 times in a row with the same error\. Stop retrying it\.\]$/,
        );
      },
    );
  });

  describe("unused", () => {
    it("without any loop-control option, a provider's chatStream is never used", async () => {
      const chatStream = vi.fn();
      const provider = Object.assign(new ScriptedProvider([textResponse("hi")]), { chatStream });
      await runToolLoop({ provider, maxIterations: 1, finalAnswerOnMaxIterations: false }, user);
      expect(chatStream).not.toHaveBeenCalled();
    });
  });
});

describe("hidden tools (tickHiddenTools, issue 13)", () => {
  /** A registry with the two discovery tools, `echo`, and a hidden `read_file`. */
  function discoveryRegistry(ttl: number): ToolRegistry {
    const registry = registryWith(echo);
    for (const each of createToolSearchTools(registry, { ttl })) registry.register(each);
    registry.registerHidden(tool("read_file", () => newToolResult("file contents"), { description: "Read a file" }));
    return registry;
  }

  /** The tool names offered in each provider call. */
  function offered(provider: ScriptedProvider): string[][] {
    return provider.calls.map((call) => (call.tools ?? []).map((definition) => definition.function.name));
  }

  const search = toolCallResponse({ name: "tool_search_tool_bm25", arguments: { query: "read file" } });
  const step = (name: string) => toolCallResponse({ name });

  it.each([1, 2, 3])(
    "a tool a search promotes with ttl %i is offered in exactly the next ttl provider calls (the promoting round does not count)",
    async (ttl) => {
      const script = [search, ...Array.from({ length: ttl + 1 }, () => step("echo")), textResponse("done")];
      const provider = new ScriptedProvider(script);
      const registry = discoveryRegistry(ttl);
      await runToolLoop({ provider, tools: registry, maxIterations: 10, tickHiddenTools: true }, user);
      const withReadFile = offered(provider).map((names) => names.includes("read_file"));
      // Call 1 searches; calls 2 … ttl + 1 see read_file; the rest do not.
      expect(withReadFile).toEqual(script.map((_, index) => index >= 1 && index <= ttl));
      expect(registry.get("read_file")).toBeUndefined();
    },
  );

  it("the promoted tool is callable in the next call, and the search's answer lists it for the model", async () => {
    const provider = new ScriptedProvider([search, step("read_file"), textResponse("done")]);
    const result = await runToolLoop(
      { provider, tools: discoveryRegistry(1), maxIterations: 5, tickHiddenTools: true },
      user,
    );
    const answers = result.messages.filter((message) => message.role === "tool").map((message) => message.content);
    expect(answers).toEqual([
      "Found 1 tool, callable directly for the next model call:\n- read_file: Read a file",
      "file contents",
    ]);
  });

  it("a tool promoted before the run with ttl 1 is offered in the first provider call only", async () => {
    const provider = new ScriptedProvider([step("echo"), step("echo"), textResponse("done")]);
    const registry = discoveryRegistry(5);
    registry.promoteTools(["read_file"], 1);
    await runToolLoop({ provider, tools: registry, maxIterations: 5, tickHiddenTools: true }, user);
    expect(offered(provider).map((names) => names.includes("read_file"))).toEqual([true, false, false]);
  });

  it("without tickHiddenTools (picoclaw's RunToolLoop), a promotion made with promoteTools lasts until someone calls tickTTL", async () => {
    const provider = new ScriptedProvider([step("echo"), step("echo"), textResponse("done")]);
    const registry = discoveryRegistry(1);
    registry.promoteTools(["read_file"], 1);
    await runToolLoop({ provider, tools: registry, maxIterations: 5 }, user);
    expect(offered(provider).map((names) => names.includes("read_file"))).toEqual([true, true, true]);
    registry.tickTTL();
    expect(registry.get("read_file")).toBeUndefined();
  });

  it("a search's promotion expires after ttl provider calls, without tickHiddenTools too", async () => {
    const provider = new ScriptedProvider([search, step("echo"), step("echo"), step("echo"), textResponse("done")]);
    await runToolLoop({ provider, tools: discoveryRegistry(2), maxIterations: 6 }, user);
    expect(offered(provider).map((names) => names.includes("read_file"))).toEqual([false, true, true, false, false]);
  });

  it("a search's promotion belongs to its run: another run of the same registry neither sees nor runs the tool", async () => {
    const registry = discoveryRegistry(5);
    const searching = new ScriptedProvider([search, step("read_file"), textResponse("done")]);
    const first = runToolLoop({ provider: searching, tools: registry, maxIterations: 5 }, user);
    // Another conversation, during and after the first: it calls the tool it never searched for.
    const other = () => new ScriptedProvider([step("read_file"), textResponse("done")]);
    const during = other();
    const concurrent = runToolLoop({ provider: during, tools: registry, maxIterations: 5 }, user);
    const answers = (await first).messages.filter((message) => message.role === "tool");
    expect(answers.map((message) => message.content)[1]).toBe("file contents");
    await concurrent;
    const after = other();
    const later = await runToolLoop({ provider: after, tools: registry, maxIterations: 5 }, user);
    for (const provider of [during, after]) expect(offered(provider)[0]).not.toContain("read_file");
    expect(later.messages[2]?.content).toMatch(/^tool "read_file" not found/);
    expect(registry.getDefinitions().map(({ function: f }) => f.name)).not.toContain("read_file");
  });

  it("a search and a call of the found tool in the same turn: the call is not found (the model has not seen it); next turn it runs", async () => {
    let runs = 0;
    const registry = discoveryRegistry(3);
    registry.registerHidden(tool("read_file", () => `read ${++runs}`, { description: "Read a file" }));
    const both = toolCallResponse([
      { name: "tool_search_tool_bm25", arguments: { query: "read file" } },
      { name: "read_file" },
    ]);
    for (const maxConcurrency of [1, Number.POSITIVE_INFINITY]) {
      const provider = new ScriptedProvider([both, step("read_file"), textResponse("done")]);
      const result = await runToolLoop({ provider, tools: registry, maxIterations: 5, maxConcurrency }, user);
      const answers = result.messages.filter((message) => message.role === "tool").map((message) => message.content);
      expect(answers[0]).toMatch(/^Found 1 tool, callable directly/);
      expect(answers[1]).toMatch(/^tool "read_file" not found/);
      expect(answers[2]).toBe(`read ${runs}`);
    }
    expect(runs).toBe(2);
  });

  it("a resumed run starts without promotions: a found tool's pending call is answered not found", async () => {
    const registry = discoveryRegistry(5);
    const checkpoints: ToolLoopCheckpoint[] = [];
    const provider = new ScriptedProvider([search, step("read_file"), textResponse("done")]);
    await runToolLoop(
      { provider, tools: registry, maxIterations: 5, onCheckpoint: (checkpoint) => void checkpoints.push(checkpoint) },
      user,
    );
    // The checkpoint taken before the found tool's call ran (the crash point).
    const beforeCall = checkpoints.find(({ messages }) => messages.at(-1)?.toolCalls?.[0]?.name === "read_file");
    expect(beforeCall).toBeDefined();
    const resumedProvider = new ScriptedProvider([textResponse("done")]);
    const resumed = await resumeToolLoop(
      { provider: resumedProvider, tools: registry, maxIterations: 5 },
      beforeCall as ToolLoopCheckpoint,
    );
    expect(resumed.messages.at(-2)?.content).toMatch(/^tool "read_file" not found/);
    expect(offered(resumedProvider)[0]).not.toContain("read_file");
  });

  it("a hidden tool with needsApproval that the run promoted still asks the approver", async () => {
    const registry = discoveryRegistry(3);
    registry.registerHidden(
      tool("read_file", () => "file contents", { description: "Read a file", needsApproval: true }),
    );
    const approve = vi.fn(() => false);
    const provider = new ScriptedProvider([search, step("read_file"), textResponse("done")]);
    const result = await runToolLoop({ provider, tools: registry, maxIterations: 5, approve }, user);
    expect(approve).toHaveBeenCalledTimes(1);
    expect(result.messages[4]?.content).toBe("denied by the user");
    // Without an approver: refused as needing approval (not run).
    const unapproved = new ScriptedProvider([search, step("read_file"), textResponse("done")]);
    const refused = await runToolLoop({ provider: unapproved, tools: registry, maxIterations: 5 }, user);
    expect(refused.messages[4]?.content).toMatch(/requires approval, but no approver is configured/);
  });

  it("a call of a hidden tool that is not promoted is answered not found, and the answer names no hidden tool", async () => {
    const provider = new ScriptedProvider([step("read_file"), textResponse("done")]);
    const result = await runToolLoop({ provider, tools: discoveryRegistry(1), maxIterations: 3 }, user);
    const answer = result.messages[2] as Message;
    expect(answer.isError).toBe(true);
    expect(answer.content).toBe(
      'tool "read_file" not found. Available tools: echo, tool_search_tool_bm25, tool_search_tool_regex.',
    );
    expect(offered(provider)[0]).toEqual(["echo", "tool_search_tool_bm25", "tool_search_tool_regex"]);
  });

  it("when every tool is hidden, the provider is offered no tools at all (as with an empty registry)", async () => {
    const registry = new ToolRegistry();
    registry.registerHidden(echo);
    const provider = new ScriptedProvider([textResponse("done")]);
    await runToolLoop({ provider, tools: registry, maxIterations: 1 }, user);
    expect(provider.calls[0]?.tools).toBeUndefined();
  });

  it("keeps the cached definitions between provider calls when a tick changes nothing visible", async () => {
    const provider = new ScriptedProvider([step("echo"), step("echo"), textResponse("done")]);
    const registry = discoveryRegistry(1);
    registry.promoteTools(["read_file"], 3);
    await runToolLoop({ provider, tools: registry, maxIterations: 5, tickHiddenTools: true }, user);
    const [first, second, third] = provider.calls.map((call) => call.tools);
    expect(second).toBe(first);
    expect(third).toBe(first);
  });

  it("offers the same definitions array between provider calls while the run's promotions stay the same", async () => {
    const provider = new ScriptedProvider([search, step("echo"), step("echo"), textResponse("done")]);
    await runToolLoop({ provider, tools: discoveryRegistry(2), maxIterations: 5 }, user);
    const [first, second, third, fourth] = provider.calls.map((call) => call.tools);
    expect(second).not.toBe(first);
    expect(third).toBe(second);
    expect(fourth).toBe(first);
  });

  it("ticks a registry of another copy (no internal marks) through its public tickTTL after each round", async () => {
    const registry = registryWith(echo);
    const tickTTL = vi.fn();
    const foreign = {
      count: () => registry.count(),
      toProviderDefs: () => registry.toProviderDefs(),
      executeWithContext: registry.executeWithContext.bind(registry),
      tickTTL,
    };
    const provider = new ScriptedProvider([step("echo"), step("echo"), textResponse("done")]);
    await runToolLoop(
      { provider, tools: foreign as unknown as ToolRegistry, maxIterations: 5, tickHiddenTools: true },
      user,
    );
    expect(tickTTL).toHaveBeenCalledTimes(2);
  });

  it.each([
    ["not a boolean", { tickHiddenTools: "yes" }, /tickHiddenTools must be a boolean, got "yes"/],
    [
      "a registry without tickTTL",
      {
        tickHiddenTools: true,
        tools: { count: () => 0, toProviderDefs: () => [], executeWithContext: () => Promise.resolve() },
      },
      /tools must be a registry with tickTTL\(\) when tickHiddenTools is set/,
    ],
  ])("rejects tickHiddenTools with %s (TypeError)", async (_, extra, message) => {
    const config = { provider: new ScriptedProvider([]), maxIterations: 1, ...extra } as unknown as ToolLoopConfig;
    await expect(runToolLoop(config, user)).rejects.toThrow(message);
  });
});

describe("images and files (content parts)", () => {
  const png: ContentPart = { type: "image", mediaType: "image/png", data: "iVBORw0KGgo=" };
  const pdf: ContentPart = { type: "file", mediaType: "application/pdf", data: "JVBERi0=", filename: "a.pdf" };
  const shot = (parts: unknown, forLLM = "Screenshot of the page") =>
    tool("shot", () => new ToolResult({ forLLM, parts: parts as ContentPart[] }));
  const oneShot = () => new ScriptedProvider([toolCallResponse({ id: "s", name: "shot" }), textResponse("seen")]);

  it("user and tool messages may hold parts; system and assistant messages text parts; the provider gets them as given", async () => {
    const messages: Message[] = [
      { role: "system", content: [{ type: "text", text: "Be brief." }] },
      { role: "user", content: [{ type: "text", text: "What is this?" }, png, pdf] },
      { role: "assistant", content: [{ type: "text", text: "Let me look." }], toolCalls: [] },
      { role: "user", content: [{ type: "image", url: "https://example.com/cat.png" }] },
    ];
    const provider = new ScriptedProvider([textResponse("A cat.")]);
    const result = await runToolLoop({ provider, maxIterations: 1 }, messages);
    expect(provider.calls[0]?.messages).toEqual(messages);
    expect(result.messages.slice(0, 4)).toEqual(messages);
  });

  it.each<[string, Message[], string]>([
    [
      "an image in a system message",
      [{ role: "system", content: [png] }],
      "runToolLoop: messages[0].content[0] must be a text part: only user and tool messages may hold images and files",
    ],
    [
      "a file in an assistant message",
      [user[0] as Message, { role: "assistant", content: [{ type: "text", text: "x" }, pdf] }],
      "runToolLoop: messages[1].content[1] must be a text part: only user and tool messages may hold images and files",
    ],
    [
      "data that is not base64",
      [
        user[0] as Message,
        user[0] as Message,
        { role: "user", content: [png, png, png, { type: "image", mediaType: "image/png", data: "not base64" }] },
      ],
      "runToolLoop: messages[2].content[3] data is not base64",
    ],
    [
      "a media type with CRLF",
      [{ role: "user", content: [{ type: "file", mediaType: "text/plain\r\nX-Evil: 1", data: "" }] }],
      "runToolLoop: messages[0].content[0] a file's mediaType must be a type/subtype token of at most 255 characters",
    ],
    [
      "a __proto__ key",
      JSON.parse('[{"role":"user","content":[{"type":"text","text":"x","__proto__":{"isAdmin":true}}]}]') as Message[],
      'runToolLoop: messages[0].content[0] has an unknown key "__proto__"',
    ],
    [
      "100,000 parts",
      [{ role: "user", content: new Array<ContentPart>(100_000).fill({ type: "text", text: "x" }) }],
      "runToolLoop: messages[0].content holds 100000 parts; at most 1000 are allowed",
    ],
  ])("messages with %s are a TypeError naming the message and the part", async (_case, messages, text) => {
    const provider = new ScriptedProvider([]);
    await expect(runToolLoop({ provider, maxIterations: 1 }, messages)).rejects.toThrow(new TypeError(text));
    expect(provider.calls).toHaveLength(0);
  });

  it("a tool's parts follow its text in its tool message; the model is sent them", async () => {
    const provider = oneShot();
    const result = await runToolLoop(
      {
        provider,
        tools: registryWith(tool("shot", () => mediaResult("Screenshot of the page", [png, pdf]))),
        maxIterations: 2,
      },
      user,
    );
    const answer: Message = {
      role: "tool",
      content: [{ type: "text", text: "Screenshot of the page" }, png, pdf],
      toolCallId: "s",
      toolName: "shot",
      isError: false,
    };
    expect(result.messages[2]).toEqual(answer);
    expect(provider.calls[1]?.messages[2]).toEqual(answer);
    expect(result.content).toBe("seen");
  });

  it("a result with an empty parts array keeps its text as a string", async () => {
    const result = await runToolLoop({ provider: oneShot(), tools: registryWith(shot([])), maxIterations: 2 }, user);
    expect(result.messages[2]?.content).toBe("Screenshot of the page");
  });

  it.each<[string, unknown, string]>([
    ["parts that are not an array", "iVBORw0KGgo=", "parts must be an array, got string"],
    [
      "a part of no known shape",
      [png, { type: "video", url: "https://a.example/v.mp4" }],
      'parts[1] type must be "text", "image" or "file"',
    ],
    [
      "a 10 MB data: URL",
      [{ type: "image", mediaType: "image/png", data: `data:image/png;base64,${"A".repeat(10 * 1024 * 1024)}` }],
      "parts[0] data must be base64 without a data: prefix",
    ],
    [
      "a CRLF in a media type",
      [{ type: "file", mediaType: `application/pdf\r\n${"x".repeat(1_000_000)}`, data: "" }],
      "parts[0] a file's mediaType must be a type/subtype token of at most 255 characters",
    ],
    ["100,000 parts", new Array(100_000).fill(png), "parts holds 100000 parts; at most 999 are allowed"],
  ])(
    "a tool returning %s gets an invalid-result answer; the run goes on and nothing is logged in full",
    async (_case, parts, problem) => {
      const { logger, lines } = captureLogger();
      const provider = oneShot();
      const result = await runToolLoop({ provider, tools: [shot(parts)], maxIterations: 2, logger }, user);
      const text = `tool "shot" returned an invalid result: ${problem}`;
      expect(result.messages[2]).toMatchObject({ role: "tool", content: text, isError: true });
      expect(result.content).toBe("seen");
      expect(JSON.stringify(lines).length).toBeLessThan(20_000);
      expect(lines.find((line) => line.msg === "tool call failed")?.error).toBe(text);
    },
  );

  it("a megabyte image is sent whole but never logged, with logPayloads and debug too", async () => {
    const { logger, lines } = captureLogger();
    const data = "QUJD".repeat(256 * 1024); // 768 KiB decoded
    const tools = new ToolRegistry({ logger, logPayloads: true });
    tools.register(tool("shot", () => mediaResult("Screenshot", [{ type: "image", mediaType: "image/png", data }])));
    const provider = oneShot();
    await runToolLoop({ provider, tools, maxIterations: 2, logger }, user);
    expect(provider.calls[1]?.messages[2]?.content).toEqual([
      { type: "text", text: "Screenshot" },
      { type: "image", mediaType: "image/png", data },
    ]);
    expect(lines.some((line) => line.msg === "tool call completed" && line.result === "Screenshot")).toBe(true);
    expect(JSON.stringify(lines)).not.toContain("QUJDQUJD");
  });

  it("a result whose parts cannot be read is an invalid result", async () => {
    const broken = tool("shot", () => {
      const result = new ToolResult({ forLLM: "x" });
      Object.defineProperty(result, "parts", {
        get() {
          throw new Error("no parts today");
        },
      });
      return result;
    });
    const result = await runToolLoop({ provider: oneShot(), tools: registryWith(broken), maxIterations: 2 }, user);
    expect(result.messages[2]?.content).toBe(
      'tool "shot" returned an invalid result: parts cannot be read: no parts today',
    );
  });

  it("maxResultBytes: parts above it are replaced by a note after the text (never cut); at it they are sent", async () => {
    const data = "A".repeat(4 * 1024); // 3,072 bytes
    const part: ContentPart = { type: "image", mediaType: "image/png", data };
    const run = (maxResultBytes: number, parts: ContentPart[]) =>
      runToolLoop({ provider: oneShot(), tools: registryWith(shot(parts)), maxIterations: 2, maxResultBytes }, user);
    expect((await run(3_072, [part])).messages[2]?.content).toEqual([
      { type: "text", text: "Screenshot of the page" },
      part,
    ]);
    expect((await run(3_071, [part])).messages[2]?.content).toBe(
      "Screenshot of the page\n[1 images or files not shown: 3072 bytes, over maxResultBytes (3071)]",
    );
    expect((await run(6_143, [part, part])).messages[2]?.content).toBe(
      "Screenshot of the page\n[2 images or files not shown: 6144 bytes, over maxResultBytes (6143)]",
    );
  });

  it("maxResultBytes is 20 MB by default", async () => {
    // Base64 of `bytes` zero bytes.
    const part = (bytes: number): ContentPart => {
      const tail = ["", "AA==", "AAA="][bytes % 3] as string;
      return { type: "file", mediaType: "application/pdf", data: "A".repeat(Math.floor(bytes / 3) * 4) + tail };
    };
    const run = (parts: ContentPart[]) =>
      runToolLoop({ provider: oneShot(), tools: registryWith(shot(parts)), maxIterations: 2 }, user);
    const limit = 20 * 1024 * 1024;
    expect(Array.isArray((await run([part(limit)])).messages[2]?.content)).toBe(true);
    expect((await run([part(limit - 3), part(6)])).messages[2]?.content).toBe(
      `Screenshot of the page\n[2 images or files not shown: ${limit + 3} bytes, over maxResultBytes (${limit})]`,
    );
  });

  it.each([0, -1, 1.5, "1024", Number.POSITIVE_INFINITY])("rejects maxResultBytes %j", async (value) => {
    await expect(
      runToolLoop({ provider: new ScriptedProvider([]), maxIterations: 1, maxResultBytes: value as never }, user),
    ).rejects.toThrow(/runToolLoop: maxResultBytes must be an integer > 0, got /);
  });

  it("maxResultChars cuts the text only: the parts stay, and the repeated-failure note goes after the text", async () => {
    const failing = tool("shot", () => new ToolResult({ forLLM: "e".repeat(5_000), isError: true, parts: [png] }));
    const provider = new ScriptedProvider([
      toolCallResponse({ id: "1", name: "shot" }),
      toolCallResponse({ id: "2", name: "shot" }),
    ]);
    const result = await runToolLoop(
      { provider, tools: registryWith(failing), maxIterations: 3, maxResultChars: 1_000, maxRepeatedFailures: 2 },
      user,
    );
    expect(result.stopReason).toBe("repeated_failure");
    const [first, second] = [result.messages[2]?.content, result.messages[4]?.content] as ContentPart[][];
    expect(first?.[1]).toStrictEqual(png);
    expect(second?.[1]).toStrictEqual(png);
    const [cut, noted] = [first?.[0], second?.[0]] as { text: string }[];
    expect(cut?.text.length).toBeLessThanOrEqual(1_000);
    expect(cut?.text).toMatch(/\n\[… \d+ characters cut\]$/);
    expect(noted?.text.length).toBeLessThanOrEqual(1_000);
    expect(noted?.text).toMatch(
      /characters cut\]\n\n\[This call failed 2 times in a row with the same error\. Stop retrying it\.\]$/,
    );
  });

  it("an async result's parts are fed back with its text in the user message", async () => {
    const { background, callbacks } = backgroundTool();
    const provider = new ScriptedProvider([
      toolCallResponse({ id: "bg", name: "background" }),
      () => {
        setTimeout(() => callbacks[0]?.(mediaResult("chart ready", [png])), 5);
        return textResponse("working on it");
      },
      textResponse("Here is your chart."),
    ]);
    const result = await runToolLoop(
      { provider, tools: registryWith(background), maxIterations: 5, awaitAsync: { timeoutMs: 5_000 } },
      user,
    );
    expect(result.messages.at(-2)).toEqual({
      role: "user",
      content: [{ type: "text", text: "[async result from background (bg)] chart ready" }, png],
    });
  });

  it("a checkpoint with parts survives JSON and resumes with the same parts", async () => {
    const checkpoints: ToolLoopCheckpoint[] = [];
    const messages: Message[] = [{ role: "user", content: [{ type: "text", text: "Look:" }, png] }];
    await expect(
      runToolLoop(
        {
          provider: new ScriptedProvider([toolCallResponse({ id: "s", name: "shot" }), new Error("network down")]),
          tools: registryWith(tool("shot", () => mediaResult("Screenshot", [pdf, png]))),
          maxIterations: 3,
          onCheckpoint: (checkpoint) => void checkpoints.push(checkpoint),
        },
        messages,
      ),
    ).rejects.toThrow();
    const saved = JSON.parse(JSON.stringify(checkpoints.at(-1))) as ToolLoopCheckpoint;
    expect(saved.messages[2]?.content).toEqual([{ type: "text", text: "Screenshot" }, pdf, png]);
    const provider = new ScriptedProvider([textResponse("done")]);
    const result = await resumeToolLoop({ provider, tools: registryWith(echo), maxIterations: 3 }, saved);
    expect(provider.calls[0]?.messages).toEqual(checkpoints.at(-1)?.messages);
    expect(JSON.parse(JSON.stringify(result.messages))).toEqual(result.messages);
    expect(result.messages[0]?.content).toEqual(messages[0]?.content);
  });

  it("a resumed checkpoint's messages are checked: a bad part is a TypeError naming it", async () => {
    const checkpoint = {
      version: 1,
      messages: [user[0], { role: "user", content: [{ type: "image", url: "file:///etc/passwd" }] }],
      iterations: 0,
      pendingAsync: [],
    } as unknown as ToolLoopCheckpoint;
    await expect(resumeToolLoop({ provider: new ScriptedProvider([]), maxIterations: 1 }, checkpoint)).rejects.toThrow(
      "resumeToolLoop: checkpoint.messages[1].content[0] url must be an http:, https: or gs: URL of at most 8,192 characters",
    );
  });
});
