import { setTimeout as sleep } from "node:timers/promises";
import { asyncResult, errorResult, type Tool, ToolRegistry } from "../../src/index.js";

/** The tools the bullmq tests queue and their workers run. */
export function testTools(): Tool[] {
  return [
    {
      name: "echo",
      description: "Echoes a text",
      parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      execute: (args) => `echo: ${String(args.text)}`,
    },
    {
      name: "slow",
      description: "Answers after some milliseconds",
      parameters: {
        type: "object",
        properties: { ms: { type: "number" }, text: { type: "string" } },
        required: ["ms"],
      },
      execute: async (args, context) => {
        await sleep(Number(args.ms), undefined, { signal: context.signal });
        return `slow: ${String(args.text ?? "")}`;
      },
    },
    {
      name: "refuse",
      description: "Always answers with an error result",
      parameters: { type: "object", properties: {} },
      execute: () => errorResult("refused by the tool"),
    },
    {
      name: "context",
      description: "Answers with the context it ran with",
      parameters: { type: "object", properties: {} },
      execute: (_args, context) =>
        JSON.stringify({
          channel: context.channel,
          chatId: context.chatId,
          metadata: context.metadata,
          toolCallId: context.toolCallId,
        }),
    },
    {
      name: "hang",
      description: "Starts async work that never reports (its callback is never called)",
      parameters: { type: "object", properties: {} },
      execute: () => asyncResult("hang: started, never reports"),
    },
    {
      name: "flaky",
      description: "Its registry throws for its first calls (see FlakyRegistry)",
      parameters: { type: "object", properties: { failTimes: { type: "number" } }, required: ["failTimes"] },
      execute: () => "flaky: made it",
    },
  ];
}

/**
 * A registry whose `executeWithContext` itself throws for the first `failTimes` calls of `flaky`
 * per tool call id: a throw that escapes the registry, which the worker retries.
 */
export class FlakyRegistry extends ToolRegistry {
  readonly calls = new Map<string, number>();

  override executeWithContext(...args: Parameters<ToolRegistry["executeWithContext"]>) {
    const [name, callArgs, , , , options] = args;
    if (name === "flaky") {
      const id = options?.toolCallId ?? "";
      const count = (this.calls.get(id) ?? 0) + 1;
      this.calls.set(id, count);
      if (count <= Number(callArgs.failTimes)) return Promise.reject(new Error(`flaky failure ${count}`));
    }
    return super.executeWithContext(...args);
  }
}
