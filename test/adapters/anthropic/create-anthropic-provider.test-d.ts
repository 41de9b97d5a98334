/**
 * The adapter types the user's client structurally. These type tests pass real client objects of
 * the newest majors that run on Node 20 (openai 6, @google/genai 2, ai 6 with @ai-sdk/openai 3,
 * @anthropic-ai/sdk 1, ollama 0.6) — the ones the runtime tests use. Newer majors (openai 7,
 * @google/genai 3, ai 7) require Node 22 and are not installed: npm would warn on every `npm ci`.
 * A structural type that stops fitting a client makes the `createXProvider({ ... })` call below
 * fail to compile.
 */
import Anthropic from "@anthropic-ai/sdk";
import { describe, expectTypeOf, it } from "vitest";
import { type AnthropicClientLike, createAnthropicProvider } from "../../../src/adapters/anthropic/index.js";
import type { LLMProvider } from "../../../src/index.js";

describe("@anthropic-ai/sdk 1.x fits AnthropicClientLike", () => {
  it("@anthropic-ai/sdk@1", () => {
    const client = new Anthropic({ apiKey: "x" });
    expectTypeOf(client).toExtend<AnthropicClientLike>();
    expectTypeOf(createAnthropicProvider({ client })).toEqualTypeOf<LLMProvider>();
  });
});

describe("AnthropicProviderOptions.structuredOutput", () => {
  it('takes "native" or "tool" only', () => {
    const client = new Anthropic({ apiKey: "x" });
    createAnthropicProvider({ client, structuredOutput: "tool" });
    createAnthropicProvider({ client, structuredOutput: "native" });
    // @ts-expect-error: not a way to ask for structured output
    createAnthropicProvider({ client, structuredOutput: "json" });
  });
});
