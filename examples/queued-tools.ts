/**
 * A queued tool: the loop enqueues the call as a BullMQ job on Redis, a worker runs it (here in
 * the same process; in production, on any machine), and the result comes back into the
 * conversation through `awaitAsync`. Starts its own redis-server (from PATH) in a temporary
 * directory, with persistence off, and stops it at the end.
 * Run: npx tsx examples/queued-tools.ts
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { contentText, type Message, runToolLoop, type Tool, ToolRegistry } from "toolloop";
import { createToolQueue, createToolWorker } from "toolloop/bullmq";
import { ScriptedProvider, textResponse, toolCallResponse } from "toolloop/testing";

const transcribe: Tool = {
  name: "transcribe",
  description: "Transcribes an audio file (slow: runs on a worker)",
  parameters: { type: "object", properties: { file: { type: "string" } }, required: ["file"] },
  execute: async (args) => {
    await new Promise((resolve) => setTimeout(resolve, 200)); // the long work
    return `transcript of ${String(args.file)}: "hello from the worker"`;
  },
};

// ── A local redis-server on a free port ─────────────────────────────────────────────────────────
const port = await new Promise<number>((resolve) => {
  const probe = createServer().listen(0, "127.0.0.1", () => {
    const address = probe.address();
    probe.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0));
  });
});
const dir = mkdtempSync(join(tmpdir(), "queued-tools-"));
const redis = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", ""], {
  stdio: "ignore",
});
const spawnFailed = new Promise<Error>((resolve) => redis.once("error", resolve));
const reachable = async () => {
  for (let attempt = 0; attempt < 200; attempt++) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = new Socket();
      socket.once("connect", () => resolve(true)).once("error", () => resolve(false));
      socket.connect(port, "127.0.0.1");
    });
    if (ok) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return false;
};
const started = await Promise.race([reachable(), spawnFailed.then(() => false)]);
if (!started) {
  console.log("This example needs redis-server on PATH (Debian/Ubuntu: sudo apt-get install -y redis-server).");
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}
const connection = { host: "127.0.0.1", port };

// ── The worker side: a registry with the real tool ──────────────────────────────────────────────
const workerRegistry = new ToolRegistry();
workerRegistry.register(transcribe);
const worker = createToolWorker(workerRegistry, { connection, concurrency: 2 });

// ── The conversation side: the same tool, queued ────────────────────────────────────────────────
const queue = createToolQueue({ connection });
queue.onCompletion(({ toolName, toolCallId, result }) => {
  console.log(`onCompletion: ${toolName} (${toolCallId}) → ${result.forLLM}`);
});
const registry = new ToolRegistry();
registry.register(queue.queued(transcribe));

const provider = new ScriptedProvider([
  toolCallResponse({ id: "call_transcribe_1", name: "transcribe", arguments: { file: "memo.ogg" } }),
  textResponse("I started the transcription; it will arrive shortly."),
  (request) =>
    textResponse(`Here it is: ${contentText(request.messages.at(-1)?.content ?? "").replace(/^\[[^\]]*\] /, "")}`),
]);
const messages: Message[] = [{ role: "user", content: "Transcribe memo.ogg" }];
const result = await runToolLoop(
  { provider, tools: registry, maxIterations: 5, awaitAsync: { timeoutMs: 10_000 } },
  messages,
);

for (const message of result.messages) {
  const calls = message.toolCalls?.map((call) => `${call.name}(${JSON.stringify(call.arguments)})`).join(", ");
  console.log(`${message.role.padEnd(9)} ${message.content}${calls ? ` → calls ${calls}` : ""}`);
}
console.log(`${result.stopReason} after ${result.iterations} model calls`);

await worker.close();
await queue.close();
redis.kill("SIGTERM");
await new Promise((resolve) => redis.once("exit", resolve));
rmSync(dir, { recursive: true, force: true });
