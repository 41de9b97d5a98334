/**
 * The adapters type the user's client structurally. These type tests pass real client objects of
 * the newest majors that run on Node 20 (openai 6, @google/genai 2, ai 6 with @ai-sdk/openai 3,
 * @anthropic-ai/sdk 1, ollama 0.6) — the ones the runtime tests use. Newer majors (openai 7,
 * @google/genai 3, ai 7) require Node 22 and are not installed: npm would warn on every `npm ci`.
 * A structural type that stops fitting a client makes the `createXProvider({ ... })` call below
 * fail to compile.
 */
import { createOpenAI } from "@ai-sdk/openai";
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import type { LanguageModel } from "ai";
import { Ollama } from "ollama";
import OpenAI from "openai";
import { describe, expectTypeOf, it } from "vitest";
import { type AISDKLanguageModelLike, createAISDKProvider } from "../../src/adapters/ai-sdk/index.js";
import { type AnthropicClientLike, createAnthropicProvider } from "../../src/adapters/anthropic/index.js";
import { createGeminiProvider, type GeminiClientLike } from "../../src/adapters/gemini/index.js";
import { createOllamaProvider, type OllamaClientLike } from "../../src/adapters/ollama/index.js";
import {
  createOpenAIChatProvider,
  createOpenAIResponsesProvider,
  type OpenAIChatClient,
  type OpenAIResponsesClient,
} from "../../src/adapters/openai/index.js";
import type { LLMProvider } from "../../src/index.js";

describe("openai 6 fits the Chat and Responses client types", () => {
  it("openai@6", () => {
    const client = new OpenAI({ apiKey: "x" });
    expectTypeOf(client).toExtend<OpenAIChatClient>();
    expectTypeOf(client).toExtend<OpenAIResponsesClient>();
    expectTypeOf(createOpenAIChatProvider({ client })).toEqualTypeOf<LLMProvider>();
    expectTypeOf(createOpenAIResponsesProvider({ client })).toEqualTypeOf<LLMProvider>();
  });
});

describe("@anthropic-ai/sdk 1.x fits AnthropicClientLike", () => {
  it("@anthropic-ai/sdk@1", () => {
    const client = new Anthropic({ apiKey: "x" });
    expectTypeOf(client).toExtend<AnthropicClientLike>();
    expectTypeOf(createAnthropicProvider({ client })).toEqualTypeOf<LLMProvider>();
  });
});

describe("ollama 0.6 fits OllamaClientLike", () => {
  it("ollama@0.6", () => {
    const client = new Ollama({ host: "http://127.0.0.1:11434" });
    expectTypeOf(client).toExtend<OllamaClientLike>();
    expectTypeOf(createOllamaProvider({ client })).toEqualTypeOf<LLMProvider>();
  });
});

describe("@google/genai 2 fits GeminiClientLike", () => {
  it("@google/genai@2", () => {
    const client = new GoogleGenAI({ apiKey: "x" });
    expectTypeOf(client).toExtend<GeminiClientLike>();
    expectTypeOf(createGeminiProvider({ client })).toEqualTypeOf<LLMProvider>();
  });
});

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
