import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Queue, QueueEvents } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import * as z from "zod";
import {
  createToolQueue,
  createToolWorker,
  type ToolCompletion,
  type ToolQueue,
  type ToolWorker,
} from "../../src/bullmq/index.js";
import {
  asyncResult,
  defineTool,
  type Message,
  newToolResult,
  runToolLoop,
  type Tool,
  ToolRegistry,
  type ToolResult,
  withTextToolProtocol,
} from "../../src/index.js";
import { createToolContext, ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing/index.js";
import { FlakyRegistry, testTools } from "../helpers/bullmq-tools.js";
import { captureLogger } from "../helpers/capture-logger.js";
import { freePort, type RedisServer, startRedisProxy, startRedisServer } from "../helpers/redis-server.js";
import { spawnConversation, spawnWorker } from "../helpers/spawn-worker.js";

let redis: RedisServer;
// Starting a redis-server takes seconds on a loaded machine (the hook's default limit is 10 s).
beforeAll(async () => {
  redis = await startRedisServer();
}, 60_000);
afterAll(async () => {
  await redis?.dispose();
});

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()));
});

function tool(name: string): Tool {
  const found = testTools().find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(`no test tool ${name}`);
  return found;
}

/** A queue and a worker on a queue name of their own (tests do not see each other's jobs). */
function setup(
  options: {
    attempts?: number;
    registry?: ToolRegistry;
    worker?: boolean;
    name?: string;
    backoffMs?: number;
    enqueueTimeoutMs?: number;
  } = {},
) {
  const name = options.name ?? `q${randomUUID().slice(0, 8)}`;
  const connection = redis.connection;
  const queue = createToolQueue({
    connection,
    name,
    attempts: options.attempts,
    backoffMs: options.backoffMs ?? 10,
    // A safety net past the test's own limit: a queue's first enqueue (connecting, reading the event
    // stream's end) can take seconds on a loaded machine. enqueueTimeoutMs itself is shown by the
    // "Redis unreachable" tests, which set their own.
    enqueueTimeoutMs: options.enqueueTimeoutMs ?? 60_000,
  });
  open.push(queue);
  const registry = options.registry ?? new ToolRegistry();
  for (const item of testTools()) if (!registry.has(item.name)) registry.register(item);
  let worker: ToolWorker | undefined;
  if (options.worker !== false) {
    worker = createToolWorker(registry, { connection, name, closeOnSigterm: false });
    open.push(worker);
  }
  const bull = new Queue(name, { connection });
  open.push(bull);
  return { name, queue, registry, worker, bull };
}

/**
 * Executes a queued tool directly and returns the immediate answer and the callback's result.
 * `completed` rejects with the immediate answer when that was not "queued" (no callback can come
 * then): a test awaiting it fails saying why, not at its time limit.
 */
function call(queue: ToolQueue, name: string, args: Record<string, unknown>, toolCallId: string, extra = {}) {
  let callback!: (result: ToolResult) => void;
  const reported = new Promise<ToolResult>((resolve) => {
    callback = resolve;
  });
  const immediate = queue
    .queued(tool(name))
    .execute(args, createToolContext({ toolCallId, asyncCallback: callback, ...extra })) as Promise<ToolResult>;
  const notQueued = immediate.then((answer) =>
    answer.async ? new Promise<never>(() => {}) : Promise.reject(new Error(`not queued: ${answer.forLLM}`)),
  );
  const completed = Promise.race([reported, notQueued]);
  // Tests that expect an error answer never await `completed`: its rejection is not unhandled.
  completed.catch(() => {});
  return { immediate, completed };
}

/**
 * Queues a call on a queue with a short `enqueueTimeoutMs` that may still be connecting (on a
 * loaded machine that takes longer than such a timeout): an answer "could not be queued" queued
 * nothing (see "Redis unreachable"), so the same call is tried again, a bounded number of times.
 */
async function callOnceConnected(queue: ToolQueue, name: string, args: Record<string, unknown>, toolCallId: string) {
  for (let tried = 1; ; tried++) {
    const attempt = call(queue, name, args, toolCallId);
    const answer = await attempt.immediate;
    if (answer.async || tried >= 100 || !answer.forLLM.includes("could not be queued")) {
      return { answer, completed: attempt.completed };
    }
  }
}

function collect(queue: ToolQueue): ToolCompletion[] {
  const seen: ToolCompletion[] = [];
  queue.onCompletion((completion) => {
    seen.push(completion);
  });
  return seen;
}

/** Waits for `check` (a safety-net limit, generous: a loaded machine is slow, not wrong). */
async function until(check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await sleep(20);
  }
}

describe("createToolQueue options", () => {
  it.each([
    [undefined, "createToolQueue: options must be an object, got undefined"],
    [
      {},
      "createToolQueue: connection must be BullMQ connection options or a Redis client, got undefined (not shown: it may hold a password)",
    ],
    [
      { connection: "redis://:hunter2@redis.internal:6379" },
      "createToolQueue: connection must be BullMQ connection options or a Redis client, got string (not shown: it may hold a password)",
    ],
    [{ connection: {}, name: "" }, `createToolQueue: name must be a non-empty string without ':', got ""`],
    [{ connection: {}, name: "a:b" }, `createToolQueue: name must be a non-empty string without ':', got "a:b"`],
    [{ connection: {}, attempts: 0 }, "createToolQueue: attempts must be an integer > 0, got 0"],
    [{ connection: {}, backoffMs: -1 }, "createToolQueue: backoffMs must be a number of milliseconds ≥ 0, got -1"],
    [{ connection: {}, logger: 42 }, /createToolQueue: logger must be/],
  ])("%j is a TypeError", (options, message) => {
    expect(() => createToolQueue(options as never)).toThrow(message);
  });
});

describe("queued(tool)", () => {
  it("keeps the tool's name, description, schema and needsApproval, and is an AsyncTool", () => {
    const { queue } = setup({ worker: false });
    const original = { ...tool("echo"), needsApproval: true };
    const queued = queue.queued(original);
    expect(queued.name).toBe("echo");
    expect(queued.description).toBe(original.description);
    expect(queued.parameters).toEqual(original.parameters);
    expect(queued.needsApproval).toBe(true);
    expect(typeof queued.setCallback).toBe("function");
    expect(() => queue.queued({ ...original, name: "bad name" })).toThrow(TypeError);
  });

  it("enqueues, answers asyncResult at once, and the worker's result reaches the call's callback", async () => {
    const { queue } = setup();
    const { immediate, completed } = call(queue, "echo", { text: "hi" }, "call_echo");
    const answer = await immediate;
    expect(answer.async).toBe(true);
    expect(answer.isError).toBe(false);
    expect(answer.forLLM).toMatchInlineSnapshot(
      `"tool "echo" is queued (job call_echo); its result will follow when a worker has run it"`,
    );
    expect((await completed).forLLM).toBe("echo: hi");
  });

  it.each([
    [{}, /invalid arguments for tool "echo": .*text/],
    [{ text: 42 }, /invalid arguments for tool "echo": text: must be string/],
    [[1], /invalid arguments for tool "echo": \(root\): expected a JSON object/],
  ])("invalid arguments %j: an error result and no job", async (args, message) => {
    const { queue, bull } = setup({ worker: false });
    const answer = (await queue
      .queued(tool("echo"))
      .execute(args as never, createToolContext({ toolCallId: "call_invalid" }))) as ToolResult;
    expect(answer.isError).toBe(true);
    expect(answer.forLLM).toMatch(message);
    expect(await bull.getJob("call_invalid")).toBeUndefined();
  });

  it("after close(), execute answers an error result; close() twice is one close", async () => {
    const { queue } = setup({ worker: false });
    const queued = queue.queued(tool("echo"));
    await Promise.all([queue.close(), queue.close()]);
    const answer = (await queued.execute(
      { text: "x" },
      createToolContext({ toolCallId: "call_closed" }),
    )) as ToolResult;
    expect(answer.isError).toBe(true);
    expect(answer.forLLM).toBe('tool "echo" was not queued: its queue is closed');
  });

  it("a zod tool: validated by its schema before enqueueing, and run with its parsed arguments on the worker", async () => {
    const shout = defineTool({
      name: "shout",
      description: "Upper-cases a word",
      parameters: z.object({ word: z.string().min(2), times: z.number().int().default(1) }),
      execute: ({ word, times }) => word.toUpperCase().repeat(times),
    });
    const registry = new ToolRegistry();
    registry.register(shout);
    const { queue } = setup({ registry });
    const queued = queue.queued(shout);
    const invalid = (await queued.execute({ word: "x" }, createToolContext({ toolCallId: "call_z1" }))) as ToolResult;
    expect(invalid.isError).toBe(true);
    expect(invalid.forLLM).toMatch(/^invalid arguments for tool "shout": word: /);
    const completed = new Promise<ToolResult>((resolve) => {
      void queued.execute({ word: "hey" }, createToolContext({ toolCallId: "call_z2", asyncCallback: resolve }));
    });
    expect((await completed).forLLM).toBe("HEY");
  });

  it("validates through the registry too, and carries channel, chat id, metadata and call id to the worker", async () => {
    const { queue } = setup();
    const registry = new ToolRegistry();
    registry.register(queue.queued(tool("context")));
    const completed = new Promise<ToolResult>((resolve) => {
      void registry.executeWithContext("context", {}, "telegram", "chat-7", resolve, {
        toolCallId: "call_ctx",
        metadata: { user: "u1", __proto__: "x" } as Record<string, string>,
      });
    });
    expect(JSON.parse((await completed).forLLM)).toEqual({
      channel: "telegram",
      chatId: "chat-7",
      metadata: { user: "u1" },
      toolCallId: "call_ctx",
    });
    const invalid = await registry.execute("context", { extra: 1 }, { toolCallId: "x" });
    expect(invalid.isError).toBe(false); // no schema constraint against extra keys: queued
  });

  it.each([
    ["123", "an integer id"],
    ["a:b:c:d", "an id with ':'"],
    ["__proto__", "__proto__"],
    ["x".repeat(500), "a 500-character id"],
    ["ünïcödé id", "a non-ASCII id with a space"],
    ["events", "the name of the queue's event stream"],
    ["meta", "the name of the queue's meta hash"],
    ["wait", "the name of the queue's wait list"],
    ["stalled", "the name of the queue's stalled set"],
  ])("a model's call id such as %s (%s) works and comes back as sent", async (toolCallId) => {
    const { queue } = setup();
    const seen = collect(queue);
    const { immediate, completed } = call(queue, "echo", { text: "id" }, toolCallId);
    expect((await immediate).async).toBe(true);
    expect((await completed).forLLM).toBe("echo: id");
    await until(() => seen.length === 1);
    expect(seen[0]?.toolCallId).toBe(toolCallId);
    expect((await queue.completions([toolCallId]))[0]?.toolCallId).toBe(toolCallId);
    // The queue still works for the next call.
    expect((await call(queue, "echo", { text: "next" }, "call_next").completed).forLLM).toBe("echo: next");
  });

  it("arguments with a __proto__ key (as JSON.parse makes it from the model's text) are data: no prototype is touched", async () => {
    const { queue } = setup();
    const args = JSON.parse('{"text":"p","__proto__":{"polluted":true}}') as Record<string, unknown>;
    const { completed } = call(queue, "echo", args, "call_proto");
    expect((await completed).forLLM).toBe("echo: p");
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("arguments nested 5,000 deep (hostile): an invalid-arguments error result, no job, nothing thrown", async () => {
    const { queue, bull } = setup({ worker: false });
    let nested: unknown = "x";
    for (let depth = 0; depth < 5_000; depth++) nested = { a: nested };
    const answer = (await queue
      .queued(tool("echo"))
      .execute({ text: "deep", nested }, createToolContext({ toolCallId: "call_deep" }))) as ToolResult;
    expect(answer.isError).toBe(true);
    expect(answer.forLLM).toMatch(/^invalid arguments for tool "echo": /);
    expect(await bull.getJob("call_deep")).toBeUndefined();
  });

  it("a call without a tool call id (called directly) gets a job id of its own", async () => {
    const { queue } = setup();
    const seen = collect(queue);
    const completed = new Promise<ToolResult>((resolve) => {
      void queue.queued(tool("echo")).execute({ text: "anon" }, createToolContext({ asyncCallback: resolve }));
    });
    expect((await completed).forLLM).toBe("echo: anon");
    await until(() => seen.length === 1);
    expect(seen[0]?.toolCallId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("the same call id queued again: one job, one run, delivered once, to the latest callback", async () => {
    const registry = new FlakyRegistry();
    const { name, queue, bull } = setup({ registry, worker: false });
    const seen = collect(queue);
    const first = call(queue, "slow", { ms: 100, text: "once" }, "call_twice");
    const second = call(queue, "slow", { ms: 100, text: "once" }, "call_twice");
    expect((await first.immediate).async).toBe(true);
    expect((await second.immediate).async).toBe(true);
    let firstCalled = false;
    void first.completed.then(() => {
      firstCalled = true;
    });
    const runs: string[] = [];
    const counting = new (class extends ToolRegistry {
      override executeWithContext(...args: Parameters<ToolRegistry["executeWithContext"]>) {
        runs.push(args[0]);
        return super.executeWithContext(...args);
      }
    })();
    for (const item of testTools()) counting.register(item);
    open.push(createToolWorker(counting, { connection: redis.connection, name, closeOnSigterm: false }));
    expect((await second.completed).forLLM).toBe("slow: once");
    await sleep(200);
    expect(firstCalled).toBe(false);
    expect(runs).toEqual(["slow"]);
    expect(seen).toHaveLength(1);
    expect(await bull.getJobCounts("completed", "wait", "active")).toEqual({ completed: 1, wait: 0, active: 0 });

    // Queued again after it finished (a resumed loop): not run again; the new callback gets it.
    const third = call(queue, "slow", { ms: 100, text: "once" }, "call_twice");
    expect((await third.immediate).async).toBe(true);
    expect((await third.completed).forLLM).toBe("slow: once");
    await sleep(100);
    expect(runs).toEqual(["slow"]);
    expect(seen).toHaveLength(1);
  });

  it("a callback waiting longer than keepFinishedMs is dropped (its job can no longer report); handlers still get it", async () => {
    const { name, queue } = setup({ worker: false });
    const short = createToolQueue({ connection: redis.connection, name, keepFinishedMs: 50 });
    open.push(short);
    const seen = collect(short);
    let oldFired = false;
    // Queued (its callback set) before the wait: the wait then outlasts keepFinishedMs however slow the enqueue.
    await short.queued(tool("echo")).execute(
      { text: "old" },
      createToolContext({
        toolCallId: "call_old",
        asyncCallback: () => {
          oldFired = true;
        },
      }),
    );
    await sleep(100);
    const fresh = call(short, "echo", { text: "new" }, "call_new");
    await fresh.immediate;
    const registry = new ToolRegistry();
    for (const item of testTools()) registry.register(item);
    open.push(createToolWorker(registry, { connection: redis.connection, name, closeOnSigterm: false }));
    expect((await fresh.completed).forLLM).toBe("echo: new");
    await until(() => seen.length === 2);
    expect(oldFired).toBe(false);
    void queue;
  });

  it("finished jobs are removed from Redis after keepFinishedMs (Redis does not grow with every call ever made)", async () => {
    const { name, bull } = setup();
    const short = createToolQueue({ connection: redis.connection, name, keepFinishedMs: 1_000 });
    open.push(short);
    expect((await call(short, "echo", { text: "old" }, "call_kept").completed).forLLM).toBe("echo: old");
    expect(await bull.getJobState("call_kept")).toBe("completed");
    await sleep(1_100);
    // BullMQ removes expired finished jobs when another job of the queue finishes.
    await call(short, "echo", { text: "new" }, "call_next").completed;
    expect(await bull.getJob("call_kept")).toBeUndefined();
    expect(await short.completions(["call_kept"])).toEqual([]);
  });

  it("a call id that another conversation's job holds: a job of its own (the model cannot read another chat's result)", async () => {
    const { queue, bull } = setup();
    const owner = call(queue, "echo", { text: "secret" }, "call_shared", { channel: "web", chatId: "alice" });
    expect((await owner.completed).forLLM).toBe("echo: secret");
    // The same id, even with the same arguments, from another chat: not alice's job.
    const thief = call(queue, "echo", { text: "secret" }, "call_shared", { channel: "web", chatId: "mallory" });
    const answer = await thief.immediate;
    expect(answer.async).toBe(true);
    expect(answer.forLLM).toMatch(/^tool "echo" is queued \(job call_shared#[0-9a-f]{32}\)/);
    expect((await thief.completed).forLLM).toBe("echo: secret");
    const otherTool = call(queue, "context", {}, "call_shared", { channel: "web", chatId: "alice" });
    expect(JSON.parse((await otherTool.completed).forLLM)).toMatchObject({
      chatId: "alice",
      toolCallId: "call_shared",
    });
    // Three calls, three jobs, each run once.
    expect(await bull.getJobCounts("completed")).toEqual({ completed: 3 });
  });
});

describe("call ids that repeat (the text tool protocol, MCP clients)", () => {
  /** A run through the text tool protocol: its call gets id text_1_0 in every conversation. */
  async function textRun(registry: ToolRegistry, text: string) {
    const block = `<tool>${JSON.stringify({ server_name: "local", tool_name: "echo", arguments: { text } })}</tool>`;
    const provider = withTextToolProtocol(
      new ScriptedProvider([
        textResponse(block),
        textResponse("waiting"),
        (request) => textResponse(`got: ${request.messages.at(-1)?.content}`),
      ]),
    );
    // The wait for the queued result: a safety net past the test's own limit (not a speed bound).
    const result = await runToolLoop(
      { provider, tools: registry, maxIterations: 5, awaitAsync: { timeoutMs: 60_000 } },
      [{ role: "user", content: `echo ${text}` }],
      { channel: "web", chatId: "alice" },
    );
    return result.content;
  }

  it("two runs of one chat reusing text_1_0 with different arguments: each gets its own result", async () => {
    const { queue, bull } = setup();
    const registry = new ToolRegistry();
    registry.register(queue.queued(tool("echo")));
    expect(await textRun(registry, "first question")).toBe(
      "got: [async result from echo (text_1_0)] echo: first question",
    );
    expect(await textRun(registry, "second question")).toBe(
      "got: [async result from echo (text_1_0)] echo: second question",
    );
    expect(await bull.getJobCounts("completed")).toEqual({ completed: 2 });
  });

  it("both at once, from two queues of that name (as in two processes): two jobs, each answer to its own call", async () => {
    const { name, queue } = setup();
    const other = createToolQueue({ connection: redis.connection, name });
    open.push(other);
    await other.completions([]);
    const [a, b] = await Promise.all(
      [call(queue, "echo", { text: "a" }, "text_1_0"), call(other, "echo", { text: "b" }, "text_1_0")].map(
        async (item) => [await item.immediate, await item.completed] as const,
      ),
    );
    expect([a?.[0].async, b?.[0].async]).toEqual([true, true]);
    expect([a?.[1].forLLM, b?.[1].forLLM]).toEqual(["echo: a", "echo: b"]);
  });

  it("the same call queued again joins its job, also when it took the alternate id and the call id's own job expired", async () => {
    const runs: string[] = [];
    const counting = new (class extends ToolRegistry {
      override executeWithContext(...args: Parameters<ToolRegistry["executeWithContext"]>) {
        runs.push(String(args[1].text));
        return super.executeWithContext(...args);
      }
    })();
    const { queue, bull } = setup({ registry: counting });
    expect((await call(queue, "echo", { text: "a" }, "text_1_0").completed).forLLM).toBe("echo: a");
    const second = call(queue, "echo", { text: "b" }, "text_1_0");
    const alternate = /\(job (text_1_0#[0-9a-f]{32})\)/.exec((await second.immediate).forLLM)?.[1];
    expect(alternate).toBeDefined();
    expect((await second.completed).forLLM).toBe("echo: b");
    // A resumed conversation queues the same calls again (keys in another order, as JSON gives them back).
    const resumedB = call(queue, "echo", JSON.parse('{"text":"b"}'), "text_1_0");
    expect((await resumedB.immediate).forLLM).toContain(`(job ${alternate})`);
    expect((await resumedB.completed).forLLM).toBe("echo: b");
    // The call id's own job is gone (expired); the alternate one is still there: joined, not run again.
    await (await bull.getJob("text_1_0"))?.remove();
    const again = call(queue, "echo", { text: "b" }, "text_1_0");
    expect((await again.completed).forLLM).toBe("echo: b");
    expect(runs).toEqual(["a", "b"]);
  });

  it("arguments with a key whose value is undefined (not stored by JSON): queued once, and joined when queued again", async () => {
    const { queue, bull } = setup();
    const args = { text: "u", note: undefined };
    const first = call(queue, "echo", args, "call_undefined");
    expect((await first.immediate).forLLM).toContain("(job call_undefined)");
    expect((await first.completed).forLLM).toBe("echo: u");
    const again = call(queue, "echo", args, "call_undefined");
    expect((await again.immediate).forLLM).toContain("(job call_undefined)");
    expect((await again.completed).forLLM).toBe("echo: u");
    expect(await bull.getJobCounts("completed")).toEqual({ completed: 1 });
  });

  it("completions() of a QueuedCall finds that very call's job; of a bare call id, the call id's own job", async () => {
    const { name, queue } = setup();
    const context = { channel: "web", chatId: "alice" };
    await call(queue, "echo", { text: "run 1" }, "text_1_0", context).completed;
    await call(queue, "echo", { text: "run 2" }, "text_1_0", context).completed;
    const restarted = createToolQueue({ connection: redis.connection, name });
    open.push(restarted);
    const run2 = { toolCallId: "text_1_0", toolName: "echo", arguments: { text: "run 2" }, ...context };
    const found = await restarted.completions([
      run2,
      { ...run2, arguments: { text: "run 1" } },
      { ...run2, chatId: "mallory" },
      { ...run2, toolCallId: "text_9_9" },
      "text_1_0",
    ]);
    expect(found.map((item) => item.result.forLLM)).toEqual(["echo: run 2", "echo: run 1", "echo: run 1"]);
    await expect(restarted.completions([{ ...run2, arguments: [] } as never])).rejects.toThrow(
      "completions: calls[0] must be a tool call id or a QueuedCall object, got",
    );
    await expect(restarted.completions(["a", 1] as never)).rejects.toThrow(/calls\[1\] must be/);
  });
});

describe("results and retries", () => {
  it("a tool's error result completes the job: delivered as that error, not retried", async () => {
    const { queue, bull } = setup({ attempts: 3 });
    const { completed } = call(queue, "refuse", {}, "call_refuse");
    const result = await completed;
    expect(result.isError).toBe(true);
    expect(result.forLLM).toBe("refused by the tool");
    const job = await bull.getJob("call_refuse");
    expect(job?.attemptsStarted).toBe(1);
    expect(await job?.getState()).toBe("completed");
  });

  it("a throw escaping the registry is retried; it completes when an attempt succeeds", async () => {
    const registry = new FlakyRegistry();
    const { queue } = setup({ attempts: 3, registry });
    const { completed } = call(queue, "flaky", { failTimes: 2 }, "call_flaky");
    expect((await completed).forLLM).toBe("flaky: made it");
    expect(registry.calls.get("call_flaky")).toBe(3);
  });

  it("after the last attempt, the completion is `failed after N attempts: <reason>`", async () => {
    const registry = new FlakyRegistry();
    const { queue } = setup({ attempts: 3, registry });
    const seen = collect(queue);
    const { completed } = call(queue, "flaky", { failTimes: 10 }, "call_doomed");
    const result = await completed;
    expect(result.isError).toBe(true);
    expect(result.forLLM).toMatchInlineSnapshot(`"tool "flaky" failed after 3 attempts: flaky failure 3"`);
    expect(registry.calls.get("call_doomed")).toBe(3);
    await until(() => seen.length === 1);
    expect(seen[0]?.result.forLLM).toBe(result.forLLM);
    expect((await queue.completions(["call_doomed"]))[0]?.result.forLLM).toBe(result.forLLM);
  });

  it("a worker whose tool is async itself completes the job with what the tool reports", async () => {
    const registry = new ToolRegistry();
    registry.register({
      name: "echo",
      description: "reports later",
      parameters: { type: "object", properties: { text: { type: "string" } } },
      execute: (args, context) => {
        setTimeout(() => void context.asyncCallback?.(newToolResult(`later: ${String(args.text)}`)), 50);
        return asyncResult("started");
      },
    });
    const { queue } = setup({ registry });
    const { completed } = call(queue, "echo", { text: "x" }, "call_nested");
    expect((await completed).forLLM).toBe("later: x");
  });
});

describe("delivery", () => {
  it("every onCompletion handler of every queue of that name gets each completion once; callbacks only in the queuing one", async () => {
    const { name, queue } = setup();
    const other = createToolQueue({ connection: redis.connection, name });
    open.push(other);
    const here = collect(queue);
    const there = collect(other);
    const removedSeen: ToolCompletion[] = [];
    const remove = other.onCompletion((completion) => {
      removedSeen.push(completion);
    });
    remove();
    // Make sure the second queue listens before anything completes.
    await other.completions([]);
    const calls = ["a", "b", "c"].map((id) => call(queue, "echo", { text: id }, `call_${id}`));
    await Promise.all(calls.map((item) => item.completed));
    await until(() => here.length === 3 && there.length === 3);
    await sleep(100);
    expect(here.map((item) => item.toolCallId).sort()).toEqual(["call_a", "call_b", "call_c"]);
    expect(there.map((item) => item.toolCallId).sort()).toEqual(["call_a", "call_b", "call_c"]);
    expect(there.find((item) => item.toolCallId === "call_b")).toMatchObject({ toolName: "echo" });
    expect(removedSeen).toEqual([]);
  });

  it("a handler that throws or rejects is logged; the others still run", async () => {
    const { logger, lines } = captureLogger();
    const name = `q${randomUUID().slice(0, 8)}`;
    const queue = createToolQueue({ connection: redis.connection, name, logger });
    open.push(queue);
    const registry = new ToolRegistry();
    for (const item of testTools()) registry.register(item);
    open.push(createToolWorker(registry, { connection: redis.connection, name, closeOnSigterm: false }));
    queue.onCompletion(() => {
      throw new Error("handler broke");
    });
    queue.onCompletion(() => Promise.reject(new Error("handler rejected")));
    const seen = collect(queue);
    // The model's call id, 100,000 characters: cut in the log lines.
    const { completed } = call(queue, "echo", { text: "x" }, "h".repeat(100_000));
    await completed;
    await until(() => seen.length === 1);
    await until(() => lines.filter((line) => line.msg === "tool queue: onCompletion handler failed").length === 2);
    for (const line of lines) expect(JSON.stringify(line).length).toBeLessThan(2_000);
    expect(() => queue.onCompletion(42 as never)).toThrow("onCompletion: handler must be a function, got 42");
  });

  it("completions(ids) returns those already finished, in order, from Redis (a fresh queue, as after a restart)", async () => {
    // call_3x is still running while completions() reads: its tool waits until the test lets it
    // finish (a 300 ms sleep finished first when the read was slow on a loaded machine).
    let finish = () => {};
    const finishing = new Promise<void>((resolve) => {
      finish = resolve;
    });
    // Also when the test fails early: the worker's close() would wait for the job.
    onTestFinished(() => finish());
    let started = () => {};
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const registry = new ToolRegistry();
    registry.register({
      ...tool("slow"),
      execute: async () => {
        started();
        await finishing;
        return "slow: finished";
      },
    });
    const { name, queue } = setup({ registry });
    const calls = [call(queue, "echo", { text: "1" }, "call_1x"), call(queue, "refuse", {}, "call_2x")];
    await Promise.all(calls.map((item) => item.completed));
    const slow = call(queue, "slow", { ms: 0 }, "call_3x");
    await slow.immediate;
    await running;
    const restarted = createToolQueue({ connection: redis.connection, name });
    open.push(restarted);
    const found = await restarted.completions(["call_2x", "call_unknown", "call_3x", "call_1x"]);
    expect(found.map((item) => [item.toolCallId, item.toolName, item.result.forLLM, item.result.isError])).toEqual([
      ["call_2x", "refuse", "refused by the tool", true],
      ["call_1x", "echo", "echo: 1", false],
    ]);
    await expect(restarted.completions("x" as never)).rejects.toThrow(TypeError);
    // Once it finished, it is found too.
    finish();
    expect((await slow.completed).forLLM).toBe("slow: finished");
    expect((await restarted.completions(["call_3x"])).map((item) => item.result.forLLM)).toEqual(["slow: finished"]);
  });

  it("completions() of 100,000 ids reads them a page at a time (the heap does not grow by hundreds of MB)", async () => {
    // 100,000 reads take seconds on a loaded machine (more than the 10 s default there): not a failure here.
    const { queue } = setup({ enqueueTimeoutMs: 60_000 });
    const { completed } = call(queue, "echo", { text: "found" }, "call_found_99999");
    const ids = Array.from({ length: 100_000 }, (_, index) => `call_found_${index}`);
    await completed;
    const before = process.memoryUsage().heapUsed;
    let peak = before;
    const sampling = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().heapUsed);
    }, 5);
    try {
      const found = await queue.completions(ids);
      expect(found.map((completion) => completion.result.forLLM)).toEqual(["echo: found"]);
    } finally {
      clearInterval(sampling);
    }
    expect(peak - before).toBeLessThan(80_000_000);
  }, 90_000);

  it("completions() of a sparse array is a TypeError at once (not a walk to its length)", async () => {
    const { queue } = setup({ worker: false });
    const ids = ["call_a"];
    ids.length = 2 ** 32 - 1;
    // A walk to its length would not end within the test's timeout.
    await expect(queue.completions(ids)).rejects.toThrow(
      "completions: calls[1] must be a tool call id or a QueuedCall object, got undefined",
    );
  });

  it("with awaitAsync, a queued tool's result comes back into the conversation", async () => {
    const { queue } = setup();
    const registry = new ToolRegistry();
    registry.register(queue.queued(tool("slow")));
    const provider = new ScriptedProvider([
      toolCallResponse({ id: "call_loop", name: "slow", arguments: { ms: 50, text: "from the worker" } }),
      textResponse("waiting"),
      (request) => textResponse(`got: ${request.messages.at(-1)?.content}`),
    ]);
    const messages: Message[] = [{ role: "user", content: "go" }];
    // The wait for the queued result: a safety net past the test's own limit (not a speed bound).
    const result = await runToolLoop(
      { provider, tools: registry, maxIterations: 5, awaitAsync: { timeoutMs: 60_000 } },
      messages,
    );
    expect(result.content).toBe("got: [async result from slow (call_loop)] slow: from the worker");
  });
});

describe("Redis unreachable", () => {
  /** A queue whose Redis port nobody listens on, giving up on each request after 300 ms. */
  async function unreachableQueue(): Promise<ToolQueue> {
    const port = await freePort();
    const queue = createToolQueue({
      connection: { host: "127.0.0.1", port, retryStrategy: () => 50 },
      name: "down",
      enqueueTimeoutMs: 300,
    });
    open.push(queue);
    return queue;
  }

  it("completions() rejects naming Redis within enqueueTimeoutMs", async () => {
    const queue = await unreachableQueue();
    await expect(queue.completions(["call_1"])).rejects.toThrow("completions: Redis did not answer within 300 ms");
  });

  it("an enqueue answers an error result naming Redis within enqueueTimeoutMs, never a hang", async () => {
    const queue = await unreachableQueue();
    const answer = (await queue
      .queued(tool("echo"))
      .execute({ text: "x" }, createToolContext({ toolCallId: "c" }))) as ToolResult;
    expect(answer.isError).toBe(true);
    expect(answer.forLLM).toMatchInlineSnapshot(
      `"tool "echo" could not be queued: Redis did not answer within 300 ms"`,
    );
  });

  it("a call answered `could not be queued` is not queued later, when Redis comes back", async () => {
    const late = await startRedisServer();
    try {
      await late.stop();
      const connection = { ...late.connection, retryStrategy: () => 50 };
      const queue = createToolQueue({ connection, name: "late", enqueueTimeoutMs: 300 });
      open.push(queue);
      let fired = false;
      const context = createToolContext({
        toolCallId: "call_late",
        asyncCallback: () => {
          fired = true;
        },
      });
      const answer = (await queue.queued(tool("echo")).execute({ text: "x" }, context)) as ToolResult;
      expect(answer.forLLM).toBe('tool "echo" could not be queued: Redis did not answer within 300 ms');
      await late.start();
      // A later call is queued once the queue is back: the abandoned one had its chance by then.
      const later = await callOnceConnected(queue, "echo", { text: "y" }, "call_later");
      expect(later.answer.async).toBe(true);
      await sleep(100);
      const bull = new Queue("late", { connection: late.connection });
      open.push(bull);
      expect(await bull.getJob("call_later")).toBeDefined();
      expect(await bull.getJob("call_late")).toBeUndefined();
      expect(fired).toBe(false);
    } finally {
      await Promise.all(open.splice(0).map((item) => item.close()));
      await late.dispose();
    }
    // It starts a redis-server twice: seconds on a loaded machine.
  }, 60_000);

  it("close() with Redis gone resolves within enqueueTimeoutMs and leaves no connection retrying (ioredis would print)", async () => {
    const gone = await startRedisServer();
    try {
      const connection = { ...gone.connection, retryStrategy: () => 50 };
      const queue = createToolQueue({ connection, name: "gone", enqueueTimeoutMs: 300 });
      expect((await callOnceConnected(queue, "echo", { text: "x" }, "call_gone")).answer.async).toBe(true);
      await gone.stop();
      await sleep(200);
      // Without the bound, BullMQ's close waits for Redis for good (the test's timeout).
      await queue.close();
      // A connection still retrying would print "[ioredis] Unhandled error event" now (the suite fails on it).
      await sleep(500);
    } finally {
      await gone.dispose();
    }
    // It starts a redis-server: seconds on a loaded machine.
  }, 60_000);

  it("within the call's own timeout, through a registry", async () => {
    const port = await freePort();
    const queue = createToolQueue({ connection: { host: "127.0.0.1", port, retryStrategy: () => 50 }, name: "down" });
    open.push(queue);
    const registry = new ToolRegistry();
    registry.register(queue.queued(tool("echo")));
    // Not enqueueTimeoutMs (10 s by default): the call's own 200 ms.
    const answer = await registry.execute("echo", { text: "x" }, { timeoutMs: 200, toolCallId: "c" });
    expect(answer.isError).toBe(true);
    expect(answer.forLLM).toBe('tool "echo" timed out after 200 ms');
  });
});

describe("reconnecting", () => {
  it("Redis restarted mid-run (persistence on, graceful): the queue reconnects and no completion is lost", async () => {
    const persistent = await startRedisServer({ persistence: true });
    try {
      const connection = { ...persistent.connection, retryStrategy: () => 100 };
      const name = "restart";
      const queue = createToolQueue({ connection, name, backoffMs: 10 });
      open.push(queue);
      const seen = collect(queue);
      // A job taken in the instant Redis went away (its moveToActive applied, the reply lost) is
      // active with nobody running it: the stalled-job check gets it back after its lock expires.
      const child = spawnWorker({ port: persistent.port, name, concurrency: 4, lockMs: 2_000, stalledMs: 1_000 });
      try {
        const calls = Array.from({ length: 20 }, (_, index) =>
          call(queue, "slow", { ms: 150, text: String(index) }, `call_r${index}`),
        );
        expect((await Promise.all(calls.map((item) => item.immediate))).every((answer) => answer.async)).toBe(true);
        await child.waitFor((message) => message.type === "ran");
        await persistent.stop();
        await sleep(500);
        await persistent.start();
        const results = await Promise.all(calls.map((item) => item.completed));
        expect(results.map((result) => result.forLLM)).toEqual(calls.map((_, index) => `slow: ${index}`));
        await until(() => seen.length >= 20);
        await sleep(200);
        expect(seen.map((completion) => completion.toolCallId).sort()).toEqual(
          calls.map((_, index) => `call_r${index}`).sort(),
        );
      } finally {
        child.child.kill("SIGKILL");
        await child.exited;
      }
    } finally {
      await Promise.all(open.splice(0).map((item) => item.close()));
      await persistent.dispose();
    }
  }, 90_000);

  it("a completion whose event was lost while the queues were disconnected is swept up on reconnect: callback and handlers", async () => {
    const name = `q${randomUUID().slice(0, 8)}`;
    // The queues reach Redis through a proxy the test cuts off: they are away exactly while it is blocked.
    const proxy = await startRedisProxy(redis.port);
    const admin = new Redis(redis.port, "127.0.0.1");
    const events = new QueueEvents(name, { connection: redis.connection });
    try {
      const queue = createToolQueue({ connection: { ...proxy.connection, retryStrategy: () => 50 }, name });
      open.push(queue);
      const observer = createToolQueue({ connection: { ...proxy.connection, retryStrategy: () => 50 }, name });
      open.push(observer);
      const observed = collect(observer);
      await observer.completions([]);
      const waiting = call(queue, "echo", { text: "swept" }, "call_swept");
      expect((await waiting.immediate).async).toBe(true);
      await events.waitUntilReady();
      // While the queues are away, the job runs and its event is trimmed from the stream.
      proxy.block();
      const registry = new ToolRegistry();
      for (const item of testTools()) registry.register(item);
      const bull = new Queue(name, { connection: redis.connection });
      open.push(bull);
      open.push(createToolWorker(registry, { connection: redis.connection, name, closeOnSigterm: false }));
      const job = await bull.getJob("call_swept");
      await job?.waitUntilFinished(events);
      expect(await bull.getJobState("call_swept")).toBe("completed");
      await admin.xtrim(`bull:${name}:events`, "MAXLEN", 0);
      proxy.unblock();
      expect((await waiting.completed).forLLM).toBe("echo: swept");
      // A queue of that name that holds no callback for it: its handlers get it too, once.
      await until(() => observed.length === 1);
      await sleep(100);
      expect(observed.map((completion) => completion.result.forLLM)).toEqual(["echo: swept"]);
    } finally {
      await Promise.all(open.splice(0).map((item) => item.close()));
      await events.close();
      admin.disconnect();
      await proxy.close();
    }
  });
});

describe("the enqueuing process killed and restarted from its last checkpoint", () => {
  it.each([
    ["2-after-save", "while it waits for the results (its calls answered: completions() fetches them)"],
    ["2-before-save", "before its calls' answers were saved (they are queued again and join their jobs)"],
  ])(
    "killed at checkpoint %s, %s: every call answered once, each job run once",
    async (hangAt) => {
      const dir = mkdtempSync(join(tmpdir(), "toolloop-resume-"));
      const name = `resume${randomUUID().slice(0, 8)}`;
      const worker = spawnWorker({ port: redis.port, name, concurrency: 3 });
      const checkpointFile = join(dir, "checkpoint.json");
      try {
        const first = spawnConversation({ port: redis.port, name, checkpointFile, hangAt, slowMs: 800 });
        await first.waitFor((message) => message.type === "checkpoint" && message.hang === true);
        await worker.waitFor((message) => message.type === "started");
        first.child.kill("SIGKILL");
        await first.exited;
        const second = spawnConversation({ port: redis.port, name, checkpointFile, slowMs: 800 });
        const resuming = await second.waitFor((message) => message.type === "resuming");
        expect(resuming.pendingAsync).toBe(hangAt === "2-after-save" ? 3 : 0);
        const done = await second.waitFor((message) => message.type === "result");
        await second.exited;
        expect(done.content).toBe("done: slow: 0 | slow: 1 | slow: 2");
        const messages = done.messages as Message[];
        const answers = messages.filter((message) => message.role === "tool").map((message) => message.toolCallId);
        expect(answers.sort()).toEqual(["call_resume_0", "call_resume_1", "call_resume_2"]);
        const fedBack = messages.filter(
          (message) => message.role === "user" && (message.content as string).startsWith("[async"),
        );
        expect(fedBack).toHaveLength(3);
        const runs = worker.messages.filter((message) => message.type === "ran").map((message) => message.toolCallId);
        expect(runs.sort()).toEqual(["call_resume_0", "call_resume_1", "call_resume_2"]);
      } finally {
        worker.child.kill("SIGKILL");
        await worker.exited;
        rmSync(dir, { recursive: true, force: true });
      }
    },
    // Three processes one after the other: seconds each on a loaded machine.
    90_000,
  );
});
