import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  alternateJobId,
  callIdentity,
  decodeJobData,
  decodeReturn,
  encodeReturn,
  failedAfter,
  jobIdFor,
} from "../../src/bullmq/tool-job.js";
import { errorResult, newToolResult, ToolResult } from "../../src/index.js";

describe("jobIdFor", () => {
  it.each([
    ["call_abc123", "call_abc123"],
    ["toolu_01A-b.c", "toolu_01A-b.c"],
    ["x1".repeat(64), "x1".repeat(64)],
  ])("a plain id is the job id as it is: %s", (id, expected) => {
    expect(jobIdFor(id)).toBe(expected);
  });

  it.each([
    ["123", "an integer (BullMQ refuses it)"],
    ["-5", "a negative integer"],
    ["a:b", "a colon (BullMQ refuses it)"],
    ["x".repeat(129), "longer than 128"],
    ["", "empty"],
    ["call 1", "a space"],
    ["__proto__\u0000", "a NUL"],
    ...["meta", "events", "wait", "id", "stalled", "stalled-check", "marker", "active", "future-key"].map(
      (name): [string, string] => [name, "the name of a queue's own Redis key (only a-z and -)"],
    ),
  ])("%j (%s) becomes # and its SHA-256", (id) => {
    expect(jobIdFor(id)).toMatch(/^#[0-9a-f]{64}$/);
    expect(jobIdFor(id)).toBe(jobIdFor(id));
  });

  it("no two call ids share a job id", () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => {
        fc.pre(a !== b);
        expect(jobIdFor(a)).not.toBe(jobIdFor(b));
      }),
    );
  });
});

describe("callIdentity / alternateJobId", () => {
  const call = { toolName: "echo", channel: "web", chatId: "alice", args: { text: "a", n: { x: 1, y: [1, 2] } } };

  it("the same for the same call, whatever the order of the arguments' keys (a transcript saved and parsed again)", () => {
    const reordered = JSON.parse('{"n":{"y":[1,2],"x":1},"text":"a"}') as Record<string, unknown>;
    expect(callIdentity({ ...call, args: reordered })).toBe(callIdentity(call));
  });

  it("takes the arguments as the job stores them (JSON): an undefined value is no key, a Date its text", () => {
    const date = new Date(0);
    expect(callIdentity({ ...call, args: { ...call.args, gone: undefined } })).toBe(callIdentity(call));
    expect(callIdentity({ ...call, args: { when: date } })).toBe(
      callIdentity({ ...call, args: { when: "1970-01-01T00:00:00.000Z" } }),
    );
    expect(() => callIdentity({ ...call, args: { big: 1n } })).toThrow(TypeError);
  });

  it.each([
    ["other arguments", { args: { text: "b", n: { x: 1, y: [1, 2] } } }],
    ["another chat", { chatId: "mallory" }],
    ["another channel", { channel: "mail" }],
    ["another tool", { toolName: "shout" }],
    ["an array's order", { args: { text: "a", n: { x: 1, y: [2, 1] } } }],
    ["a __proto__ key (data, as JSON.parse makes it)", { args: JSON.parse('{"text":"a","__proto__":{"n":1}}') }],
  ])("differs for %s", (_, change) => {
    expect(callIdentity({ ...call, ...change })).not.toBe(callIdentity(call));
  });

  it("no field can be shifted into another (a chat id holding a channel's text)", () => {
    const a = callIdentity({ ...call, channel: "web", chatId: "alice" });
    const b = callIdentity({ ...call, channel: 'web","alice', chatId: "" });
    expect(a).not.toBe(b);
  });

  it("an alternate job id: the call's own job id, # and 32 hex digits of the call's hash", () => {
    expect(alternateJobId("text_1_0", callIdentity(call))).toMatch(/^text_1_0#[0-9a-f]{32}$/);
    expect(alternateJobId("a:b", callIdentity(call))).toMatch(/^#[0-9a-f]{64}#[0-9a-f]{32}$/);
    const other = callIdentity({ ...call, args: { text: "b" } });
    expect(alternateJobId("text_1_0", other)).not.toBe(alternateJobId("text_1_0", callIdentity(call)));
  });

  it("no call id's own job id is an alternate job id (a model cannot send the id of another call's job)", () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.string(), (id, other, text) => {
        const alternate = alternateJobId(other, callIdentity({ ...call, args: { text } }));
        expect(jobIdFor(id)).not.toBe(alternate);
        // Not even when the model sends that very id as its call id.
        expect(jobIdFor(alternate)).not.toBe(alternate);
      }),
    );
  });
});

describe("encodeReturn / decodeReturn", () => {
  it("keeps forLLM, forUser, silent, isError, responseHandled and data; not err or metadata", () => {
    const result = new ToolResult({ forLLM: "done", forUser: "Done!", silent: true, data: { n: 1 } })
      .withResponseHandled()
      .withError(new Error("secret"));
    const encoded = encodeReturn("call_1", "tool", result);
    expect(JSON.parse(JSON.stringify(encoded))).toEqual({
      v: 1,
      toolCallId: "call_1",
      toolName: "tool",
      result: {
        for_llm: "done",
        for_user: "Done!",
        silent: true,
        is_error: false,
        response_handled: true,
        data: { n: 1 },
      },
    });
    const decoded = decodeReturn(JSON.parse(JSON.stringify(encoded)));
    expect(decoded?.result).toBeInstanceOf(ToolResult);
    expect(decoded?.result).toMatchObject({
      forLLM: "done",
      forUser: "Done!",
      silent: true,
      isError: false,
      async: false,
      responseHandled: true,
      data: { n: 1 },
    });
    expect(decoded?.result.err).toBeUndefined();
    expect(decodeReturn(encodeReturn("c", "t", errorResult("bad")))?.result.isError).toBe(true);
    expect(decodeReturn(encodeReturn("c", "t", newToolResult("x")))?.result.forUser).toBe("");
  });

  it.each([
    [null],
    ["text"],
    [{ v: 2, toolCallId: "c", toolName: "t", result: { for_llm: "x" } }],
    [{ v: 1, toolCallId: 1, toolName: "t", result: { for_llm: "x" } }],
    [{ v: 1, toolCallId: "c", toolName: "t", result: { for_llm: 5 } }],
    [{ v: 1, toolCallId: "c", toolName: "t" }],
  ])("%j is not a toolloop return value", (value) => {
    expect(decodeReturn(value)).toBeUndefined();
  });
});

describe("decodeJobData", () => {
  const good = { v: 1, toolName: "t", toolCallId: "c", args: {}, channel: "", chatId: "", metadata: { a: "b" } };

  it("accepts toolloop's job data", () => {
    expect(decodeJobData(good)).toEqual(good);
  });

  it.each([
    [null, "the job was not made by toolloop's queued()"],
    [{ ...good, v: 2 }, "the job was not made by toolloop's queued()"],
    [{ ...good, toolName: 1 }, "the job has no tool name or call id"],
    [{ ...good, args: [] }, "the job's arguments or context are malformed"],
    [{ ...good, chatId: null }, "the job's arguments or context are malformed"],
    [{ ...good, metadata: { a: 1 } }, "the job's metadata is not an object of strings"],
  ])("%j: %s", (value, message) => {
    expect(decodeJobData(value)).toBe(message);
  });
});

it("failedAfter", () => {
  expect(failedAfter(1, "boom")).toBe("failed after 1 attempt: boom");
  expect(failedAfter(3, "boom")).toBe("failed after 3 attempts: boom");
});
