import { describe, expect, it } from "vitest";
import * as z from "zod";
import {
  defineTool,
  errorResult,
  isToolExecutionError,
  isToolLoopError,
  type LLMResponse,
  type Message,
  newToolResult,
  resumeToolLoop,
  runToolLoop,
  streamToolLoop,
  type ToolCallRequest,
  type ToolLoopCheckpoint,
  type ToolLoopConfig,
  type ToolLoopError,
  type ToolLoopEvent,
  type ToolLoopMiddleware,
  type ToolLoopResult,
  ToolRegistry,
  ToolResult,
} from "../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../src/testing/index.js";
import { tool } from "./helpers/loop-tools.js";

const user: Message[] = [{ role: "user", content: "go" }];

/** A registry with an `echo` tool (zod `{ text: string, times: number = 1 }`) that counts its runs. */
function echoRegistry(): { registry: ToolRegistry; runs: Record<string, unknown>[] } {
  const runs: Record<string, unknown>[] = [];
  const registry = new ToolRegistry();
  registry.register(
    defineTool({
      name: "echo",
      description: "Echoes text",
      parameters: z.object({ text: z.string(), times: z.number().default(1) }),
      execute: (args) => {
        runs.push(args);
        return args.text.repeat(args.times);
      },
    }),
  );
  return { registry, runs };
}

/** A middleware with every hook, recording when it enters and leaves each. */
function recorder(name: string, log: string[]): ToolLoopMiddleware {
  return {
    name,
    async wrapRun(request, next) {
      log.push(`${name}>run`);
      const result = await next(request);
      log.push(`${name}<run`);
      return result;
    },
    async wrapModelCall(request, next) {
      log.push(`${name}>model`);
      const response = await next(request);
      log.push(`${name}<model`);
      return response;
    },
    async wrapToolCall(request, next) {
      log.push(`${name}>tool`);
      const result = await next(request);
      log.push(`${name}<tool`);
      return result;
    },
  };
}

async function rejection(promise: Promise<unknown>): Promise<ToolLoopError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!isToolLoopError(error)) throw new Error(`expected a ToolLoopError, got ${String(error)}`);
  return error;
}

const never = () => new Promise<never>(() => {});

describe("order", () => {
  it("the first middleware is the outermost, around the run, each model call and each tool call; events sit outside", async () => {
    const log: string[] = [];
    const { registry } = echoRegistry();
    const provider = new ScriptedProvider([
      toolCallResponse({ id: "c1", name: "echo", arguments: { text: "hi" } }),
      textResponse("done"),
    ]);
    const result = await runToolLoop(
      {
        provider,
        tools: registry,
        maxIterations: 5,
        middleware: [recorder("a", log), recorder("b", log)],
        onEvent: (event) => {
          if (event.type !== "tool-progress" && event.type !== "message") log.push(event.type);
        },
      },
      user,
    );
    expect(result.content).toBe("done");
    expect(log).toEqual([
      "a>run",
      "b>run",
      "step-start",
      "a>model",
      "b>model",
      "b<model",
      "a<model",
      "tool-call-start",
      "a>tool",
      "b>tool",
      "b<tool",
      "a<tool",
      "tool-call-end",
      "step-end",
      "step-start",
      "a>model",
      "b>model",
      "b<model",
      "a<model",
      "step-end",
      "b<run",
      "a<run",
      "loop-end",
    ]);
  });

  it("iteration numbers the steps as the events do; a resumed call keeps its checkpoint's step", async () => {
    const seen: string[] = [];
    const middleware: ToolLoopMiddleware = {
      name: "steps",
      wrapModelCall: (request, next) => {
        seen.push(`model ${request.iteration}`);
        return next(request);
      },
      wrapToolCall: (request, next) => {
        seen.push(`tool ${request.toolCallId} ${request.iteration}`);
        return next(request);
      },
    };
    const { registry } = echoRegistry();
    const events: string[] = [];
    const provider = new ScriptedProvider([
      toolCallResponse({ id: "c1", name: "echo", arguments: { text: "a" } }),
      toolCallResponse({ id: "c2", name: "echo", arguments: { text: "b" } }),
      textResponse("done"),
    ]);
    const onEvent = (event: ToolLoopEvent) => {
      if (event.type === "step-start") events.push(`model ${event.iteration}`);
      if (event.type === "tool-call-start") events.push(`tool ${event.toolCallId} ${event.iteration}`);
    };
    await runToolLoop({ provider, tools: registry, maxIterations: 5, middleware: [middleware], onEvent }, user);
    expect(seen).toEqual(["model 1", "tool c1 1", "model 2", "tool c2 2", "model 3"]);
    expect(seen).toEqual(events);

    seen.length = 0;
    const checkpoint: ToolLoopCheckpoint = {
      version: 1,
      messages: [
        ...user,
        { role: "assistant", content: "", toolCalls: [{ id: "r1", name: "echo", arguments: { text: "x" } }] },
      ],
      iterations: 4,
      pendingAsync: [],
    };
    await resumeToolLoop(
      {
        provider: new ScriptedProvider([textResponse("ok")]),
        tools: registry,
        maxIterations: 9,
        middleware: [middleware],
      },
      checkpoint,
    );
    expect(seen).toEqual(["tool r1 4", "model 5"]);
  });
});

describe("changing the request", () => {
  it("wrapModelCall changes what is sent, never the transcript; each call gets a fresh request and options", async () => {
    const provider = new ScriptedProvider([
      toolCallResponse({ id: "c1", name: "echo", arguments: { text: "x" } }),
      textResponse("done"),
    ]);
    const requests: unknown[] = [];
    const middleware: ToolLoopMiddleware = {
      name: "rewrite",
      wrapModelCall(request, next) {
        requests.push(request);
        // In place too: the request's arrays and objects are the middleware's own.
        (request.messages as Message[]).push({ role: "user", content: "pushed" });
        request.options.temperature = 0;
        return next({
          ...request,
          messages: [{ role: "system", content: "be brief" }, ...request.messages],
          model: "other-model",
          tools: undefined,
        });
      },
    };
    const { registry } = echoRegistry();
    const result = await runToolLoop(
      { provider, tools: registry, maxIterations: 5, llmOptions: { top_p: 1 }, middleware: [middleware] },
      user,
    );
    expect(provider.calls[0]?.messages).toEqual([
      { role: "system", content: "be brief" },
      ...user,
      { role: "user", content: "pushed" },
    ]);
    expect(provider.calls[0]?.model).toBe("other-model");
    expect(provider.calls[0]?.tools).toBeUndefined();
    expect(provider.calls[1]?.options).toEqual({ top_p: 1, temperature: 0 });
    expect(requests[0]).not.toBe(requests[1]);
    expect((requests[0] as { options: object }).options).not.toBe((requests[1] as { options: object }).options);
    // The transcript is the loop's own: nothing a middleware sent is in it.
    expect(result.messages.map((message) => message.content)).toEqual(["go", "", "x", "done"]);
  });

  it("a model call's request names the provider (its providerName), with or without events (issue 29)", async () => {
    const seen: unknown[] = [];
    const middleware: ToolLoopMiddleware = {
      name: "spy",
      wrapModelCall(request, next) {
        seen.push(request.providerName);
        return next(request);
      },
    };
    const named = Object.assign(new ScriptedProvider([textResponse("a"), textResponse("b")]), {
      providerName: "ollama",
    });
    await runToolLoop({ provider: named, maxIterations: 1, middleware: [middleware] }, user);
    await runToolLoop({ provider: named, maxIterations: 1, middleware: [middleware], onEvent: () => {} }, user);
    await runToolLoop(
      { provider: new ScriptedProvider([textResponse("c")]), maxIterations: 1, middleware: [middleware] },
      user,
    );
    expect(seen).toEqual(["ollama", "ollama", undefined]);
  });

  it("wrapToolCall receives the validated arguments; arguments it changes are validated again before the tool runs", async () => {
    const { registry, runs } = echoRegistry();
    const received: ToolCallRequest[] = [];
    const middleware: ToolLoopMiddleware = {
      name: "args",
      wrapToolCall(request, next) {
        received.push(request);
        if (request.toolCallId === "ok") return next({ ...request, arguments: { text: "changed", times: 2 } });
        return next({ ...request, arguments: { text: 42 } });
      },
    };
    const provider = new ScriptedProvider([
      toolCallResponse([
        { id: "ok", name: "echo", arguments: { text: "a" } },
        { id: "bad", name: "echo", arguments: { text: "b" } },
      ]),
      textResponse("done"),
    ]);
    const result = await runToolLoop({ provider, tools: registry, maxIterations: 5, middleware: [middleware] }, user);
    // The schema's default was applied before the middleware saw the arguments.
    expect(received.map((request) => request.arguments)).toEqual([
      { text: "a", times: 1 },
      { text: "b", times: 1 },
    ]);
    expect(received[0]?.context.toolCallId).toBe("ok");
    expect(runs).toEqual([{ text: "changed", times: 2 }]);
    const answers = result.messages.filter((message) => message.role === "tool");
    expect(answers[0]).toMatchObject({ content: "changedchanged", isError: false });
    expect(answers[1]?.isError).toBe(true);
    expect(answers[1]?.content).toMatch(/^invalid arguments for tool "echo": text: .*string/);
  });

  it("wrapRun changes the messages, model and context the run starts from", async () => {
    const provider = new ScriptedProvider([toolCallResponse({ id: "c1", name: "meta" }), textResponse("done")]);
    const seen: unknown[] = [];
    const meta = tool("meta", (_args, context) => {
      seen.push(context.metadata, context.channel);
      return "ok";
    });
    const middleware: ToolLoopMiddleware = {
      name: "prefix",
      wrapRun(request, next) {
        expect(request).toEqual({
          messages: user,
          model: "scripted-model",
          context: { channel: "web" },
          resumed: false,
        });
        return next({
          ...request,
          messages: [{ role: "system", content: "you are terse" }, ...request.messages],
          model: "m2",
          context: { ...request.context, metadata: { user: "u1" } },
        });
      },
    };
    const result = await runToolLoop({ provider, tools: [meta], maxIterations: 3, middleware: [middleware] }, user, {
      channel: "web",
    });
    expect(provider.calls[0]?.messages[0]).toEqual({ role: "system", content: "you are terse" });
    expect(provider.calls[0]?.model).toBe("m2");
    expect(seen).toEqual([{ user: "u1" }, "web"]);
    expect(result.messages[0]).toEqual({ role: "system", content: "you are terse" });
  });

  it("what a run middleware sends on is checked: a bad request rejects naming it", async () => {
    const provider = new ScriptedProvider([textResponse("never")]);
    const bad: ToolLoopMiddleware = {
      name: "bad",
      wrapRun: (request, next) => next({ ...request, messages: [{ role: "robot", content: "x" }] as never }),
    };
    const error = await rejection(runToolLoop({ provider, maxIterations: 3, middleware: [bad] }, user));
    expect(error.code).toBe("internal");
    expect(error.message).toMatch(
      /^middleware "bad" failed: next was given an invalid request: .*request\.messages\[0\]\.role/,
    );
    expect(provider.calls).toHaveLength(0);
  });
});

describe("changing the response", () => {
  it("what a middleware returns is what the loop's features see: the transcript, the events, maxResultChars", async () => {
    const { registry } = echoRegistry();
    const events: ToolLoopEvent[] = [];
    const provider = new ScriptedProvider([
      toolCallResponse({ id: "c1", name: "echo", arguments: { text: "a" } }),
      textResponse("done"),
    ]);
    const middleware: ToolLoopMiddleware = {
      name: "rewrite",
      async wrapModelCall(request, next) {
        const response = await next(request);
        return { ...response, content: `${response.content}!` };
      },
      async wrapToolCall(request, next) {
        const result = await next(request);
        return newToolResult(`${result.forLLM} ${"z".repeat(500)}`);
      },
      async wrapRun(request, next) {
        const result = await next(request);
        return { ...result, content: result.content.toUpperCase() };
      },
    };
    const result = await runToolLoop(
      {
        provider,
        tools: registry,
        maxIterations: 3,
        maxResultChars: 200,
        middleware: [middleware],
        onEvent: (event) => {
          events.push(event);
        },
      },
      user,
    );
    expect(result.content).toBe("DONE!");
    const end = events.find((event) => event.type === "tool-call-end");
    expect(end?.type === "tool-call-end" && end.result.forLLM).toMatch(/^a z{500}$/);
    const answer = result.messages[2] as Message;
    expect(answer.content.length).toBeLessThanOrEqual(200);
    expect(answer.content).toMatch(/^a z+\n\[… \d+ characters cut\]$/);
    expect(result.messages[3]?.content).toBe("done!");
    const loopEnd = events.at(-1);
    expect(loopEnd?.type === "loop-end" && loopEnd.result.content).toBe("DONE!");
  });
});

describe("short-circuit", () => {
  it("a model-call cache answers without the provider; a guardrail answers a tool call without the tool", async () => {
    const { registry, runs } = echoRegistry();
    const provider = new ScriptedProvider([]);
    const cached: LLMResponse = {
      content: "",
      toolCalls: [{ id: "c1", type: "function", name: "echo", arguments: { text: "rm -rf" } }],
      finishReason: "tool_calls",
    };
    let modelCalls = 0;
    const middleware: ToolLoopMiddleware = {
      name: "short",
      async wrapModelCall(request) {
        modelCalls++;
        return request.iteration === 1 ? cached : textResponse("from cache");
      },
      async wrapToolCall(request, next) {
        if (String(request.arguments.text).includes("rm")) return errorResult("refused by policy");
        return next(request);
      },
    };
    const result = await runToolLoop({ provider, tools: registry, maxIterations: 3, middleware: [middleware] }, user);
    expect(provider.calls).toHaveLength(0);
    expect(modelCalls).toBe(2);
    expect(runs).toHaveLength(0);
    expect(result.messages[2]).toMatchObject({ role: "tool", content: "refused by policy", isError: true });
    expect(result).toMatchObject({ content: "from cache", stopReason: "completed", iterations: 2 });
  });

  it("wrapRun may answer the whole run without the loop", async () => {
    const provider = new ScriptedProvider([]);
    const events: string[] = [];
    const answer: ToolLoopResult = { content: "canned", iterations: 0, messages: [...user], stopReason: "completed" };
    const result = await runToolLoop(
      {
        provider,
        maxIterations: 3,
        middleware: [{ name: "canned", wrapRun: async () => answer }],
        onEvent: (event) => {
          events.push(event.type);
        },
      },
      user,
    );
    expect(result).toBe(answer);
    expect(provider.calls).toHaveLength(0);
    expect(events).toEqual(["loop-end"]);
  });
});

describe("retry", () => {
  it("a model call retried after a provider failure is the same step; a streamed retry streams again", async () => {
    const provider = new ScriptedProvider([new Error("overloaded"), { textDeltas: ["he", "llo"] }], { stream: true });
    const iterations: number[] = [];
    const events: ToolLoopEvent[] = [];
    const retry: ToolLoopMiddleware = {
      name: "retry",
      async wrapModelCall(request, next) {
        for (let attempt = 1; ; attempt++) {
          iterations.push(request.iteration);
          try {
            return await next(request);
          } catch (error) {
            if (attempt === 3) throw error;
          }
        }
      },
    };
    const result = await runToolLoop(
      {
        provider,
        maxIterations: 3,
        middleware: [retry],
        onEvent: (event) => {
          events.push(event);
        },
      },
      user,
    );
    expect(result).toMatchObject({ content: "hello", iterations: 1 });
    expect(iterations).toEqual([1, 1]);
    expect(events.filter((event) => event.type === "step-start")).toHaveLength(1);
    expect(
      events.filter((event) => event.type === "text-delta").map((event) => event.type === "text-delta" && event.delta),
    ).toEqual(["he", "llo"]);
  });

  it("every stream a retry's next produced emits its text-deltas", async () => {
    const provider = new ScriptedProvider([{ textDeltas: ["first"] }, { textDeltas: ["second"] }], { stream: true });
    const deltas: string[] = [];
    const twice: ToolLoopMiddleware = {
      name: "twice",
      async wrapModelCall(request, next) {
        await next(request);
        return next(request);
      },
    };
    const result = await runToolLoop(
      {
        provider,
        maxIterations: 3,
        middleware: [twice],
        onEvent: (event) => {
          if (event.type === "text-delta") deltas.push(event.delta);
        },
      },
      user,
    );
    expect(deltas).toEqual(["first", "second"]);
    expect(result.content).toBe("second");
  });

  it("a tool call's next may run the tool again; a run's next may run the loop again", async () => {
    let runs = 0;
    const flaky = tool("flaky", () => {
      runs++;
      if (runs === 1) throw new Error("transient");
      return "worked";
    });
    const provider = new ScriptedProvider([
      new Error("provider down"),
      toolCallResponse({ id: "c1", name: "flaky" }),
      textResponse("done"),
    ]);
    const retries: ToolLoopMiddleware = {
      name: "retries",
      async wrapToolCall(request, next) {
        const first = await next(request);
        return first.isError ? next(request) : first;
      },
      async wrapRun(request, next) {
        try {
          return await next(request);
        } catch {
          return next(request);
        }
      },
    };
    const result = await runToolLoop({ provider, tools: [flaky], maxIterations: 3, middleware: [retries] }, user);
    expect(runs).toBe(2);
    expect(result.messages[2]).toMatchObject({ role: "tool", content: "worked", isError: false });
    expect(result).toMatchObject({ content: "done", iterations: 2 });
  });
});

describe("what a middleware throws", () => {
  it("in wrapToolCall: the call's answer names the middleware (bounded), and the loop goes on", async () => {
    const { registry } = echoRegistry();
    const provider = new ScriptedProvider([
      toolCallResponse([
        { id: "c1", name: "echo", arguments: { text: "a" } },
        { id: "c2", name: "echo", arguments: { text: "b" } },
        { id: "c3", name: "echo", arguments: { text: "c" } },
      ]),
      textResponse("done"),
    ]);
    const thrown = new Error("x".repeat(100_000));
    const middleware: ToolLoopMiddleware = {
      name: "guard",
      async wrapToolCall(request, next) {
        if (request.toolCallId === "c1") throw thrown;
        if (request.toolCallId === "c2") return "not a result" as unknown as ToolResult;
        return next(request);
      },
    };
    const result = await runToolLoop({ provider, tools: registry, maxIterations: 3, middleware: [middleware] }, user);
    const [first, second, third] = result.messages.filter((message) => message.role === "tool");
    expect(first?.isError).toBe(true);
    expect((first?.content as string | undefined)?.startsWith('middleware "guard" failed: xxx')).toBe(true);
    expect(first?.content.length).toBeLessThan(5_000);
    expect(second).toMatchObject({
      content: 'middleware "guard" failed: wrapToolCall returned string, not a ToolResult',
      isError: true,
    });
    expect(third).toMatchObject({ content: "c", isError: false });
    expect(result.content).toBe("done");
  });

  it("a tool call's next never rejects: an async tool that throws, or resolves to a result that cannot be read, arrives as an error result", async () => {
    const unreadable = new ToolResult({ forLLM: "" });
    Object.defineProperty(unreadable, "forLLM", {
      get() {
        throw new Error("forLLM cannot be read");
      },
    });
    const registry = new ToolRegistry();
    registry.register(tool("fails", async () => Promise.reject(new Error("disk gone"))));
    registry.register(tool("unreadable", async () => unreadable));
    const provider = new ScriptedProvider([
      toolCallResponse([
        { id: "c1", name: "fails" },
        { id: "c2", name: "unreadable" },
      ]),
      textResponse("done"),
    ]);
    const seen: string[] = [];
    const middleware: ToolLoopMiddleware = {
      name: "watch",
      async wrapToolCall(request, next) {
        try {
          const result = await next(request);
          seen.push(`${request.toolName}: ${result.isError ? "error result" : "result"}`);
          return result;
        } catch {
          seen.push(`${request.toolName}: rejected`);
          throw new Error("next rejected");
        }
      },
    };
    const result = await runToolLoop({ provider, tools: registry, maxIterations: 3, middleware: [middleware] }, user);
    expect(seen.sort()).toEqual(["fails: error result", "unreadable: error result"]);
    const [first, second] = result.messages.filter((message) => message.role === "tool");
    expect(first).toMatchObject({ content: 'tool "fails" failed: disk gone', isError: true });
    expect(second).toMatchObject({ content: 'tool "unreadable" failed: forLLM cannot be read', isError: true });
  });

  it("in wrapToolCall: a result with invalid parts is the middleware's failure, naming the part", async () => {
    const { registry } = echoRegistry();
    const provider = new ScriptedProvider([
      toolCallResponse({ id: "c1", name: "echo", arguments: { text: "a" } }),
      textResponse("done"),
    ]);
    const middleware: ToolLoopMiddleware = {
      name: "shots",
      wrapToolCall: async () =>
        new ToolResult({ forLLM: "x", parts: [{ type: "image", mediaType: "image/png\r\nX: y", data: "" }] }),
    };
    const result = await runToolLoop({ provider, tools: registry, maxIterations: 3, middleware: [middleware] }, user);
    expect(result.messages[2]).toMatchObject({
      content:
        'middleware "shots" failed: wrapToolCall returned a ToolResult whose parts[0] an image\'s mediaType must be image/png, image/jpeg, image/gif or image/webp',
      isError: true,
    });
  });

  it("in wrapToolCall: err is a ToolExecutionError (tool_failed) whose cause is what was thrown", async () => {
    const results: ToolResult[] = [];
    const thrown = new Error("boom");
    const provider = new ScriptedProvider([toolCallResponse({ id: "c1", name: "t" }), textResponse("done")]);
    await runToolLoop(
      {
        provider,
        tools: [tool("t", () => "ok")],
        maxIterations: 3,
        middleware: [
          {
            name: "outer",
            async wrapToolCall(request, next) {
              const result = await next(request);
              results.push(result);
              return result;
            },
          },
          {
            name: "inner",
            wrapToolCall: () => {
              throw thrown;
            },
          },
        ],
      },
      user,
    );
    const err = results[0]?.err;
    expect(isToolExecutionError(err) && err.code).toBe("tool_failed");
    expect((err as Error).cause).toBe(thrown);
    expect(results[0]?.forLLM).toBe('middleware "inner" failed: boom');
  });

  it("in wrapModelCall: the run rejects with provider_failed naming the middleware, every call answered", async () => {
    const thrown = new Error("cache offline");
    const provider = new ScriptedProvider([toolCallResponse({ id: "c1", name: "t" })]);
    const middleware: ToolLoopMiddleware = {
      name: "cache",
      async wrapModelCall(request, next) {
        if (request.iteration === 2) throw thrown;
        return next(request);
      },
    };
    const error = await rejection(
      runToolLoop({ provider, tools: [tool("t", () => "ok")], maxIterations: 3, middleware: [middleware] }, user),
    );
    expect(error.code).toBe("provider_failed");
    expect(error.message).toBe('LLM call failed: middleware "cache" failed: cache offline');
    expect(error.cause).toBe(thrown);
    expect(error.iterations).toBe(2);
    expect(error.messages.map((message) => message.role)).toEqual(["user", "assistant", "tool"]);
  });

  it("in wrapModelCall: an error next rejected with keeps its origin; the innermost author is named", async () => {
    const passThrough: ToolLoopMiddleware = { name: "pass", wrapModelCall: (request, next) => next(request) };
    const providerError = new Error("rate limited");
    const fromProvider = await rejection(
      runToolLoop(
        { provider: new ScriptedProvider([providerError]), maxIterations: 1, middleware: [passThrough, passThrough] },
        user,
      ),
    );
    expect(fromProvider).toMatchObject({ code: "provider_failed", message: "LLM call failed: rate limited" });
    expect(fromProvider.cause).toBe(providerError);

    const unreadable = await rejection(
      runToolLoop(
        {
          provider: new ScriptedProvider([{ tool_calls: [{}] } as never]),
          maxIterations: 1,
          middleware: [passThrough],
        },
        user,
      ),
    );
    expect(unreadable.code).toBe("invalid_response");

    const inner: ToolLoopMiddleware = {
      name: "inner",
      wrapModelCall: async () => {
        throw new TypeError("bad key");
      },
    };
    const named = await rejection(
      runToolLoop({ provider: new ScriptedProvider([]), maxIterations: 1, middleware: [passThrough, inner] }, user),
    );
    expect(named.message).toBe('LLM call failed: middleware "inner" failed: bad key');
  });

  it("in wrapModelCall: what is not an LLMResponse is that middleware's failure; the provider's response is checked before it sees it", async () => {
    const seen: unknown[] = [];
    const broken: ToolLoopMiddleware = { name: "broken", wrapModelCall: async () => ({ toolCalls: "no" }) as never };
    const error = await rejection(
      runToolLoop({ provider: new ScriptedProvider([]), maxIterations: 1, middleware: [broken] }, user),
    );
    expect(error.code).toBe("provider_failed");
    expect(error.message).toBe(
      'LLM call failed: middleware "broken" failed: wrapModelCall returned an invalid response: toolCalls must be an array, got string',
    );

    const watcher: ToolLoopMiddleware = {
      name: "watcher",
      async wrapModelCall(request, next) {
        try {
          return await next(request);
        } catch (caught) {
          seen.push(caught);
          throw caught;
        }
      },
    };
    const invalid = await rejection(
      runToolLoop({ provider: new ScriptedProvider([42 as never]), maxIterations: 1, middleware: [watcher] }, user),
    );
    expect(invalid.code).toBe("invalid_response");
    expect(seen).toEqual([invalid.cause]);
  });

  it("in wrapRun: a ToolLoopError from inside passes unchanged; anything else is internal, naming the middleware", async () => {
    let inner: unknown;
    const observer: ToolLoopMiddleware = {
      name: "observer",
      async wrapRun(request, next) {
        try {
          return await next(request);
        } catch (error) {
          inner = error;
          throw error;
        }
      },
    };
    const failed = await rejection(
      runToolLoop(
        { provider: new ScriptedProvider([new Error("down")]), maxIterations: 1, middleware: [observer] },
        user,
      ),
    );
    expect(failed).toBe(inner);
    expect(failed.code).toBe("provider_failed");

    const thrown = new Error("lock lost");
    const locking: ToolLoopMiddleware = {
      name: "lock",
      async wrapRun(request, next) {
        await next(request);
        throw thrown;
      },
    };
    const internal = await rejection(
      runToolLoop(
        { provider: new ScriptedProvider([textResponse("hi")]), maxIterations: 1, middleware: [locking] },
        user,
      ),
    );
    expect(internal).toMatchObject({ code: "internal", message: 'middleware "lock" failed: lock lost', iterations: 1 });
    expect(internal.cause).toBe(thrown);
    expect(internal.messages.map((message) => message.content)).toEqual(["go", "hi"]);

    const wrong = await rejection(
      runToolLoop(
        {
          provider: new ScriptedProvider([]),
          maxIterations: 1,
          middleware: [{ name: "wrong", wrapRun: async () => ({}) as never }],
        },
        user,
      ),
    );
    expect(wrong).toMatchObject({
      code: "internal",
      message: 'middleware "wrong" failed: wrapRun returned a result whose content is undefined',
    });

    // A stop reason that is no StopReason, even one an object inherits, is not a result.
    for (const stopReason of ["toString", "__proto__", "stopped"]) {
      const invented = await rejection(
        runToolLoop(
          {
            provider: new ScriptedProvider([]),
            maxIterations: 1,
            middleware: [
              {
                name: "invented",
                wrapRun: async () => ({ content: "", iterations: 0, messages: [], stopReason }) as never,
              },
            ],
          },
          user,
        ),
      );
      expect(invented.message).toBe(
        `middleware "invented" failed: wrapRun returned a result whose stopReason is ${JSON.stringify(stopReason)}`,
      );
    }
  });
});

describe("what is not wrapped", () => {
  it("calls refused before dispatch never reach wrapToolCall: unknown tool, bad JSON, schema failure, approval denied, no approver", async () => {
    const wrapped: string[] = [];
    const middleware: ToolLoopMiddleware = {
      name: "seen",
      wrapToolCall(request, next) {
        wrapped.push(request.toolCallId);
        return next(request);
      },
    };
    const { registry } = echoRegistry();
    registry.register(tool("guarded", () => "ran", { needsApproval: true }));
    const calls = [
      { id: "unknown", name: "nope" },
      { id: "json", name: "echo", arguments: "{not json" },
      { id: "schema", name: "echo", arguments: { text: 1 } },
      { id: "denied", name: "guarded" },
      { id: "fine", name: "echo", arguments: { text: "ok" } },
    ];
    const withApprover = await runToolLoop(
      {
        provider: new ScriptedProvider([toolCallResponse(calls), textResponse("done")]),
        tools: registry,
        maxIterations: 3,
        approve: () => false,
        middleware: [middleware],
      },
      user,
    );
    expect(wrapped).toEqual(["fine"]);
    expect(withApprover.messages.filter((message) => message.isError === true)).toHaveLength(4);

    wrapped.length = 0;
    await runToolLoop(
      {
        provider: new ScriptedProvider([
          toolCallResponse([{ id: "unapproved", name: "guarded" }]),
          textResponse("done"),
        ]),
        tools: registry,
        maxIterations: 3,
        middleware: [middleware],
      },
      user,
    );
    expect(wrapped).toEqual([]);
  });
});

describe("parallel calls", () => {
  it("each call is wrapped on its own; answers stay in call order whatever order the middleware finish in", async () => {
    const { registry } = echoRegistry();
    const ids = ["a", "b", "c", "d"];
    const provider = new ScriptedProvider([
      toolCallResponse(ids.map((id) => ({ id, name: "echo", arguments: { text: id } }))),
      textResponse("done"),
    ]);
    const finished: string[] = [];
    const delays: Record<string, number> = { a: 30, b: 0, c: 15, d: 5 };
    const middleware: ToolLoopMiddleware = {
      name: "slow",
      async wrapToolCall(request, next) {
        await new Promise((resolve) => setTimeout(resolve, delays[request.toolCallId]));
        const result = await next(request);
        finished.push(request.toolCallId);
        return newToolResult(`${request.toolCallId}:${result.forLLM}`);
      },
    };
    const result = await runToolLoop(
      { provider, tools: registry, maxIterations: 3, maxConcurrency: 2, middleware: [middleware] },
      user,
    );
    expect([...finished].sort()).toEqual(ids);
    expect(result.messages.filter((message) => message.role === "tool").map((message) => message.content)).toEqual([
      "a:a",
      "b:b",
      "c:c",
      "d:d",
    ]);
  });
});

describe("abort while inside a middleware", () => {
  it("in wrapRun, before and after next: the run rejects as aborted", async () => {
    for (const where of ["before", "after"] as const) {
      const controller = new AbortController();
      const waiting: ToolLoopMiddleware = {
        name: "waiting",
        async wrapRun(request, next) {
          if (where === "after") await next(request);
          setImmediate(() => controller.abort(new Error("user left")));
          return never();
        },
      };
      const error = await rejection(
        runToolLoop(
          { provider: new ScriptedProvider([textResponse("hi")]), maxIterations: 2, middleware: [waiting] },
          user,
          { signal: controller.signal },
        ),
      );
      expect(error.code).toBe("aborted");
      expect(error.message).toBe("tool loop aborted: user left");
      expect(error.messages.map((message) => message.content)).toEqual(where === "before" ? ["go"] : ["go", "hi"]);
    }
  });

  it("in wrapModelCall: the run rejects as aborted, every call answered", async () => {
    const controller = new AbortController();
    const provider = new ScriptedProvider([toolCallResponse({ id: "c1", name: "t" })]);
    const hanging: ToolLoopMiddleware = {
      name: "hanging",
      wrapModelCall(request, next) {
        if (request.iteration === 1) return next(request);
        setImmediate(() => controller.abort(new Error("stop")));
        return never();
      },
    };
    const error = await rejection(
      runToolLoop({ provider, tools: [tool("t", () => "ok")], maxIterations: 3, middleware: [hanging] }, user, {
        signal: controller.signal,
      }),
    );
    expect(error.code).toBe("aborted");
    expect(error.messages.map((message) => message.role)).toEqual(["user", "assistant", "tool"]);
  });

  it("in wrapToolCall: the call is answered aborted, with its own signal aborted; a timeout answers it timed out", async () => {
    const controller = new AbortController();
    const signals: AbortSignal[] = [];
    const hanging: ToolLoopMiddleware = {
      name: "hanging",
      wrapToolCall(request) {
        signals.push(request.context.signal);
        if (request.toolCallId === "abort") setImmediate(() => controller.abort(new Error("stop")));
        return never();
      },
    };
    const provider = new ScriptedProvider([toolCallResponse({ id: "abort", name: "t" })]);
    const error = await rejection(
      runToolLoop({ provider, tools: [tool("t", () => "ok")], maxIterations: 3, middleware: [hanging] }, user, {
        signal: controller.signal,
      }),
    );
    expect(error.code).toBe("aborted");
    expect(error.messages[2]).toMatchObject({
      role: "tool",
      isError: true,
      content: 'tool "t" was aborted before it finished',
    });
    expect(signals[0]?.aborted).toBe(true);

    const timed = await runToolLoop(
      {
        provider: new ScriptedProvider([toolCallResponse({ id: "late", name: "t" }), textResponse("done")]),
        tools: [tool("t", () => "ok")],
        maxIterations: 3,
        toolTimeoutMs: 20,
        middleware: [hanging],
      },
      user,
    );
    expect(timed.messages[2]).toMatchObject({ isError: true, content: 'tool "t" timed out after 20 ms' });
    expect(timed.content).toBe("done");
    expect(signals[1]?.aborted).toBe(true);
  });
});

describe("streaming", () => {
  it("a streamed call passes through wrapModelCall with the assembled response; a response given without next emits no text-delta", async () => {
    const provider = new ScriptedProvider([{ textDeltas: ["Hel", "lo"] }], { stream: true });
    const responses: LLMResponse[] = [];
    const middleware: ToolLoopMiddleware = {
      name: "watch",
      async wrapModelCall(request, next) {
        if (request.iteration === 2) return textResponse("cached");
        const response = await next(request);
        responses.push(response);
        return { ...response, toolCalls: [{ id: "c1", type: "function", name: "t", arguments: {} }] };
      },
    };
    const stream = streamToolLoop(
      { provider, tools: [tool("t", () => "ok")], maxIterations: 3, middleware: [middleware] },
      user,
    );
    const deltas: string[] = [];
    for await (const event of stream) if (event.type === "text-delta") deltas.push(`${event.iteration}:${event.delta}`);
    const result = await stream.result;
    expect(responses[0]?.content).toBe("Hello");
    expect(deltas).toEqual(["1:Hel", "1:lo"]);
    expect(result).toMatchObject({ content: "cached", iterations: 2 });
  });
});

describe("resume", () => {
  it("resumeToolLoop honours the middleware, wrapRun with resumed: true; messages it changes are read as the checkpoint's", async () => {
    const requests: { resumed: boolean; count: number }[] = [];
    const middleware: ToolLoopMiddleware = {
      name: "resume",
      wrapRun(request, next) {
        requests.push({ resumed: request.resumed, count: request.messages.length });
        return next({ ...request, messages: [{ role: "system", content: "restored" }, ...request.messages] });
      },
    };
    const checkpoint: ToolLoopCheckpoint = {
      version: 1,
      messages: [...user, { role: "assistant", content: "", toolCalls: [{ id: "r1", name: "t", arguments: {} }] }],
      iterations: 1,
      pendingAsync: [],
    };
    let runs = 0;
    const config: ToolLoopConfig = {
      provider: new ScriptedProvider([textResponse("done")]),
      tools: [
        tool("t", () => {
          runs++;
          return "ran";
        }),
      ],
      maxIterations: 3,
      middleware: [middleware],
    };
    const result = await resumeToolLoop(config, checkpoint);
    expect(requests).toEqual([{ resumed: true, count: 2 }]);
    expect(runs).toBe(1);
    expect(result.messages.map((message) => message.role)).toEqual([
      "system",
      "user",
      "assistant",
      "tool",
      "assistant",
    ]);
    expect(result.iterations).toBe(2);

    await runToolLoop({ ...config, provider: new ScriptedProvider([textResponse("x")]) }, user);
    expect(requests[1]).toEqual({ resumed: false, count: 1 });
  });
});

describe("bad input", () => {
  it.each<[string, unknown, string]>([
    ["not an array", { name: "x" }, "runToolLoop: middleware must be an array of middleware"],
    ["an entry that is not an object", [null], "runToolLoop: middleware[0] must be a middleware object"],
    [
      "an entry without a string name",
      [{ wrapRun: async () => undefined }],
      "runToolLoop: middleware[0].name must be a string, got undefined",
    ],
    [
      "a hook that is not a function",
      [{ name: "ok" }, { name: "x", wrapToolCall: "no" }],
      'runToolLoop: middleware[1].wrapToolCall must be a function, got "no"',
    ],
  ])("%s: a TypeError naming the index, before any provider call", async (_case, middleware, message) => {
    const provider = new ScriptedProvider([textResponse("never")]);
    const error = await runToolLoop({ provider, maxIterations: 1, middleware: middleware as never }, user).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(TypeError);
    expect((error as TypeError).message.startsWith(message)).toBe(true);
    expect(provider.calls).toHaveLength(0);
  });

  it("null, undefined and [] mean none; a middleware with no hook is none too", async () => {
    for (const middleware of [null, undefined, [], [{ name: "empty" }]]) {
      const result = await runToolLoop(
        { provider: new ScriptedProvider([textResponse("ok")]), maxIterations: 1, middleware: middleware as never },
        user,
      );
      expect(result.content).toBe("ok");
    }
  });
});
