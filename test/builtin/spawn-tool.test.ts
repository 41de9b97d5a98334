import { describe, expect, it, vi } from "vitest";
import { createSpawnTool, createSubagentTool, type SpawnToolOptions } from "../../src/builtin/index.js";
import {
  type AsyncCallback,
  isToolExecutionError,
  isToolLoopError,
  type LLMResponse,
  newToolResult,
  runToolLoop,
  type Tool,
  ToolRegistry,
  type ToolResult,
} from "../../src/index.js";
import {
  createToolContext,
  type ScriptedCall,
  ScriptedProvider,
  type ScriptStep,
  textResponse,
  toolCallResponse,
} from "../../src/testing/index.js";
import { captureLogger } from "../helpers/capture-logger.js";

/** A tool that answers with the chat it was called from, so a test sees what context the subagent passes on. */
const whereTool: Tool = {
  name: "where",
  description: "Which chat is this",
  parameters: { type: "object", properties: {} },
  execute: (_args, context) => newToolResult(`${context.channel}/${context.chatId}/${context.metadata.user ?? ""}`),
};

const laterTool: Tool = { ...whereTool, name: "later", description: "Registered after spawn was created" };

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/** A responder that answers `response` once `gate` has resolved. */
function answerAfter(gate: Promise<void>, response: LLMResponse): ScriptStep {
  return async () => {
    await gate;
    return response;
  };
}

/** A responder that waits until the provider call is aborted, then rejects with the reason. */
const hang: ScriptStep = (call: ScriptedCall) =>
  new Promise((_resolve, reject) => {
    call.signal?.addEventListener("abort", () => reject(call.signal?.reason), { once: true });
  });

/** The names of the tools the provider was offered in its n-th call. */
function offered(provider: ScriptedProvider, index = 0): string[] | undefined {
  return provider.calls[index]?.tools?.map((definition) => definition.function.name);
}

/** A registry with `where`, the tool built by `make` registered in it, then `later`. */
function setup<T extends Tool>(steps: ScriptStep[], make: (options: SpawnToolOptions) => T, extra = {}) {
  const provider = new ScriptedProvider(steps);
  const registry = new ToolRegistry();
  registry.register(whereTool);
  const tool = make({ provider, registry, ...extra });
  registry.register(tool);
  registry.register(laterTool);
  return { provider, registry, tool };
}

/** Runs spawn through the registry and waits for its report. */
async function spawn(
  registry: ToolRegistry,
  args: Record<string, unknown>,
  chat = "42",
): Promise<{ started: ToolResult; report: ToolResult }> {
  const done = deferred<ToolResult>();
  const started = await registry.executeWithContext("spawn", args, "telegram", chat, done.resolve);
  return { started, report: await done.promise };
}

describe.each([
  ["spawn", createSpawnTool],
  ["subagent", createSubagentTool],
] as const)("%s: shared behaviour", (name, make) => {
  /** Runs the tool through the registry and returns what the parent model finally gets. */
  async function call(registry: ToolRegistry, args: Record<string, unknown>, options = {}): Promise<ToolResult> {
    if (name === "subagent") {
      return registry.executeWithContext("subagent", args, "telegram", "42", undefined, options);
    }
    const done = deferred<ToolResult>();
    const started = await registry.executeWithContext("spawn", args, "telegram", "42", done.resolve, options);
    // A refused spawn answers with its error at once; a started one reports through the callback.
    return started.async ? done.promise : started;
  }

  it("runs a tool loop on the task and reports `Subagent '<label>' completed: <content>`", async () => {
    const { provider, registry } = setup(
      [toolCallResponse({ name: "where" }), textResponse("It is telegram/42.")],
      make,
    );
    const result = await call(
      registry,
      { task: "Find out where you are.", label: "locate" },
      { metadata: { user: "ann" } },
    );
    expect(result.isError).toBe(false);
    expect(result.forLLM).toBe("Subagent 'locate' completed: It is telegram/42.");
    // A fresh conversation: the system prompt and the task.
    expect(provider.calls[0]?.messages).toEqual([
      {
        role: "system",
        content:
          "You are a subagent working on one task for another agent. Use your tools as needed and work on your own: nobody will answer questions. Finish with a short report of what you did and what you found.",
      },
      { role: "user", content: "Find out where you are." },
    ]);
    // The subagent's tools run with the call's channel, chat and metadata.
    expect(provider.calls[1]?.messages.at(-1)).toMatchObject({ role: "tool", content: "telegram/42/ann" });
    expect(provider.calls[0]?.model).toBe("scripted-model");
    provider.assertDone();
  });

  it("sees only the tools registered before it was created: not itself, not later ones (no recursion)", async () => {
    const { provider, registry } = setup(
      [
        toolCallResponse([
          { name, arguments: { task: "recurse" } },
          { name: "later", arguments: {} },
        ]),
        textResponse("I could not."),
      ],
      make,
    );
    expect(registry.list()).toEqual(["later", name, "where"].sort());
    const result = await call(registry, { task: "Spawn another subagent." });
    expect(offered(provider)).toEqual(["where"]);
    const answers = provider.calls[1]?.messages.filter((message) => message.role === "tool");
    expect(answers?.map((message) => [message.isError, (message.content as string).split(".")[0]])).toEqual([
      [true, `tool "${name}" not found`],
      [true, 'tool "later" not found'],
    ]);
    expect(result.forLLM).toBe("Subagent '(unnamed)' completed: I could not.");
  });

  it("uses the model, system prompt and iteration cap it was given", async () => {
    const { provider, registry } = setup(
      [toolCallResponse({ name: "where" }), toolCallResponse({ name: "where" }), textResponse("never asked")],
      make,
      { model: "small-model", systemPrompt: "", maxIterations: 2 },
    );
    const result = await call(registry, { task: "Loop forever.", label: "looper" });
    expect(provider.calls).toHaveLength(2);
    expect(provider.calls[0]?.model).toBe("small-model");
    expect(provider.calls[0]?.messages).toEqual([{ role: "user", content: "Loop forever." }]);
    expect(result.isError).toBe(true);
    expect(result.forLLM).toMatchInlineSnapshot(`"Subagent 'looper' did not finish within 2 model calls"`);
  });

  it.each([
    [
      "a provider that fails",
      new Error("401 Unauthorized: key sk-SECRET rejected by https://10.0.0.5/v1"),
      "its model call failed",
      "provider_failed",
    ],
    [
      "an unreadable response",
      { content: "sk-SECRET at 10.0.0.5", toolCalls: "nope" } as never,
      "its model's response could not be read",
      "invalid_response",
    ],
  ])("%s is an error result that does not pass on the provider's text", async (_label, step, reason, code) => {
    const { registry } = setup([step], make);
    const result = await call(registry, { task: "Anything.", label: "x" });
    expect(result.isError).toBe(true);
    expect(result.forLLM).toBe(`Subagent 'x' failed: ${reason}`);
    expect(JSON.stringify(result)).not.toMatch(/SECRET|10\.0\.0\.5/);
    // Your code still reads the loop's error.
    expect(isToolExecutionError(result.err) && isToolLoopError(result.err.cause) && result.err.cause.code).toBe(code);
  });

  it("cuts a huge label and a huge answer", async () => {
    const { registry } = setup([textResponse("y".repeat(1_000_000))], make);
    const result = await call(registry, { task: "Talk a lot.", label: "L".repeat(10_000) });
    expect(result.forLLM.length).toBeLessThanOrEqual(20_200);
    expect(result.forLLM).toMatch(/^Subagent 'L{80}…' completed: y+ … \[\d+ more characters cut\]$/);
  });

  it.each([
    [{ task: "" }, "task is empty: say what the subagent should do"],
    [{ task: " \n " }, "task is empty: say what the subagent should do"],
  ])("refuses a blank task %j without calling the provider", async (args, message) => {
    const { provider, registry } = setup([], make);
    const result =
      name === "spawn"
        ? await registry.executeWithContext("spawn", args, "telegram", "42", () => {})
        : await registry.execute("subagent", args);
    expect(result.isError).toBe(true);
    expect(result.forLLM).toBe(message);
    expect(provider.calls).toEqual([]);
  });

  it.each([
    ["__proto__", '{"task":"t","__proto__":{"label":"evil"}}'],
    ["an unknown key", '{"task":"t","tools":["exec"]}'],
    ["a non-string task", '{"task":{"toString":"t"}}'],
  ])("refuses arguments with %s", async (_label, json) => {
    const { provider, registry } = setup([], make);
    const result = await registry.executeWithContext(name, JSON.parse(json), "telegram", "42", () => {});
    expect(result.forLLM).toMatch(new RegExp(`^invalid arguments for tool "${name}"`));
    expect(provider.calls).toEqual([]);
  });

  it("runs at most maxConcurrent subagents at once; a slot is free again after a report", async () => {
    const gate = deferred();
    const { provider, registry } = setup(
      [answerAfter(gate.promise, textResponse("first")), textResponse("third")],
      make,
      {
        maxConcurrent: 1,
      },
    );
    const first = call(registry, { task: "one" });
    await vi.waitFor(() => expect(provider.calls).toHaveLength(1));
    const second = await call(registry, { task: "two" });
    expect(second.isError).toBe(true);
    expect(second.forLLM).toMatchInlineSnapshot(
      `"too many subagents running (1): wait for one to report, or do the task yourself"`,
    );
    gate.resolve();
    expect((await first).forLLM).toBe("Subagent '(unnamed)' completed: first");
    expect((await call(registry, { task: "three" })).forLLM).toBe("Subagent '(unnamed)' completed: third");
  });

  it("frees its slot after a failure too", async () => {
    const { registry } = setup([new Error("down"), textResponse("ok")], make, { maxConcurrent: 1 });
    expect((await call(registry, { task: "one" })).isError).toBe(true);
    expect((await call(registry, { task: "two" })).forLLM).toBe("Subagent '(unnamed)' completed: ok");
  });

  it("stops when the tool's signal aborts: the provider's signal aborts and the report is a cancellation", async () => {
    const controller = new AbortController();
    const { provider, registry } = setup([hang], make, { signal: controller.signal });
    const pending = call(registry, { task: "Wait.", label: "w" });
    await vi.waitFor(() => expect(provider.calls).toHaveLength(1));
    controller.abort(new Error("shutting down"));
    const result = await pending;
    expect(result.isError).toBe(true);
    expect(result.forLLM).toBe("Subagent 'w' failed: it was cancelled");
    expect(isToolExecutionError(result.err) && result.err.code).toBe("aborted");
    expect(provider.calls[0]?.signal?.aborted).toBe(true);
  });

  it("does not start when the tool's signal has already aborted", async () => {
    const { provider, registry } = setup([textResponse("never")], make, { signal: AbortSignal.abort() });
    const result = await call(registry, { task: "Anything.", label: "late" });
    expect(result.forLLM).toBe("Subagent 'late' failed: it was cancelled");
    expect(provider.calls).toEqual([]);
  });

  it("follows the call's own context.signal while it runs", async () => {
    const { provider, tool } = setup([hang], make);
    const controller = new AbortController();
    const done = deferred<ToolResult>();
    const context = createToolContext({ signal: controller.signal, asyncCallback: done.resolve });
    const value = Promise.resolve(tool.execute({ task: "Wait.", label: "direct" }, context));
    await vi.waitFor(() => expect(provider.calls).toHaveLength(1));
    controller.abort();
    const result = name === "spawn" ? await done.promise : ((await value) as ToolResult);
    expect(result.forLLM).toBe("Subagent 'direct' failed: it was cancelled");
    expect(provider.calls[0]?.signal?.aborted).toBe(true);
  });

  const base = () => ({ provider: new ScriptedProvider([]), registry: new ToolRegistry() });
  it.each([
    [undefined, "options must be an object, got undefined"],
    [{ registry: new ToolRegistry() }, "provider must be an LLMProvider (chat and getDefaultModel), got undefined"],
    [
      { provider: {}, registry: new ToolRegistry() },
      "provider must be an LLMProvider (chat and getDefaultModel), got {}",
    ],
    [{ provider: new ScriptedProvider([]) }, "registry must be a ToolRegistry, got undefined"],
    [{ provider: new ScriptedProvider([]), registry: [] }, "registry must be a ToolRegistry, got []"],
    [{ ...base(), model: "" }, 'model must be a non-empty string, got ""'],
    [{ ...base(), maxIterations: 0 }, "maxIterations must be an integer > 0, got 0"],
    [{ ...base(), maxIterations: 2.5 }, "maxIterations must be an integer > 0, got 2.5"],
    [{ ...base(), maxIterations: Number.POSITIVE_INFINITY }, "maxIterations must be an integer > 0, got Infinity"],
    [{ ...base(), systemPrompt: 42 }, "systemPrompt must be a string, got 42"],
    [{ ...base(), maxConcurrent: 0 }, "maxConcurrent must be an integer ≥ 1 or Infinity, got 0"],
    [{ ...base(), signal: "stop" }, 'signal must be an AbortSignal, got "stop"'],
  ])("throws a TypeError for bad options %#", (options, message) => {
    const where = name === "spawn" ? "createSpawnTool" : "createSubagentTool";
    expect(() => make(options as never)).toThrow(new TypeError(`${where}: ${message}`));
  });
});

describe("spawn", () => {
  it("offers spawn { task*, label? }", () => {
    const { tool } = setup([], createSpawnTool);
    expect({ description: tool.description, parameters: tool.parameters }).toMatchInlineSnapshot(`
      {
        "description": "Start a subagent that works on a task in the background with your tools (except spawn) and a fresh conversation. It returns at once; the subagent's report arrives later as a separate message.",
        "parameters": {
          "additionalProperties": false,
          "properties": {
            "label": {
              "description": "Optional: a short name for the task, used in its report",
              "type": "string",
            },
            "task": {
              "description": "What the subagent should do, with everything it needs to know",
              "type": "string",
            },
          },
          "required": [
            "task",
          ],
          "type": "object",
        },
      }
    `);
  });

  it("answers at once with an async result, before the subagent has finished", async () => {
    const gate = deferred();
    const { registry } = setup([answerAfter(gate.promise, textResponse("done"))], createSpawnTool);
    const reports: ToolResult[] = [];
    const started = await registry.executeWithContext("spawn", { task: "Work.", label: "bg" }, "cli", "me", (r) => {
      reports.push(r);
    });
    expect(started.async).toBe(true);
    expect(started.isError).toBe(false);
    expect(started.forLLM).toMatchInlineSnapshot(`"Subagent 'bg' started; its report will arrive when it is done."`);
    expect(reports).toEqual([]);
    gate.resolve();
    await vi.waitFor(() => expect(reports).toHaveLength(1));
    expect(reports[0]?.forLLM).toBe("Subagent 'bg' completed: done");
  });

  it("two concurrent spawns never swap callbacks (each call's own, not the shared setCallback)", async () => {
    // The first spawn's subagent answers last: a callback kept on the shared instance would by then
    // be the second caller's.
    const gates = { A: deferred(), B: deferred() };
    const answer = async (call: ScriptedCall) => {
      const task = call.messages.at(-1)?.content === "task A" ? "A" : "B";
      await gates[task].promise;
      return textResponse(`result ${task}`);
    };
    const { provider, registry } = setup([answer, answer], createSpawnTool);
    const reports: Record<string, ToolResult[]> = { A: [], B: [] };
    const callback =
      (who: "A" | "B"): AsyncCallback =>
      (result) =>
        void reports[who]?.push(result);
    await registry.executeWithContext("spawn", { task: "task A", label: "A" }, "cli", "a", callback("A"));
    await registry.executeWithContext("spawn", { task: "task B", label: "B" }, "cli", "b", callback("B"));
    await vi.waitFor(() => expect(provider.calls).toHaveLength(2));
    gates.B.resolve();
    await vi.waitFor(() => expect(reports.B).toHaveLength(1));
    gates.A.resolve();
    await vi.waitFor(() => expect(reports.A).toHaveLength(1));
    expect(reports.A?.map((result) => result.forLLM)).toEqual(["Subagent 'A' completed: result A"]);
    expect(reports.B?.map((result) => result.forLLM)).toEqual(["Subagent 'B' completed: result B"]);
  });

  it("ignores a callback set on the shared instance", async () => {
    const { registry, tool } = setup([textResponse("done")], createSpawnTool);
    const shared = vi.fn();
    tool.setCallback(shared);
    const { report } = await spawn(registry, { task: "Work." });
    expect(report.forLLM).toBe("Subagent '(unnamed)' completed: done");
    expect(shared).not.toHaveBeenCalled();
  });

  it("is an error result, and starts nothing, when the call has no callback (as in runToolLoop)", async () => {
    const { provider, registry } = setup([textResponse("never")], createSpawnTool);
    const result = await registry.executeWithContext("spawn", { task: "Work." }, "cli", "me");
    expect(result.isError).toBe(true);
    expect(result.async).toBe(false);
    expect(result.forLLM).toMatchInlineSnapshot(
      `"spawn cannot report back in this conversation: do the task yourself"`,
    );
    expect(provider.calls).toEqual([]);
  });

  it("keeps running after the call's signal ends (it follows it only while the call runs)", async () => {
    const gate = deferred();
    const { provider, registry } = setup([answerAfter(gate.promise, textResponse("finished"))], createSpawnTool);
    const controller = new AbortController();
    const done = deferred<ToolResult>();
    await registry.executeWithContext("spawn", { task: "Work." }, "cli", "me", done.resolve, {
      signal: controller.signal,
    });
    controller.abort();
    gate.resolve();
    expect((await done.promise).forLLM).toBe("Subagent '(unnamed)' completed: finished");
    expect(provider.calls[0]?.signal?.aborted).toBe(false);
  });

  it("a callback that throws or rejects is logged, never an unhandled rejection", async () => {
    const { logger, lines } = captureLogger("warn");
    const provider = new ScriptedProvider([textResponse("a"), textResponse("b")]);
    const registry = new ToolRegistry({ logger });
    registry.register(createSpawnTool({ provider, registry: new ToolRegistry() }));
    await registry.executeWithContext("spawn", { task: "one" }, "cli", "me", () => {
      throw new Error("callback broke");
    });
    await registry.executeWithContext("spawn", { task: "two" }, "cli", "me", () => Promise.reject("also broke"));
    await vi.waitFor(() => expect(lines).toHaveLength(2));
    expect(lines.map(({ msg, error, tool }) => ({ msg, error, tool }))).toEqual([
      { msg: "spawn callback failed", error: "callback broke", tool: "spawn" },
      { msg: "spawn callback failed", error: "also broke", tool: "spawn" },
    ]);
  });

  it("the model's 1 MB call id is cut in the callback's failure line", async () => {
    const { logger, lines } = captureLogger("warn");
    const registry = new ToolRegistry({ logger });
    registry.register(
      createSpawnTool({ provider: new ScriptedProvider([textResponse("a")]), registry: new ToolRegistry() }),
    );
    const broken = () => Promise.reject(new Error("callback broke"));
    await registry.executeWithContext("spawn", { task: "one" }, "cli", "me", broken, {
      toolCallId: "y".repeat(1_000_000),
    });
    await vi.waitFor(() => expect(lines).toHaveLength(1));
    expect(lines[0]).toMatchObject({ msg: "spawn callback failed", error: "callback broke" });
    expect(JSON.stringify(lines[0]).length).toBeLessThan(2_000);
  });

  it("the callback's failure line has no toolCallId when the call has none", async () => {
    const { logger, lines } = captureLogger("warn");
    const registry = new ToolRegistry({ logger });
    registry.register(
      createSpawnTool({ provider: new ScriptedProvider([textResponse("a")]), registry: new ToolRegistry() }),
    );
    await registry.executeWithContext("spawn", { task: "one" }, "cli", "me", () => Promise.reject(new Error("broke")));
    await vi.waitFor(() => expect(lines).toHaveLength(1));
    expect(lines[0]).toMatchObject({ msg: "spawn callback failed", error: "broke" });
    expect(lines[0]).not.toHaveProperty("toolCallId");
  });

  it("is an AsyncTool (setCallback present, for registries that expect the mixin)", () => {
    const { tool } = setup([], createSpawnTool);
    expect(typeof tool.setCallback).toBe("function");
  });
});

describe("subagent", () => {
  it("offers subagent { task*, label? }", () => {
    const { tool } = setup([], createSubagentTool);
    expect(tool.description).toMatchInlineSnapshot(
      `"Run a subagent on a task and wait for its report. It has your tools (except this one) and a fresh conversation: put everything it needs to know in the task."`,
    );
  });

  it("is aborted with the call: the registry answers at once and the loop stops asking the provider", async () => {
    const { provider, registry } = setup([hang, textResponse("never")], createSubagentTool);
    const controller = new AbortController();
    const pending = registry.execute("subagent", { task: "Wait." }, { signal: controller.signal });
    await vi.waitFor(() => expect(provider.calls).toHaveLength(1));
    controller.abort();
    const result = await pending;
    expect(result.isError).toBe(true);
    expect(result.forLLM).toBe('tool "subagent" was aborted before it finished');
    expect(provider.calls[0]?.signal?.aborted).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(provider.calls).toHaveLength(1);
  });

  it("does not share its schema object with spawn", () => {
    const options = { provider: new ScriptedProvider([]), registry: new ToolRegistry() };
    expect(createSubagentTool(options).parameters).not.toBe(createSpawnTool(options).parameters);
  });

  it("is a plain Tool: no setCallback", () => {
    const { tool } = setup([], createSubagentTool);
    expect("setCallback" in tool).toBe(false);
  });

  it("honours a call timeout the same way", async () => {
    const { provider, registry } = setup([hang], createSubagentTool);
    const result = await registry.execute("subagent", { task: "Wait." }, { timeoutMs: 30 });
    expect(result.forLLM).toBe('tool "subagent" timed out after 30 ms');
    await vi.waitFor(() => expect(provider.calls[0]?.signal?.aborted).toBe(true));
  });
});

describe("spawn inside runToolLoop (issue 12's async options)", () => {
  it("with awaitAsync the report comes back to the model as a new turn", async () => {
    const registry = new ToolRegistry();
    registry.register(
      createSpawnTool({ provider: new ScriptedProvider([textResponse("sub done")]), registry: new ToolRegistry() }),
    );
    const outer = new ScriptedProvider([
      toolCallResponse({ id: "s1", name: "spawn", arguments: { task: "Look it up.", label: "lookup" } }),
      textResponse("waiting"),
      textResponse("final"),
    ]);
    const result = await runToolLoop(
      { provider: outer, tools: registry, maxIterations: 5, awaitAsync: { timeoutMs: 5_000 } },
      [{ role: "user", content: "go" }],
    );
    expect(result.content).toBe("final");
    expect(result.messages.map((message) => message.content)).toContain(
      "[async result from spawn (s1)] Subagent 'lookup' completed: sub done",
    );
  });
});
