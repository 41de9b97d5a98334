/**
 * The attribute names of the OpenTelemetry GenAI semantic conventions that toolloop's spans carry
 * (open-telemetry/semantic-conventions-genai, docs/gen-ai/gen-ai-spans.md and
 * gen-ai-agent-spans.md; see docs/tracing.md for the version followed).
 * @internal
 */
export const GEN_AI = {
  operationName: "gen_ai.operation.name",
  providerName: "gen_ai.provider.name",
  agentName: "gen_ai.agent.name",
  requestModel: "gen_ai.request.model",
  finishReasons: "gen_ai.response.finish_reasons",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  cacheReadInputTokens: "gen_ai.usage.cache_read.input_tokens",
  cacheCreationInputTokens: "gen_ai.usage.cache_creation.input_tokens",
  reasoningOutputTokens: "gen_ai.usage.reasoning.output_tokens",
  outputMessages: "gen_ai.output.messages",
  toolName: "gen_ai.tool.name",
  toolCallId: "gen_ai.tool.call.id",
  toolType: "gen_ai.tool.type",
  toolCallArguments: "gen_ai.tool.call.arguments",
  toolCallResult: "gen_ai.tool.call.result",
  errorType: "error.type",
} as const;

/** The longest text a captured attribute (arguments, result, a message part) holds, in characters. @internal */
export const MAX_CAPTURED_CHARS = 4_096;
