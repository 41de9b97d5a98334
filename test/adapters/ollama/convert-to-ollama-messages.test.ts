import { describe, expect, it, vi } from "vitest";
import { toOllamaMessages } from "../../../src/adapters/ollama/convert-to-ollama-messages.js";
import { isUnsupportedContentError, type Message } from "../../../src/index.js";

describe("toOllamaMessages", () => {
  it("sends calls with their index and the server's id, and answers with tool_name and tool_call_id", () => {
    const messages: Message[] = [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Weather?" },
      {
        role: "assistant",
        content: "",
        toolCalls: [
          { id: "ollama_x_0", name: "weather", arguments: { city: "Paris" } },
          { id: "call_1", name: "time", arguments: {}, providerMetadata: { ollama: { id: "call_1" } } },
        ],
      },
      { role: "tool", content: "sunny", toolCallId: "ollama_x_0" },
      { role: "tool", content: "noon", toolCallId: "call_1", toolName: "time" },
    ];
    expect(toOllamaMessages(messages)).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Weather?" },
      {
        role: "assistant",
        content: "",
        tool_calls: [
          { type: "function", function: { index: 0, name: "weather", arguments: { city: "Paris" } } },
          { id: "call_1", type: "function", function: { index: 1, name: "time", arguments: {} } },
        ],
      },
      { role: "tool", content: "sunny", tool_name: "weather" },
      { role: "tool", content: "noon", tool_name: "time", tool_call_id: "call_1" },
    ]);
  });

  it("pairs each answer of a large turn with its own call", () => {
    const calls = Array.from({ length: 2_000 }, (_, index) => ({
      id: `c${index}`,
      name: `t${index}`,
      arguments: {},
      providerMetadata: { ollama: { id: `c${index}` } },
    }));
    const answers: Message[] = calls.map((call) => ({ role: "tool", content: "ok", toolCallId: call.id }));
    const converted = toOllamaMessages([{ role: "assistant", content: "", toolCalls: calls }, ...answers.reverse()]);
    expect(converted.slice(1).map((message) => [message.tool_name, message.tool_call_id])).toEqual(
      calls.map((call) => [call.name, call.id]).reverse(),
    );
  });

  it("joins text parts into content and decodes base64 images to the bytes the client encodes", () => {
    const [converted] = toOllamaMessages([
      {
        role: "user",
        content: [
          { type: "text", text: "One" },
          { type: "image", mediaType: "image/gif", data: "R0lGODlh" },
          { type: "text", text: "two" },
        ],
      },
    ]);
    expect(converted).toMatchObject({ role: "user", content: "One\ntwo" });
    expect(converted?.images?.[0]).toBeInstanceOf(Uint8Array);
    expect(converted?.images?.map((image) => [...image])).toEqual([[71, 73, 70, 56, 57, 97]]);
  });

  it("names the message of a part it refuses by its index in the transcript", () => {
    const messages: Message[] = [
      { role: "user", content: "a" },
      { role: "assistant", content: "b" },
      { role: "user", content: [{ type: "file", mediaType: "application/pdf", data: "JVBERi0=", filename: "x.pdf" }] },
    ];
    let error: unknown;
    try {
      toOllamaMessages(messages);
    } catch (caught) {
      error = caught;
    }
    expect(isUnsupportedContentError(error)).toBe(true);
    expect(error).toMatchObject({ provider: "ollama", part: "file", messageIndex: 2 });
    expect((error as Error).message).toBe("ollama cannot take a file in messages[2]: it takes images only");
  });

  it("decodes images without Node's Buffer too (browsers), once per part", async () => {
    const gif = { type: "image", mediaType: "image/gif", data: "R0lGODlh" } as const;
    vi.resetModules();
    vi.stubGlobal("Buffer", undefined);
    let module: typeof import("../../../src/adapters/ollama/convert-to-ollama-messages.js");
    try {
      module = await import("../../../src/adapters/ollama/convert-to-ollama-messages.js");
    } finally {
      vi.unstubAllGlobals();
      vi.resetModules();
    }
    const first = module.toOllamaMessages([{ role: "user", content: [gif] }])[0]?.images?.[0];
    expect(first?.constructor).toBe(Uint8Array);
    expect([...(first ?? [])]).toEqual([71, 73, 70, 56, 57, 97]);
    expect(module.toOllamaMessages([{ role: "user", content: [gif] }])[0]?.images?.[0]).toBe(first);
  });
});
