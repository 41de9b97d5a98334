import { describe, expect, it } from "vitest";
import { createOpenAIResponsesProvider } from "../../src/adapters/openai/index.js";

function recordingClient() {
  const bodies: Record<string, unknown>[] = [];
  const client = {
    responses: {
      create: async (body: Record<string, unknown>) => {
        bodies.push(body);
        return { status: "completed", output: [{ type: "message", content: [{ type: "output_text", text: "ok" }] }] };
      },
    },
  };
  return { client, bodies };
}

describe("createOpenAIResponsesProvider llmOptions", () => {
  it.each([
    [{ max_tokens: 100 }, { max_output_tokens: 100 }],
    [{ max_tokens: 100, max_output_tokens: 50 }, { max_output_tokens: 50 }],
    [
      { max_output_tokens: 70, temperature: 0 },
      { max_output_tokens: 70, temperature: 0 },
    ],
  ])("%j is sent as %j (the Responses API has no max_tokens)", async (llmOptions, expected) => {
    const { client, bodies } = recordingClient();
    const provider = createOpenAIResponsesProvider({ client: client as never });
    await provider.chat([{ role: "user", content: "hi" }], undefined, "gpt-4.1-mini", llmOptions);
    expect(bodies[0]).toMatchObject(expected);
    expect(bodies[0]).not.toHaveProperty("max_tokens");
  });
});
