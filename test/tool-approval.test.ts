import { describe, expect, it, vi } from "vitest";
import {
  type ApprovalRequest,
  isToolLoopError,
  type Message,
  runToolLoop,
  type Tool,
  type ToolContext,
  type ToolLoopConfig,
  ToolRegistry,
} from "../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../src/testing/index.js";

const user: Message[] = [{ role: "user", content: "clean up" }];

function tool(name: string, extra: Partial<Tool> = {}, execute: Tool["execute"] = () => `${name} ran`): Tool {
  return { name, description: name, parameters: { type: "object" }, execute: vi.fn(execute), ...extra };
}

function registryWith(...tools: Tool[]): ToolRegistry {
  const registry = new ToolRegistry();
  for (const each of tools) registry.register(each);
  return registry;
}

/** One turn calling `calls`, then "done"; returns the run and the tool messages' texts by id. */
async function run(
  config: Omit<ToolLoopConfig, "provider" | "maxIterations">,
  calls: Parameters<typeof toolCallResponse>[0],
) {
  const provider = new ScriptedProvider([toolCallResponse(calls), textResponse("done")]);
  const result = await runToolLoop({ provider, maxIterations: 3, ...config }, user);
  const answers = Object.fromEntries(
    result.messages
      .filter((message) => message.role === "tool")
      .map((message) => [message.toolCallId, message.content]),
  );
  return { result, answers, provider };
}

describe("approval (issue 12)", () => {
  it.each([
    ["true", true, "delete ran"],
    ["{ approved: true }", { approved: true }, "delete ran"],
    ["false", false, "denied by the user"],
    [
      "{ approved: false, reason }",
      { approved: false, reason: "not on Fridays" },
      "denied by the user: not on Fridays",
    ],
    ["{ approved: false } without a reason", { approved: false }, "denied by the user"],
    ["anything else (fail closed)", "yes" as never, "denied by the user"],
  ])("approve returning %s", async (_case, decision, answer) => {
    const remove = tool("delete", { needsApproval: true });
    const approve = vi.fn(() => decision);
    const { answers, result } = await run(
      { tools: registryWith(remove), approve },
      { id: "d", name: "delete", arguments: { path: "/tmp/x" } },
    );
    expect(answers.d).toBe(answer);
    expect(remove.execute).toHaveBeenCalledTimes(answer === "delete ran" ? 1 : 0);
    expect(result.stopReason).toBe("completed"); // the model read the denial and went on
    const [request, context] = approve.mock.calls[0] as unknown as [ApprovalRequest, ToolContext];
    expect(request).toEqual({ toolName: "delete", toolCallId: "d", arguments: { path: "/tmp/x" } });
    expect(context.toolCallId).toBe("d");
    expect(context.signal).toBeInstanceOf(AbortSignal);
  });

  it("the denial is an error result the model reads", async () => {
    const { result } = await run(
      { tools: registryWith(tool("delete", { needsApproval: true })), approve: () => false },
      { id: "d", name: "delete" },
    );
    expect(result.messages[2]).toMatchObject({ role: "tool", isError: true, content: "denied by the user" });
  });

  it("a predicate decides per call: false runs at once, true asks; a throwing predicate asks (fail closed)", async () => {
    const write = tool("write", {
      needsApproval: (args) => {
        if (args.path === "boom") throw new Error("predicate bug");
        return String(args.path).startsWith("/etc");
      },
    });
    const approve = vi.fn((_request: ApprovalRequest) => false);
    const { answers } = await run({ tools: registryWith(write), approve }, [
      { id: "safe", name: "write", arguments: { path: "/tmp/a" } },
      { id: "etc", name: "write", arguments: { path: "/etc/passwd" } },
      { id: "bug", name: "write", arguments: { path: "boom" } },
    ]);
    expect(answers).toEqual({ safe: "write ran", etc: "denied by the user", bug: "denied by the user" });
    expect(approve.mock.calls.map(([request]) => request.toolCallId).sort()).toEqual(["bug", "etc"]);
  });

  it("without an approver, a call that needs approval is refused; other calls run (also without any loop-control option)", async () => {
    const { answers } = await run({ tools: registryWith(tool("delete", { needsApproval: true }), tool("list")) }, [
      { id: "d", name: "delete" },
      { id: "l", name: "list" },
    ]);
    expect(answers).toMatchInlineSnapshot(`
      {
        "d": "tool "delete" requires approval, but no approver is configured (ToolLoopConfig.approve): it was not run",
        "l": "list ran",
      }
    `);
  });

  it("tools as an array: needsApproval is honoured too", async () => {
    const remove = tool("delete", { needsApproval: true });
    const { answers } = await run({ tools: [remove] }, { id: "d", name: "delete" });
    expect(answers.d).toContain("requires approval");
    expect(remove.execute).not.toHaveBeenCalled();
  });

  it.each([
    ["unbounded", undefined],
    ["maxConcurrency 1: a waiting approval holds no slot", 1],
  ])("calls that need no approval run while another waits for it (%s)", async (_case, maxConcurrency) => {
    let approveNow!: (value: boolean) => void;
    let running = 0;
    let most = 0;
    const counted = (name: string) => async () => {
      most = Math.max(most, ++running);
      await new Promise((resolve) => setTimeout(resolve, 2));
      running--;
      return `${name} ran`;
    };
    const list = tool("list", {}, counted("list"));
    const provider = new ScriptedProvider([
      toolCallResponse([
        { id: "d", name: "delete" },
        { id: "l", name: "list" },
      ]),
      textResponse("done"),
    ]);
    const loop = runToolLoop(
      {
        provider,
        tools: registryWith(tool("delete", { needsApproval: true }, counted("delete")), list),
        maxIterations: 3,
        maxConcurrency,
        approve: () =>
          new Promise<boolean>((resolve) => {
            approveNow = resolve;
          }),
      },
      user,
    );
    await vi.waitFor(() => expect(list.execute).toHaveBeenCalled(), { interval: 1, timeout: 1_000 });
    approveNow(true);
    const result = await loop;
    expect(most).toBe(maxConcurrency === 1 ? 1 : most);
    expect(result.messages.filter((message) => message.role === "tool").map((message) => message.content)).toEqual([
      "delete ran",
      "list ran",
    ]);
  });

  it("an approve() that never resolves + abort: the usual abort, every call answered, the tool never ran", async () => {
    const controller = new AbortController();
    const remove = tool("delete", { needsApproval: true });
    const provider = new ScriptedProvider([
      toolCallResponse([
        { id: "d", name: "delete" },
        { id: "l", name: "list" },
      ]),
    ]);
    const approve = vi.fn(() => new Promise<boolean>(() => {}));
    const running = runToolLoop(
      { provider, tools: registryWith(remove, tool("list")), maxIterations: 3, approve },
      user,
      { signal: controller.signal },
    );
    await vi.waitFor(() => expect(approve).toHaveBeenCalled(), { interval: 1 });
    controller.abort(new Error("user closed the tab"));
    const failure = await running.catch((error: unknown) => error);
    expect(isToolLoopError(failure) && failure.code).toBe("aborted");
    if (!isToolLoopError(failure)) return;
    expect(failure.messages.slice(2).map((message) => [message.toolCallId, message.content])).toEqual([
      ["d", 'tool "delete" was not run: the call was aborted while waiting for approval'],
      ["l", "list ran"],
    ]);
    expect(remove.execute).not.toHaveBeenCalled();
  });

  it("an approver that throws denies, with the error's message", async () => {
    const { answers } = await run(
      {
        tools: registryWith(tool("delete", { needsApproval: true })),
        approve: () => {
          throw new Error("UI gone");
        },
      },
      { id: "d", name: "delete" },
    );
    expect(answers.d).toBe("denied by the user: the approval failed (UI gone)");
  });

  it("a model cannot dodge approval: unknown names and bad JSON are refused before any approval is asked", async () => {
    const approve = vi.fn(() => true);
    const { answers } = await run({ tools: registryWith(tool("delete", { needsApproval: true })), approve }, [
      { id: "u", name: "__proto__" },
      { id: "j", name: "delete", arguments: "{not json" },
    ]);
    expect(approve).not.toHaveBeenCalled();
    expect(answers.u).toContain("not found");
    expect(answers.j).toContain("invalid JSON");
  });

  it("approve with a registry that has no get(name) is a TypeError (needsApproval could not be read: fail closed)", async () => {
    const inner = registryWith(tool("delete", { needsApproval: true }));
    const withoutGet = {
      count: () => inner.count(),
      executeWithContext: (...args: Parameters<ToolRegistry["executeWithContext"]>) =>
        inner.executeWithContext(...args),
      toProviderDefs: () => inner.toProviderDefs(),
    };
    const provider = new ScriptedProvider([toolCallResponse({ name: "delete" }), textResponse("done")]);
    await expect(
      runToolLoop({ provider, tools: withoutGet as never, maxIterations: 2, approve: () => false }, user),
    ).rejects.toThrow(
      "runToolLoop: tools must be a registry with get(name) when approve is set (needsApproval is read through it), got {}",
    );
    expect(provider.calls).toHaveLength(0);
  });

  it('approve must be a function (or "interrupt")', async () => {
    await expect(
      runToolLoop({ provider: new ScriptedProvider([]), maxIterations: 1, approve: true as never }, user),
    ).rejects.toThrow('runToolLoop: approve must be a function or "interrupt", got true');
  });
});
