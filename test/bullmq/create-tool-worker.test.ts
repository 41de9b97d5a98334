import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createToolQueue, createToolWorker, type ToolCompletion, type ToolQueue } from "../../src/bullmq/index.js";
import {
  asyncResult,
  type Message,
  newToolResult,
  runToolLoop,
  type Tool,
  ToolRegistry,
  type ToolResult,
} from "../../src/index.js";
import { createToolContext, ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing/index.js";
import { testTools } from "../helpers/bullmq-tools.js";
import { captureLogger } from "../helpers/capture-logger.js";
import { type RedisServer, startRedisServer } from "../helpers/redis-server.js";
import { spawnWorker, type WorkerProcess } from "../helpers/spawn-worker.js";

let redis: RedisServer;
// Starting a redis-server takes seconds on a loaded machine (the hook's default limit is 10 s).
beforeAll(async () => {
  redis = await startRedisServer();
}, 60_000);
afterAll(async () => {
  await redis?.dispose();
});

const open: Array<{ close(): Promise<void> }> = [];
const children: WorkerProcess[] = [];
afterEach(async () => {
  for (const worker of children.splice(0)) {
    if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill("SIGKILL");
    await worker.exited;
  }
  await Promise.all(open.splice(0).map((item) => item.close()));
});

const block: Tool = {
  name: "block",
  description: "Blocks the worker's event loop",
  parameters: { type: "object", properties: { ms: { type: "number" } }, required: ["ms"] },
  execute: () => "never runs here",
};

const crash: Tool = {
  name: "crash",
  description: "Kills the worker process that runs it",
  parameters: { type: "object", properties: {} },
  execute: () => "never runs here",
};

const gate: Tool = {
  name: "gate",
  description: "Waits until the test releases it (the worker process's own)",
  parameters: {
    type: "object",
    properties: { ms: { type: "number" }, text: { type: "string" } },
    required: ["ms"],
  },
  execute: () => "never runs here",
};

const stuck: Tool = {
  name: "stuck",
  description: "Never settles (the test's worker registers its own)",
  parameters: { type: "object", properties: {} },
  execute: () => "never runs here",
};

function tool(name: string): Tool {
  const own = [block, crash, gate, stuck].find((candidate) => candidate.name === name);
  const found = own ?? testTools().find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(`no test tool ${name}`);
  return found;
}

function newQueue(options: { attempts?: number; enqueueTimeoutMs?: number } = {}) {
  const name = `w${randomUUID().slice(0, 8)}`;
  const queue = createToolQueue({
    connection: { ...redis.connection, retryStrategy: () => 100 },
    name,
    backoffMs: 10,
    ...options,
  });
  open.push(queue);
  const seen: ToolCompletion[] = [];
  queue.onCompletion((completion) => {
    seen.push(completion);
  });
  return { name, queue, seen };
}

function worker(
  name: string,
  settings: {
    lockMs?: number;
    stalledMs?: number;
    concurrency?: number;
    blocks?: boolean;
    label?: string;
    closeGraceMs?: number;
    releaseFile?: string;
  } = {},
) {
  const spawned = spawnWorker({ port: redis.port, name, ...settings });
  children.push(spawned);
  return spawned;
}

/** How the process ended, or "still running" when it has not ended within `ms` (a safety net, not a speed test). */
function exitOrStillRunning(child: WorkerProcess, ms: number) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const running = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve("still running"), ms);
  });
  return Promise.race([child.exited, running]).finally(() => clearTimeout(timer));
}

/** Queues a call and counts how often its callback fires. */
function enqueue(queue: ToolQueue, name: string, args: Record<string, unknown>, toolCallId: string) {
  const results: ToolResult[] = [];
  const first = new Promise<ToolResult>((resolve) => {
    void queue.queued(tool(name)).execute(
      args,
      createToolContext({
        toolCallId,
        asyncCallback: (result) => {
          results.push(result);
          resolve(result);
        },
      }),
    );
  });
  return { first, results };
}

describe("createToolWorker options", () => {
  it.each([
    [{}, { connection: {} }, "createToolWorker: registry must be a ToolRegistry, got {}"],
    [new ToolRegistry(), undefined, "createToolWorker: options must be an object, got undefined"],
    [
      new ToolRegistry(),
      { connection: 1 },
      /connection must be BullMQ connection options or a Redis client, got number/,
    ],
    [
      new ToolRegistry(),
      { connection: "redis://:hunter2@redis.internal:6379" },
      "createToolWorker: connection must be BullMQ connection options or a Redis client, got string (not shown: it may hold a password)",
    ],
    [
      new ToolRegistry(),
      { connection: {}, concurrency: 0 },
      "createToolWorker: concurrency must be an integer > 0, got 0",
    ],
    [
      new ToolRegistry(),
      { connection: {}, lockDurationMs: 1.5 },
      /lockDurationMs must be an integer number of milliseconds > 0, got 1.5/,
    ],
    [new ToolRegistry(), { connection: {}, stalledIntervalMs: -1 }, /stalledIntervalMs must be/],
    [new ToolRegistry(), { connection: {}, timeoutMs: 0 }, /timeoutMs must be/],
    [new ToolRegistry(), { connection: {}, closeGraceMs: 0 }, /closeGraceMs must be a number of milliseconds > 0/],
    [new ToolRegistry(), { connection: {}, closeGraceMs: 2 ** 31 }, /closeGraceMs must be .* ≤ 2147483647/],
    [new ToolRegistry(), { connection: {}, closeOnSigterm: "yes" }, /closeOnSigterm must be a boolean/],
    [new ToolRegistry(), { connection: {}, name: "a:b" }, /name must be a non-empty string without ':'/],
  ])("%#: a TypeError", (registry, options, message) => {
    expect(() => createToolWorker(registry as never, options as never)).toThrow(message);
  });

  it("closeOnSigterm adds one SIGTERM listener while workers are open, and removes it when they close", async () => {
    const before = process.listenerCount("SIGTERM");
    const a = createToolWorker(new ToolRegistry(), { connection: redis.connection, name: "sig" });
    const b = createToolWorker(new ToolRegistry(), { connection: redis.connection, name: "sig" });
    const c = createToolWorker(new ToolRegistry(), {
      connection: redis.connection,
      name: "sig",
      closeOnSigterm: false,
    });
    expect(process.listenerCount("SIGTERM")).toBe(before + 1);
    await a.close();
    expect(process.listenerCount("SIGTERM")).toBe(before + 1);
    await Promise.all([b.close(), c.close(), b.close()]);
    expect(process.listenerCount("SIGTERM")).toBe(before);
  });

  it("runs each job with the worker's timeoutMs: a timeout is an error result, not retried", async () => {
    const { name, queue } = newQueue();
    const registry = new ToolRegistry();
    for (const item of testTools()) registry.register(item);
    open.push(createToolWorker(registry, { connection: redis.connection, name, timeoutMs: 50, closeOnSigterm: false }));
    const { first } = enqueue(queue, "slow", { ms: 5_000 }, "call_timeout");
    const result = await first;
    expect(result.isError).toBe(true);
    expect(result.forLLM).toBe('tool "slow" timed out after 50 ms');
  });

  it("an async tool that never reports: timeoutMs answers its job with the timeout error result and frees its slot", async () => {
    const { name, queue } = newQueue();
    const registry = new ToolRegistry();
    for (const item of testTools()) registry.register(item);
    // One slot: the next job runs only once the hanging one let go of it.
    open.push(
      createToolWorker(registry, { connection: redis.connection, name, timeoutMs: 300, closeOnSigterm: false }),
    );
    const hanging = enqueue(queue, "hang", {}, "call_hang");
    const next = enqueue(queue, "echo", { text: "next" }, "call_after_hang");
    const result = await hanging.first;
    expect(result.isError).toBe(true);
    expect(result.forLLM).toBe('tool "hang" timed out after 300 ms');
    expect((await next.first).forLLM).toBe("echo: next");
  });

  it("a report later than timeoutMs is dropped: the job's answer stays the timeout", async () => {
    const { name, queue, seen } = newQueue();
    let report: (() => void) | undefined;
    const registry = new ToolRegistry();
    registry.register({
      ...tool("hang"),
      execute: (_args, context) => {
        report = () => void context.asyncCallback?.(newToolResult("too late"));
        return asyncResult("started");
      },
    });
    open.push(
      createToolWorker(registry, { connection: redis.connection, name, timeoutMs: 200, closeOnSigterm: false }),
    );
    const hanging = enqueue(queue, "hang", {}, "call_late_report");
    expect((await hanging.first).forLLM).toBe('tool "hang" timed out after 200 ms');
    report?.();
    const after = enqueue(queue, "hang", {}, "call_after_late");
    expect((await after.first).forLLM).toBe('tool "hang" timed out after 200 ms');
    expect(hanging.results).toHaveLength(1);
    expect(seen.map((completion) => completion.result.forLLM)).toEqual([
      'tool "hang" timed out after 200 ms',
      'tool "hang" timed out after 200 ms',
    ]);
  });

  it("a result whose data is not JSON completes without it (logged)", async () => {
    const { name, queue } = newQueue();
    const { logger, lines } = captureLogger();
    const registry = new ToolRegistry();
    registry.register({
      ...tool("echo"),
      execute: () => newToolResult("with data").withData({ big: 1n }),
    });
    open.push(createToolWorker(registry, { connection: redis.connection, name, logger, closeOnSigterm: false }));
    // The model's call id, 100,000 characters: cut in the log line.
    const { first } = enqueue(queue, "echo", { text: "x" }, "b".repeat(100_000));
    const result = await first;
    expect(result.forLLM).toBe("with data");
    expect(result.data).toBeUndefined();
    expect(lines.map((line) => line.msg)).toContain("tool worker: the result's data is not JSON; it was left out");
    for (const line of lines) expect(JSON.stringify(line).length).toBeLessThan(2_000);
  });
});

describe("a job that throws", () => {
  it("is logged with the model's call id cut, and answered as failed", async () => {
    const { name, queue } = newQueue();
    const { logger, lines } = captureLogger();
    class BrokenRegistry extends ToolRegistry {
      override executeWithContext(): Promise<ToolResult> {
        throw new Error("registry broke");
      }
    }
    const registry = new BrokenRegistry();
    registry.register(tool("echo"));
    open.push(createToolWorker(registry, { connection: redis.connection, name, logger, closeOnSigterm: false }));
    // The model's call id, 100,000 characters: cut in the log line.
    const { first } = enqueue(queue, "echo", { text: "x" }, "t".repeat(100_000));
    const result = await first;
    expect(result.isError).toBe(true);
    expect(result.forLLM).toContain("registry broke");
    expect(lines.map((line) => line.msg)).toContain("tool worker: the job threw");
    for (const line of lines) expect(JSON.stringify(line).length).toBeLessThan(2_000);
  });
});

describe("close() while jobs never finish", () => {
  /** A worker whose `hang` never reports and whose `stuck` never settles (ignoring its signal, which it records). */
  function hangingWorker(name: string, signals: AbortSignal[], started: () => void) {
    const registry = new ToolRegistry();
    registry.register({
      ...tool("hang"),
      execute: () => {
        started();
        return asyncResult("started");
      },
    });
    registry.register({
      ...stuck,
      execute: (_args, context) => {
        signals.push(context.signal);
        started();
        return new Promise<never>(() => {});
      },
    });
    return createToolWorker(registry, {
      connection: redis.connection,
      name,
      concurrency: 2,
      closeGraceMs: 200,
      closeOnSigterm: false,
    });
  }

  it("after closeGraceMs their calls are aborted, close() resolves, and the jobs go back to the queue for another worker", async () => {
    const { name, queue, seen } = newQueue({ attempts: 2 });
    const signals: AbortSignal[] = [];
    let startedCount = 0;
    let bothStarted = () => {};
    const starting = new Promise<void>((resolve) => {
      bothStarted = resolve;
    });
    const closing = hangingWorker(name, signals, () => {
      if (++startedCount === 2) bothStarted();
    });
    const hanging = enqueue(queue, "hang", {}, "call_closed_hang");
    const stuckCall = enqueue(queue, "stuck", {}, "call_closed_stuck");
    await starting;
    await closing.close();
    expect(signals.map((signal) => signal.aborted)).toEqual([true]);
    expect(seen).toEqual([]);
    // Another worker takes both jobs over (their second attempt) and answers them.
    const registry = new ToolRegistry();
    registry.register({ ...tool("hang"), execute: () => "hang: answered by the next worker" });
    registry.register({ ...stuck, execute: () => "stuck: answered by the next worker" });
    open.push(createToolWorker(registry, { connection: redis.connection, name, closeOnSigterm: false }));
    expect((await hanging.first).forLLM).toBe("hang: answered by the next worker");
    expect((await stuckCall.first).forLLM).toBe("stuck: answered by the next worker");
  });

  it("on a job's last attempt, its completion is `failed after N attempts: its worker closed while running it`", async () => {
    const { name, queue } = newQueue({ attempts: 1 });
    let started = () => {};
    const starting = new Promise<void>((resolve) => {
      started = resolve;
    });
    const closing = hangingWorker(name, [], started);
    const hanging = enqueue(queue, "hang", {}, "call_closed_last");
    await starting;
    await closing.close();
    const result = await hanging.first;
    expect(result.isError).toBe(true);
    expect(result.forLLM).toBe('tool "hang" failed after 1 attempt: its worker closed while running it');
  });
});

describe("close() with Redis gone", () => {
  it("finishes the running job, then drops its connections after 2 s instead of waiting for Redis for good", async () => {
    const gone = await startRedisServer();
    try {
      const name = `w${randomUUID().slice(0, 8)}`;
      const connection = { ...gone.connection, retryStrategy: () => 50 };
      const finished: string[] = [];
      let started = () => {};
      const running = new Promise<void>((resolve) => {
        started = resolve;
      });
      // The job runs until the test lets it finish: it is running while Redis goes and close() starts.
      let release = () => {};
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      const registry = new ToolRegistry();
      registry.register({
        ...tool("slow"),
        execute: async (args) => {
          started();
          await released;
          finished.push(String(args.text));
          return "done";
        },
      });
      const own = createToolWorker(registry, { connection, name, closeOnSigterm: false });
      const queue = createToolQueue({ connection, name });
      try {
        const answer = (await queue
          .queued(tool("slow"))
          .execute({ ms: 0, text: "ran" }, createToolContext({ toolCallId: "call_gone" }))) as ToolResult;
        expect(answer.async).toBe(true);
        await running;
      } finally {
        await queue.close();
      }
      await gone.stop();
      // Without the bound, BullMQ's close waits for Redis for good (the test's timeout).
      const closing = own.close();
      release();
      await closing;
      expect(finished).toEqual(["ran"]);
      // A connection still retrying would print "[ioredis] Unhandled error event" now (the suite fails on it).
      await sleep(300);
    } finally {
      await gone.dispose();
    }
    // It starts a redis-server, and close() waits 2 s for it: seconds more on a loaded machine.
  }, 60_000);
});

describe("worker processes", () => {
  // Each test starts processes (seconds each on a loaded machine): generous limits, and no step
  // waits for a time to pass where it can wait for what it needs — a gated job goes on only once
  // the test creates its release file.
  let gates: string;
  let releaseFile: string;
  beforeEach(() => {
    gates = mkdtempSync(join(tmpdir(), "toolloop-gate-"));
    releaseFile = join(gates, "release");
  });
  afterEach(() => {
    rmSync(gates, { recursive: true, force: true });
  });
  const release = () => writeFileSync(releaseFile, "");

  it("a worker killed with SIGKILL mid-job: another worker completes the job, exactly one completion", async () => {
    const { name, queue, seen } = newQueue();
    const settings = { stalledMs: 500, releaseFile };
    // The doomed worker's lock expires once it is dead; the rescuer's lock is long enough that its own
    // run never stalls, however long a loaded machine leaves its process waiting for the CPU.
    const doomed = worker(name, { ...settings, lockMs: 1_000, label: "doomed" });
    const call = enqueue(queue, "gate", { ms: 60_000 }, "call_killed");
    await doomed.waitFor((message) => message.type === "started");
    doomed.child.kill("SIGKILL");
    await doomed.exited;
    release();
    const rescuer = worker(name, { ...settings, lockMs: 30_000, label: "rescuer" });
    const result = await call.first;
    expect(result.forLLM).toBe("gate: ran in rescuer");
    expect(rescuer.messages.filter((message) => message.type === "ran")).toHaveLength(1);
    await sleep(300);
    expect(call.results).toHaveLength(1);
    expect(seen.map((completion) => completion.toolCallId)).toEqual(["call_killed"]);
  }, 60_000);

  it("a job that ran twice (its worker's event loop blocked past the lock) is delivered once", async () => {
    const { name, queue, seen } = newQueue({ attempts: 5 });
    const settings = { stalledMs: 250, releaseFile };
    // Blocked until released: its 1 s lock expires, the healthy worker takes the job over and runs it.
    const blocked = worker(name, { ...settings, lockMs: 1_000, blocks: true, label: "blocked" });
    const call = enqueue(queue, "block", { ms: 60_000 }, "call_twice_run");
    await blocked.waitFor((message) => message.type === "started");
    // A lock long enough that the healthy worker's own run never stalls (and runs again) while a
    // loaded machine leaves its process waiting for the CPU: it runs the job exactly once.
    const healthy = worker(name, { ...settings, lockMs: 30_000, label: "healthy" });
    const result = await call.first;
    expect(result.forLLM).toBe("block: ran in healthy");
    // The blocked worker finishes its run too, but cannot complete the job: its lock is gone.
    release();
    await blocked.waitFor((message) => message.type === "ran");
    await sleep(1_000);
    expect(healthy.messages.filter((message) => message.type === "ran")).toHaveLength(1);
    expect(call.results).toHaveLength(1);
    expect(seen.map((completion) => completion.result.forLLM)).toEqual(["block: ran in healthy"]);
  }, 60_000);

  it("stalls count as attempts: a job that kills every worker fails after `attempts` starts", async () => {
    const { name, queue, seen } = newQueue({ attempts: 2 });
    const settings = { lockMs: 500, stalledMs: 250 };
    const call = enqueue(queue, "crash", {}, "call_poison");
    for (let start = 0; start < 2; start++) {
      const victim = worker(name, settings);
      await victim.waitFor((message) => message.type === "started");
      await victim.exited;
    }
    const last = worker(name, settings);
    const result = await call.first;
    expect(result.isError).toBe(true);
    expect(result.forLLM).toMatchInlineSnapshot(
      `"tool "crash" failed after 2 attempts: its worker stopped while running it"`,
    );
    expect(last.messages.filter((message) => message.type === "started")).toEqual([]);
    await sleep(200);
    expect(seen).toHaveLength(1);
  }, 60_000);

  it("SIGTERM: the worker finishes the job it runs, takes no more, and the process ends", async () => {
    const { name, queue, seen } = newQueue();
    const child = worker(name, { releaseFile });
    const running = enqueue(queue, "gate", { ms: 60_000 }, "call_term");
    await child.waitFor((message) => message.type === "started");
    child.child.kill("SIGTERM");
    await child.waitFor((message) => message.type === "sigterm");
    const waiting = enqueue(queue, "echo", { text: "later" }, "call_after_term");
    // The job goes on only now, once the worker is closing.
    release();
    expect((await running.first).forLLM).toMatch(/^gate: ran in \d+$/);
    expect(await exitOrStillRunning(child, 30_000)).toEqual({ code: null, signal: "SIGTERM" });
    expect(child.messages.filter((message) => message.type === "started")).toHaveLength(1);
    // The job queued meanwhile waits for the next worker.
    worker(name);
    expect((await waiting.first).forLLM).toBe("echo: later");
    await sleep(100);
    expect(seen.map((completion) => completion.toolCallId).sort()).toEqual(["call_after_term", "call_term"]);
  }, 60_000);

  it("SIGTERM while an async tool's job never reports: after closeGraceMs the process ends", async () => {
    const { name, queue } = newQueue();
    const child = worker(name, { closeGraceMs: 300 });
    enqueue(queue, "hang", {}, "call_term_hang");
    await child.waitFor((message) => message.type === "started");
    child.child.kill("SIGTERM");
    // It ends about closeGraceMs + 2 s later; the bound is a safety net for a loaded machine.
    expect(await exitOrStillRunning(child, 45_000)).toEqual({ code: null, signal: "SIGTERM" });
  }, 90_000);

  it.each([
    ["was never reachable (nothing listens on its port)", false],
    ["went away after the worker had run a job", true],
  ])(
    "close() when Redis %s: the worker process then exits by itself",
    async (_, connected) => {
      const own = await startRedisServer();
      try {
        const name = `w${randomUUID().slice(0, 8)}`;
        if (!connected) await own.stop();
        const child = spawnWorker({ port: own.port, name });
        children.push(child);
        await child.waitFor((message) => message.type === "ready");
        if (connected) {
          const queue = createToolQueue({ connection: own.connection, name });
          try {
            await enqueue(queue, "echo", { text: "x" }, "call_before_stop").first;
          } finally {
            await queue.close();
          }
          await own.stop();
        } else {
          // Let its clients fail to connect, and wait to reconnect.
          await sleep(300);
        }
        child.child.send({ type: "close" });
        await child.waitFor((message) => message.type === "closed");
        // The IPC channel is closed too: only the worker's own timers or sockets could keep it alive
        // (ioredis' reconnect timers kept it for good). It ends within ~2 s; the bound is a safety
        // net for a loaded machine.
        expect(await exitOrStillRunning(child, 45_000)).toEqual({ code: 0, signal: null });
      } finally {
        await own.dispose();
      }
    },
    // A redis-server and a worker process started: seconds each on a loaded machine.
    90_000,
  );

  it("200 conversations × 3 queued calls across 4 worker processes: 600 completions, none lost, none duplicated", async () => {
    // 600 enqueues at once while four processes start: seconds on a loaded machine, not a failure.
    const { name, queue, seen } = newQueue({ enqueueTimeoutMs: 60_000 });
    const workers = [0, 1, 2, 3].map(() => worker(name, { concurrency: 8, releaseFile }));
    const registry = new ToolRegistry();
    registry.register(queue.queued(tool("gate")));
    const conversations = Array.from({ length: 200 }, async (_, index) => {
      const calls = [0, 1, 2].map((call) => ({
        id: `conv${index}_call${call}`,
        name: "gate",
        arguments: { ms: 90_000, text: `${index}.${call}` },
      }));
      // The model sums up the async results it has read (the loop asks again until all are in).
      const sumUp = (request: { messages: Message[] }) =>
        textResponse(
          request.messages
            .filter((message) => message.role === "user" && (message.content as string).startsWith("[async result"))
            .map((message) => (message.content as string).replace(/^.*\] /, ""))
            .sort()
            .join(" | "),
        );
      const provider = new ScriptedProvider([toolCallResponse(calls), sumUp, sumUp, sumUp, sumUp]);
      const messages: Message[] = [{ role: "user", content: `conversation ${index}` }];
      const result = await runToolLoop(
        { provider, tools: registry, maxIterations: 4, awaitAsync: { timeoutMs: 90_000 } },
        messages,
        { channel: "bench", chatId: `chat-${index}` },
      );
      // Each call's immediate answer: queued (an error here would say why a result is missing).
      for (const message of result.messages.filter((item) => item.role === "tool")) {
        expect(message.content).toMatch(/^tool "gate" is queued/);
      }
      return [index, result.content] as const;
    });
    // The calls wait at their gates until every worker holds some: then each one takes part,
    // however late a process came up on a loaded machine.
    await Promise.all(workers.map((child) => child.waitFor((message) => message.type === "started")));
    release();
    const finished = await Promise.all(conversations);
    for (const [index, content] of finished) {
      expect(content).toBe(`gate: ${index}.0 | gate: ${index}.1 | gate: ${index}.2`);
    }
    await sleep(300);
    const ids = seen.map((completion) => completion.toolCallId);
    expect(ids).toHaveLength(600);
    expect(new Set(ids).size).toBe(600);
    const runs = workers.flatMap((child) => child.messages.filter((message) => message.type === "ran"));
    expect(runs).toHaveLength(600);
    expect(new Set(runs.map((message) => message.toolCallId)).size).toBe(600);
    // Every worker took part.
    for (const child of workers) expect(child.messages.some((message) => message.type === "ran")).toBe(true);
  }, 180_000);
});
