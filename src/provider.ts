/**
 * The provider contract: the small surface `runToolLoop` needs from an LLM API.
 * No provider SDK is imported here; adapters under `toolloop/<provider>` implement it.
 * @module
 */

/** The role of a transcript message, as in OpenAI's Chat Completions API. */
export type MessageRole = "system" | "user" | "assistant" | "tool";

/**
 * One tool invocation requested by the model.
 *
 * In the transcript (`Message.toolCalls`) every call carries both `arguments` (parsed) and
 * `function.arguments` (the same as a JSON string). A provider may return calls that only carry
 * `function: { name, arguments: "<json>" }`; `runToolLoop` normalises them (see {@link ProviderToolCall}).
 */
export interface ToolCall {
  /** Provider-generated id; every tool message answers exactly one id. */
  id: string;
  /** Always `"function"` in the transcript. */
  type?: "function";
  /** Name of the tool to run, as registered in the `ToolRegistry`. */
  name: string;
  /** Parsed arguments. */
  arguments: Record<string, unknown>;
  /** OpenAI wire shape: the name and the arguments as a JSON string. */
  function?: { name: string; arguments: string };
  /**
   * Provider-specific data that must round-trip with the call (for example Gemini's
   * `thoughtSignature`). Adapters own the keys they put here; the loop copies it unchanged.
   */
  providerMetadata?: Record<string, unknown>;
}

/**
 * A tool call as a provider may return it: `name`/`arguments` may be missing when only the
 * OpenAI-style `function` carries them, and `arguments` may still be the raw JSON text.
 */
export interface ProviderToolCall {
  id?: string;
  type?: "function";
  name?: string;
  arguments?: Record<string, unknown> | string;
  function?: { name?: string; arguments?: string };
  providerMetadata?: Record<string, unknown>;
}

/** One message of the conversation. */
export interface Message {
  role: MessageRole;
  content: string;
  /** On assistant messages: the calls the model made in that turn. */
  toolCalls?: ToolCall[];
  /** On tool messages: the id of the call this message answers. */
  toolCallId?: string;
  /** On tool messages: the name of the tool that answered (some APIs, e.g. Ollama and Gemini, need it). */
  toolName?: string;
  /** On tool messages: `true` when the tool result is an error (Anthropic's `is_error`). */
  isError?: boolean;
}

/** A tool definition in OpenAI's function-calling shape (Go's `providers.ToolDefinition`). */
export interface ToolDefinition {
  type: "function";
  function: {
    name: string;
    description: string;
    parameters: Record<string, unknown>;
  };
}

/** Token usage of one provider call, or the sum over a loop. */
export interface UsageInfo {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

/**
 * Why the model stopped. Adapters use OpenAI's words: `"tool_calls"` whenever the response carries
 * calls, `"stop"` for a final answer, `"length"`, `"content_filter"`; other values pass through.
 */
export type FinishReason = "stop" | "tool_calls" | "length" | "content_filter" | (string & {});

/** What one `LLMProvider.chat` call returns. */
export interface LLMResponse {
  /** The assistant's text (may accompany tool calls). */
  content: string;
  /** The calls the model wants to make; empty when the turn is a final answer. */
  toolCalls: ProviderToolCall[];
  /** Why the model stopped, in OpenAI's words (see {@link FinishReason}). */
  finishReason: FinishReason;
  usage?: UsageInfo;
}

/**
 * An LLM API as the loop sees it (Go's `providers.LLMProvider`).
 *
 * Implementations must honour `signal`: reject promptly once it is aborted.
 */
export interface LLMProvider {
  /**
   * Sends the conversation and tool definitions to the model and returns its answer.
   * @param messages the transcript so far; do not mutate it
   * @param tools definitions to offer, or `undefined` when there are none
   * @param model model identifier
   * @param options provider options passed through to the API (e.g. `temperature`)
   * @param signal aborts the request
   */
  chat(
    messages: Message[],
    tools: ToolDefinition[] | undefined,
    model: string,
    options: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<LLMResponse>;
  /** The model used when `ToolLoopConfig.model` is not set. */
  getDefaultModel(): string;
}
