// A toolloop/bullmq worker in its own process, for tests that kill workers. Started with
// `fork(this file, [], { execArgv: ["--import", "tsx"], env: { REDIS_PORT, … } })`; tells its parent
// over IPC when a job starts and when it has run (the parent counts runs per call id). Sent
// { type: "close" }, it closes the worker, answers { type: "closed" } and lets go of the IPC channel
// without exiting: the process must then end by itself (nothing of the worker may keep it alive).
import { existsSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { createToolWorker } from "../../src/bullmq/index.js";
import { errorResult, type Tool, type ToolRegistry } from "../../src/index.js";
import { FlakyRegistry, testTools } from "./bullmq-tools.js";

const env = process.env;
const send = (message: Record<string, unknown>) => process.send?.({ pid: process.pid, ...message });

class ReportingRegistry extends FlakyRegistry {
  override executeWithContext(...args: Parameters<ToolRegistry["executeWithContext"]>) {
    const [name, , , , , options] = args;
    send({ type: "started", toolName: name, toolCallId: options?.toolCallId });
    return super.executeWithContext(...args).then((result) => {
      send({ type: "ran", toolName: name, toolCallId: options?.toolCallId, isError: result.isError });
      return result;
    });
  }
}

const registry = new ReportingRegistry();
for (const tool of testTools()) registry.register(tool);
const crash: Tool = {
  name: "crash",
  description: "Kills this worker process while running",
  parameters: { type: "object", properties: {} },
  execute: () => {
    process.kill(process.pid, "SIGKILL");
    return errorResult("unreachable");
  },
};
registry.register(crash);
/** Whether the test let the gated tools go on: its RELEASE_FILE exists (none given: at once). */
const released = () => !env.RELEASE_FILE || existsSync(env.RELEASE_FILE);
const label = () => env.WORKER_LABEL || String(process.pid);
const block: Tool = {
  name: "block",
  description:
    "Blocks this worker's event loop (only in a worker started with blocks: true) until the test releases it or `ms` passed, then answers its label",
  parameters: { type: "object", properties: { ms: { type: "number" } }, required: ["ms"] },
  execute: (args) => {
    if (env.BLOCKS === "1") {
      const until = Date.now() + Number(args.ms);
      const pause = new Int32Array(new SharedArrayBuffer(4));
      while (!released() && Date.now() < until) {
        // Blocked: no timer, no lock renewal (a sleep of the thread, not a spin: the machine is shared).
        Atomics.wait(pause, 0, 0, 10);
      }
    }
    return `block: ran in ${label()}`;
  },
};
registry.register({
  name: "gate",
  description:
    "Waits (the event loop free) until the test releases it or `ms` passed, then answers its `text` or else its label",
  parameters: {
    type: "object",
    properties: { ms: { type: "number" }, text: { type: "string" } },
    required: ["ms"],
  },
  execute: async (args, context) => {
    const until = Date.now() + Number(args.ms);
    while (!released() && Date.now() < until) await sleep(10, undefined, { signal: context.signal });
    return args.text === undefined ? `gate: ran in ${label()}` : `gate: ${String(args.text)}`;
  },
});
registry.register(block);

const worker = createToolWorker(registry, {
  connection: { host: "127.0.0.1", port: Number(env.REDIS_PORT), retryStrategy: () => 100 },
  name: env.QUEUE_NAME ?? "toolloop",
  concurrency: Number(env.CONCURRENCY ?? "1"),
  lockDurationMs: Number(env.LOCK_MS ?? "30000"),
  stalledIntervalMs: Number(env.STALLED_MS ?? "30000"),
  timeoutMs: env.TIMEOUT_MS ? Number(env.TIMEOUT_MS) : undefined,
  closeGraceMs: env.CLOSE_GRACE_MS ? Number(env.CLOSE_GRACE_MS) : undefined,
});
send({ type: "ready" });
// Tells the parent the worker got SIGTERM (its own handler ran in the same emit); `once`, so that
// the worker's handler still finds no other listener left and ends the process with SIGTERM again.
process.once("SIGTERM", () => send({ type: "sigterm" }));
let closeAsked = false;
process.on("message", (message: { type?: unknown }) => {
  if (message?.type !== "close" || closeAsked) return;
  closeAsked = true;
  void worker.close().then(() => {
    process.send?.({ pid: process.pid, type: "closed" }, () => process.disconnect?.());
  });
});
process.on("disconnect", () => {
  if (!closeAsked) void worker.close().then(() => process.exit(0));
});
