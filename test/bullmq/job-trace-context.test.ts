import { randomUUID } from "node:crypto";
import { context, propagation, trace } from "@opentelemetry/api";
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createToolQueue, createToolWorker, type ToolCompletion } from "../../src/bullmq/index.js";
import { checkTraceContext, traceCarrier } from "../../src/bullmq/job-trace-context.js";
import { runToolLoop, ToolRegistry } from "../../src/index.js";
import { bullmqTraceContext, tracing } from "../../src/otel/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing/index.js";
import { registryWith, tool } from "../helpers/loop-tools.js";
import { type RedisServer, startRedisServer } from "../helpers/redis-server.js";

describe("traceCarrier: what a job's stored trace context hands to the worker", () => {
  it.each([undefined, null, "traceparent", 42, ["00-x"], {}])("%j carries nothing", (value) => {
    expect(traceCarrier(value)).toBeUndefined();
  });

  it("keeps string fields only, bounded in size and count, in a null-prototype object", () => {
    const stored = JSON.parse(
      JSON.stringify({
        traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        tracestate: "a=1",
        number: 1,
        long: "x".repeat(2_000),
        ...Object.fromEntries(Array.from({ length: 20 }, (_, index) => [`k${index}`, "v"])),
      }).replace('"tracestate"', '"__proto__":"polluted","tracestate"'),
    );
    const carrier = traceCarrier(stored) as Record<string, string>;
    expect(Object.getPrototypeOf(carrier)).toBeNull();
    expect(Object.keys(carrier)).toHaveLength(8);
    expect(carrier.traceparent).toBe("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
    expect(Object.hasOwn(carrier, "__proto__")).toBe(true);
    expect(carrier).not.toHaveProperty("number");
    expect(carrier).not.toHaveProperty("long");
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("the option must have inject() and run()", () => {
    expect(() => checkTraceContext("createToolQueue", { inject() {} })).toThrow(
      "createToolQueue: traceContext must be an object with inject() and run() (toolloop/otel's bullmqTraceContext()), got",
    );
    expect(() => createToolWorker(new ToolRegistry(), { connection: {}, traceContext: 1 as never })).toThrow(
      "createToolWorker: traceContext must be an object with inject() and run()",
    );
  });
});

describe("traceContext with a real Redis: the worker's span joins the enqueuing run's trace", () => {
  let redis: RedisServer;
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer("toolloop-test");
  const open: Array<{ close(): Promise<void> }> = [];

  // register() installs the W3C propagator and the AsyncLocalStorage context manager; both are
  // removed after the file.
  beforeAll(async () => {
    provider.register();
    redis = await startRedisServer();
  }, 60_000);
  afterEach(async () => {
    await Promise.all(open.splice(0).map((item) => item.close()));
    exporter.reset();
  });
  afterAll(async () => {
    await redis?.dispose();
    await provider.shutdown();
    trace.disable();
    context.disable();
    propagation.disable();
  });

  it("queue and worker with bullmqTraceContext(): run → execute_tool (queued) → execute_tool (worker) → the tool's span", async () => {
    const name = `otel-${randomUUID()}`;
    const traceContext = bullmqTraceContext({ tracer });
    const transcribe = tool("transcribe", async (args) => {
      const inner = trace.getTracer("speech-client").startSpan("POST /transcribe");
      await Promise.resolve();
      inner.end();
      return `text of ${args.file as string}`;
    });
    const queue = createToolQueue({ connection: redis.connection, name, traceContext });
    open.push(queue);
    const completed = new Promise<ToolCompletion>((resolve) => queue.onCompletion(resolve));
    const worker = createToolWorker(registryWith(transcribe), {
      connection: redis.connection,
      name,
      traceContext,
      closeOnSigterm: false,
    });
    open.push(worker);

    const steps = [
      toolCallResponse({ id: "call_queued", name: "transcribe", arguments: { file: "a.wav" } }),
      textResponse("queued"),
    ];
    const provider = new ScriptedProvider(steps);
    await runToolLoop(
      { provider, tools: registryWith(queue.queued(transcribe)), maxIterations: 3, middleware: [tracing({ tracer })] },
      [{ role: "user", content: "transcribe a.wav" }],
    );
    const completion = await completed;
    expect(completion.result.forLLM).toBe("text of a.wav");
    await vi.waitFor(() => expect(exporter.getFinishedSpans().map((span) => span.name)).toContain("POST /transcribe"));

    const spans = exporter.getFinishedSpans();
    const find = (predicate: (span: ReadableSpan) => boolean) => spans.filter(predicate);
    const [run] = find((span) => span.name === "invoke_agent") as [ReadableSpan];
    const calls = find((span) => span.name === "execute_tool transcribe");
    expect(calls).toHaveLength(2);
    const queued = calls.find((span) => span.parentSpanContext?.spanId === run.spanContext().spanId) as ReadableSpan;
    const worked = calls.find((span) => span !== queued) as ReadableSpan;
    const [inner] = find((span) => span.name === "POST /transcribe") as [ReadableSpan];
    const traceId = run.spanContext().traceId;
    expect(queued.spanContext().traceId).toBe(traceId);
    expect(worked.spanContext().traceId).toBe(traceId);
    expect(worked.parentSpanContext?.spanId).toBe(queued.spanContext().spanId);
    expect(worked.parentSpanContext?.isRemote).toBe(true);
    expect(worked.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "transcribe",
      "gen_ai.tool.call.id": "call_queued",
      "gen_ai.tool.type": "function",
    });
    expect(inner.spanContext().traceId).toBe(traceId);
    expect(inner.parentSpanContext?.spanId).toBe(worked.spanContext().spanId);
  });

  it("a job that carries no trace context: the worker's span starts a trace of its own", async () => {
    const name = `otel-${randomUUID()}`;
    const echo = tool("echo", () => "echoed");
    const queue = createToolQueue({ connection: redis.connection, name });
    open.push(queue);
    const completed = new Promise<ToolCompletion>((resolve) => queue.onCompletion(resolve));
    const worker = createToolWorker(registryWith(echo), {
      connection: redis.connection,
      name,
      traceContext: bullmqTraceContext({ tracer }),
      closeOnSigterm: false,
    });
    open.push(worker);
    await tracer.startActiveSpan("caller", async (span) => {
      await queue.queued(echo).execute({}, { toolCallId: "call_plain" } as never);
      span.end();
    });
    expect((await completed).result.forLLM).toBe("echoed");
    await vi.waitFor(() => expect(exporter.getFinishedSpans().map((span) => span.name)).toContain("execute_tool echo"));
    const worked = exporter.getFinishedSpans().find((span) => span.name === "execute_tool echo") as ReadableSpan;
    expect(worked.parentSpanContext).toBeUndefined();
  });
});
