import { describe, expect, it } from "vitest";
import { toGeminiMessages } from "../../../src/adapters/gemini/convert-to-gemini-messages.js";
import type { Message } from "../../../src/index.js";

describe("toGeminiMessages", () => {
  it("keeps system texts apart and turns assistant calls into functionCall parts with their kept id and signature", () => {
    const messages: Message[] = [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Weather?" },
      {
        role: "assistant",
        content: "Looking.",
        toolCalls: [
          {
            id: "gemini_r_0",
            name: "weather",
            arguments: { city: "Paris" },
            providerMetadata: { gemini: { thoughtSignature: "sig" } },
          },
          { id: "call-2", name: "time", arguments: {}, providerMetadata: { gemini: { id: "call-2" } } },
        ],
      },
    ];
    expect(toGeminiMessages(messages)).toEqual({
      system: ["Be brief."],
      contents: [
        { role: "user", parts: [{ text: "Weather?" }] },
        {
          role: "model",
          parts: [
            { text: "Looking." },
            { functionCall: { name: "weather", args: { city: "Paris" } }, thoughtSignature: "sig" },
            { functionCall: { id: "call-2", name: "time", args: {} } },
          ],
        },
      ],
    });
  });

  it("puts a turn's answers in one user content, named as their calls, with the API's ids echoed", () => {
    const messages: Message[] = [
      {
        role: "assistant",
        content: "",
        toolCalls: [
          { id: "a", name: "weather", arguments: {} },
          { id: "b", name: "time", arguments: {}, providerMetadata: { gemini: { id: "b" } } },
        ],
      },
      { role: "tool", content: "sunny", toolCallId: "a", toolName: "other-name" },
      { role: "tool", content: "boom", toolCallId: "b", isError: true },
      { role: "tool", content: "orphan", toolCallId: "z", toolName: "lost" },
      { role: "user", content: "thanks" },
    ];
    expect(toGeminiMessages(messages).contents).toEqual([
      {
        role: "model",
        parts: [{ functionCall: { name: "weather", args: {} } }, { functionCall: { id: "b", name: "time", args: {} } }],
      },
      {
        role: "user",
        parts: [
          { functionResponse: { name: "weather", response: { output: "sunny" } } },
          { functionResponse: { id: "b", name: "time", response: { error: "boom" } } },
          { functionResponse: { name: "lost", response: { output: "orphan" } } },
        ],
      },
      { role: "user", parts: [{ text: "thanks" }] },
    ]);
  });

  it("pairs each answer of a large turn with its own call", () => {
    const calls = Array.from({ length: 2_000 }, (_, index) => ({ id: `c${index}`, name: `t${index}`, arguments: {} }));
    const answers: Message[] = calls.map((call) => ({ role: "tool", content: "ok", toolCallId: call.id }));
    const { contents } = toGeminiMessages([{ role: "assistant", content: "", toolCalls: calls }, ...answers.reverse()]);
    const names = contents[1]?.parts?.map((part) => part.functionResponse?.name);
    expect(names).toEqual(calls.map((call) => call.name).reverse());
  });
});
