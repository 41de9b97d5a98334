/**
 * toolloop/bullmq on loopback: 200 conversations × 3 queued calls across 4 worker processes
 * (concurrency 8 each), the run of test/bullmq/create-tool-worker.test.ts. Reports jobs per second
 * (600 calls from the first enqueue to the last completion) and the enqueue-to-completion latency
 * of each call (p50/p99), plus how long `execute` takes to answer `asyncResult` (the enqueue).
 * Not part of `npm test` or `npm run bench`. Run: npx tsx bench/bullmq.ts [--runs 3]
 */
import { availableParallelism } from "node:os";
import { createToolQueue } from "../src/bullmq/index.js";
import { type Message, runToolLoop, type Tool, ToolRegistry } from "../src/index.js";
import { createToolContext, ScriptedProvider, textResponse, toolCallResponse } from "../src/testing/index.js";
import { testTools } from "../test/helpers/bullmq-tools.js";
import { startRedisServer } from "../test/helpers/redis-server.js";
import { spawnWorker } from "../test/helpers/spawn-worker.js";

const CONVERSATIONS = 200;
const CALLS = 3;
const WORKERS = 4;
const CONCURRENCY = 8;
const runsFlag = process.argv.indexOf("--runs");
const RUNS = runsFlag === -1 ? 3 : Number(process.argv[runsFlag + 1]);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

async function oneRun(port: number, run: number) {
  const name = `bench${run}`;
  const connection = { host: "127.0.0.1", port };
  const workers = Array.from({ length: WORKERS }, () => spawnWorker({ port, name, concurrency: CONCURRENCY }));
  await Promise.all(workers.map((worker) => worker.waitFor((message) => message.type === "ready")));
  const queue = createToolQueue({ connection, name });
  const enqueuedAt = new Map<string, number>();
  const answeredAt = new Map<string, number>();
  const completedAt = new Map<string, number>();
  queue.onCompletion(({ toolCallId }) => {
    completedAt.set(toolCallId, performance.now());
  });
  const echo = testTools().find((tool) => tool.name === "echo") as Tool;
  const queued = queue.queued(echo);
  const timed: Tool = {
    ...queued,
    execute: async (args, context) => {
      const id = context.toolCallId ?? "";
      enqueuedAt.set(id, performance.now());
      const answer = await queued.execute(args, context);
      answeredAt.set(id, performance.now());
      return answer;
    },
  };
  const registry = new ToolRegistry();
  registry.register(timed);
  await queue.completions([]); // listening before the clock starts
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONVERSATIONS }, async (_, index) => {
      const calls = Array.from({ length: CALLS }, (_, call) => ({
        id: `r${run}c${index}k${call}`,
        name: "echo",
        arguments: { text: `${index}.${call}` },
      }));
      const done = () => textResponse("done");
      const provider = new ScriptedProvider([toolCallResponse(calls), done, done, done, done]);
      const messages: Message[] = [{ role: "user", content: "go" }];
      await runToolLoop({ provider, tools: registry, maxIterations: 5, awaitAsync: { timeoutMs: 60_000 } }, messages);
    }),
  );
  while (completedAt.size < CONVERSATIONS * CALLS) await new Promise((resolve) => setTimeout(resolve, 5));
  const last = Math.max(...completedAt.values());
  const latencies = [...completedAt].map(([id, at]) => at - (enqueuedAt.get(id) ?? at)).sort((a, b) => a - b);
  const enqueue = [...answeredAt].map(([id, at]) => at - (enqueuedAt.get(id) ?? at)).sort((a, b) => a - b);
  await queue.close();
  for (const worker of workers) worker.child.kill("SIGTERM");
  await Promise.all(workers.map((worker) => worker.exited));
  return {
    jobsPerSecond: (CONVERSATIONS * CALLS) / ((last - started) / 1000),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    enqueueP50: percentile(enqueue, 50),
    enqueueP99: percentile(enqueue, 99),
  };
}

/** One call at a time (nothing else queued): the latency of the round trip itself. */
async function sequential(port: number, count: number) {
  const name = "sequential";
  const connection = { host: "127.0.0.1", port };
  const worker = spawnWorker({ port, name });
  await worker.waitFor((message) => message.type === "ready");
  const queue = createToolQueue({ connection, name });
  const queued = queue.queued(testTools().find((tool) => tool.name === "echo") as Tool);
  await queue.completions([]);
  const latencies: number[] = [];
  for (let index = 0; index < count; index++) {
    const started = performance.now();
    await new Promise<void>((resolve) => {
      void queued.execute(
        { text: String(index) },
        createToolContext({ toolCallId: `seq${index}`, asyncCallback: () => resolve() }),
      );
    });
    latencies.push(performance.now() - started);
  }
  await queue.close();
  worker.child.kill("SIGTERM");
  await worker.exited;
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

const redis = await startRedisServer();
try {
  const results: Awaited<ReturnType<typeof oneRun>>[] = [];
  for (let run = 0; run < RUNS; run++) results.push(await oneRun(redis.port, run));
  const median = (key: keyof (typeof results)[number]) =>
    percentile(
      results.map((result) => result[key]).sort((a, b) => a - b),
      50,
    );
  console.log(
    `${CONVERSATIONS} conversations × ${CALLS} queued calls, ${WORKERS} workers × concurrency ${CONCURRENCY}, ` +
      `${availableParallelism()} cores, ${RUNS} runs (median):`,
  );
  console.log(`  jobs/s                          ${median("jobsPerSecond").toFixed(0)}`);
  console.log(`  enqueue → completion p50 / p99  ${median("p50").toFixed(1)} / ${median("p99").toFixed(1)} ms`);
  console.log(
    `  execute → asyncResult p50 / p99 ${median("enqueueP50").toFixed(2)} / ${median("enqueueP99").toFixed(2)} ms`,
  );
  const single = await sequential(redis.port, 200);
  console.log(
    `  one call at a time, 200 calls: enqueue → completion p50 / p99 ${single.p50.toFixed(2)} / ${single.p99.toFixed(2)} ms`,
  );
  for (const [index, result] of results.entries()) {
    console.log(
      `  run ${index + 1}: ${result.jobsPerSecond.toFixed(0)} jobs/s, p50 ${result.p50.toFixed(1)} ms, ` +
        `p99 ${result.p99.toFixed(1)} ms, enqueue p50 ${result.enqueueP50.toFixed(2)} ms`,
    );
  }
} finally {
  await redis.dispose();
}
