/**
 * Approval in a stateless HTTP server: `approve: "interrupt"` ends the request's run when a call
 * needs a person, with the waiting calls and a JSON checkpoint; the server stores the checkpoint
 * and answers. A later request carries the person's decisions, and `resumeToolLoop` continues from
 * the stored JSON — no process holds the conversation in between (any server could take it).
 * Runs on the scripted provider and 127.0.0.1 (no API key, no network).
 * Run: npx tsx examples/approval-over-http.ts
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type ApprovalDecision,
  resumeToolLoop,
  runToolLoop,
  type ToolLoopCheckpoint,
  type ToolLoopConfig,
  type ToolLoopResult,
  ToolRegistry,
} from "toolloop";
import { ScriptedProvider, textResponse, toolCallResponse } from "toolloop/testing";

const files = new Set(["notes.txt", "draft.md", "thesis.pdf"]);
const registry = new ToolRegistry();
registry.register({
  name: "list_files",
  description: "Lists the files",
  parameters: { type: "object", properties: {} },
  execute: () => [...files].join(", "),
});
registry.register({
  name: "delete_file",
  description: "Deletes a file",
  parameters: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
  needsApproval: true,
  execute: (args) => {
    files.delete(String(args.name));
    return `deleted ${String(args.name)}`;
  },
});

const provider = new ScriptedProvider([
  toolCallResponse([
    { name: "list_files" },
    { name: "delete_file", arguments: { name: "draft.md" } },
    { name: "delete_file", arguments: { name: "thesis.pdf" } },
  ]),
  textResponse("I deleted draft.md; you asked me to keep thesis.pdf."),
]);
const config: ToolLoopConfig = { provider, tools: registry, maxIterations: 5, approve: "interrupt" };

// The server's only state: checkpoints as JSON text (a database in a real deployment).
const store = new Map<string, string>();

/** What a request answers: the waiting calls and where to send the decisions, or the final answer. */
function reply(conversationId: string, result: ToolLoopResult) {
  if (result.stopReason !== "interrupted") return { status: "done", content: result.content };
  store.set(conversationId, JSON.stringify(result.checkpoint));
  return { status: "needs-approval", conversationId, interruptions: result.interruptions };
}

async function readJson(request: IncomingMessage): Promise<Record<string, unknown>> {
  let body = "";
  for await (const chunk of request) body += chunk;
  return JSON.parse(body) as Record<string, unknown>;
}

const server = createServer(async (request, response) => {
  try {
    const body = await readJson(request);
    let answer: unknown;
    if (request.url === "/chat") {
      const result = await runToolLoop(config, [{ role: "user", content: String(body.message) }]);
      answer = reply(String(body.conversationId), result);
    } else {
      const conversationId = String(body.conversationId);
      const saved = store.get(conversationId);
      if (saved === undefined) throw new TypeError(`no conversation ${conversationId} waits for decisions`);
      const checkpoint = JSON.parse(saved) as ToolLoopCheckpoint;
      const decisions = body.decisions as Record<string, ApprovalDecision>;
      answer = reply(conversationId, await resumeToolLoop(config, checkpoint, {}, decisions));
    }
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
  } catch (error) {
    // resumeToolLoop rejects bad decisions (an id that is not waiting …) with a TypeError, before anything runs.
    const status = error instanceof TypeError ? 400 : 500;
    response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ error: String(error) }));
  }
});
server.listen(0, "127.0.0.1");
await new Promise((resolve) => server.once("listening", resolve));
const { port } = server.address() as AddressInfo;

async function post(path: string, body: unknown) {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { method: "POST", body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

// 1. The user asks; the run stops at the deletions and the request returns.
const first = await post("/chat", { conversationId: "c-1", message: "Clean up my drafts and old files." });
const waiting = first.body.interruptions as { toolCallId: string; toolName: string; arguments: { name: string } }[];
console.log(
  `POST /chat → ${first.body.status}: ${waiting.map((call) => `${call.toolName}(${call.arguments.name})`).join(", ")}`,
);
console.log(
  `stored: ${store.get("c-1")?.length} bytes of checkpoint JSON; files still there: ${[...files].join(", ")}`,
);

// 2. A decision for a call that is not waiting is refused before anything runs.
const wrong = await post("/approve", { conversationId: "c-1", decisions: { "not-a-call": true } });
console.log(`POST /approve with an unknown id → ${wrong.status} ${String(wrong.body.error)}`);

// 3. The person decides (in any order, by call id): keep the thesis.
const decisions: Record<string, ApprovalDecision> = {};
for (const call of waiting) {
  decisions[call.toolCallId] =
    call.arguments.name === "thesis.pdf" ? { approved: false, reason: "keep the thesis" } : true;
}
const second = await post("/approve", { conversationId: "c-1", decisions });
console.log(`POST /approve → ${second.body.status}: ${String(second.body.content)}`);
console.log(`files left: ${[...files].join(", ")}`);
server.close();
