/**
 * A durable conversation on Restate: `restateAgent` makes a virtual object whose `send` runs the
 * loop with every model call and tool call journaled; a call that needs approval waits on a Restate
 * awakeable that anyone can resolve over HTTP. Starts its own restate-server (from the npm
 * registry's @restatedev/restate-server) on free ports in a temporary directory, serves the agent
 * in this process, registers it, talks to it through the ingress, and stops everything at the end.
 * Run: npx tsx examples/restate-agent.ts
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import * as restate from "@restatedev/restate-sdk";
import { defineTool, ToolRegistry } from "toolloop";
import { durableApproval, restateAgent } from "toolloop/restate";
import { ScriptedProvider, textResponse, toolCallResponse } from "toolloop/testing";
import { z } from "zod";

// ── The agent ───────────────────────────────────────────────────────────────────────────────────
const tools = new ToolRegistry();
tools.register(
  defineTool({
    name: "refund",
    description: "Refunds an order",
    parameters: z.object({ order: z.string() }),
    needsApproval: true,
    // A tool with side effects takes the call id as its idempotency key: a call in flight when the
    // service died runs again.
    execute: ({ order }, context) => `refunded ${order} (idempotency key ${context.toolCallId})`,
  }),
);
const provider = new ScriptedProvider([
  toolCallResponse({ id: "call_refund_1", name: "refund", arguments: { order: "A-17" } }),
  textResponse("Your order A-17 is refunded."),
]);
let pendingApproval: ((awakeableId: string) => void) | undefined;
const approvalAsked = new Promise<string>((resolve) => {
  pendingApproval = resolve;
});

const agent = restateAgent({
  name: "support",
  config: (ctx) => ({
    provider,
    tools,
    maxIterations: 5,
    approve: durableApproval(ctx, {
      // Tell a reviewer (a UI, a chat message): here, this process resolves it below.
      onRequest: (request) => pendingApproval?.(request.awakeableId),
    }),
  }),
  // Restate's default backs off to a minute between attempts; a restarted service goes on at once.
  options: { retryPolicy: { initialInterval: 100, maxInterval: 2_000 } },
});

// ── A restate-server on free ports ──────────────────────────────────────────────────────────────
const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0));
    });
  });
const [ingress, admin, fabric, servicePort] = [await freePort(), await freePort(), await freePort(), await freePort()];
const binaryPackage = `@restatedev/restate-server-${process.platform}-${process.arch}/package.json`;
const binary = join(dirname(createRequire(import.meta.url).resolve(binaryPackage)), "bin", "restate-server");
const dir = mkdtempSync(join(tmpdir(), "restate-agent-"));
const server = spawn(binary, ["--no-logo", "--listen-mode", "tcp"], {
  stdio: "ignore",
  env: {
    ...process.env,
    RESTATE_BASE_DIR: dir,
    RESTATE_BIND_IP: "127.0.0.1",
    RESTATE_BIND_PORT: String(fabric),
    RESTATE_INGRESS__BIND_ADDRESS: `127.0.0.1:${ingress}`,
    RESTATE_ADMIN__BIND_ADDRESS: `127.0.0.1:${admin}`,
    RESTATE_DISABLE_TELEMETRY: "true",
    RESTATE_DEFAULT_NUM_PARTITIONS: "2",
  },
});
const ingressUrl = `http://127.0.0.1:${ingress}`;
const adminUrl = `http://127.0.0.1:${admin}`;

try {
  for (let attempt = 0; ; attempt++) {
    const ready = await fetch(`${adminUrl}/health`).then(
      (response) => response.ok,
      () => false,
    );
    if (ready) break;
    if (attempt > 600) throw new Error("restate-server did not start");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  // ── Serve the agent, register it, talk to it ──────────────────────────────────────────────────
  // The SDK logs each invocation to the console; this example prints only its own lines.
  await restate
    .endpoint()
    .setLogger(() => {})
    .bind(agent)
    .listen(servicePort);
  const registered = await fetch(`${adminUrl}/deployments`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ uri: `http://127.0.0.1:${servicePort}` }),
  });
  console.log(`registered the service: HTTP ${registered.status}`);

  const post = (path: string, body: unknown) =>
    fetch(`${ingressUrl}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    }).then((response) => response.json());

  const reply = post("/support/alice/send", "Please refund order A-17");
  const awakeableId = await approvalAsked;
  console.log(`approval requested: awakeable ${awakeableId.slice(0, 6)}…`);
  // From any process: POST <ingress>/restate/awakeables/<id>/resolve with the decision.
  await fetch(`${ingressUrl}/restate/awakeables/${awakeableId}/resolve`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ approved: true }),
  });
  const result = (await reply) as { content: string; iterations: number };
  console.log(`send → ${result.content} (${result.iterations} model calls)`);
  const history = (await post("/support/alice/history", null)) as { role: string; content: unknown }[];
  for (const message of history) console.log(`  ${message.role.padEnd(9)} ${String(message.content)}`);
} finally {
  server.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
