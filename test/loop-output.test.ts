import { describe, expect, it } from "vitest";
import * as z from "zod";
import { z as z3 } from "zod3";
import {
  isToolLoopError,
  type Message,
  newToolResult,
  type OutputRequest,
  resumeToolLoop,
  runToolLoop,
  streamToolLoop,
  type ToolLoopCheckpoint,
  type ToolLoopError,
  type ToolLoopEvent,
  ToolResult,
} from "../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../src/testing/index.js";
import { registryWith, tool } from "./helpers/loop-tools.js";

const user: Message[] = [{ role: "user", content: "What is the weather in Paris?" }];
const weather = z.object({ city: z.string(), celsius: z.number() });
const lookup = tool("lookup", () => newToolResult("21 degrees in Paris"));
const tools = registryWith(lookup);
const VALID = '{"city":"Paris","celsius":21}';

/** The rejection of `promise`, which must reject with a ToolLoopError. */
async function rejection(promise: Promise<unknown>): Promise<ToolLoopError> {
  const error = await promise.then(
    () => {
      throw new Error("expected the run to reject");
    },
    (caught: unknown) => caught,
  );
  if (!isToolLoopError(error)) throw error;
  return error;
}

describe("output: the request", () => {
  it("every provider call gets options.output { name: 'output', schema } (zod 4 converted once), and the tools stay", async () => {
    const provider = new ScriptedProvider([toolCallResponse({ name: "lookup", arguments: {} }), textResponse(VALID)]);
    const result = await runToolLoop(
      { provider, tools, maxIterations: 5, output: weather, llmOptions: { temperature: 0 } },
      user,
    );
    expect(result).toMatchObject({ stopReason: "completed", content: VALID, output: { city: "Paris", celsius: 21 } });
    const expected: OutputRequest = { name: "output", schema: z.toJSONSchema(weather, { io: "input" }) };
    delete expected.schema.$schema;
    for (const call of provider.calls) {
      expect(call.options).toEqual({ temperature: 0, output: expected });
      expect(call.tools?.map((definition) => definition.function.name)).toEqual(["lookup"]);
    }
    // The schema converted once: the same object, also in another run.
    const again = new ScriptedProvider([textResponse(VALID)]);
    await runToolLoop({ provider: again, maxIterations: 1, output: weather }, user);
    const schemaOf = (call: { options: Record<string, unknown> } | undefined) =>
      (call?.options.output as OutputRequest | undefined)?.schema;
    expect(schemaOf(provider.calls[1])).toBe(schemaOf(provider.calls[0]));
    expect(schemaOf(again.calls[0])).toBe(schemaOf(provider.calls[0]));
  });

  it("a zod 3 schema: converted, and its parsed value is the output", async () => {
    const schema = z3.object({ city: z3.string(), celsius: z3.number().transform((n) => n * 10) });
    const provider = new ScriptedProvider([textResponse(VALID)]);
    const result = await runToolLoop({ provider, maxIterations: 1, output: schema }, user);
    expect(result.output).toEqual({ city: "Paris", celsius: 210 });
    const request = provider.calls[0]?.options.output as OutputRequest;
    expect(request.name).toBe("output");
    expect(request.schema).toMatchObject({ type: "object", required: ["city", "celsius"] });
  });

  it("{ name, schema } with a JSON Schema: sent as given, the answer validated like tool arguments", async () => {
    const schema = { type: "object", properties: { n: { type: "integer" } }, required: ["n"] };
    const provider = new ScriptedProvider([textResponse('{"n":"x"}'), textResponse('{"n":3}')]);
    const result = await runToolLoop({ provider, maxIterations: 5, output: { name: "count", schema } }, user);
    expect(provider.calls[0]?.options.output).toEqual({ name: "count", schema });
    expect(result.output).toEqual({ n: 3 });
    expect(result.messages[2]?.content).toMatchInlineSnapshot(`
      "Your answer was not accepted: n: must be integer
      Answer again with only a JSON value that matches the schema "count"."
    `);
  });

  it("{ name, schema } with a zod schema gives it that name", async () => {
    const provider = new ScriptedProvider([textResponse(VALID)]);
    const result = await runToolLoop(
      { provider, maxIterations: 1, output: { name: "weather", schema: weather } },
      user,
    );
    expect(provider.calls[0]?.options.output).toMatchObject({ name: "weather" });
    expect(result.output).toEqual({ city: "Paris", celsius: 21 });
  });

  it("a model-call middleware sees options.output in its request", async () => {
    const seen: unknown[] = [];
    const provider = new ScriptedProvider([textResponse(VALID)]);
    await runToolLoop(
      {
        provider,
        maxIterations: 1,
        output: weather,
        middleware: [
          {
            name: "spy",
            wrapModelCall: (request, next) => {
              seen.push(request.options.output);
              return next(request);
            },
          },
        ],
      },
      user,
    );
    expect(seen).toEqual([provider.calls[0]?.options.output]);
    expect(seen[0]).toMatchObject({ name: "output", schema: { type: "object" } });
  });

  it("a run without output sends no options.output", async () => {
    const provider = new ScriptedProvider([textResponse(VALID)]);
    const result = await runToolLoop({ provider, maxIterations: 1, onEvent: () => {} }, user);
    expect(provider.calls[0]?.options).toEqual({});
    expect(result).not.toHaveProperty("output");
  });
});

describe("output: invalid answers", () => {
  it("an invalid answer stays, a user message says why and asks again (an iteration); the next valid one is the output", async () => {
    const provider = new ScriptedProvider([textResponse('{"city":"Paris"}'), textResponse(VALID)]);
    const result = await runToolLoop({ provider, maxIterations: 5, output: weather }, user);
    expect(result).toMatchObject({ stopReason: "completed", iterations: 2, content: VALID });
    expect(result.output).toEqual({ city: "Paris", celsius: 21 });
    expect(result.messages.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(result.messages[2]?.content).toMatchInlineSnapshot(`
      "Your answer was not accepted: celsius: Invalid input: expected number, received undefined
      Answer again with only a JSON value that matches the schema "output"."
    `);
    // The retry is asked with the feedback and the schema again.
    expect(provider.calls[1]?.messages.at(-1)).toEqual(result.messages[2]);
    expect(provider.calls[1]?.options.output).toBeDefined();
  });

  it("not JSON: the feedback says so; after outputRetries (default 1) it rejects invalid_output, messages ending with the last answer", async () => {
    const provider = new ScriptedProvider([textResponse("It is sunny."), textResponse("Still sunny.")]);
    const error = await rejection(runToolLoop({ provider, maxIterations: 5, output: weather }, user));
    expect(error.code).toBe("invalid_output");
    expect(error.iterations).toBe(2);
    expect(error.messages.at(-1)).toEqual({ role: "assistant", content: "Still sunny." });
    expect(error.messages[2]?.content).toMatch(
      /^Your answer was not accepted: the answer is not JSON: Unexpected token/,
    );
    expect(error.message).toMatch(
      /the final answer does not match the output schema \(2 tries\): the answer is not JSON/,
    );
    expect((error.cause as Error).message).toMatch(/^the answer is not JSON: /);
  });

  it.each([
    [0, 1],
    [2, 3],
  ])("outputRetries %i: %i answers before the rejection", async (outputRetries, answers) => {
    const provider = new ScriptedProvider(Array.from({ length: answers }, () => textResponse("[]")));
    const error = await rejection(runToolLoop({ provider, maxIterations: 10, output: weather, outputRetries }, user));
    expect(error).toMatchObject({ code: "invalid_output", iterations: answers });
    expect(provider.calls).toHaveLength(answers);
    expect((error.cause as Error).message).toMatch(/^\(root\): Invalid input: expected object, received array/);
  });

  it("maxIterations bounds the retries: an invalid answer at the cap resolves max_iterations, without output", async () => {
    const provider = new ScriptedProvider([toolCallResponse({ name: "lookup" }), textResponse("sunny")]);
    const result = await runToolLoop({ provider, tools, maxIterations: 2, output: weather }, user);
    expect(result).toMatchObject({ stopReason: "max_iterations", iterations: 2, content: "sunny" });
    expect(result).not.toHaveProperty("output");
    expect(result.messages.at(-1)).toEqual({ role: "assistant", content: "sunny" });
  });

  it("max_iterations with calls, a loop-breaking tool, a handled response: no output, as without it", async () => {
    const capped = await runToolLoop(
      {
        provider: new ScriptedProvider([toolCallResponse({ name: "lookup" })]),
        tools,
        maxIterations: 1,
        output: weather,
      },
      user,
    );
    expect(capped).toMatchObject({ stopReason: "max_iterations", content: "" });
    const done = tool("done", () => newToolResult("done"), { loopBreaking: true });
    const broken = await runToolLoop(
      {
        provider: new ScriptedProvider([toolCallResponse({ name: "done" })]),
        tools: [done],
        maxIterations: 3,
        output: weather,
      },
      user,
    );
    expect(broken.stopReason).toBe("loop_breaking_tool");
    const handles = tool("reply", () => new ToolResult({ forLLM: "sent", responseHandled: true }));
    const handled = await runToolLoop(
      {
        provider: new ScriptedProvider([toolCallResponse({ name: "reply" })]),
        tools: [handles],
        maxIterations: 3,
        output: weather,
      },
      user,
    );
    expect(handled.stopReason).toBe("response_handled");
    for (const result of [capped, broken, handled]) expect(result).not.toHaveProperty("output");
  });

  it("finalAnswerOnMaxIterations: the extra call asks for the output (no tools); a valid answer is the output, an invalid one is not retried", async () => {
    const valid = new ScriptedProvider([toolCallResponse({ name: "lookup" }), textResponse(VALID)]);
    const result = await runToolLoop(
      { provider: valid, tools, maxIterations: 1, output: weather, finalAnswerOnMaxIterations: true },
      user,
    );
    expect(valid.calls[1]?.tools).toBeUndefined();
    expect(valid.calls[1]?.options.output).toMatchObject({ name: "output" });
    expect(result).toMatchObject({
      stopReason: "max_iterations",
      content: VALID,
      output: { city: "Paris", celsius: 21 },
    });
    const invalid = new ScriptedProvider([toolCallResponse({ name: "lookup" }), textResponse("no idea")]);
    const without = await runToolLoop(
      { provider: invalid, tools, maxIterations: 1, output: weather, finalAnswerOnMaxIterations: true },
      user,
    );
    expect(without).toMatchObject({ stopReason: "max_iterations", content: "no idea", iterations: 2 });
    expect(without).not.toHaveProperty("output");
  });
});

describe("output: streaming, checkpoints, resume", () => {
  it("streamToolLoop: result.output, and loop-end carries it", async () => {
    const provider = new ScriptedProvider([textResponse(VALID)], { stream: true });
    const stream = streamToolLoop({ provider, maxIterations: 1, output: weather }, user);
    const events: ToolLoopEvent[] = [];
    for await (const event of stream) events.push(event);
    const result = await stream.result;
    expect(result.output).toEqual({ city: "Paris", celsius: 21 });
    expect(events.at(-1)).toEqual({ type: "loop-end", result });
  });

  it("the feedback message is delivered (message event) and checkpointed; resuming from there asks again", async () => {
    const saved: string[] = [];
    const events: ToolLoopEvent[] = [];
    const first = new ScriptedProvider([textResponse("nope"), new Error("provider down")]);
    await rejection(
      runToolLoop(
        {
          provider: first,
          maxIterations: 5,
          output: weather,
          onCheckpoint: (checkpoint) => void saved.push(JSON.stringify(checkpoint)),
          onEvent: (event) => void events.push(event),
        },
        user,
      ),
    );
    const feedback = events.filter((event) => event.type === "message").at(-1);
    expect(feedback).toMatchObject({ type: "message", message: { role: "user" } });
    const checkpoint = JSON.parse(saved.at(-1) as string) as ToolLoopCheckpoint;
    expect(checkpoint.messages.at(-1)?.role).toBe("user");
    const second = new ScriptedProvider([textResponse(VALID)]);
    const result = await resumeToolLoop({ provider: second, maxIterations: 5, output: weather }, checkpoint);
    expect(result).toMatchObject({ stopReason: "completed", iterations: 2, output: { city: "Paris", celsius: 21 } });
    expect(second.calls[0]?.options.output).toMatchObject({ name: "output" });
  });

  it("resumeToolLoop from a checkpoint taken before the final answer: the answer is validated into output", async () => {
    const saved: string[] = [];
    const first = new ScriptedProvider([toolCallResponse({ name: "lookup" }), new Error("crash")]);
    const onCheckpoint = (checkpoint: ToolLoopCheckpoint) => void saved.push(JSON.stringify(checkpoint));
    await rejection(runToolLoop({ provider: first, tools, maxIterations: 5, output: weather, onCheckpoint }, user));
    const checkpoint = JSON.parse(saved.at(-1) as string) as ToolLoopCheckpoint;
    expect(checkpoint.messages.at(-1)?.role).toBe("tool");
    const second = new ScriptedProvider([textResponse(VALID)]);
    const result = await resumeToolLoop({ provider: second, tools, maxIterations: 5, output: weather }, checkpoint);
    expect(result).toMatchObject({ stopReason: "completed", iterations: 2, output: { city: "Paris", celsius: 21 } });
  });

  it("resumeToolLoop from a checkpoint holding the final answer: output without a call; an invalid one rejects", async () => {
    const finished = (content: string): ToolLoopCheckpoint => ({
      version: 1,
      messages: [...user, { role: "assistant", content }],
      iterations: 1,
      pendingAsync: [],
    });
    const provider = new ScriptedProvider([]);
    const result = await resumeToolLoop({ provider, maxIterations: 5, output: weather }, finished(VALID));
    expect(result).toMatchObject({ stopReason: "completed", output: { city: "Paris", celsius: 21 } });
    const error = await rejection(resumeToolLoop({ provider, maxIterations: 5, output: weather }, finished("{")));
    expect(error).toMatchObject({ code: "invalid_output", iterations: 1 });
    expect(error.messages.at(-1)).toEqual({ role: "assistant", content: "{" });
    expect(provider.calls).toHaveLength(0);
  });
});

describe("output: hostile answers", () => {
  it("a 10 MB answer: not JSON, or JSON failing the schema — the feedback and the error stay bounded", async () => {
    const huge = "x".repeat(10 * 1024 * 1024);
    const hugeJson = JSON.stringify({ city: huge, celsius: huge });
    const provider = new ScriptedProvider([textResponse(huge), textResponse(hugeJson)]);
    const error = await rejection(runToolLoop({ provider, maxIterations: 5, output: weather }, user));
    expect(error.code).toBe("invalid_output");
    expect(String(error.messages[2]?.content).length).toBeLessThan(1_200);
    expect(error.message.length).toBeLessThan(1_200);
    expect((error.cause as Error).message).toMatch(/^celsius: Invalid input: expected number, received string/);
  });

  it("100,000 nested arrays: JSON.parse reads them; a recursive schema that overflows the stack is a bounded problem, not a crash", async () => {
    const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
    expect(() => JSON.parse(deep)).not.toThrow();
    type Nested = Nested[];
    const nested: z.ZodType<Nested> = z.lazy(() => z.array(nested));
    const provider = new ScriptedProvider([textResponse(deep), textResponse("[[]]")]);
    const result = await runToolLoop({ provider, maxIterations: 5, output: nested }, user);
    expect(result.output).toEqual([[]]);
    expect(result.messages[2]?.content).toMatch(
      /^Your answer was not accepted: the answer could not be checked against the schema: Maximum call stack size exceeded/,
    );
    // The same through the JSON Schema validator, and an unclosed one (not JSON).
    const schema = { $ref: "#/$defs/n", $defs: { n: { type: "array", items: { $ref: "#/$defs/n" } } } };
    const json = new ScriptedProvider([textResponse(deep), textResponse("[".repeat(100_000))]);
    const error = await rejection(
      runToolLoop({ provider: json, maxIterations: 5, output: { name: "n", schema } }, user),
    );
    expect(error.messages[2]?.content).toMatch(
      /^Your answer was not accepted: the answer could not be checked against the schema: Maximum call stack size exceeded/,
    );
    expect((error.cause as Error).message).toMatch(/^the answer is not JSON: /);
  });

  it.each([
    ["zod 4 looseObject", z.looseObject({ a: z.number() })],
    ["zod 4 record", z.record(z.string(), z.unknown())],
    ["zod 3 passthrough", z3.object({ a: z3.number() }).passthrough()],
    ["zod 3 record", z3.record(z3.unknown())],
    ["JSON Schema", { name: "loose", schema: { type: "object" } }],
  ] as const)("__proto__ keys (%s): nothing polluted, the output a plain data object", async (_label, output) => {
    const answer = '{"a":1,"__proto__":{"polluted":true},"nested":{"__proto__":{"polluted":true}}}';
    const provider = new ScriptedProvider([textResponse(answer)]);
    const result = await runToolLoop({ provider, maxIterations: 1, output }, user);
    const value = result.output as Record<string, unknown>;
    expect(value.a).toBe(1);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(value.polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const nested = value.nested as Record<string, unknown> | undefined;
    if (nested !== undefined) {
      expect(Object.getPrototypeOf(nested)).toBe(Object.prototype);
      expect(nested.polluted).toBeUndefined();
    }
  });
});
