import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Message, resumeToolLoop, type Tool, type ToolLoopCheckpoint } from "../src/index.js";
import { ScriptedProvider, textResponse } from "../src/testing/index.js";

// A checkpoint comes from storage someone else could write: whatever it holds, resumeToolLoop
// either rejects with a TypeError before anything runs, or runs only calls without an answer and
// leaves a transcript in which every call has exactly one answer.

/** A tool that records the call ids it ran. */
function recording(ran: string[]): Tool {
  return {
    name: "work",
    description: "work",
    parameters: { type: "object" },
    execute: (_args, context) => {
      ran.push(context.toolCallId ?? "");
      return "ok";
    },
  };
}

/** The ids of the last assistant message's calls that no tool message after it answers, in call order. */
function open(messages: readonly unknown[]): string[] {
  const at = messages.findLastIndex((message) => (message as Partial<Message> | null)?.role === "assistant");
  const calls = (messages[at] as Partial<Message> | undefined)?.toolCalls ?? [];
  const answered = new Set(messages.slice(at + 1).map((message) => (message as Partial<Message>).toolCallId));
  return calls.map((call) => call.id).filter((callId) => !answered.has(callId));
}

const id = fc.constantFrom("a", "b", "c", "__proto__", "constructor");
const toolCall = (callId: string) => ({
  id: callId,
  type: "function" as const,
  name: "work",
  arguments: {},
  function: { name: "work", arguments: "{}" },
});
/** Any message, or anything in its place. */
const message: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant({ role: "user", content: "hi" }),
  fc.record({
    role: fc.constant("assistant"),
    content: fc.constant(""),
    toolCalls: fc.array(id.map(toolCall), { maxLength: 3 }),
  }),
  fc.constant({ role: "assistant", content: "answer" }),
  id.map((callId) => ({ role: "tool", content: "ok", toolCallId: callId })),
  fc.jsonValue(),
);
/** Transcripts as a loop leaves them: turns whose calls are answered, the last one maybe in part. */
const wellFormed = fc
  .record({
    turns: fc.array(fc.uniqueArray(id, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 3 }),
    answeredInLast: fc.nat(3),
    end: fc.constantFrom("open", "open", "answer", "user"),
  })
  .map(({ turns, answeredInLast, end }) => {
    const messages: unknown[] = [{ role: "user", content: "hi" }];
    turns.forEach((ids, index) => {
      messages.push({ role: "assistant", content: "", toolCalls: ids.map(toolCall) });
      const last = index === turns.length - 1 && end === "open";
      for (const callId of last ? ids.slice(0, answeredInLast) : ids) {
        messages.push({ role: "tool", content: "ok", toolCallId: callId });
      }
    });
    if (end === "answer") messages.push({ role: "assistant", content: "answer" });
    if (end === "user") messages.push({ role: "user", content: "more" });
    return messages;
  });
const checkpoint = fc.record({
  version: fc.oneof({ arbitrary: fc.constant(1), weight: 9 }, { arbitrary: fc.jsonValue(), weight: 1 }),
  messages: fc.oneof(
    { arbitrary: wellFormed, weight: 6 },
    { arbitrary: fc.array(message, { maxLength: 8 }), weight: 3 },
    { arbitrary: fc.jsonValue(), weight: 1 },
  ),
  iterations: fc.oneof({ arbitrary: fc.nat(4), weight: 9 }, { arbitrary: fc.jsonValue(), weight: 1 }),
  pendingAsync: fc.oneof(
    { arbitrary: fc.constant([]), weight: 6 },
    { arbitrary: fc.array(fc.record({ toolCallId: id, toolName: fc.string() }), { maxLength: 2 }), weight: 3 },
    { arbitrary: fc.jsonValue(), weight: 1 },
  ),
});

describe("resumeToolLoop on arbitrary checkpoints", () => {
  it("any JSON value: a TypeError before anything runs, or a run of exactly the calls without an answer, leaving every call answered", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof({ arbitrary: checkpoint, weight: 9 }, { arbitrary: fc.jsonValue(), weight: 1 }),
        async (value) => {
          const ran: string[] = [];
          const provider = new ScriptedProvider([textResponse("done"), textResponse("done"), textResponse("done")]);
          const input = JSON.parse(JSON.stringify(value)) as ToolLoopCheckpoint;
          const outcome = await resumeToolLoop({ provider, tools: [recording(ran)], maxIterations: 3 }, input).then(
            (result) => ({ result }),
            (error: unknown) => ({ error }),
          );
          if ("error" in outcome) {
            expect(outcome.error).toBeInstanceOf(TypeError);
            expect(ran).toEqual([]);
            expect(provider.calls).toHaveLength(0);
            return;
          }
          // Exactly the calls without an answer ran (the model then only answers with text).
          expect(ran).toEqual(open(input.messages));
          // The transcript it leaves is itself a valid checkpoint, finished: every call has its answer.
          const again = await resumeToolLoop(
            { provider: new ScriptedProvider([]), maxIterations: 3 },
            { version: 1, messages: outcome.result.messages, iterations: outcome.result.iterations, pendingAsync: [] },
          );
          expect(again.messages).toEqual(outcome.result.messages);
        },
      ),
      { numRuns: 300 },
    );
  });
});
