import { getEventListeners } from "node:events";
import { describe, expect, it, vi } from "vitest";
import {
  isToolLoopError,
  type Message,
  newToolResult,
  resumeToolLoop,
  streamToolLoop,
  type Tool,
  type ToolLoopCheckpoint,
  type ToolLoopEvent,
  ToolRegistry,
} from "../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../src/testing/index.js";
import { captureLogger } from "./helpers/capture-logger.js";

const user: Message[] = [{ role: "user", content: "hi" }];

function registryWith(...tools: Tool[]): ToolRegistry {
  const registry = new ToolRegistry();
  for (const each of tools) registry.register(each);
  return registry;
}

const echo: Tool = {
  name: "echo",
  description: "echo",
  parameters: { type: "object" },
  execute: (args) => newToolResult(`echo:${JSON.stringify(args)}`),
};

describe("streamToolLoop (issue 12)", () => {
  it("yields the same events as onEvent, ending with loop-end, and result resolves to the run's outcome", async () => {
    const script = () => [toolCallResponse({ id: "a", name: "echo" }), textResponse("done")];
    const heard: ToolLoopEvent[] = [];
    const stream = streamToolLoop(
      {
        provider: new ScriptedProvider(script()),
        tools: registryWith(echo),
        maxIterations: 3,
        onEvent: (event) => void heard.push(event),
      },
      user,
    );
    const yielded: ToolLoopEvent[] = [];
    for await (const event of stream) yielded.push(event);
    const result = await stream.result;
    expect(yielded.map((event) => event.type)).toEqual(heard.map((event) => event.type));
    expect(yielded.at(-1)).toEqual({ type: "loop-end", result });
    expect(result).toMatchObject({ content: "done", stopReason: "completed", iterations: 2 });
  });

  it("the loop waits for the consumer: nothing runs ahead of the event being read", async () => {
    let ran = 0;
    const counted: Tool = { ...echo, name: "counted", execute: () => String(++ran) };
    const stream = streamToolLoop(
      {
        provider: new ScriptedProvider([toolCallResponse({ name: "counted" }), textResponse("done")]),
        tools: registryWith(counted),
        maxIterations: 3,
      },
      user,
    );
    const iterator = stream[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toEqual({ type: "step-start", iteration: 1 });
    expect((await iterator.next()).value).toMatchObject({ type: "message" });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(ran).toBe(0);
    expect((await iterator.next()).value).toMatchObject({ type: "tool-call-start" });
    for (let step = await iterator.next(); !step.done; step = await iterator.next());
    expect(ran).toBe(1);
  });

  it("breaking out aborts the loop: the provider's signal aborts, result rejects with code aborted, every call answered", async () => {
    let providerSignal: AbortSignal | undefined;
    const provider = new ScriptedProvider([
      toolCallResponse([{ id: "a", name: "echo" }]),
      (call) => {
        providerSignal = call.signal;
        return new Promise(() => {});
      },
    ]);
    const stream = streamToolLoop({ provider, tools: registryWith(echo), maxIterations: 5 }, user);
    for await (const event of stream) {
      if (event.type === "step-start" && event.iteration === 2) break;
    }
    const failure = await stream.result.catch((error: unknown) => error);
    expect(isToolLoopError(failure) && failure.code).toBe("aborted");
    expect(isToolLoopError(failure) && failure.messages.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
    ]);
    expect(providerSignal).toBeUndefined(); // the loop stopped before asking again
  });

  it("a streamed run writes the one 'tool loop finished' info line; breaking out logs it with error aborted", async () => {
    const done = captureLogger("info");
    const script = [toolCallResponse({ id: "a", name: "echo" }), textResponse("done")];
    const stream = streamToolLoop(
      { provider: new ScriptedProvider(script), tools: registryWith(echo), maxIterations: 3, logger: done.logger },
      user,
    );
    for await (const _event of stream) {
      // read every event
    }
    await stream.result;
    expect(done.lines).toEqual([
      expect.objectContaining({
        level: 30,
        msg: "tool loop finished",
        iterations: 2,
        stopReason: "completed",
        toolCalls: 1,
      }),
    ]);
    const broken = captureLogger("info");
    const provider = new ScriptedProvider([toolCallResponse({ id: "a", name: "echo" }), () => new Promise(() => {})]);
    const left = streamToolLoop({ provider, tools: registryWith(echo), maxIterations: 5, logger: broken.logger }, user);
    for await (const event of left) {
      if (event.type === "step-start" && event.iteration === 2) break;
    }
    await left.result.catch(() => {});
    expect(broken.lines).toEqual([
      expect.objectContaining({
        msg: "tool loop finished",
        iterations: 2,
        error: "aborted",
        toolCalls: 1,
        failedCalls: 0,
      }),
    ]);
  });

  it("a throw inside the for-await aborts the loop too, and result settles", async () => {
    const stream = streamToolLoop({ provider: new ScriptedProvider([textResponse("hi")]), maxIterations: 1 }, user);
    await expect(
      (async () => {
        for await (const _event of stream) throw new Error("UI crashed");
      })(),
    ).rejects.toThrow("UI crashed");
    await expect(stream.result).rejects.toMatchObject({ code: "aborted" });
  });

  it("a failing loop throws from the iteration; the unobserved result is no unhandled rejection", async () => {
    const unhandled = vi.fn();
    process.on("unhandledRejection", unhandled);
    try {
      const stream = streamToolLoop(
        { provider: new ScriptedProvider([new Error("rate limited")]), maxIterations: 1 },
        user,
      );
      const seen: string[] = [];
      await expect(
        (async () => {
          for await (const event of stream) seen.push(event.type);
        })(),
      ).rejects.toMatchObject({ code: "provider_failed" });
      expect(seen).toEqual(["step-start"]);
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off("unhandledRejection", unhandled);
    }
  });

  it("the caller's signal still aborts the run", async () => {
    const controller = new AbortController();
    const stream = streamToolLoop(
      { provider: new ScriptedProvider([() => new Promise(() => {})]), maxIterations: 1 },
      user,
      { signal: controller.signal },
    );
    const iterator = stream[Symbol.asyncIterator]();
    await iterator.next();
    const next = iterator.next();
    controller.abort(new Error("user left"));
    await expect(next).rejects.toMatchObject({ code: "aborted" });
    await expect(stream.result).rejects.toMatchObject({ code: "aborted" });
  });

  it("a consumer that stops reading (no return()) does not hold the run once the caller aborts (review regression)", async () => {
    const controller = new AbortController();
    const stream = streamToolLoop(
      {
        provider: new ScriptedProvider([toolCallResponse({ id: "a", name: "echo" }), textResponse("done")]),
        tools: registryWith(echo),
        maxIterations: 3,
      },
      user,
      { signal: controller.signal },
    );
    await stream[Symbol.asyncIterator]().next(); // one event read, then the consumer goes away
    controller.abort(new Error("user left"));
    const error = await stream.result.catch((caught: unknown) => caught);
    expect(isToolLoopError(error) && error.code).toBe("aborted");
  });

  it("leaves no listener on a long-lived caller signal after its runs (one shared subscription per run, ended)", async () => {
    const controller = new AbortController();
    for (let index = 0; index < 20; index++) {
      const stream = streamToolLoop({ provider: new ScriptedProvider([textResponse("ok")]), maxIterations: 1 }, user, {
        signal: controller.signal,
      });
      for await (const _event of stream) {
        // read to the end
      }
      await stream.result;
    }
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("takes checkpoints with onCheckpoint (issue 14), and a streamed run resumes like any other", async () => {
    const steps = () => [toolCallResponse({ id: "c1", name: "echo", arguments: { n: 1 } }), textResponse("done")];
    const saved: ToolLoopCheckpoint[] = [];
    const stream = streamToolLoop(
      {
        provider: new ScriptedProvider(steps()),
        tools: registryWith(echo),
        maxIterations: 3,
        onCheckpoint: (checkpoint) => void saved.push(JSON.parse(JSON.stringify(checkpoint)) as ToolLoopCheckpoint),
      },
      user,
    );
    for await (const _ of stream) {
      // consumed
    }
    const result = await stream.result;
    // The assistant's calls, their answers, the final answer.
    expect(saved.map((checkpoint) => checkpoint.messages.length)).toEqual([2, 3, 4]);
    expect(saved.at(-1)?.messages).toEqual(result.messages);
    const fromCalls = await resumeToolLoop(
      { provider: new ScriptedProvider([textResponse("done")]), tools: registryWith(echo), maxIterations: 3 },
      saved[0] as ToolLoopCheckpoint,
    );
    expect(fromCalls).toEqual(result);
  });

  it("throws a TypeError at once for a config that is not an object or an onEvent that is not a function", () => {
    expect(() =>
      streamToolLoop({ provider: new ScriptedProvider([]), maxIterations: 1, onEvent: "no" as never }, user),
    ).toThrow('streamToolLoop: onEvent must be a function, got "no"');
    expect(() => streamToolLoop(null as never, user)).toThrow("streamToolLoop: config must be an object, got null");
  });
});
