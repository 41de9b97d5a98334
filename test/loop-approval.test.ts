import { describe, expect, it } from "vitest";
import {
  isToolLoopError,
  type Message,
  type ProgressUpdate,
  runToolLoop,
  type Tool,
  type ToolLoopConfig,
  ToolRegistry,
} from "../src/index.js";
import type { NormalizedToolCall } from "../src/internal/normalize-tool-call.js";
import { needsAnyApproval } from "../src/loop-approval.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../src/testing/index.js";

const call = (name: string, argumentsError?: string): NormalizedToolCall => ({
  call: { id: name, name, arguments: {} },
  ...(argumentsError === undefined ? {} : { argumentsError }),
});

function registry(needsApproval: Tool["needsApproval"]): ToolRegistry {
  const tools = new ToolRegistry();
  tools.register({ name: "t", description: "t", parameters: { type: "object" }, execute: () => "", needsApproval });
  return tools;
}

describe("needsAnyApproval (the loop's check without loop-control options)", () => {
  it.each<[string, unknown, NormalizedToolCall[], boolean]>([
    ["needsApproval true", registry(true), [call("t")], true],
    ["a predicate (decided later, per call)", registry(() => false), [call("t")], true],
    ["needsApproval false", registry(false), [call("t")], false],
    ["absent", registry(undefined), [call("t")], false],
    ["an unknown name", registry(true), [call("__proto__"), call("constructor")], false],
    ["a call refused for its arguments", registry(true), [call("t", "bad JSON")], false],
    ["no registry", null, [call("t")], false],
    ["a registry-like without get", { count: () => 1 }, [call("t")], false],
    [
      "a registry whose get throws (fail closed)",
      {
        get: () => {
          throw new Error("x");
        },
      },
      [call("t")],
      true,
    ],
  ])("%s", (_case, tools, calls, expected) => {
    expect(needsAnyApproval(tools, calls)).toBe(expected);
  });

  it("a ToolRegistry without any needsApproval tool is answered without a lookup per call (issue 12's cost)", () => {
    const tools = registry(undefined);
    let lookups = 0;
    const get = tools.get.bind(tools);
    tools.get = (name: string) => {
      lookups++;
      return get(name);
    };
    expect(needsAnyApproval(tools, [call("t"), call("t"), call("x")])).toBe(false);
    expect(lookups).toBe(0);
    tools.register({
      name: "g",
      description: "g",
      parameters: { type: "object" },
      execute: () => "",
      needsApproval: true,
    });
    expect(needsAnyApproval(tools, [call("g")])).toBe(true);
    expect(needsAnyApproval(tools.clone(), [call("g")])).toBe(true);
    tools.unregister("g");
    expect(needsAnyApproval(tools, [call("g")])).toBe(false);
    tools.register({
      name: "t",
      description: "t",
      parameters: { type: "object" },
      execute: () => "",
      needsApproval: false,
    });
    lookups = 0;
    expect(needsAnyApproval(tools, [call("t")])).toBe(false);
    expect(lookups).toBe(0);
  });
});

describe("calls the gate answers without running them get their one final progress update", () => {
  const user: Message[] = [{ role: "user", content: "go" }];
  const gated = (needsApproval: Tool["needsApproval"]) => {
    const tools = new ToolRegistry();
    tools.register({
      name: "g",
      description: "g",
      parameters: { type: "object" },
      execute: () => "ran",
      needsApproval,
    });
    return tools;
  };

  it.each<[string, Partial<ToolLoopConfig>, ProgressUpdate["status"]]>([
    ["approval denied", { approve: () => false }, "failed"],
    ["approval denied with a reason", { approve: () => ({ approved: false, reason: "no" }) }, "failed"],
    [
      "an approver that throws",
      {
        approve: () => {
          throw new Error("x");
        },
      },
      "failed",
    ],
    ["no approver configured (no other option)", {}, "failed"],
    ["no approver configured, with onEvent", { onEvent: () => {} }, "failed"],
    ["approved (the tool's own final update, for comparison)", { approve: () => true }, "completed"],
  ])("%s", async (_case, extra, status) => {
    const updates: ProgressUpdate[] = [];
    const events: string[] = [];
    const provider = new ScriptedProvider([toolCallResponse({ id: "c", name: "g" }), textResponse("done")]);
    await runToolLoop(
      {
        provider,
        tools: gated(true),
        maxIterations: 2,
        ...extra,
        onProgress: (update) => updates.push(update),
        onEvent: (event) => {
          if (event.type === "tool-progress") events.push(`progress ${event.update.status}`);
          if (event.type === "tool-call-end") events.push("end");
          return extra.onEvent?.(event);
        },
      },
      user,
    );
    expect(updates).toEqual([{ toolCallId: "c", toolName: "g", status }]);
    expect(events).toEqual([`progress ${status}`, "end"]);
  });

  it("no approver and no loop-control option at all: the final update still comes", async () => {
    const updates: ProgressUpdate[] = [];
    const provider = new ScriptedProvider([toolCallResponse({ id: "c", name: "g" }), textResponse("done")]);
    await runToolLoop(
      { provider, tools: gated(() => true), maxIterations: 2, onProgress: (update) => updates.push(update) },
      user,
    );
    expect(updates).toEqual([{ toolCallId: "c", toolName: "g", status: "failed" }]);
  });

  it("aborted while waiting for approval: the final update is cancelled", async () => {
    const updates: ProgressUpdate[] = [];
    const controller = new AbortController();
    const provider = new ScriptedProvider([toolCallResponse({ id: "c", name: "g" }), textResponse("done")]);
    const failure = await runToolLoop(
      {
        provider,
        tools: gated(true),
        maxIterations: 2,
        approve: () => {
          controller.abort(new Error("stop"));
          return new Promise<boolean>(() => {});
        },
        onProgress: (update) => updates.push(update),
      },
      user,
      { signal: controller.signal },
    ).catch((error: unknown) => error);
    expect(isToolLoopError(failure) && failure.code).toBe("aborted");
    expect(updates).toEqual([{ toolCallId: "c", toolName: "g", status: "cancelled" }]);
  });
});
