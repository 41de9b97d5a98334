import * as z from "zod";
import { defineTool, type LLMProvider, mediaResult, runToolLoop, ToolRegistry } from "../../src/index.js";

/** A 1×1 PNG, base64. */
const PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==";

/**
 * Whether the loop hands a provider the parts of a tool's `mediaResult` (the tool message's
 * content as `[{ type: "text" }, ...parts]`). Adapters' loop tests with media run once it does:
 * the adapters and the loop are built apart, and this says which one a failure belongs to.
 */
export async function loopSendsToolParts(): Promise<boolean> {
  let sent = false;
  const provider: LLMProvider = {
    getDefaultModel: () => "probe",
    async chat(messages) {
      const answer = messages.find((message) => message.role === "tool");
      if (answer === undefined) {
        return { content: "", toolCalls: [{ id: "c1", name: "shot", arguments: {} }], finishReason: "tool_calls" };
      }
      sent = Array.isArray(answer.content) && answer.content.some((part) => part.type === "image");
      return { content: "done", toolCalls: [], finishReason: "stop" };
    },
  };
  const registry = new ToolRegistry();
  registry.register(
    defineTool({
      name: "shot",
      description: "A screenshot",
      parameters: z.object({}),
      execute: () => mediaResult("A screenshot.", [{ type: "image", mediaType: "image/png", data: PIXEL }]),
    }),
  );
  await runToolLoop({ provider, tools: registry, maxIterations: 2 }, [{ role: "user", content: "shot" }]);
  return sent;
}
