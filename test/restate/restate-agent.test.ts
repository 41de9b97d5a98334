import * as restate from "@restatedev/restate-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restateAgent } from "../../src/restate/index.js";
import { type RestateTestbed, type SendResult, startRestateTestbed } from "../helpers/restate-testbed.js";

// The real engine (test/helpers/restate-testbed.ts): restate-server, and the service process's
// `agent` and `approvals` objects.

let bed: RestateTestbed;

const send = (object: string, key: string, message: unknown): Promise<SendResult> =>
  bed.send(`/${object}/${key}/send`, message);

beforeAll(async () => {
  bed = await startRestateTestbed();
});

afterAll(async () => {
  await bed?.dispose();
});

describe("restateAgent options", () => {
  it.each([
    ["no options", undefined, /restateAgent: options must be an object/],
    ["an empty name", { name: "", config: {} }, /restateAgent: name must be a non-empty string, got ""/],
    [
      "a config that is neither",
      { name: "agent", config: 3 },
      /restateAgent: config must be a ToolLoopConfig or a function/,
    ],
  ])("rejects %s with a TypeError", (_name, options, message) => {
    expect(() => restateAgent(options as never)).toThrow(TypeError);
    expect(() => restateAgent(options as never)).toThrow(message);
  });

  it('refuses approve: "interrupt" (a TypeError at once; from a config function, a TerminalError that Restate does not retry)', async () => {
    const config = { provider: {} as never, maxIterations: 1, approve: "interrupt" as const };
    expect(() => restateAgent({ name: "agent", config })).toThrow(
      /restateAgent: config.approve must be durableApproval\(ctx, …\)/,
    );
    const agent = restateAgent({ name: "agent", config: () => config }) as unknown as {
      object: { send: (ctx: unknown, message: string) => Promise<unknown> };
    };
    const ctx = { key: "k", get: async () => null };
    const failed = await agent.object.send(ctx, "hi").then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failed).toBeInstanceOf(restate.TerminalError);
    expect((failed as restate.TerminalError).code).toBe(500);
    expect((failed as Error).message).toMatch(/config.approve must be durableApproval/);
  });

  it("is a virtual object named as asked, with send and a shared history", () => {
    const agent = restateAgent({ name: "helper", config: () => ({}) as never }) as unknown as {
      name: string;
      object: Record<string, unknown>;
    };
    expect(agent.name).toBe("helper");
    expect(Object.keys(agent.object).sort()).toEqual(["history", "send"]);
  });
});

describe("restateAgent on a real restate-server", () => {
  it("keys a conversation by the object key: send appends and runs, history reads it", async () => {
    expect(bed.sdkVersion).toMatch(process.env.RESTATE_SDK_DIR ? /^\d+\.\d+\.\d+/ : /^1\.12\./);
    const first = await send("agent", "solo", "chat:one");
    expect(first.content).toBe("echo one");
    expect(first.stopReason).toBe("completed");
    const second = await send("agent", "solo", "chat:two");
    expect(second.content).toBe("echo two");
    const { status, body } = await bed.post("/agent/solo/history", null);
    expect(status).toBe(200);
    const history = body as SendResult["messages"];
    expect(history.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
      "user",
      "assistant",
      "tool",
      "assistant",
    ]);
    expect(history.filter((message) => message.role === "user").map((message) => message.content)).toEqual([
      "chat:one",
      "chat:two",
    ]);
    expect((await bed.post("/agent/nobody/history", null)).body).toEqual([]);
  });

  it.each([
    ["a number", 42],
    ["an object", { text: "hi" }],
    ["null", null],
  ])("answers a message that is %s with HTTP 400 (a TerminalError), never retried", async (_name, message) => {
    const { status, body } = await bed.post("/agent/bad-input/send", message);
    expect(status).toBe(400);
    expect(JSON.stringify(body)).toContain("send takes the user's message as a string");
    // Nothing ran and nothing was stored: the next message is the conversation's first.
    expect((await send("agent", "bad-input", "chat:after")).messages[0]).toEqual({
      role: "user",
      content: "chat:after",
    });
  });

  it("continues a run SIGKILLed while a tool sleeps: journaled model and tool calls never run again", async () => {
    await bed.killService();
    await bed.startService(600_000);
    const pending = send("agent", "crash", "crash:k1");
    const slow = await bed.waitForLog((entry) => entry.kind === "tool" && entry.name === "slow");
    await bed.killService();
    await bed.startService(0);
    const result = await pending;
    expect(result.content).toBe("done k1");
    expect(result.iterations).toBe(3);
    const entries = bed.readLog();
    const models = entries.filter((entry) => entry.kind === "model" && entry.tag === "k1");
    // Each of the three model calls once: the two before the kill replayed from the journal.
    expect(models.map((entry) => entry.step)).toEqual([0, 1, 2]);
    const tools = entries.filter((entry) => entry.kind === "tool" && entry.id?.startsWith("k1-"));
    // The two parallel fast calls ran once each, before the kill; the slow one was in flight: it ran again.
    expect(tools.filter((entry) => entry.name === "fast").map((entry) => entry.id)).toEqual(["k1-0-0-a", "k1-0-0-b"]);
    expect(tools.filter((entry) => entry.name === "fast").every((entry) => entry.pid === slow.pid)).toBe(true);
    const slowRuns = tools.filter((entry) => entry.name === "slow");
    expect(slowRuns).toHaveLength(2);
    expect(slowRuns[1]?.pid).not.toBe(slow.pid);
    expect(result.messages.map((message) => [message.role, message.content])).toEqual([
      ["user", "crash:k1"],
      ["assistant", ""],
      ["tool", "fast a"],
      ["tool", "fast b"],
      ["assistant", ""],
      ["tool", "slept"],
      ["assistant", "done k1"],
    ]);
    // The journal: each step named deterministically, a turn's calls in call order.
    const rows = await bed.query(
      `SELECT j.index, j.entry_type, j.name FROM sys_journal j JOIN sys_invocation i ON j.id = i.id
       WHERE i.target_service_name = 'agent' AND i.target_service_key = 'crash' ORDER BY j.index`,
    );
    expect(rows.filter((row) => row.entry_type === "Command: Run").map((row) => row.name)).toEqual([
      "model 1",
      "tool fast k1-0-0-a",
      "tool fast k1-0-0-b",
      "model 2",
      "tool slow k1-0-1-s",
      "model 3",
    ]);
  });

  it("never interleaves two messages sent to one conversation at once: each turn's messages stay together", async () => {
    await bed.killService();
    await bed.startService(500);
    try {
      // The first turn sleeps in its slow tool while the second message is already waiting.
      const results = await Promise.all([send("agent", "pair", "crash:p1"), send("agent", "pair", "chat:p2")]);
      expect(results.map((result) => result.content)).toEqual(["done p1", "echo p2"]);
    } finally {
      await bed.killService();
      await bed.startService(0);
    }
    const history = (await bed.post("/agent/pair/history", null)).body as SendResult["messages"];
    const users = history.flatMap((message, index) => (message.role === "user" ? [index] : []));
    expect(users).toHaveLength(2);
    // Whichever ran first, its whole turn comes before the other's user message.
    const turns = [history.slice(0, users[1]), history.slice(users[1])];
    const crash = turns.find((turn) => turn[0]?.content === "crash:p1");
    const chat = turns.find((turn) => turn[0]?.content === "chat:p2");
    expect(crash?.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "tool",
      "assistant",
      "tool",
      "assistant",
    ]);
    expect(chat?.map((message) => message.role)).toEqual(["user", "assistant", "tool", "assistant"]);
  });

  it("keeps an approval pending across a service restart; resolved over HTTP, the tool runs once", async () => {
    const pending = send("approvals", "deployer", "approve:prod");
    const request = await bed.waitForLog((entry) => entry.kind === "request" && entry.id?.startsWith("prod-") === true);
    await bed.killService();
    await bed.startService(0);
    const resolved = await bed.post(`/restate/awakeables/${request.awakeableId}/resolve`, { approved: true });
    expect(resolved.status).toBeLessThan(300);
    const result = await pending;
    expect(result.content).toBe("deploy: deployed prod");
    const entries = bed.readLog();
    expect(entries.filter((entry) => entry.kind === "request" && entry.id === request.id)).toHaveLength(1);
    expect(
      entries.filter((entry) => entry.kind === "tool" && entry.name === "deploy" && entry.id === request.id),
    ).toHaveLength(1);
  });

  it("a denial through the awakeable reaches the model as `denied by the user: <reason>`; the tool never runs", async () => {
    const pending = send("approvals", "denied", "approve:staging");
    const request = await bed.waitForLog(
      (entry) => entry.kind === "request" && entry.id?.startsWith("staging-") === true,
    );
    await bed.post(`/restate/awakeables/${request.awakeableId}/resolve`, { approved: false, reason: "freeze" });
    const result = await pending;
    expect(result.content).toBe("deploy: denied by the user: freeze");
    expect(bed.readLog().some((entry) => entry.kind === "tool" && entry.id === request.id)).toBe(false);
  });

  it("runs 50 conversations × 3 turns on one object: every history complete and in order", async () => {
    const keys = Array.from({ length: 50 }, (_, index) => `many-${index}`);
    await Promise.all(
      keys.map(async (key) => {
        for (const turn of [1, 2, 3]) {
          const result = await send("agent", key, `chat:${key}.${turn}`);
          expect(result.content).toBe(`echo ${key}.${turn}`);
        }
      }),
    );
    for (const key of keys) {
      const history = (await bed.post(`/agent/${key}/history`, null)).body as SendResult["messages"];
      expect(history).toHaveLength(12);
      expect(history.filter((message) => message.role === "user").map((message) => message.content)).toEqual([
        `chat:${key}.1`,
        `chat:${key}.2`,
        `chat:${key}.3`,
      ]);
      expect(history.filter((_, index) => index % 4 === 3).map((message) => message.content)).toEqual([
        `echo ${key}.1`,
        `echo ${key}.2`,
        `echo ${key}.3`,
      ]);
    }
  });
});
