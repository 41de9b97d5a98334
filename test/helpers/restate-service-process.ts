// A Restate service endpoint in a child process (test/restate/*.test.ts start it, SIGKILL it and
// start it again). Its objects: `agent` (restateAgent with a scripted model) and `approvals` (the
// same with durableApproval); its service `plain` runs the loop with `durable(ctx)` by hand, inside
// a middleware that logs each model call it sees (`outer`). Every model call, tool start and end, and approval request is
// appended to LOG_FILE as a JSON line: the file outlives the process.
import { appendFileSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import * as restate from "@restatedev/restate-sdk";
import { z } from "zod";
import { defineTool } from "../../src/define-tool.js";
import type { LLMProvider, LLMResponse, Message, ProviderToolCall } from "../../src/provider.js";
import { durable, durableApproval, restateAgent } from "../../src/restate/index.js";
import { runToolLoop } from "../../src/run-tool-loop.js";
import { ToolRegistry } from "../../src/tool-registry.js";

const logFile = process.env.LOG_FILE ?? "";
const slowMs = Number(process.env.SLOW_MS ?? "0");
const port = Number(process.env.SERVICE_PORT);

function log(entry: Record<string, unknown>): void {
  appendFileSync(logFile, `${JSON.stringify({ pid: process.pid, ...entry })}\n`);
}

const call = (id: string, name: string, args: Record<string, unknown> = {}): ProviderToolCall => ({
  id,
  type: "function",
  function: { name, arguments: JSON.stringify(args) },
  name,
  arguments: args,
});

/**
 * The model's answers follow the last user message (`<script>:<tag>`) and how many assistant
 * messages came after it: `crash` → two fast calls at once, then a slow one, then `done <tag>`;
 * `approve` → a `deploy` call that needs approval, then its result quoted; `chat` → an `echo` call,
 * then `echo <tag>`; `boom` → a `boom` call (its tool throws), then its result quoted.
 */
const provider: LLMProvider = {
  getDefaultModel: () => "scripted",
  async chat(messages: Message[]): Promise<LLMResponse> {
    const lastUser = messages.findLastIndex((message) => message.role === "user");
    const text = String(messages[lastUser]?.content ?? "");
    const [script, tag = ""] = text.split(":");
    const step = messages.slice(lastUser).filter((message) => message.role === "assistant").length;
    const id = `${tag}-${lastUser}-${step}`;
    log({ kind: "model", tag, step });
    const tools = (calls: ProviderToolCall[]): LLMResponse => ({
      content: "",
      toolCalls: calls,
      finishReason: "tool_calls",
    });
    const answer = (content: string): LLMResponse => ({ content, toolCalls: [], finishReason: "stop" });
    const lastTool = String(messages.at(-1)?.content ?? "");
    if (script === "crash") {
      if (step === 0) return tools([call(`${id}-a`, "fast", { label: "a" }), call(`${id}-b`, "fast", { label: "b" })]);
      if (step === 1) return tools([call(`${id}-s`, "slow")]);
      return answer(`done ${tag}`);
    }
    if (script === "approve") {
      if (step === 0) return tools([call(`${id}-d`, "deploy", { target: tag })]);
      return answer(`deploy: ${lastTool}`);
    }
    if (script === "boom") {
      if (step === 0) return tools([call(`${id}-b`, "boom")]);
      return answer(`boom: ${lastTool}`);
    }
    if (step === 0) return tools([call(`${id}-e`, "echo", { text: tag })]);
    return answer(`echo ${lastTool}`);
  },
};

const registry = new ToolRegistry();
registry.register(
  defineTool({
    name: "fast",
    description: "returns its label",
    parameters: z.object({ label: z.string() }),
    execute: ({ label }, context) => {
      log({ kind: "tool", name: "fast", id: context.toolCallId, phase: "start" });
      return `fast ${label}`;
    },
  }),
);
registry.register(
  defineTool({
    name: "slow",
    description: "sleeps SLOW_MS",
    parameters: z.object({}),
    execute: async (_args, context) => {
      log({ kind: "tool", name: "slow", id: context.toolCallId, phase: "start" });
      await new Promise((resolve) => setTimeout(resolve, slowMs));
      return "slept";
    },
  }),
);
registry.register(
  defineTool({
    name: "deploy",
    description: "deploys; needs approval",
    parameters: z.object({ target: z.string() }),
    needsApproval: true,
    execute: ({ target }, context) => {
      log({ kind: "tool", name: "deploy", id: context.toolCallId, phase: "start" });
      return `deployed ${target}`;
    },
  }),
);
registry.register(
  defineTool({
    name: "echo",
    description: "echoes",
    parameters: z.object({ text: z.string() }),
    execute: ({ text }) => text,
  }),
);

registry.register(
  defineTool({
    name: "boom",
    description: "throws",
    parameters: z.object({}),
    execute: (_args, context) => {
      log({ kind: "tool", name: "boom", id: context.toolCallId, phase: "start" });
      throw new Error("kaboom");
    },
  }),
);

// Restate's default retry policy backs off to a minute: a restarted service continues within seconds.
const options = { retryPolicy: { initialInterval: 100, maxInterval: 500 } };
const agent = restateAgent({ name: "agent", config: { provider, tools: registry, maxIterations: 5 }, options });
const approvals = restateAgent({
  name: "approvals",
  config: (ctx) => ({
    provider,
    tools: registry,
    maxIterations: 5,
    approve: durableApproval(ctx, {
      onRequest: (request) => log({ kind: "request", awakeableId: request.awakeableId, id: request.toolCallId }),
    }),
  }),
  options,
});

const plain = restate.service({
  name: "plain",
  handlers: {
    run: async (ctx: restate.Context, prompt: string) => {
      const result = await runToolLoop(
        {
          provider,
          tools: registry,
          maxIterations: 5,
          middleware: [
            {
              name: "outer",
              wrapModelCall(request, next) {
                log({ kind: "outer", tag: prompt.split(":")[1], step: request.iteration });
                return next(request);
              },
            },
            durable(ctx),
          ],
        },
        [{ role: "user", content: prompt }],
      );
      const { content, stopReason, iterations, messages } = result;
      return { content, stopReason, iterations, messages };
    },
  },
  options,
});

restate
  .endpoint()
  .bind(agent)
  .bind(approvals)
  .bind(plain)
  .listen(port)
  .then(() => process.send?.({ pid: process.pid, type: "ready", sdkVersion: sdkVersion() }));

/** The version of the SDK this process loaded (RESTATE_SDK_DIR may bring another than the repository's). */
function sdkVersion(): string {
  const manifest = createRequire(import.meta.url).resolve("@restatedev/restate-sdk/package.json");
  return (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version;
}
