/**
 * The AI SDK's provider ids (a model's `provider`, e.g. `"openai.chat"`, first segment or the
 * segments that matter) whose OpenTelemetry GenAI `gen_ai.provider.name` differs from the id.
 * Checked longest first, so `google.vertex` wins over `google`.
 */
const SEMCONV_NAMES: ReadonlyArray<readonly [prefix: string, name: string]> = [
  ["google.vertex", "gcp.vertex_ai"],
  ["vertex", "gcp.vertex_ai"],
  ["google", "gcp.gemini"],
  ["amazon-bedrock", "aws.bedrock"],
  ["bedrock", "aws.bedrock"],
  ["azure", "azure.ai.openai"],
  ["mistral", "mistral_ai"],
  ["xai", "x_ai"],
];

/**
 * A LanguageModel's `provider` (`"openai.chat"`, `"anthropic.messages"`, `"google.generative-ai"` …)
 * as an `LLMProvider.providerName`: the GenAI conventions' `gen_ai.provider.name` where they
 * name that provider (`"openai"`, `"anthropic"`, `"gcp.gemini"`, `"gcp.vertex_ai"`,
 * `"aws.bedrock"`, `"azure.ai.openai"`, `"mistral_ai"`, `"x_ai"`, `"groq"`, `"deepseek"` …), else
 * the id's first dot-separated segment as it is (`"ollama.chat"` → `"ollama"`,
 * `"gateway"` → `"gateway"`); `undefined` when the model names no provider.
 */
export function aiSdkProviderName(provider: unknown): string | undefined {
  if (typeof provider !== "string" || provider === "") return undefined;
  for (const [prefix, name] of SEMCONV_NAMES) {
    if (provider === prefix || provider.startsWith(`${prefix}.`)) return name;
  }
  const dot = provider.indexOf(".");
  return dot === -1 ? provider : provider.slice(0, dot) || undefined;
}
