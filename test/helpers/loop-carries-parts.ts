import * as z from "zod";
import { defineTool, type LLMProvider, type Message, mediaResult, runToolLoop } from "../../src/index.js";
import { registryOf } from "./adapter-fixtures.js";

/**
 * Whether this build's loop takes a user message with parts and sends a tool result's `parts` to
 * the provider as the foundation's convention says (a tool message whose content is
 * `[{ type: "text", text }, ...parts]`): the adapters' loop tests need both, and they land in the
 * loop separately from the adapters. Probed with an in-memory provider, no network.
 */
export async function loopCarriesParts(): Promise<boolean> {
  const seen: Message[][] = [];
  const provider: LLMProvider = {
    async chat(messages) {
      seen.push(messages.map((message) => ({ ...message })));
      return seen.length === 1
        ? {
            content: "",
            toolCalls: [{ id: "c1", type: "function", name: "probe", arguments: "{}" }],
            finishReason: "tool_calls",
          }
        : { content: "done", toolCalls: [], finishReason: "stop" };
    },
    getDefaultModel: () => "probe",
  };
  const tools = registryOf(
    defineTool({
      name: "probe",
      description: "probe",
      parameters: z.object({}),
      execute: () => mediaResult("seen", [{ type: "image", mediaType: "image/png", data: "iVBORw0KGgo=" }]),
    }),
  );
  try {
    await runToolLoop({ provider, tools, maxIterations: 3 }, [
      { role: "user", content: [{ type: "text", text: "probe" }] },
    ]);
  } catch {
    return false;
  }
  const answer = seen[1]?.find((message) => message.role === "tool");
  return Array.isArray(answer?.content) && answer.content.some((part) => part.type === "image");
}
