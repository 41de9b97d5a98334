import { describe, expect, it } from "vitest";
import {
  type AnthropicMessageLike,
  fromAnthropicMessage,
  toAnthropicMessages,
} from "../../../src/adapters/anthropic/index.js";
import type { ToolCall } from "../../../src/index.js";

type Json = Record<string, unknown>;

describe("fromAnthropicMessage", () => {
  const response = (stop_reason: string | null, content: Json[] = []): AnthropicMessageLike => ({
    content: content as unknown as AnthropicMessageLike["content"],
    stop_reason,
    usage: { input_tokens: 10, output_tokens: 5 },
  });
  const toolUse = { type: "tool_use", id: "toolu_1", name: "t", input: { a: 1 } };

  it.each([
    ["tool_use", [toolUse], "tool_calls"],
    ["tool_use", [], "tool_calls"],
    ["end_turn", [toolUse], "tool_calls"],
    ["end_turn", [], "stop"],
    ["stop_sequence", [], "stop"],
    ["max_tokens", [], "length"],
    ["model_context_window_exceeded", [], "length"],
    ["refusal", [], "content_filter"],
    ["pause_turn", [], "pause_turn"],
  ])("maps stop_reason %s (calls: %j) to %s", (stopReason, content, expected) => {
    expect(fromAnthropicMessage(response(stopReason, content)).finishReason).toBe(expected);
  });

  it("always has toolCalls and a finishReason, and leaves usage out when the response has none", () => {
    expect(fromAnthropicMessage({ content: [], stop_reason: null })).toEqual({
      content: "",
      toolCalls: [],
      finishReason: "stop",
    });
  });

  it.each<[string, unknown, unknown]>([
    ["an object", { a: 1 }, { a: 1 }],
    ["absent", undefined, {}],
    ["null", null, {}],
    ["a string (passed on for the loop to report)", "{bad", "{bad"],
    ["an array (as JSON text, for the loop to report)", [1], "[1]"],
  ])("turns input that is %s into arguments", (_label, input, expected) => {
    const { toolCalls } = fromAnthropicMessage(response("tool_use", [{ type: "tool_use", id: "x", name: "t", input }]));
    expect(toolCalls).toEqual([{ id: "x", type: "function", name: "t", arguments: expected }]);
  });

  it("copies thinking blocks with prototype-named keys as own data, and replays them so (D02)", () => {
    const thinking = '{"type":"thinking","thinking":"…","signature":"sig","__proto__":{"polluted":1}}';
    const response = JSON.parse(
      `{"content":[${thinking},{"type":"tool_use","id":"toolu_1","name":"t","input":{"__proto__":{"polluted":2}}}],"stop_reason":"tool_use"}`,
    ) as AnthropicMessageLike;

    const call = fromAnthropicMessage(response).toolCalls[0] as ToolCall;
    const { anthropic } = call.providerMetadata as { anthropic: { thinking: Json[] } };
    const kept = anthropic.thinking[0] as Json;
    expect(Object.getPrototypeOf(kept)).toBe(Object.prototype);
    expect(JSON.stringify(kept)).toBe(thinking);

    const { messages } = toAnthropicMessages([
      {
        role: "assistant",
        content: "",
        toolCalls: [{ ...call, id: "toolu_1", name: "t", arguments: call.arguments }],
      },
    ]);
    const [replayed, toolUse] = (messages[0] as { content: Json[] }).content;
    expect(Object.getPrototypeOf(replayed)).toBe(Object.prototype);
    expect(JSON.stringify(replayed)).toBe(thinking);
    expect(Object.getPrototypeOf(toolUse?.input)).toBe(Object.prototype);
    expect(JSON.stringify(toolUse?.input)).toBe('{"__proto__":{"polluted":2}}');
    expect(({} as Json).polluted).toBeUndefined();
  });

  it("joins text blocks, ignores other blocks, and counts cache tokens as prompt tokens", () => {
    const converted = fromAnthropicMessage({
      content: [
        { type: "text", text: "a" },
        { type: "server_tool_use" },
        { type: "text", text: "b" },
      ] as AnthropicMessageLike["content"],
      stop_reason: "end_turn",
      usage: { input_tokens: 10, cache_creation_input_tokens: 3, cache_read_input_tokens: 2, output_tokens: 7 },
    });
    expect(converted).toEqual({
      content: "ab",
      toolCalls: [],
      finishReason: "stop",
      usage: { promptTokens: 15, completionTokens: 7, totalTokens: 22, cachedInputTokens: 2, cacheWriteTokens: 3 },
    });
  });

  describe('with outputTool (structuredOutput: "tool")', () => {
    const output = { type: "tool_use", id: "toolu_2", name: "answer", input: { ok: true } };

    it("makes the output tool's call the final answer: its input as JSON text, no call, stop", () => {
      const message = response("tool_use", [{ type: "text", text: "Here it is." }, output]);
      expect(fromAnthropicMessage(message, { outputTool: "answer" })).toMatchObject({
        content: '{"ok":true}',
        toolCalls: [],
        finishReason: "stop",
      });
      // Without the option it is an ordinary call.
      expect(fromAnthropicMessage(message).toolCalls.map((call) => call.name)).toEqual(["answer"]);
    });

    it("beside other calls, leaves it out: those calls run and the model is asked again", () => {
      const converted = fromAnthropicMessage(response("tool_use", [output, toolUse]), { outputTool: "answer" });
      expect(converted.toolCalls.map((call) => call.name)).toEqual(["t"]);
      expect(converted.finishReason).toBe("tool_calls");
    });

    it("passes input that is text (a stream's JSON that did not parse) as it is, for the loop to check", () => {
      const converted = fromAnthropicMessage(response("tool_use", [{ ...output, input: '{"ok": tr' }]), {
        outputTool: "answer",
      });
      expect(converted.content).toBe('{"ok": tr');
    });
  });
});
