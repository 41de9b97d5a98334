/**
 * The adapter types the user's client structurally. These type tests pass real client objects of
 * the newest majors that run on Node 20 (openai 6, @google/genai 2, ai 6 with @ai-sdk/openai 3,
 * @anthropic-ai/sdk 1, ollama 0.6) — the ones the runtime tests use. Newer majors (openai 7,
 * @google/genai 3, ai 7) require Node 22 and are not installed: npm would warn on every `npm ci`.
 * A structural type that stops fitting a client makes the `createXProvider({ ... })` call below
 * fail to compile.
 */
import { createOpenAI } from "@ai-sdk/openai";
import type { LanguageModel } from "ai";
import { describe, expectTypeOf, it } from "vitest";
import { type AISDKLanguageModelLike, createAISDKProvider } from "../../../src/adapters/ai-sdk/index.js";
import type { LLMProvider } from "../../../src/index.js";

describe("AI SDK: ai@6 + @ai-sdk/openai@3 fit AISDKLanguageModelLike", () => {
  it("@ai-sdk/openai@3 chat and responses models", () => {
    const openai = createOpenAI({ apiKey: "x" });
    expectTypeOf(openai.chat("gpt-4o")).toExtend<AISDKLanguageModelLike>();
    expectTypeOf(createAISDKProvider({ model: openai.chat("gpt-4o") })).toEqualTypeOf<LLMProvider>();
    expectTypeOf(createAISDKProvider({ model: openai.responses("gpt-4o") })).toEqualTypeOf<LLMProvider>();
    expectTypeOf(createAISDKProvider({ model: openai("gpt-4o") })).toEqualTypeOf<LLMProvider>();
  });

  it("every model object of ai's LanguageModel union (all spec versions ai accepts) fits", () => {
    expectTypeOf<Exclude<LanguageModel, string>>().toExtend<AISDKLanguageModelLike>();
  });

  it("a model id string and an object without doGenerate are rejected", () => {
    expectTypeOf<string>().not.toExtend<AISDKLanguageModelLike>();
    expectTypeOf<{ modelId: string }>().not.toExtend<AISDKLanguageModelLike>();
  });
});
