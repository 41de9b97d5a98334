// A conversation with queued tools in its own process, for the test that kills the enqueuing
// process: it saves every checkpoint to CHECKPOINT_FILE and resumes from it when it exists. With
// HANG_AT=<n>-before-save or <n>-after-save it stops at the n-th checkpoint (before or after
// saving it) and waits to be killed. Reports checkpoints and the result to its parent over IPC.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createToolQueue, type ToolCompletion } from "../../src/bullmq/index.js";
import {
  type Message,
  resumeToolLoop,
  runToolLoop,
  type ToolLoopCheckpoint,
  type ToolLoopConfig,
  ToolRegistry,
} from "../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing/index.js";
import { testTools } from "./bullmq-tools.js";

const env = process.env;
const file = env.CHECKPOINT_FILE as string;
const send = (message: Record<string, unknown>) => process.send?.({ pid: process.pid, ...message });
const CALLS = 3;

const queue = createToolQueue({
  connection: { host: "127.0.0.1", port: Number(env.REDIS_PORT), retryStrategy: () => 100 },
  name: env.QUEUE_NAME ?? "toolloop",
});
const registry = new ToolRegistry();
registry.register(queue.queued(testTools().find((tool) => tool.name === "slow") as never));

const asyncPrefix = "[async result from ";
/** The model: calls the tool three times, then waits until it has read every result, then sums up. */
const respond = ({ messages }: { messages: Message[] }) => {
  if (!messages.some((message) => message.role === "assistant" && (message.toolCalls?.length ?? 0) > 0)) {
    return toolCallResponse(
      Array.from({ length: CALLS }, (_, index) => ({
        id: `call_resume_${index}`,
        name: "slow",
        arguments: { ms: Number(env.SLOW_MS ?? "1000"), text: String(index) },
      })),
    );
  }
  const results = messages
    .filter((message) => message.role === "user" && (message.content as string).startsWith(asyncPrefix))
    .map((message) => (message.content as string).replace(/^\[[^\]]*\] /, ""))
    .sort();
  return textResponse(results.length < CALLS ? "waiting" : `done: ${results.join(" | ")}`);
};

let checkpoints = 0;
const config: ToolLoopConfig = {
  provider: new ScriptedProvider(Array.from({ length: 10 }, () => respond)),
  tools: registry,
  maxIterations: 10,
  // A safety net past the test's own limit (90 s): the results take seconds on a loaded machine.
  awaitAsync: { timeoutMs: 120_000 },
  onCheckpoint: async (checkpoint) => {
    checkpoints++;
    const hang = env.HANG_AT === `${checkpoints}-before-save` || env.HANG_AT === `${checkpoints}-after-save`;
    if (!(hang && env.HANG_AT?.endsWith("before-save"))) writeFileSync(file, JSON.stringify(checkpoint));
    send({ type: "checkpoint", n: checkpoints, pendingAsync: checkpoint.pendingAsync.length, hang });
    if (hang) await new Promise(() => {}); // wait to be killed
  },
};

/** Waits for the completions of the checkpoint's pending calls and appends them, as the model reads them. */
async function collectPending(checkpoint: ToolLoopCheckpoint): Promise<void> {
  const ids = checkpoint.pendingAsync.map((pending) => pending.toolCallId);
  if (ids.length === 0) return;
  const got = new Map<string, ToolCompletion>();
  queue.onCompletion((completion) => {
    if (ids.includes(completion.toolCallId)) got.set(completion.toolCallId, completion);
  });
  for (const completion of await queue.completions(ids)) got.set(completion.toolCallId, completion);
  while (got.size < ids.length) await new Promise((resolve) => setTimeout(resolve, 20));
  for (const id of ids) {
    const { toolName, result } = got.get(id) as ToolCompletion;
    checkpoint.messages.push({ role: "user", content: `${asyncPrefix}${toolName} (${id})] ${result.contentForLLM()}` });
  }
  checkpoint.pendingAsync = [];
}

let result: Awaited<ReturnType<typeof runToolLoop>>;
if (existsSync(file)) {
  const checkpoint = JSON.parse(readFileSync(file, "utf8")) as ToolLoopCheckpoint;
  send({ type: "resuming", messages: checkpoint.messages.length, pendingAsync: checkpoint.pendingAsync.length });
  await collectPending(checkpoint);
  result = await resumeToolLoop(config, checkpoint);
} else {
  result = await runToolLoop(config, [{ role: "user", content: "run the three jobs" }]);
}
send({ type: "result", content: result.content, messages: result.messages });
await queue.close();
process.disconnect?.();
