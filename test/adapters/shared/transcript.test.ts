import { describe, expect, it } from "vitest";
import {
  assistantTurnParts,
  callsById,
  keepOnFirstCall,
  providerMetadataOf,
} from "../../../src/adapters/shared/transcript.js";
import type { Message, ProviderToolCall, ToolCall } from "../../../src/index.js";

const call = (id: string, providerMetadata?: Record<string, unknown>): ToolCall => ({
  id,
  name: `tool_${id}`,
  arguments: {},
  ...(providerMetadata === undefined ? {} : { providerMetadata }),
});

describe("providerMetadataOf", () => {
  it("reads the adapter's own object, and nothing else", () => {
    expect(providerMetadataOf(call("a", { x: { id: "1" } }), "x")).toEqual({ id: "1" });
    expect(providerMetadataOf(call("a", { x: "text" }), "x")).toBeUndefined();
    expect(providerMetadataOf(call("a", { y: {} }), "x")).toBeUndefined();
    expect(providerMetadataOf(call("a"), "x")).toBeUndefined();
    expect(providerMetadataOf(undefined, "x")).toBeUndefined();
  });
});

describe("callsById", () => {
  it("finds each call by its id, the first of two with one id (as a search would)", () => {
    const first = call("a");
    const byId = callsById([first, call("b"), { ...call("a"), name: "second" }]);
    expect(byId.get("a")).toBe(first);
    expect(byId.get("b")?.name).toBe("tool_b");
    expect(byId.get("c")).toBeUndefined();
  });

  it("indexes a turn of many calls", () => {
    const calls = Array.from({ length: 5_000 }, (_, index) => call(`c${index}`));
    const byId = callsById(calls);
    expect(byId.size).toBe(5_000);
    expect(byId.get("c4999")).toBe(calls[4_999]);
  });
});

describe("assistantTurnParts", () => {
  const shape = {
    key: "x",
    replayed: "thinking",
    text: (text: string) => ({ type: "text", text }),
    call: (each: ToolCall) => ({ type: "call", id: each.id }),
  };

  it("puts the kept parts first (copied), then the text, then one part per call", () => {
    const thinking = { type: "thinking", thinking: "hmm" };
    const message: Message = {
      role: "assistant",
      content: "Let me look.",
      toolCalls: [call("a", { x: { thinking: [thinking, "not a part"] } }), call("b")],
    };
    const parts = assistantTurnParts<Record<string, unknown>>(message, shape);
    expect(parts).toEqual([
      thinking,
      { type: "text", text: "Let me look." },
      { type: "call", id: "a" },
      { type: "call", id: "b" },
    ]);
    expect(parts[0]).not.toBe(thinking);
  });

  it("leaves out an empty text", () => {
    expect(assistantTurnParts<Record<string, unknown>>({ role: "assistant", content: "" }, shape)).toEqual([]);
  });
});

describe("keepOnFirstCall", () => {
  it("keeps the parts beside what the first call has, and nothing without calls or parts", () => {
    const calls: ProviderToolCall[] = [{ name: "a", providerMetadata: { x: { caller: "direct" } } }, { name: "b" }];
    keepOnFirstCall(calls, { key: "x", field: "thinking", parts: [{ type: "thinking" }] });
    expect(calls[0]?.providerMetadata).toEqual({ x: { caller: "direct", thinking: [{ type: "thinking" }] } });
    expect(calls[1]?.providerMetadata).toBeUndefined();

    const none: ProviderToolCall[] = [{ name: "a" }];
    keepOnFirstCall(none, { key: "x", field: "thinking", parts: [] });
    expect(none[0]?.providerMetadata).toBeUndefined();
    expect(() => keepOnFirstCall([], { key: "x", field: "thinking", parts: [{}] })).not.toThrow();
  });
});
