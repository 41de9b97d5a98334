import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as z from "zod";
import {
  defineTool,
  type LLMResponse,
  type Message,
  newToolResult,
  runToolLoop,
  type Tool,
  ToolRegistry,
} from "../src/index.js";
import { ScriptedProvider, textResponse } from "../src/testing/index.js";

// Model output is untrusted: whatever a provider hands back as tool calls, the loop must answer
// every call, in order, with unique ids, and never reject or leak a rejection.

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => {
  unhandled.push(reason);
};
beforeAll(() => {
  process.on("unhandledRejection", onUnhandled);
});
afterAll(() => {
  process.off("unhandledRejection", onUnhandled);
});

/** Arguments a tool ran with that its schema should have rejected. */
const violations: string[] = [];

const echo: Tool = {
  name: "echo",
  description: "Echo a text",
  parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  execute(args) {
    if (typeof args.text !== "string") violations.push(`echo ran with ${JSON.stringify(args)}`);
    return newToolResult(String(args.text));
  },
};

const add = defineTool({
  name: "add",
  description: "Add two numbers",
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => {
    if (typeof a !== "number" || typeof b !== "number") violations.push(`add ran with ${JSON.stringify({ a, b })}`);
    return String(a + b);
  },
});

const boom: Tool = {
  name: "boom",
  description: "Always fails",
  parameters: {},
  execute: async () => {
    throw { not: "an Error" };
  },
};

// The tools keep no state, so one registry serves every run (registering compiles the schemas).
const registry = new ToolRegistry();
registry.register(echo);
registry.register(add);
registry.register(boom);

const HUGE_VALID = JSON.stringify({ text: "x".repeat(300_000) });
const HUGE_INVALID = `{"text": "${"y".repeat(300_000)}`;

const toolName = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom("echo", "add", "boom") },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "__proto__",
      "constructor",
      "toString",
      "hasOwnProperty",
      "valueOf",
      "",
      " echo",
      "ECHO",
      "unknown_tool",
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 70 }) },
);

const callId = fc.oneof(
  fc.constant(undefined),
  fc.constant(""),
  fc.constantFrom("a", "b", "dup", "call_1_0", "call_1_1", "call_2_0", "history_1"),
  fc.string({ maxLength: 8 }),
  fc.integer(),
  fc.constant(null),
);

const argumentText = fc.oneof(
  fc.constantFrom("", "   ", "{", "}", "null", "[]", "[1,2]", '"text"', "42", "true", "{}", '{"text":"hi"}'),
  fc.constantFrom('{"a":1,"b":2}', '{"a":"1","b":2}', '{"__proto__":{"text":"x"}}', '{"constructor":1}'),
  fc.constantFrom(HUGE_VALID, HUGE_INVALID),
  fc.json({ maxDepth: 2 }),
  fc.string({ maxLength: 40 }),
  fc.jsonValue({ maxDepth: 2 }).map((value) => JSON.stringify({ text: value })),
);

const argumentsValue = fc.oneof(
  argumentText,
  fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
  fc.record({ a: fc.integer(), b: fc.integer() }),
  fc.record({ text: fc.oneof(fc.string({ maxLength: 10 }), fc.integer()) }),
  fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }),
  fc.constantFrom(null, undefined, 0, 7, true, false),
);

const objectCall = fc.record(
  {
    id: callId,
    type: fc.constantFrom("function", "tool_use", undefined),
    name: fc.oneof(toolName, fc.integer(), fc.constant(null)),
    arguments: argumentsValue,
    function: fc.oneof(
      fc.record(
        { name: fc.oneof(toolName, fc.integer()), arguments: fc.oneof(argumentText, fc.integer()) },
        { requiredKeys: [] },
      ),
      fc.constantFrom(null, "function", 3),
    ),
    providerMetadata: fc.oneof(fc.constant({ signature: "s" }), fc.constant("not an object")),
  },
  { requiredKeys: [] },
);

const notAnObject = fc.oneof(
  fc.constantFrom(null, undefined, 0, "echo", true),
  fc.array(fc.string({ maxLength: 3 }), { maxLength: 2 }),
);

const toolCall = fc.oneof({ weight: 9, arbitrary: objectCall }, { weight: 1, arbitrary: notAnObject });

const malformedResponse = fc.record(
  {
    content: fc.oneof(fc.string({ maxLength: 20 }), fc.constant(undefined), fc.integer(), fc.constant(null)),
    toolCalls: fc.array(toolCall, { minLength: 1, maxLength: 6 }),
    finishReason: fc.constantFrom("tool_calls", "stop", "length", undefined),
  },
  { requiredKeys: ["toolCalls"] },
) as fc.Arbitrary<LLMResponse>;

const history: Message[] = [
  { role: "system", content: "You are a test." },
  { role: "user", content: "earlier question" },
  {
    role: "assistant",
    content: "",
    toolCalls: [
      { id: "history_1", type: "function", name: "echo", arguments: { text: "x" } },
      { id: "call_1_0", type: "function", name: "echo", arguments: { text: "y" } },
    ],
  },
  { role: "tool", content: "x", toolCallId: "history_1" },
  { role: "tool", content: "y", toolCallId: "call_1_0" },
  { role: "assistant", content: "earlier answer" },
  { role: "user", content: "now" },
];

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Throws (for fast-check to shrink) when an invariant does not hold; cheaper than `expect` in a hot loop. */
function check(condition: boolean, problem: string, detail?: unknown): void {
  if (!condition) throw new Error(`${problem}: ${JSON.stringify(detail)?.slice(0, 500)}`);
}

/** The invariants every transcript must satisfy, whatever the provider sent. */
function checkTranscript(messages: Message[], responses: LLMResponse[], iterations: number): void {
  check(
    messages.slice(0, history.length).every((message, index) => message === history[index]),
    "the caller's messages come first, unchanged",
  );
  const turns = messages.slice(history.length);
  const ids = new Set<string>(["history_1", "call_1_0"]);
  let index = 0;
  let turn = 0;
  let answered = false;
  while (index < turns.length) {
    const assistant = turns[index] as Message;
    check(assistant.role === "assistant", "a turn starts with an assistant message", assistant);
    check(typeof assistant.content === "string", "assistant content is a string", assistant);
    if (assistant.toolCalls === undefined) {
      check(index === turns.length - 1, "only the final answer has no calls, and it is last");
      answered = true;
      break;
    }
    const raw = responses[turn]?.toolCalls ?? [];
    check(assistant.toolCalls.length === raw.length, "no call is dropped or added", assistant.toolCalls);
    const answers = turns.slice(index + 1, index + 1 + assistant.toolCalls.length);
    check(answers.length === assistant.toolCalls.length, "every call has an answer", turns);
    assistant.toolCalls.forEach((call, position) => {
      check(typeof call.id === "string" && call.id !== "", "ids are non-empty strings", call);
      check(!ids.has(call.id), "ids are unique in the transcript", call.id);
      ids.add(call.id);
      check(call.type === "function", 'type is "function"', call);
      check(typeof call.name === "string", "name is a string", call);
      check(isPlainObject(call.arguments), "arguments is an object", call);
      check(call.function?.name === call.name, "function.name is the name", call);
      check(typeof call.function?.arguments === "string", "function.arguments is a string", call);
      const answer = answers[position] as Message;
      check(answer.role === "tool" && answer.toolCallId === call.id, "answers are in call order", { call, answer });
      check(answer.toolName === call.name, "the answer names the tool", answer);
      check(typeof answer.content === "string" && typeof answer.isError === "boolean", "answer fields", answer);
    });
    index += 1 + assistant.toolCalls.length;
    turn++;
  }
  check(turn + (answered ? 1 : 0) === iterations, "one assistant message per iteration", { turn, iterations });
}

describe("runToolLoop with malformed provider responses (fast-check)", () => {
  it("never rejects, answers every call once in order with unique ids, and leaks no rejection", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(malformedResponse, { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 1, max: 4 }),
        fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
        async (responses, maxIterations, maxConcurrency) => {
          const provider = new ScriptedProvider([...responses, textResponse("final")]);
          const result = await runToolLoop(
            {
              provider,
              tools: registry,
              maxIterations,
              ...(maxConcurrency === undefined ? {} : { maxConcurrency }),
            },
            history,
          );
          const expectedIterations = Math.min(maxIterations, responses.length + 1);
          const completed = maxIterations > responses.length;
          check(result.iterations === expectedIterations, "iterations", result.iterations);
          check(result.stopReason === (completed ? "completed" : "max_iterations"), "stopReason", result.stopReason);
          check(result.content === (completed ? "final" : ""), "content", result.content);
          checkTranscript(result.messages, responses, result.iterations);
        },
      ),
      { numRuns: 1500 },
    );
    // Let any stray rejection surface before checking.
    await new Promise((resolve) => setImmediate(resolve));
    expect(unhandled).toEqual([]);
    expect(violations).toEqual([]);
  });

  it("answers every call with an error when there are no tools (tools: null)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(toolCall, { minLength: 1, maxLength: 8 }), async (toolCalls) => {
        const provider = new ScriptedProvider([{ content: "", toolCalls } as unknown as LLMResponse]);
        const result = await runToolLoop({ provider, tools: null, maxIterations: 1 }, history);
        checkTranscript(result.messages, [{ content: "", toolCalls } as unknown as LLMResponse], 1);
        for (const message of result.messages.slice(history.length + 1)) {
          check(message.isError === true, "every answer is an error", message);
        }
      }),
      { numRuns: 300 },
    );
  });
});
