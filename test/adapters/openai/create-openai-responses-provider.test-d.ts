/**
 * The adapter types the user's client structurally. These type tests pass real client objects of
 * the newest majors that run on Node 20 (openai 6, @google/genai 2, ai 6 with @ai-sdk/openai 3,
 * @anthropic-ai/sdk 1, ollama 0.6) — the ones the runtime tests use. Newer majors (openai 7,
 * @google/genai 3, ai 7) require Node 22 and are not installed: npm would warn on every `npm ci`.
 * A structural type that stops fitting a client makes the `createXProvider({ ... })` call below
 * fail to compile.
 */
import OpenAI from "openai";
import { describe, expectTypeOf, it } from "vitest";
import { createOpenAIResponsesProvider, type OpenAIResponsesClient } from "../../../src/adapters/openai/index.js";
import type { LLMProvider } from "../../../src/index.js";

describe("openai 6 fits the Responses client type", () => {
  it("openai@6", () => {
    const client = new OpenAI({ apiKey: "x" });
    expectTypeOf(client).toExtend<OpenAIResponsesClient>();
    expectTypeOf(createOpenAIResponsesProvider({ client })).toEqualTypeOf<LLMProvider>();
  });
});
