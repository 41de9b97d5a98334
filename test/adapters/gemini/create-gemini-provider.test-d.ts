/**
 * The adapter types the user's client structurally. These type tests pass real client objects of
 * the newest majors that run on Node 20 (openai 6, @google/genai 2, ai 6 with @ai-sdk/openai 3,
 * @anthropic-ai/sdk 1, ollama 0.6) — the ones the runtime tests use. Newer majors (openai 7,
 * @google/genai 3, ai 7) require Node 22 and are not installed: npm would warn on every `npm ci`.
 * A structural type that stops fitting a client makes the `createXProvider({ ... })` call below
 * fail to compile.
 */
import { GoogleGenAI } from "@google/genai";
import { describe, expectTypeOf, it } from "vitest";
import {
  createGeminiProvider,
  type GeminiClientLike,
  type GeminiProviderOptions,
} from "../../../src/adapters/gemini/index.js";
import type { LLMProvider } from "../../../src/index.js";

describe("@google/genai 2 fits GeminiClientLike", () => {
  it("@google/genai@2", () => {
    const client = new GoogleGenAI({ apiKey: "x" });
    expectTypeOf(client).toExtend<GeminiClientLike>();
    expectTypeOf(createGeminiProvider({ client })).toEqualTypeOf<LLMProvider>();
  });
});

describe("GeminiProviderOptions.toolMedia", () => {
  it("takes its three values only", () => {
    expectTypeOf<GeminiProviderOptions["toolMedia"]>().toEqualTypeOf<
      "auto" | "function-response" | "user-message" | undefined
    >();
  });
});
