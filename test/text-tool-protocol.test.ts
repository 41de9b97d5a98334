import { describe, expect, it } from "vitest";
import { MAX_TEXT_TOOL_CALLS, parseTextToolCalls, runToolLoop } from "../src/index.js";
import { ScriptedProvider, textResponse } from "../src/testing/index.js";

const block = (body: unknown) => `<tool>${typeof body === "string" ? body : JSON.stringify(body)}</tool>`;
const call = (tool_name: string, args: Record<string, unknown> = {}) =>
  block({ server_name: "local", tool_name, arguments: args });

describe("parseTextToolCalls (Forge's text protocol)", () => {
  it("reads blocks in order; the text outside them is content", () => {
    const parsed = parseTextToolCalls(`Let me check.\n${call("clock")}\nand ${call("add", { a: 1, b: 2 })} done`);
    expect(parsed).toEqual({
      content: "Let me check.\n\nand  done",
      calls: [
        { type: "function", name: "clock", arguments: {} },
        { type: "function", name: "add", arguments: { a: 1, b: 2 } },
      ],
      errors: [],
    });
  });

  it("a reply without blocks is all content", () => {
    expect(parseTextToolCalls("  just text  ")).toEqual({ content: "just text", calls: [], errors: [] });
  });

  it.each([
    ["invalid JSON", block("{not json"), /^invalid JSON in <tool> block: /],
    [
      "another server",
      block({ server_name: "remote", tool_name: "x" }),
      /^only server "local" is supported, got "remote"$/,
    ],
    ["no tool_name", block({ server_name: "local", arguments: {} }), /^a <tool> block needs a tool_name$/],
    ["arguments not an object", block({ tool_name: "x", arguments: [1] }), /must be a JSON object/],
    ["not an object", block("[1,2]"), /must hold a JSON object/],
    ["an unclosed block", "<tool>{", /^unclosed <tool> block$/],
  ])("%s goes to errors, never to calls", (_, text, message) => {
    const parsed = parseTextToolCalls(`before ${text}`);
    expect(parsed.calls).toEqual([]);
    expect(parsed.errors).toHaveLength(1);
    expect(parsed.errors[0]).toMatch(message);
  });

  it("blocks inside fenced code (``` and ~~~) are text, not calls", () => {
    const text = `Example:\n\`\`\`\n${call("inside")}\n\`\`\`\n~~~xml\n${call("tilde")}\n~~~\n${call("outside")}`;
    const parsed = parseTextToolCalls(text);
    expect(parsed.calls.map((each) => each.name)).toEqual(["outside"]);
    expect(parsed.content).toContain(call("inside"));
    expect(parsed.content).toContain(call("tilde"));
  });

  it("a </tool> inside a JSON string does not cut the block", () => {
    const parsed = parseTextToolCalls(call("echo", { text: "a </tool> b" }));
    expect(parsed.calls).toEqual([{ type: "function", name: "echo", arguments: { text: "a </tool> b" } }]);
    expect(parsed.errors).toEqual([]);
  });

  it("hostile replies: __proto__ keys stay data, huge and numerous blocks are bounded", () => {
    const proto = parseTextToolCalls(block('{"tool_name":"x","arguments":{"__proto__":{"polluted":true}}}'));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(proto.calls).toHaveLength(1);
    const many = parseTextToolCalls(call("t").repeat(10_000));
    expect(many.calls).toHaveLength(MAX_TEXT_TOOL_CALLS);
    expect(many.errors).toHaveLength(10_000 - MAX_TEXT_TOOL_CALLS);
    // 100k opening tags with one closing tag far away, and 20k bad blocks: linear, returns.
    expect(parseTextToolCalls(`${"<tool>".repeat(100_000)}x</tool>`).calls).toEqual([]);
    expect(parseTextToolCalls(block("{").repeat(20_000)).errors).toHaveLength(20_000);
    expect(parseTextToolCalls(42 as unknown as string).errors).toEqual(["the reply is not text"]);
  });

  it("parsed calls run in the loop (ids are assigned by the loop)", async () => {
    const reply = parseTextToolCalls(`Checking ${call("echo", { text: "hi" })}`);
    const provider = new ScriptedProvider([{ content: reply.content, toolCalls: reply.calls }, textResponse("done")]);
    const echo = {
      name: "echo",
      description: "echo",
      parameters: { type: "object", properties: { text: { type: "string" } } },
      execute: ({ text }: Record<string, unknown>) => String(text),
    };
    const result = await runToolLoop({ provider, tools: [echo], maxIterations: 3 }, [{ role: "user", content: "go" }]);
    expect(result.messages.find((message) => message.role === "tool")?.content).toBe("hi");
  });
});
