import { readUIMessageStream, type UIMessage, type UIMessageChunk } from "ai";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { toUIMessageStream } from "../../../src/adapters/ai-sdk/index.js";
import {
  defineTool,
  errorResult,
  isToolLoopError,
  type Message,
  resumeToolLoop,
  streamToolLoop,
  type ToolLoopCheckpoint,
  type ToolLoopEvent,
} from "../../../src/index.js";
import { ScriptedProvider, type ScriptStep, toolCallResponse } from "../../../src/testing/index.js";
import { registryOf, waitingTool, weatherTool } from "../../helpers/adapter-fixtures.js";

const user: Message[] = [{ role: "user", content: "Weather in Paris, and break something." }];

const broken = defineTool({
  name: "broken",
  description: "Always fails.",
  parameters: z.object({}),
  execute: async () => errorResult("the tool is broken"),
});

/** A streamed run: reasoning, text and two calls' input in step 1, text in step 2. */
function streamedScript(): ScriptStep[] {
  return [
    {
      ...toolCallResponse([
        { id: "call_a", name: "get_weather", arguments: { city: "Paris" } },
        { id: "call_b", name: "broken", arguments: {} },
      ]),
      content: "Checking.",
      streamParts: [
        { type: "reasoning-delta", delta: "The user wants " },
        { type: "reasoning-delta", delta: "two things." },
        { type: "text-delta", delta: "Check" },
        { type: "text-delta", delta: "ing." },
        { type: "tool-input-start", toolCallId: "call_a", toolName: "get_weather" },
        { type: "tool-input-start", toolCallId: "call_b", toolName: "broken" },
        { type: "tool-input-delta", toolCallId: "call_a", delta: '{"city":' },
        { type: "tool-input-delta", toolCallId: "call_b", delta: "{}" },
        { type: "tool-input-delta", toolCallId: "call_a", delta: '"Paris"}' },
      ],
    },
    { content: "It is sunny.", textDeltas: ["It is ", "sunny."] },
  ];
}

async function chunksOf(stream: ReadableStream<UIMessageChunk>): Promise<UIMessageChunk[]> {
  const chunks: UIMessageChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

/** The last UI message `ai`'s own reader builds from `stream`, and the errors it reported. */
async function finalMessage(
  stream: ReadableStream<UIMessageChunk>,
): Promise<{ message?: UIMessage; errors: string[] }> {
  const errors: string[] = [];
  let message: UIMessage | undefined;
  for await (const state of readUIMessageStream({ stream, onError: (error) => errors.push(String(error)) })) {
    message = state;
  }
  return message === undefined ? { errors } : { message, errors };
}

const run = (steps: ScriptStep[], stream?: boolean) =>
  streamToolLoop(
    {
      provider: new ScriptedProvider(steps, stream === undefined ? {} : { stream }),
      tools: registryOf(weatherTool, broken),
      maxIterations: 4,
    },
    user,
  );

describe("toUIMessageStream", () => {
  it("gives ai's readUIMessageStream the whole message: steps, reasoning, text, tool outputs and errors", async () => {
    const { message, errors } = await finalMessage(toUIMessageStream(run(streamedScript())));
    expect(errors).toEqual([]);
    expect(message?.role).toBe("assistant");
    expect(message?.parts).toMatchObject([
      { type: "step-start" },
      { type: "reasoning", text: "The user wants two things.", state: "done" },
      { type: "text", text: "Checking.", state: "done" },
      {
        type: "tool-get_weather",
        toolCallId: "call_a",
        state: "output-available",
        input: { city: "Paris" },
        output: "sunny in Paris",
      },
      {
        type: "tool-broken",
        toolCallId: "call_b",
        state: "output-error",
        input: {},
        errorText: "the tool is broken",
      },
      { type: "step-start" },
      { type: "text", text: "It is sunny.", state: "done" },
    ]);
  });

  it("sends the chunks in protocol order with stable block ids and a messageId", async () => {
    const chunks = await chunksOf(toUIMessageStream(run(streamedScript())));
    const start = chunks[0] as { type: "start"; messageId: string };
    expect(start.type).toBe("start");
    expect(start.messageId).toMatch(/^[0-9a-f-]{36}$/);
    expect(chunks.slice(1)).toEqual([
      { type: "start-step" },
      { type: "reasoning-start", id: "reasoning-1" },
      { type: "reasoning-delta", id: "reasoning-1", delta: "The user wants " },
      { type: "reasoning-delta", id: "reasoning-1", delta: "two things." },
      { type: "reasoning-end", id: "reasoning-1" },
      { type: "text-start", id: "text-2" },
      { type: "text-delta", id: "text-2", delta: "Check" },
      { type: "text-delta", id: "text-2", delta: "ing." },
      { type: "text-end", id: "text-2" },
      { type: "tool-input-start", toolCallId: "call_a", toolName: "get_weather" },
      { type: "tool-input-start", toolCallId: "call_b", toolName: "broken" },
      { type: "tool-input-delta", toolCallId: "call_a", inputTextDelta: '{"city":' },
      { type: "tool-input-delta", toolCallId: "call_b", inputTextDelta: "{}" },
      { type: "tool-input-delta", toolCallId: "call_a", inputTextDelta: '"Paris"}' },
      { type: "tool-input-available", toolCallId: "call_a", toolName: "get_weather", input: { city: "Paris" } },
      { type: "tool-input-available", toolCallId: "call_b", toolName: "broken", input: {} },
      ...sortedOutputs(chunks),
      { type: "finish-step" },
      { type: "start-step" },
      { type: "text-start", id: "text-3" },
      { type: "text-delta", id: "text-3", delta: "It is " },
      { type: "text-delta", id: "text-3", delta: "sunny." },
      { type: "text-end", id: "text-3" },
      { type: "finish-step" },
      { type: "finish" },
    ]);
  });

  it("a provider that does not stream: each step's text as one delta, each call started and made available", async () => {
    const steps: ScriptStep[] = [
      {
        ...toolCallResponse([{ id: "call_a", name: "get_weather", arguments: { city: "Oslo" } }]),
        content: "Let me see.",
      },
      { content: "Sunny in Oslo." },
    ];
    const stream = toUIMessageStream(run(steps, false));
    const [forReader, forChunks] = stream.tee();
    const chunks = await chunksOf(forChunks);
    const { message } = await finalMessage(forReader);
    expect(chunks.filter((chunk) => chunk.type.startsWith("text-") || chunk.type.startsWith("tool-"))).toEqual([
      { type: "text-start", id: "text-1" },
      { type: "text-delta", id: "text-1", delta: "Let me see." },
      { type: "text-end", id: "text-1" },
      { type: "tool-input-start", toolCallId: "call_a", toolName: "get_weather" },
      { type: "tool-input-available", toolCallId: "call_a", toolName: "get_weather", input: { city: "Oslo" } },
      { type: "tool-output-available", toolCallId: "call_a", output: "sunny in Oslo" },
      { type: "text-start", id: "text-2" },
      { type: "text-delta", id: "text-2", delta: "Sunny in Oslo." },
      { type: "text-end", id: "text-2" },
    ]);
    expect(message?.parts.map((part) => [part.type, "state" in part ? part.state : undefined])).toEqual([
      ["step-start", undefined],
      ["text", "done"],
      ["tool-get_weather", "output-available"],
      ["step-start", undefined],
      ["text", "done"],
    ]);
  });

  it("a failed run ends with an error chunk carrying its message, bounded, and no finish", async () => {
    const huge = `the provider is down ${"x".repeat(100_000)}`;
    const failed = await chunksOf(toUIMessageStream(run([new Error(huge)])));
    const last = failed.at(-1) as { type: string; errorText: string };
    expect(failed.map((chunk) => chunk.type)).toEqual(["start", "start-step", "error"]);
    expect(last.errorText).toContain("the provider is down");
    expect(last.errorText.length).toBeLessThan(5_000);
    const { errors } = await finalMessage(toUIMessageStream(run([new Error("boom")])));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain("boom");
  });

  it("a call answered without running (the run aborted by a tool) still gets its input and output", async () => {
    const events: ToolLoopEvent[] = [
      { type: "step-start", iteration: 1 },
      {
        type: "message",
        message: {
          role: "assistant",
          content: "",
          toolCalls: [{ id: "call_x", name: "get_weather", arguments: { city: "Rome" } }],
        },
      },
      {
        type: "message",
        message: { role: "tool", content: "cancelled", toolCallId: "call_x", toolName: "get_weather", isError: true },
      },
    ];
    const chunks = await chunksOf(toUIMessageStream(eventsFrom(events)));
    expect(chunks.slice(2)).toEqual([
      { type: "tool-input-start", toolCallId: "call_x", toolName: "get_weather" },
      { type: "tool-input-available", toolCallId: "call_x", toolName: "get_weather", input: { city: "Rome" } },
      { type: "tool-output-error", toolCallId: "call_x", errorText: "cancelled" },
      { type: "finish" },
    ]);
  });

  it("a call waiting for approval (approve: interrupt) is an ai 6 approval request keyed by the call's id; the resumed run answers it", async () => {
    const deploy = defineTool({
      name: "deploy",
      description: "Deploys.",
      parameters: z.object({ target: z.string() }),
      needsApproval: true,
      execute: async ({ target }) => `deployed ${target}`,
    });
    const config = {
      provider: new ScriptedProvider([
        toolCallResponse([{ id: "call_d", name: "deploy", arguments: { target: "prod" } }]),
        { content: "Deployed." },
      ]),
      tools: registryOf(deploy),
      maxIterations: 4,
      approve: "interrupt" as const,
    };
    const stream = streamToolLoop(config, user);
    const [forReader, forChunks] = toUIMessageStream(stream).tee();
    const chunks = await chunksOf(forChunks);
    const { message, errors } = await finalMessage(forReader);
    expect(errors).toEqual([]);
    expect(chunks.filter((chunk) => chunk.type.startsWith("tool-"))).toEqual([
      { type: "tool-input-start", toolCallId: "call_d", toolName: "deploy" },
      { type: "tool-input-available", toolCallId: "call_d", toolName: "deploy", input: { target: "prod" } },
      { type: "tool-approval-request", approvalId: "call_d", toolCallId: "call_d" },
    ]);
    expect(chunks.at(-1)).toEqual({ type: "finish" });
    expect(message?.parts.at(-1)).toMatchObject({
      type: "tool-deploy",
      toolCallId: "call_d",
      state: "approval-requested",
      approval: { id: "call_d" },
    });
    // The UI's answer comes back by approvalId: that is the key of resumeToolLoop's decisions.
    const { checkpoint } = await stream.result;
    const resumed = await resumeToolLoop(config, checkpoint as ToolLoopCheckpoint, {}, { call_d: { approved: true } });
    expect(resumed.content).toBe("Deployed.");
    expect(resumed.messages.find((entry) => entry.role === "tool")?.content).toBe("deployed prod");
  });

  it("cancelling the stream stops iterating the events, which aborts the streamToolLoop run", async () => {
    const { waits, started: toolStarted, signals } = waitingTool();
    const stream = streamToolLoop(
      {
        provider: new ScriptedProvider([toolCallResponse({ id: "w", name: "waits" }), { content: "never" }]),
        tools: registryOf(waits),
        maxIterations: 3,
      },
      user,
    );
    const reader = toUIMessageStream(stream).getReader();
    const read: UIMessageChunk[] = [];
    while (read.at(-1)?.type !== "tool-input-available") read.push((await reader.read()).value as UIMessageChunk);
    // The next read lets the loop run the tool, which waits for the run's signal.
    const pending = reader.read();
    await toolStarted;
    await reader.cancel();
    await expect(pending).resolves.toEqual({ done: true, value: undefined });
    const failure = await stream.result.catch((error: unknown) => error);
    expect(isToolLoopError(failure) && failure.code).toBe("aborted");
    expect(signals[0]?.aborted).toBe(true);
  });
});

/** The two outputs of the streamed script's first step (tool ends may come in either order). */
function sortedOutputs(chunks: UIMessageChunk[]): UIMessageChunk[] {
  const outputs = chunks.filter((chunk) => chunk.type.startsWith("tool-output-"));
  expect(outputs).toHaveLength(2);
  expect(outputs).toContainEqual({ type: "tool-output-available", toolCallId: "call_a", output: "sunny in Paris" });
  expect(outputs).toContainEqual({ type: "tool-output-error", toolCallId: "call_b", errorText: "the tool is broken" });
  return outputs;
}

async function* eventsFrom(events: ToolLoopEvent[]): AsyncGenerator<ToolLoopEvent, void> {
  for (const event of events) yield event;
}
