import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  type ApprovalDecision,
  type ApprovalRequest,
  isToolLoopError,
  type Message,
  resumeToolLoop,
  runToolLoop,
  type Tool,
  type ToolLoopCheckpoint,
  type ToolLoopConfig,
  type ToolLoopEvent,
  type ToolLoopMiddleware,
  type ToolLoopResult,
  ToolResult,
} from "../src/index.js";
import { ScriptedProvider, type ScriptStep, textResponse, toolCallResponse } from "../src/testing/index.js";
import { backgroundTool, registryWith, tool } from "./helpers/loop-tools.js";

const user: Message[] = [{ role: "user", content: "tidy up" }];

/** Tools that record each run as `<name>:<args.name>`: `read` runs freely, `delete` and `pay` need approval. */
function setup(extra: { deleteTool?: Partial<Tool>; more?: Tool[] } = {}) {
  const ran: string[] = [];
  const make = (name: string, fields: Partial<Tool> = {}) =>
    tool(
      name,
      (args) => {
        ran.push(`${name}:${String(args.name)}`);
        return `${name} ${String(args.name)} done`;
      },
      fields,
    );
  const tools = registryWith(
    make("read"),
    make("delete", { needsApproval: true, ...extra.deleteTool }),
    make("pay", { needsApproval: true }),
    ...(extra.more ?? []),
  );
  return { tools, ran };
}

/** The tool messages of a transcript as `<id> <content>` (`error:` marked). */
const answers = (messages: Message[]) =>
  messages
    .filter((message) => message.role === "tool")
    .map((message) => `${message.toolCallId} ${message.isError === true ? "error: " : ""}${String(message.content)}`);

/** The ids of the last assistant message's calls that have no tool message after it. */
function unanswered(messages: Message[]): string[] {
  let last = messages.length - 1;
  while (last >= 0 && messages[last]?.role !== "assistant") last--;
  const answered = new Set(messages.slice(last + 1).map((message) => message.toolCallId));
  return (messages[last]?.toolCalls ?? []).map((call) => call.id).filter((id) => !answered.has(id));
}

const mixedTurn = (): ScriptStep =>
  toolCallResponse([
    { id: "c1", name: "read", arguments: { name: "a" } },
    { id: "c2", name: "delete", arguments: { name: "x" } },
    { id: "c3", name: "read", arguments: { name: "b" } },
  ]);

/** The first run of a resume test: `steps` (the mixed turn by default) with approve: "interrupt" and
 * maxIterations 5 (`config` adds or overrides fields); checks that it stopped interrupted. */
async function runInterrupted(
  tools: ToolLoopConfig["tools"],
  steps: ScriptStep[] = [mixedTurn()],
  config: Partial<ToolLoopConfig> = {},
): Promise<ToolLoopResult> {
  const provider = new ScriptedProvider(steps);
  const first = await runToolLoop({ provider, tools, maxIterations: 5, approve: "interrupt", ...config }, user);
  expect(first.stopReason).toBe("interrupted");
  return first;
}

/** Resumes `first` from its checkpoint after a JSON round trip (all a store keeps) with `decisions`;
 * the resumed run has approve: "interrupt", maxIterations 5 and a provider that answers "ok" unless
 * `config` says otherwise. */
function resumeFromJson(
  first: ToolLoopResult,
  decisions: Record<string, ApprovalDecision>,
  config: Partial<ToolLoopConfig>,
): Promise<ToolLoopResult> {
  const checkpoint = JSON.parse(JSON.stringify(first.checkpoint)) as ToolLoopCheckpoint;
  const provider = new ScriptedProvider([textResponse("ok")]);
  return resumeToolLoop({ provider, maxIterations: 5, approve: "interrupt", ...config }, checkpoint, {}, decisions);
}

describe('approve: "interrupt"', () => {
  it("runs the turn's other calls (answers in call order), then resolves interrupted with the waiting call and a checkpoint", async () => {
    const { tools, ran } = setup();
    const provider = new ScriptedProvider([mixedTurn()]);
    const result = await runToolLoop({ provider, tools, maxIterations: 5, approve: "interrupt" }, user);
    expect(result.stopReason).toBe("interrupted");
    expect(result.content).toBe("");
    expect(result.iterations).toBe(1);
    expect(ran).toEqual(["read:a", "read:b"]);
    expect(result.interruptions).toEqual([{ toolCallId: "c2", toolName: "delete", arguments: { name: "x" } }]);
    // The transcript up to the answers of the calls that ran; the waiting one unanswered.
    expect(result.messages.map((message) => message.role)).toEqual(["user", "assistant", "tool", "tool"]);
    expect(answers(result.messages)).toEqual(["c1 read a done", "c3 read b done"]);
    const checkpoint = result.checkpoint as ToolLoopCheckpoint;
    expect(checkpoint.messages).toEqual(result.messages);
    expect(unanswered(checkpoint.messages)).toEqual(["c2"]);
    expect(checkpoint.iterations).toBe(1);
    expect(checkpoint.stopped).toBeUndefined();
    provider.assertDone();
  });

  it("a run without calls that need approval has no interruptions and no checkpoint", async () => {
    const { tools } = setup();
    const provider = new ScriptedProvider([
      toolCallResponse({ name: "read", arguments: { name: "a" } }),
      textResponse("ok"),
    ]);
    const result = await runToolLoop({ provider, tools, maxIterations: 5, approve: "interrupt" }, user);
    expect(result.stopReason).toBe("completed");
    expect(result.interruptions).toBeUndefined();
    expect(result.checkpoint).toBeUndefined();
  });

  it("every call of a turn waiting: no tool message, no tool run", async () => {
    const { tools, ran } = setup();
    const result = await runInterrupted(tools, [
      toolCallResponse({ id: "d", name: "delete", arguments: { name: "x" } }),
    ]);
    expect(ran).toEqual([]);
    expect(result.messages.at(-1)?.role).toBe("assistant");
    expect(unanswered((result.checkpoint as ToolLoopCheckpoint).messages)).toEqual(["d"]);
  });

  it("resumes from the checkpoint after a JSON round trip: an approved call runs, then the loop goes on", async () => {
    const { tools, ran } = setup();
    const first = await runInterrupted(tools);
    ran.length = 0;
    const provider = new ScriptedProvider([textResponse("all done")]);
    const result = await resumeFromJson(first, { c2: true }, { provider, tools });
    expect(ran).toEqual(["delete:x"]); // the calls answered before the interruption never run again
    expect(result.stopReason).toBe("completed");
    expect(result.content).toBe("all done");
    expect(result.iterations).toBe(2);
    expect(answers(result.messages)).toEqual(["c1 read a done", "c3 read b done", "c2 delete x done"]);
    expect(result.interruptions).toBeUndefined();
    // The model saw every call answered.
    expect(unanswered(provider.calls[0]?.messages as Message[])).toEqual([]);
  });

  it("interrupted in one process, resumed in another from the JSON text alone", async () => {
    const { tools, ran } = setup();
    const first = await runInterrupted(tools, [
      toolCallResponse([
        { id: "x1", name: "read", arguments: { name: "a" } },
        { id: "x2", name: "delete", arguments: { name: "x" } },
        { id: "x3", name: "pay", arguments: { name: "bill" } },
      ]),
    ]);
    const input = JSON.stringify({ checkpoint: first.checkpoint, decisions: { x3: false, x2: true } });
    const root = fileURLToPath(new URL("..", import.meta.url));
    const output = await new Promise<string>((resolve, reject) => {
      const child = execFile(
        `${root}node_modules/.bin/tsx`,
        ["test/helpers/resume-interrupted-process.ts"],
        { cwd: root, timeout: 120_000 },
        (error, stdout) => (error ? reject(error) : resolve(stdout)),
      );
      child.stdin?.end(input);
    });
    expect(ran).toEqual(["read:a"]);
    expect(JSON.parse(output)).toEqual({
      ran: ["delete:x"],
      stopReason: "completed",
      content: "resumed elsewhere",
      answers: ["x1 read a done", "x2 delete x done", "x3 error: denied by the user"],
    });
  }, 130_000);

  it("a denial answers `denied by the user: <reason>`, the tool never runs; a huge reason is bounded", async () => {
    const { tools, ran } = setup();
    const first = await runInterrupted(tools);
    ran.length = 0;
    const checkpoint = JSON.parse(JSON.stringify(first.checkpoint)) as ToolLoopCheckpoint;
    const config = { provider: new ScriptedProvider([textResponse("ok")]), tools, maxIterations: 5 };
    const result = await resumeToolLoop(config, checkpoint, {}, { c2: { approved: false, reason: "keep it" } });
    expect(ran).toEqual([]);
    expect(answers(result.messages).at(-1)).toBe("c2 error: denied by the user: keep it");

    const huge = await resumeToolLoop(
      { provider: new ScriptedProvider([textResponse("ok")]), tools, maxIterations: 5 },
      checkpoint,
      {},
      { c2: { approved: false, reason: "x".repeat(1_000_000) } },
    );
    const text = String(huge.messages.find((message) => message.toolCallId === "c2")?.content);
    expect(text.startsWith("denied by the user: xxx")).toBe(true);
    expect(text.length).toBeLessThan(1_100);
    expect(text).toMatch(/more characters cut\]$/);
  });

  it("a waiting call without a decision is interrupted again: never run, never denied", async () => {
    const { tools, ran } = setup();
    const provider = new ScriptedProvider([
      toolCallResponse([
        { id: "p1", name: "delete", arguments: { name: "x" } },
        { id: "p2", name: "pay", arguments: { name: "bill" } },
      ]),
    ]);
    const config: ToolLoopConfig = { provider, tools, maxIterations: 5, approve: "interrupt" };
    const first = await runToolLoop(config, user);
    const events: ToolLoopEvent[] = [];
    // Without approve in the config: still interrupted (a decision was given, so none is refused).
    const again = await resumeToolLoop(
      { provider, tools, maxIterations: 5, onEvent: (event) => void events.push(event) },
      JSON.parse(JSON.stringify(first.checkpoint)),
      {},
      { p1: true },
    );
    expect(ran).toEqual(["delete:x"]);
    expect(again.stopReason).toBe("interrupted");
    expect(again.interruptions).toEqual([{ toolCallId: "p2", toolName: "pay", arguments: { name: "bill" } }]);
    expect(answers(again.messages)).toEqual(["p1 delete x done"]);
    expect(unanswered((again.checkpoint as ToolLoopCheckpoint).messages)).toEqual(["p2"]);
    expect(events.filter((event) => event.type === "tool-approval-requested")).toHaveLength(1);
    // And with no decisions at all and approve: "interrupt": interrupted once more, nothing run.
    const third = await resumeToolLoop(config, JSON.parse(JSON.stringify(again.checkpoint)));
    expect(third.stopReason).toBe("interrupted");
    expect(third.interruptions?.map((each) => each.toolCallId)).toEqual(["p2"]);
    expect(ran).toEqual(["delete:x"]);
  });

  it("three waiting calls with decisions given in another order: each decision reaches its own call", async () => {
    const { tools, ran } = setup();
    const first = await runInterrupted(tools, [
      toolCallResponse([
        { id: "k1", name: "delete", arguments: { name: "one" } },
        { id: "k2", name: "delete", arguments: { name: "two" } },
        { id: "k3", name: "delete", arguments: { name: "three" } },
      ]),
    ]);
    expect(first.interruptions?.map((each) => each.toolCallId)).toEqual(["k1", "k2", "k3"]);
    const result = await resumeFromJson(
      first,
      { k3: { approved: false, reason: "not three" }, k1: { approved: true }, k2: false },
      { tools },
    );
    expect(ran).toEqual(["delete:one"]);
    expect(answers(result.messages)).toEqual([
      "k1 delete one done",
      "k2 error: denied by the user",
      "k3 error: denied by the user: not three",
    ]);
  });

  it("a decision for an id that is not waiting rejects with a TypeError before anything runs", async () => {
    const { tools, ran } = setup();
    const first = await runInterrupted(tools);
    for (const id of ["c1", "nope", "__proto__", "constructor"]) {
      ran.length = 0;
      const provider = new ScriptedProvider([textResponse("never")]);
      const decisions = JSON.parse(`{"c2": true, ${JSON.stringify(id)}: true}`) as Record<string, boolean>;
      const resumed = resumeFromJson(first, decisions, { provider, tools });
      await expect(resumed).rejects.toThrow(TypeError);
      await expect(resumed).rejects.toThrow(
        /resumeToolLoop: decisions must be keyed by the ids of the calls left waiting, got ".*"/,
      );
      expect(ran).toEqual([]);
      expect(provider.calls).toHaveLength(0);
    }
    expect(({} as Record<string, unknown>).c2).toBeUndefined();
  });

  it.each<[string, unknown]>([
    ["null", null],
    ["a string", "yes"],
    ["an array", [true]],
    ["a Map", new Map([["c2", true]])],
    ["a decision that is a string", { c2: "yes" }],
    ["a decision with approved not a boolean", { c2: { approved: "true" } }],
    ["a decision with a reason not a string", { c2: { approved: false, reason: 42 } }],
    ["a decision that is null", { c2: null }],
  ])("decisions as %s reject with a TypeError", async (_case, decisions) => {
    const { tools, ran } = setup();
    const first = await runInterrupted(tools);
    ran.length = 0;
    const resumed = resumeToolLoop(
      { provider: new ScriptedProvider([]), tools, maxIterations: 5, approve: "interrupt" },
      first.checkpoint as ToolLoopCheckpoint,
      {},
      decisions as Record<string, boolean>,
    );
    await expect(resumed).rejects.toThrow(TypeError);
    expect(ran).toEqual([]);
  });

  it("a call whose id is __proto__ (the model chose it) is decided through a JSON body like any other", async () => {
    const { tools, ran } = setup();
    const first = await runInterrupted(tools, [
      toolCallResponse({ id: "__proto__", name: "delete", arguments: { name: "x" } }),
    ]);
    const id = first.interruptions?.[0]?.toolCallId as string;
    const decisions = JSON.parse(`{${JSON.stringify(id)}: true}`) as Record<string, boolean>;
    const result = await resumeFromJson(first, decisions, { tools });
    expect(ran).toEqual(["delete:x"]);
    expect(result.stopReason).toBe("completed");
    expect(Object.prototype).not.toHaveProperty("approved");
  });

  it("emits tool-approval-requested per waiting call and no tool-call-start/-end until it runs", async () => {
    const { tools } = setup();
    const events: ToolLoopEvent[] = [];
    const onEvent = (event: ToolLoopEvent) => void events.push(event);
    const first = await runInterrupted(tools, [mixedTurn()], { onEvent });
    const calls = (type: string) =>
      events.filter((event) => event.type === type).map((event) => (event as { toolCallId: string }).toolCallId);
    expect(calls("tool-approval-requested")).toEqual(["c2"]);
    expect(events.find((event) => event.type === "tool-approval-requested")).toEqual({
      type: "tool-approval-requested",
      iteration: 1,
      toolCallId: "c2",
      toolName: "delete",
      arguments: { name: "x" },
    });
    expect(calls("tool-call-start")).toEqual(["c1", "c3"]);
    expect(calls("tool-call-end").sort()).toEqual(["c1", "c3"]);
    const loopEnd = events.at(-1) as Extract<ToolLoopEvent, { type: "loop-end" }>;
    expect(loopEnd.type).toBe("loop-end");
    expect(loopEnd.result).toBe(first);
    events.length = 0;
    await resumeFromJson(first, { c2: true }, { tools, onEvent });
    expect(calls("tool-approval-requested")).toEqual([]);
    expect(calls("tool-call-start")).toEqual(["c2"]);
    expect(calls("tool-call-end")).toEqual(["c2"]);
  });

  it("onCheckpoint receives the same checkpoint as result.checkpoint, last", async () => {
    const { tools } = setup();
    const seen: ToolLoopCheckpoint[] = [];
    const result = await runInterrupted(tools, [mixedTurn()], {
      onCheckpoint: (checkpoint) => void seen.push(checkpoint),
    });
    expect(seen.at(-1)).toBe(result.checkpoint);
    expect(JSON.parse(JSON.stringify(seen.at(-1)))).toEqual(result.checkpoint);
  });

  it("on resume with a function as approve, calls without a decision go to it (the decided ones never do)", async () => {
    const { tools, ran } = setup();
    const first = await runInterrupted(tools, [
      toolCallResponse([
        { id: "q1", name: "delete", arguments: { name: "x" } },
        { id: "q2", name: "pay", arguments: { name: "bill" } },
      ]),
    ]);
    const asked: string[] = [];
    const approve = (request: ApprovalRequest) => {
      asked.push(request.toolCallId);
      return { approved: false, reason: "asked later" };
    };
    const result = await resumeFromJson(first, { q1: true }, { tools, approve });
    expect(asked).toEqual(["q2"]);
    expect(ran).toEqual(["delete:x"]);
    expect(answers(result.messages)).toEqual(["q1 delete x done", "q2 error: denied by the user: asked later"]);
  });

  it("a needsApproval predicate is asked once: false runs the call, true (or a throw) leaves it waiting", async () => {
    const asked: string[] = [];
    const { tools, ran } = setup({
      deleteTool: {
        needsApproval: (args: Record<string, unknown>) => {
          asked.push(String(args.name));
          if (args.name === "boom") throw new Error("broken predicate");
          return args.name === "important";
        },
      },
    });
    const result = await runInterrupted(tools, [
      toolCallResponse([
        { id: "n1", name: "delete", arguments: { name: "temp" } },
        { id: "n2", name: "delete", arguments: { name: "important" } },
        { id: "n3", name: "delete", arguments: { name: "boom" } },
      ]),
    ]);
    expect(asked).toEqual(["temp", "important", "boom"]);
    expect(ran).toEqual(["delete:temp"]);
    expect(result.interruptions?.map((each) => each.toolCallId)).toEqual(["n2", "n3"]);
  });

  it("maxIterations reached in the interrupted turn: interrupted; the resume answers the calls, then max_iterations", async () => {
    const { tools, ran } = setup();
    const first = await runInterrupted(tools, [mixedTurn()], { maxIterations: 1 });
    const provider = new ScriptedProvider([]);
    const result = await resumeFromJson(first, { c2: true }, { provider, tools, maxIterations: 1 });
    expect(result.stopReason).toBe("max_iterations");
    expect(ran.at(-1)).toBe("delete:x");
    expect(unanswered(result.messages)).toEqual([]);
    expect(provider.calls).toHaveLength(0);
  });

  it("a loop-breaking tool that succeeded in the interrupted turn: interrupted; the resume stops with it, no provider call", async () => {
    const finish = tool("finish", () => "the task is done", { loopBreaking: true });
    const { tools, ran } = setup({ more: [finish] });
    const first = await runInterrupted(tools, [
      toolCallResponse([
        { id: "f", name: "finish" },
        { id: "d", name: "delete", arguments: { name: "x" } },
      ]),
    ]);
    const provider = new ScriptedProvider([]);
    const result = await resumeFromJson(first, { d: true }, { provider, tools });
    expect(ran).toEqual(["delete:x"]);
    expect(result.stopReason).toBe("loop_breaking_tool");
    expect(result.stoppedBy).toEqual({ toolName: "finish", toolCallId: "f" });
    expect(result.content).toBe("the task is done");
    expect(provider.calls).toHaveLength(0);
  });

  it("a turn whose answered results all handled the response, with a call waiting: interrupted, the checkpoint records no stop", async () => {
    const handled = tool("handled", () => new ToolResult({ forLLM: "sent", responseHandled: true }));
    const { tools, ran } = setup({ more: [handled] });
    const first = await runInterrupted(tools, [
      toolCallResponse([
        { id: "h", name: "handled" },
        { id: "d", name: "delete", arguments: { name: "x" } },
      ]),
    ]);
    expect(first.checkpoint?.stopped).toBeUndefined();
    const result = await resumeFromJson(first, { d: true }, { tools });
    expect(ran).toEqual(["delete:x"]);
    expect(result.stopReason).toBe("completed");
  });

  it("a run aborted during the turn rejects with every call answered, the waiting one as aborted", async () => {
    const controller = new AbortController();
    const stopper = tool("stopper", () => {
      controller.abort(new Error("user left"));
      return "stopped";
    });
    const { tools } = setup({ more: [stopper] });
    const provider = new ScriptedProvider([
      toolCallResponse([
        { id: "w", name: "delete", arguments: { name: "x" } },
        { id: "s", name: "stopper" },
      ]),
    ]);
    const error = await runToolLoop({ provider, tools, maxIterations: 5, approve: "interrupt" }, user, {
      signal: controller.signal,
    }).catch((caught: unknown) => caught);
    expect(isToolLoopError(error) && error.code).toBe("aborted");
    const messages = (error as { messages: Message[] }).messages;
    expect(unanswered(messages)).toEqual([]);
    expect(answers(messages)[0]).toMatch(/^w error: .*aborted while waiting for approval/);
  });

  it("a listener failure while a call waits rejects with every call answered", async () => {
    const { tools } = setup();
    const onEvent = (event: ToolLoopEvent) => {
      if (event.type === "tool-approval-requested") throw new Error("listener broke");
    };
    const error = await runToolLoop(
      { provider: new ScriptedProvider([mixedTurn()]), tools, maxIterations: 5, approve: "interrupt", onEvent },
      user,
    ).catch((caught: unknown) => caught);
    expect(isToolLoopError(error)).toBe(true);
    const messages = (error as { messages: Message[] }).messages;
    expect(unanswered(messages)).toEqual([]);
    expect(answers(messages)).toContain('c2 error: tool "delete" was not run: the loop is stopping');
  });

  it("with maxConcurrency 1 a waiting call holds no slot: the others run", async () => {
    const { tools, ran } = setup();
    await runInterrupted(tools, [mixedTurn()], { maxConcurrency: 1 });
    expect(ran).toEqual(["read:a", "read:b"]);
  });

  it("a resumed approved call goes through the middleware's wrapToolCall", async () => {
    const { tools } = setup();
    const first = await runInterrupted(tools);
    const seen: string[] = [];
    const spy: ToolLoopMiddleware = {
      name: "spy",
      wrapToolCall: async (request, next) => {
        seen.push(`${request.toolCallId} ${request.toolName}`);
        const answer = await next(request);
        return answer;
      },
    };
    const result = await resumeFromJson(first, { c2: true }, { tools, middleware: [spy] });
    expect(seen).toEqual(["c2 delete"]);
    expect(result.stopReason).toBe("completed");
  });

  it("a wrapRun that awaits the run and returns its result passes an interrupted one on (every stop reason is a result)", async () => {
    const { tools } = setup();
    const seen: string[] = [];
    const observer: ToolLoopMiddleware = {
      name: "observer",
      async wrapRun(request, next) {
        const answer = await next(request);
        seen.push(answer.stopReason);
        return answer;
      },
    };
    const result = await runInterrupted(tools, [mixedTurn()], { middleware: [observer] });
    expect(seen).toEqual(["interrupted"]);
    expect(result.stopReason).toBe("interrupted");
    expect(result.interruptions?.map((call) => call.toolCallId)).toEqual(["c2"]);
  });

  it("an async tool in the interrupted turn is in the checkpoint's pendingAsync", async () => {
    const { background } = backgroundTool();
    const { tools } = setup({ more: [background] });
    const result = await runInterrupted(tools, [
      toolCallResponse([
        { id: "bg", name: "background" },
        { id: "d", name: "delete", arguments: { name: "x" } },
      ]),
    ]);
    expect(result.checkpoint?.pendingAsync).toEqual([{ toolCallId: "bg", toolName: "background" }]);
  });

  it('approve must be a function or "interrupt"', async () => {
    const { tools } = setup();
    const run = runToolLoop(
      { provider: new ScriptedProvider([]), tools, maxIterations: 5, approve: "ask" as never },
      user,
    );
    await expect(run).rejects.toThrow('runToolLoop: approve must be a function or "interrupt", got "ask"');
  });
});
