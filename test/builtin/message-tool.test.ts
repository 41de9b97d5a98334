import { describe, expect, it, vi } from "vitest";
import { createMessageTool, type OutgoingMessage } from "../../src/builtin/index.js";
import { isToolExecutionError, type ToolContext, ToolRegistry } from "../../src/index.js";
import { createToolContext } from "../../src/testing/index.js";

interface Sent {
  message: OutgoingMessage;
  context: ToolContext;
}

function setup(send?: (message: OutgoingMessage, context: ToolContext) => Promise<void> | void) {
  const sent: Sent[] = [];
  const tool = createMessageTool({
    send: (message, context) => {
      sent.push({ message, context });
      return send?.(message, context);
    },
  });
  const registry = new ToolRegistry();
  registry.register(tool);
  return { tool, registry, sent };
}

describe("createMessageTool", () => {
  it("offers message { content*, channel?, chat_id? }", () => {
    const { registry } = setup();
    expect(registry.getDefinitions()[0]?.function).toMatchInlineSnapshot(`
      {
        "description": "Send a message to the user on a chat channel. By default it goes to the current conversation; give channel and chat_id only to reach another chat.",
        "name": "message",
        "parameters": {
          "additionalProperties": false,
          "properties": {
            "channel": {
              "description": "Optional: the channel to send to (telegram, slack …)",
              "type": "string",
            },
            "chat_id": {
              "description": "Optional: the chat or user id to send to",
              "type": "string",
            },
            "content": {
              "description": "The text of the message",
              "type": "string",
            },
          },
          "required": [
            "content",
          ],
          "type": "object",
        },
      }
    `);
  });

  it("sends to the call's own channel and chat and returns a silent result", async () => {
    const { registry, sent } = setup();
    const result = await registry.executeWithContext("message", { content: "hello" }, "telegram", "42");
    expect(sent.map(({ message }) => message)).toEqual([{ channel: "telegram", chatId: "42", content: "hello" }]);
    expect(sent[0]?.context.chatId).toBe("42");
    expect(result.isError).toBe(false);
    expect(result.silent).toBe(true);
    expect(result.forLLM).toMatchInlineSnapshot(`"Message sent to channel "telegram", chat "42"."`);
  });

  it("sends to the channel and chat the model names, each defaulting separately", async () => {
    const { registry, sent } = setup();
    await registry.executeWithContext("message", { content: "a", channel: "slack", chat_id: "C1" }, "telegram", "42");
    await registry.executeWithContext("message", { content: "b", chat_id: "7" }, "telegram", "42");
    await registry.executeWithContext("message", { content: "c", channel: "", chat_id: "" }, "telegram", "42");
    expect(sent.map(({ message }) => message)).toEqual([
      { channel: "slack", chatId: "C1", content: "a" },
      { channel: "telegram", chatId: "7", content: "b" },
      { channel: "telegram", chatId: "42", content: "c" },
    ]);
  });

  it("never mixes the chats of two concurrent calls (the context is per call)", async () => {
    // The first call's send finishes last: a shared "current chat" would be overwritten by then.
    const gates = new Map<string, () => void>();
    const { registry, sent } = setup((message) => new Promise<void>((resolve) => gates.set(message.content, resolve)));
    const first = registry.executeWithContext("message", { content: "for alice" }, "telegram", "alice");
    const second = registry.executeWithContext("message", { content: "for bob" }, "slack", "bob");
    await vi.waitFor(() => expect(gates.size).toBe(2));
    gates.get("for bob")?.();
    const secondResult = await second;
    gates.get("for alice")?.();
    const firstResult = await first;
    expect(sent.map(({ message }) => message)).toEqual([
      { channel: "telegram", chatId: "alice", content: "for alice" },
      { channel: "slack", chatId: "bob", content: "for bob" },
    ]);
    expect(firstResult.forLLM).toContain('"alice"');
    expect(secondResult.forLLM).toContain('"bob"');
  });

  it("is an error result, and sends nothing, when there is no chat to send to", async () => {
    const { registry, sent } = setup();
    const results = [
      await registry.execute("message", { content: "hi" }),
      await registry.executeWithContext("message", { content: "hi" }, "telegram", ""),
      await registry.executeWithContext("message", { content: "hi", chat_id: "42" }, "", ""),
    ];
    expect(sent).toEqual([]);
    for (const result of results) {
      expect(result.isError).toBe(true);
      expect(result.forLLM).toMatchInlineSnapshot(
        `"no chat to send to: this conversation has no channel and chat id; give channel and chat_id"`,
      );
    }
  });

  it.each([[""], ["   \n\t"]])("refuses blank content %j", async (content) => {
    const { registry, sent } = setup();
    const result = await registry.executeWithContext("message", { content }, "telegram", "42");
    expect(sent).toEqual([]);
    expect(result.isError).toBe(true);
    expect(result.forLLM).toBe("content is empty: nothing to send");
  });

  it("checks its arguments also when called directly, without a registry", async () => {
    const { tool, sent } = setup();
    const context = createToolContext({ channel: "telegram", chatId: "42" });
    const result = await tool.execute({ content: 42 }, context);
    expect(sent).toEqual([]);
    expect(typeof result === "string" ? result : result.isError).toBe(true);
  });

  it.each([
    ["an Error holding a token", new Error("POST https://api.telegram.org/bot123:SECRET-TOKEN/sendMessage: 403")],
    ["a rejected object with a password", { password: "hunter2", toString: (): string => "SECRET-TOKEN" }],
    ["a huge message", new Error(`SECRET-TOKEN ${"x".repeat(1_000_000)}`)],
  ])("a send that fails (%s) is a bounded error result that leaks nothing", async (_label, thrown) => {
    const { registry } = setup(() => Promise.reject(thrown));
    const result = await registry.executeWithContext("message", { content: "hi" }, "telegram", "42");
    expect(result.isError).toBe(true);
    expect(result.forLLM).toMatchInlineSnapshot(`"the message could not be sent to channel "telegram", chat "42""`);
    expect(JSON.stringify(result)).not.toMatch(/SECRET|hunter2/);
    // Your code still has the cause.
    expect(isToolExecutionError(result.err) && result.err.cause).toBe(thrown);
  });

  it("a send that throws synchronously is an error result too", async () => {
    const { registry } = setup(() => {
      throw new Error("SECRET-TOKEN");
    });
    const result = await registry.executeWithContext("message", { content: "hi" }, "telegram", "42");
    expect(result.isError).toBe(true);
    expect(result.forLLM).not.toContain("SECRET");
  });

  it("echoes a huge model-sent chat id only cut", async () => {
    const { registry, sent } = setup(() => Promise.reject(new Error("no such chat")));
    const chatId = "9".repeat(100_000);
    const result = await registry.executeWithContext("message", { content: "hi", chat_id: chatId }, "telegram", "42");
    expect(sent[0]?.message.chatId).toBe(chatId);
    expect(result.forLLM.length).toBeLessThan(250);
  });

  it.each([
    ["__proto__", '{"content":"hi","__proto__":{"chat_id":"evil"}}'],
    ["an unknown key", '{"content":"hi","bcc":"everyone"}'],
    ["a non-string chat_id", '{"content":"hi","chat_id":{"toString":"evil"}}'],
  ])("refuses arguments with %s before sending", async (_label, json) => {
    const { registry, sent } = setup();
    const result = await registry.executeWithContext("message", JSON.parse(json), "telegram", "42");
    expect(sent).toEqual([]);
    expect(result.isError).toBe(true);
    expect(result.forLLM).toMatch(/^invalid arguments for tool "message"/);
  });

  it.each([
    [undefined, "createMessageTool: options must be an object, got undefined"],
    [{}, "createMessageTool: send must be a function, got undefined"],
    [{ send: "telegram" }, 'createMessageTool: send must be a function, got "telegram"'],
  ])("throws a TypeError for bad options %#", (options, message) => {
    expect(() => createMessageTool(options as never)).toThrow(new TypeError(message));
  });
});
