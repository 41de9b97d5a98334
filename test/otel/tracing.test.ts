import { context, ProxyTracerProvider, propagation, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  errorResult,
  type LLMResponse,
  runToolLoop,
  streamToolLoop,
  type ToolCallRequest,
  type ToolLoopConfig,
  type ToolLoopEvent,
  ToolRegistry,
  type ToolResult,
  type UsageInfo,
} from "../../src/index.js";
import { tracing } from "../../src/otel/index.js";
import { ScriptedProvider, type ScriptStep, textResponse, toolCallResponse } from "../../src/testing/index.js";
import { registryWith, tool } from "../helpers/loop-tools.js";

// The real SDK: a provider whose spans go to an in-memory exporter as each ends. Registered for
// this file (it installs the AsyncLocalStorage context manager that links parents and children);
// every global it set is removed after the file. The tests pass its tracer explicitly.
const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = provider.getTracer("toolloop-test");

beforeAll(() => {
  provider.register();
});
afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
});
afterEach(() => {
  exporter.reset();
});

/** A ScriptedProvider that names its provider, as the adapters do. */
class NamedProvider extends ScriptedProvider {
  readonly providerName = "openai";
}

const user = [{ role: "user" as const, content: "go" }];

function spans(): ReadableSpan[] {
  return exporter.getFinishedSpans();
}

function only(name: string): ReadableSpan {
  const found = spans().filter((span) => span.name === name);
  expect(found, `spans named ${name}: ${spans().map((span) => span.name)}`).toHaveLength(1);
  return found[0] as ReadableSpan;
}

function named(prefix: string): ReadableSpan[] {
  return spans().filter((span) => span.name.startsWith(prefix));
}

function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}

function isChildOf(child: ReadableSpan, parent: ReadableSpan): boolean {
  return (
    parentOf(child) === parent.spanContext().spanId && child.spanContext().traceId === parent.spanContext().traceId
  );
}

function config(steps: ScriptStep[], tools: ToolRegistry, extra: Partial<ToolLoopConfig> = {}): ToolLoopConfig {
  return {
    provider: new NamedProvider(steps),
    tools,
    maxIterations: 5,
    middleware: [tracing({ tracer })],
    ...extra,
  };
}

const withUsage = (response: LLMResponse, usage: UsageInfo): LLMResponse => ({ ...response, usage });

describe("tracing: the spans of a run", () => {
  it("makes an invoke_agent span around the run, a chat span per model call and an execute_tool span per call", async () => {
    const tools = registryWith(tool("add", (args) => String((args.a as number) + (args.b as number))));
    const steps = [
      withUsage(toolCallResponse({ id: "call_add", name: "add", arguments: { a: 1, b: 2 } }), {
        promptTokens: 10,
        completionTokens: 5,
        totalTokens: 15,
        cachedInputTokens: 0,
        reasoningTokens: 3,
      }),
      withUsage(textResponse("3"), { promptTokens: 20, completionTokens: 1, totalTokens: 21, cacheWriteTokens: 7 }),
    ];
    const result = await runToolLoop(config(steps, tools), user);
    expect(result.content).toBe("3");

    const run = only("invoke_agent");
    expect(run.kind).toBe(SpanKind.INTERNAL);
    expect(run.attributes).toEqual({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.request.model": "scripted-model",
      "gen_ai.usage.input_tokens": 30,
      "gen_ai.usage.output_tokens": 6,
      "gen_ai.usage.cache_read.input_tokens": 0,
      "gen_ai.usage.cache_creation.input_tokens": 7,
      "gen_ai.usage.reasoning.output_tokens": 3,
    });
    expect(run.status.code).toBe(SpanStatusCode.UNSET);
    expect(parentOf(run)).toBeUndefined();

    const chats = named("chat ");
    expect(chats.map((span) => span.name)).toEqual(["chat scripted-model", "chat scripted-model"]);
    const [first, second] = chats as [ReadableSpan, ReadableSpan];
    for (const chat of chats) {
      expect(chat.kind).toBe(SpanKind.CLIENT);
      expect(isChildOf(chat, run)).toBe(true);
    }
    expect(first.attributes).toEqual({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "scripted-model",
      "gen_ai.response.finish_reasons": ["tool_calls"],
      "gen_ai.usage.input_tokens": 10,
      "gen_ai.usage.output_tokens": 5,
      // A reported 0 is kept; a count not reported is left out.
      "gen_ai.usage.cache_read.input_tokens": 0,
      "gen_ai.usage.reasoning.output_tokens": 3,
    });
    expect(second.attributes).toMatchObject({
      "gen_ai.response.finish_reasons": ["stop"],
      "gen_ai.usage.cache_creation.input_tokens": 7,
    });
    expect(second.attributes).not.toHaveProperty("gen_ai.usage.cache_read.input_tokens");

    const call = only("execute_tool add");
    expect(call.kind).toBe(SpanKind.INTERNAL);
    expect(call.attributes).toEqual({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "add",
      "gen_ai.tool.call.id": "call_add",
      "gen_ai.tool.type": "function",
    });
    expect(call.status.code).toBe(SpanStatusCode.UNSET);
    expect(isChildOf(call, run)).toBe(true);
  });

  it("names the agent, and leaves gen_ai.provider.name out for a provider without a name", async () => {
    const provider = new ScriptedProvider([textResponse("hi")]);
    await runToolLoop(
      {
        provider,
        tools: new ToolRegistry(),
        maxIterations: 1,
        middleware: [tracing({ tracer, agentName: "support" })],
      },
      user,
    );
    const run = only("invoke_agent support");
    expect(run.attributes["gen_ai.agent.name"]).toBe("support");
    const chat = only("chat scripted-model");
    expect(chat.attributes).not.toHaveProperty("gen_ai.provider.name");
    expect(chat.attributes).not.toHaveProperty("gen_ai.usage.input_tokens");
  });

  it("uses the global provider's tracer named toolloop by default", async () => {
    const provider = new ScriptedProvider([textResponse("hi")]);
    await runToolLoop({ provider, tools: new ToolRegistry(), maxIterations: 1, middleware: [tracing()] }, user);
    expect(only("invoke_agent").instrumentationScope.name).toBe("toolloop");
    expect(only("chat scripted-model").instrumentationScope.name).toBe("toolloop");
  });

  it("with OpenTelemetry's no-op tracer, the run is the same and the tool's own spans are roots", async () => {
    const noop = new ProxyTracerProvider().getTracer("no provider");
    const inner = tool("inner", () => {
      trace.getTracer("http-client").startSpan("GET /").end();
      return "ok";
    });
    const steps = [toolCallResponse({ id: "call_n", name: "inner", arguments: {} }), textResponse("done")];
    const result = await runToolLoop(
      config(steps, registryWith(inner), { middleware: [tracing({ tracer: noop })] }),
      user,
    );
    expect(result.content).toBe("done");
    expect(result.messages[2]?.content).toBe("ok");
    expect(spans().map((span) => span.name)).toEqual(["GET /"]);
    expect(parentOf(only("GET /"))).toBeUndefined();
  });

  it("nests the spans a tool makes under its own execute_tool span, also for parallel calls", async () => {
    // Both calls are in flight together: each makes its span only once both have started.
    let started = 0;
    let release = () => {};
    const bothStarted = new Promise<void>((resolve) => {
      release = resolve;
    });
    const fetchTool = tool("fetch", async (args) => {
      started++;
      if (started === 2) release();
      await bothStarted;
      const inner = trace.getTracer("http-client").startSpan(`GET ${args.url as string}`);
      await Promise.resolve();
      inner.end();
      return "ok";
    });
    const steps = [
      toolCallResponse([
        { id: "call_a", name: "fetch", arguments: { url: "a" } },
        { id: "call_b", name: "fetch", arguments: { url: "b" } },
      ]),
      textResponse("done"),
    ];
    await runToolLoop(config(steps, registryWith(fetchTool), { maxConcurrency: 2 }), user);
    const run = only("invoke_agent");
    const calls = named("execute_tool fetch");
    expect(calls).toHaveLength(2);
    for (const [id, url] of [
      ["call_a", "a"],
      ["call_b", "b"],
    ]) {
      const call = calls.find((span) => span.attributes["gen_ai.tool.call.id"] === id) as ReadableSpan;
      expect(isChildOf(call, run)).toBe(true);
      expect(isChildOf(only(`GET ${url}`), call)).toBe(true);
    }
  });

  it("keeps the chat span open for the whole streamed call", async () => {
    const steps = [
      {
        streamParts: [
          { type: "text-delta" as const, delta: "Hel" },
          { type: "text-delta" as const, delta: "lo" },
        ],
      },
    ];
    const openAtDelta: boolean[] = [];
    const onEvent = (event: ToolLoopEvent) => {
      if (event.type === "text-delta") openAtDelta.push(named("chat ").length === 0);
    };
    const result = await runToolLoop(config(steps, new ToolRegistry(), { onEvent }), user);
    expect(result.content).toBe("Hello");
    expect(openAtDelta).toEqual([true, true]);
    const chat = only("chat scripted-model");
    expect(chat.attributes["gen_ai.response.finish_reasons"]).toEqual(["stop"]);
    expect(isChildOf(chat, only("invoke_agent"))).toBe(true);
  });

  it("traces streamToolLoop's run the same way", async () => {
    const steps = [
      { ...toolCallResponse({ id: "call_s", name: "echo", arguments: {} }), streamParts: [] },
      { streamParts: [{ type: "text-delta" as const, delta: "done" }] },
    ];
    const events: string[] = [];
    for await (const event of streamToolLoop(config(steps, registryWith(tool("echo", () => "echoed"))), user)) {
      events.push(event.type);
    }
    expect(events).toContain("text-delta");
    const run = only("invoke_agent");
    expect(named("chat ").every((chat) => isChildOf(chat, run))).toBe(true);
    expect(isChildOf(only("execute_tool echo"), run)).toBe(true);
  });
});

describe("tracing: failures", () => {
  it.each([
    ["an error result the tool returns", () => errorResult("no such city"), "tool_error"],
    [
      "a throw",
      () => {
        throw new Error("boom");
      },
      "tool_failed",
    ],
    ["no result", () => undefined as unknown as string, "no_result"],
  ])("%s: error.type and the ERROR status on the execute_tool span", async (_case, execute, errorType) => {
    const steps = [toolCallResponse({ id: "call_f", name: "flaky", arguments: {} }), textResponse("sorry")];
    const result = await runToolLoop(config(steps, registryWith(tool("flaky", execute))), user);
    expect(result.messages[2]?.content).toBeTypeOf("string");
    const call = only("execute_tool flaky");
    expect(call.attributes["error.type"]).toBe(errorType);
    expect(call.status.code).toBe(SpanStatusCode.ERROR);
    // Without captureContent, the error text (which may quote what the tool saw) is not recorded.
    expect(call.status.message).toBeUndefined();
    expect(only("invoke_agent").status.code).toBe(SpanStatusCode.UNSET);
  });

  it("a timeout ends the span as soon as the call is answered, while the tool still runs", async () => {
    const never = tool("never", () => new Promise<string>(() => {}));
    const steps = [toolCallResponse({ id: "call_t", name: "never", arguments: {} }), textResponse("gave up")];
    const result = await runToolLoop(config(steps, registryWith(never), { toolTimeoutMs: 20 }), user);
    expect(result.messages[2]?.content).toMatch(/timed out/);
    const call = only("execute_tool never");
    expect(call.attributes["error.type"]).toBe("timeout");
    expect(call.status.code).toBe(SpanStatusCode.ERROR);
    expect(call.ended).toBe(true);
  });

  it("an aborted run: the tool span says aborted, the run span records the exception", async () => {
    const controller = new AbortController();
    const waits = tool("waits", () => {
      controller.abort(new Error("user left"));
      return new Promise<string>(() => {});
    });
    const steps = [toolCallResponse({ id: "call_w", name: "waits", arguments: {} }), textResponse("never")];
    await expect(runToolLoop(config(steps, registryWith(waits)), user, { signal: controller.signal })).rejects.toThrow(
      /aborted/,
    );
    expect(only("execute_tool waits").attributes["error.type"]).toBe("aborted");
    const run = only("invoke_agent");
    expect(run.status.code).toBe(SpanStatusCode.ERROR);
    expect(run.attributes["error.type"]).toBe("aborted");
  });

  it("an interrupted run (approve: interrupt) ends its span without an error; the waiting call has no tool span", async () => {
    const deploy = tool("deploy", () => "deployed", { needsApproval: true });
    const steps = [toolCallResponse({ id: "call_d", name: "deploy", arguments: {} })];
    const result = await runToolLoop(config(steps, registryWith(deploy), { approve: "interrupt" }), user);
    expect(result.stopReason).toBe("interrupted");
    expect(only("invoke_agent").status.code).toBe(SpanStatusCode.UNSET);
    expect(named("execute_tool")).toEqual([]);
  });

  it("a run that rejects: the run and chat spans record the exception and the ERROR status", async () => {
    const steps = [new Error("the model is down")];
    await expect(runToolLoop(config(steps, new ToolRegistry()), user)).rejects.toThrow(/the model is down/);
    const chat = only("chat scripted-model");
    expect(chat.status).toEqual({ code: SpanStatusCode.ERROR, message: "the model is down" });
    expect(chat.attributes["error.type"]).toBe("Error");
    expect(chat.events.map((event) => event.name)).toEqual(["exception"]);
    const run = only("invoke_agent");
    expect(run.status.code).toBe(SpanStatusCode.ERROR);
    expect(run.status.message).toMatch(/the model is down/);
    expect(run.attributes["error.type"]).toBe("provider_failed");
    expect(run.events[0]?.attributes?.["exception.message"]).toMatch(/the model is down/);
    expect(isChildOf(chat, run)).toBe(true);
  });
});

describe("tracing: captureContent", () => {
  const big = "x".repeat(10_000);
  const steps = () => [
    toolCallResponse({ id: "call_c", name: "echo", arguments: { text: "hello" } }),
    toolCallResponse({ id: "call_big", name: "echo", arguments: { text: big } }),
    textResponse("done"),
  ];
  const echo = () => registryWith(tool("echo", (args) => `echo: ${args.text as string}`));

  it("records no arguments or results by default", async () => {
    await runToolLoop(config(steps(), echo()), user);
    for (const call of named("execute_tool")) {
      expect(call.attributes).not.toHaveProperty("gen_ai.tool.call.arguments");
      expect(call.attributes).not.toHaveProperty("gen_ai.tool.call.result");
    }
  });

  it("records them with captureContent, each cut to 4,096 characters", async () => {
    await runToolLoop(config(steps(), echo(), { middleware: [tracing({ tracer, captureContent: true })] }), user);
    const byId = (id: string) =>
      named("execute_tool").find((span) => span.attributes["gen_ai.tool.call.id"] === id) as ReadableSpan;
    expect(byId("call_c").attributes["gen_ai.tool.call.arguments"]).toBe('{"text":"hello"}');
    expect(byId("call_c").attributes["gen_ai.tool.call.result"]).toBe("echo: hello");
    const args = byId("call_big").attributes["gen_ai.tool.call.arguments"] as string;
    const result = byId("call_big").attributes["gen_ai.tool.call.result"] as string;
    expect(args.length).toBeLessThanOrEqual(4_096);
    expect(args.length).toBeGreaterThan(4_000);
    expect(args.startsWith('{"text":"xxxx')).toBe(true);
    expect(result.length).toBeLessThanOrEqual(4_096);
    expect(result.startsWith("echo: xxxx")).toBe(true);
  });

  it("an error result's text becomes the status description with captureContent, cut too", async () => {
    const failing = tool("failing", () => errorResult(`bad: ${big}`));
    const script = [toolCallResponse({ id: "call_e", name: "failing", arguments: {} }), textResponse("ok")];
    await runToolLoop(
      config(script, registryWith(failing), { middleware: [tracing({ tracer, captureContent: true })] }),
      user,
    );
    const call = only("execute_tool failing");
    expect(call.status.code).toBe(SpanStatusCode.ERROR);
    expect(call.status.message?.startsWith("bad: xxx")).toBe(true);
    expect(call.status.message?.length).toBeLessThanOrEqual(4_096);
    expect(call.attributes).not.toHaveProperty("gen_ai.tool.call.result");
  });
});

describe("tracing: what the model sends cannot break it", () => {
  it("a megabyte call id, __proto__ keys and names, arguments that are not JSON", async () => {
    const hugeId = `call_${"i".repeat(1_000_000)}`;
    const proto = tool("__proto__", (args) => `keys: ${Object.keys(args).join(",")}`);
    const steps = [
      toolCallResponse([
        { id: hugeId, name: "__proto__", arguments: '{"__proto__":{"polluted":true},"constructor":1}' },
        { id: "call_unknown", name: "constructor", arguments: {} },
        { id: "call_bad", name: "__proto__", arguments: "{not json" },
      ]),
      textResponse("done"),
    ];
    const result = await runToolLoop(
      config(steps, registryWith(proto), { middleware: [tracing({ tracer, captureContent: true })] }),
      user,
    );
    expect(result.content).toBe("done");
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // Calls refused before they run (unknown tool, bad JSON) have no execute_tool span.
    const call = only("execute_tool __proto__");
    expect(call.attributes["gen_ai.tool.name"]).toBe("__proto__");
    expect((call.attributes["gen_ai.tool.call.id"] as string).length).toBeLessThan(100);
    expect(call.attributes["gen_ai.tool.call.arguments"]).toBe('{"__proto__":{"polluted":true},"constructor":1}');
    for (const span of spans()) expect(span.name.length).toBeLessThan(200);
  });

  it("an outer middleware that hands on a context without a signal does not break the call's span", async () => {
    const strip = {
      name: "strip-signal",
      wrapToolCall: (request: ToolCallRequest, next: (request: ToolCallRequest) => Promise<ToolResult>) =>
        next({ ...request, context: { channel: "", chatId: "" } as never }),
    };
    const steps = [toolCallResponse({ id: "call_s", name: "echo", arguments: {} }), textResponse("done")];
    const result = await runToolLoop(
      config(steps, registryWith(tool("echo", () => "echoed")), { middleware: [strip, tracing({ tracer })] }),
      user,
    );
    expect(result.messages[2]?.content).toBe("echoed");
    const call = only("execute_tool echo");
    expect(call.status.code).toBe(SpanStatusCode.UNSET);
    expect(call.ended).toBe(true);
  });

  it("a tool whose arguments cannot be serialised still runs and is traced", async () => {
    const cyclic = {
      name: "cyclic",
      description: "takes anything",
      parameters: { type: "object" },
      parseArguments: (raw: Record<string, unknown>) => {
        const data: Record<string, unknown> = { ...raw };
        data.self = data;
        return { success: true as const, data };
      },
      execute: () => "ran",
    };
    const steps = [toolCallResponse({ id: "call_cy", name: "cyclic", arguments: {} }), textResponse("done")];
    const result = await runToolLoop(
      config(steps, registryWith(cyclic), { middleware: [tracing({ tracer, captureContent: true })] }),
      user,
    );
    expect(result.messages[2]?.content).toBe("ran");
    const call = only("execute_tool cyclic");
    expect(call.attributes).not.toHaveProperty("gen_ai.tool.call.arguments");
    expect(call.attributes["gen_ai.tool.call.result"]).toBe("ran");
  });
});

describe("tracing: options", () => {
  it.each([
    [{ tracer: {} }, "tracing: tracer must be an OpenTelemetry Tracer, got {}"],
    [{ captureContent: "yes" }, 'tracing: captureContent must be a boolean, got "yes"'],
    [{ agentName: "" }, 'tracing: agentName must be a non-empty string, got ""'],
    ["all", 'tracing: options must be an object, got "all"'],
  ])("%j is a TypeError", (options, message) => {
    expect(() => tracing(options as never)).toThrow(new TypeError(message));
  });
});
