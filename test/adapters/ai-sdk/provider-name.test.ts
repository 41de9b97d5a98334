import { describe, expect, it } from "vitest";
import { aiSdkProviderName } from "../../../src/adapters/ai-sdk/provider-name.js";

describe("aiSdkProviderName", () => {
  it.each([
    ["openai.chat", "openai"],
    ["openai.responses", "openai"],
    ["anthropic.messages", "anthropic"],
    ["google.generative-ai", "gcp.gemini"],
    ["google.vertex.chat", "gcp.vertex_ai"],
    ["vertex.anthropic.messages", "gcp.vertex_ai"],
    ["amazon-bedrock", "aws.bedrock"],
    ["azure.chat", "azure.ai.openai"],
    ["mistral.chat", "mistral_ai"],
    ["xai.chat", "x_ai"],
    ["groq.chat", "groq"],
    ["deepseek.chat", "deepseek"],
    ["ollama.chat", "ollama"],
    ["gateway", "gateway"],
    ["googleish.chat", "googleish"],
  ])("%s → %s", (provider, name) => {
    expect(aiSdkProviderName(provider)).toBe(name);
  });

  it.each([[undefined], [""], [42], [".chat"]])("%s → undefined", (provider) => {
    expect(aiSdkProviderName(provider)).toBeUndefined();
  });
});
