import type { ContentPart } from "./content-part.js";
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
  function?: {
    /** The same as {@link ToolCall.name}. */
    name: string;
    /**
     * The arguments as the model sent them, as JSON text (`"{}"` for none). It differs from
     * `arguments` only where an adapter changed the parsed value, e.g. OpenAI strict mode's
     * removed nulls.
     */
    arguments: string;
  };
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
  /** The provider's call id; missing or repeated ids are made unique (`call_<iteration>_<index>`, `_2` …). */
  id?: string;
  /** `"function"` when present. */
  type?: "function";
  /** The tool's name; when absent, `function.name` is used. */
  name?: string;
  /**
   * The arguments, parsed or as JSON text; when absent, `function.arguments` is used. An object is
   * what the tool receives; text is parsed (empty text means `{}`).
   */
  arguments?: Record<string, unknown> | string;
  /** OpenAI wire shape: the name and the arguments as JSON text. */
  function?: {
    /** The tool's name, used when `name` is absent. */
    name?: string;
    /** The arguments as JSON text: what the transcript records as sent by the model. */
    arguments?: string;
  };
  /** Provider-specific data that must round-trip with the call; copied to the transcript unchanged. */
  providerMetadata?: Record<string, unknown>;
}

/** One message of the conversation. */
export interface Message {
  /** Who speaks: `system`, `user`, `assistant`, or `tool` for a tool's answer. */
  role: MessageRole;
  /**
   * The text, or parts (text, images, files: {@link ContentPart}) — parts other than text only on
   * user and tool messages. On tool messages: what the model reads, `ToolResult.contentForLLM()`,
   * or, when the result had `parts`, that text as the first part and the result's parts after it.
   * `""` when there is none.
   */
  content: string | ContentPart[];
  /** On assistant messages: the calls the model made in that turn. */
  toolCalls?: ToolCall[];
  /** On tool messages: the id of the call this message answers. */
  toolCallId?: string;
  /** On tool messages: the name of the tool that answered (some APIs, e.g. Ollama and Gemini, need it). */
  toolName?: string;
  /** On tool messages: `true` when the tool result is an error (Anthropic's `is_error`). */
  isError?: boolean;
}

/**
 * The final answer's schema, as the loop passes it to `chat` / `chatStream` under
 * `options.output` when the run was given `output` (a zod schema arrives converted to JSON
 * Schema). Each adapter turns it into its provider's structured-output request and takes it out
 * of the options it sends; a custom provider may honour it or ignore it (the loop validates the
 * answer either way).
 */
export interface OutputRequest {
  /** A name for the schema (OpenAI's `json_schema.name`, Anthropic's final tool …). */
  name: string;
  /** The JSON Schema the answer must match. */
  schema: Record<string, unknown>;
}

/** A tool definition in OpenAI's function-calling shape (Go's `providers.ToolDefinition`). */
export interface ToolDefinition {
  /** Always `"function"`. */
  type: "function";
  /** The tool as the model sees it. */
  function: {
    /** The tool's name, as registered. */
    name: string;
    /** What the model reads to decide when to call the tool. */
    description: string;
    /** JSON Schema of the arguments object. */
    parameters: Record<string, unknown>;
  };
}

/** Token usage of one provider call, or the sum over a loop. */
export interface UsageInfo {
  /** Input (prompt) tokens; each adapter's mapping is in docs/adapters.md. */
  promptTokens: number;
  /** Output (completion) tokens. */
  completionTokens: number;
  /** The API's total, or the sum of the two when it reports none. */
  totalTokens: number;
  /**
   * Of the input tokens, those read from the provider's prompt cache; absent when the API reported
   * no such count (a reported 0 is kept).
   */
  cachedInputTokens?: number;
  /** Of the input tokens, those written to the provider's prompt cache (Anthropic's cache creation); absent when unreported. */
  cacheWriteTokens?: number;
  /** Of the output tokens, those spent reasoning (thinking); absent when unreported. */
  reasoningTokens?: number;
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
  /** Token usage of this call; absent when the API reported none. */
  usage?: UsageInfo;
}

/**
 * One part of a streamed answer ({@link LLMProvider.chatStream}): pieces of the assistant's text,
 * of its reasoning and of its tool calls' arguments as they arrive, and last, once, the whole
 * {@link LLMResponse} — the same `chat` would have returned for that answer (its `content` is the
 * text pieces joined; each call's arguments are its input pieces joined, parsed).
 */
export type LLMStreamPart =
  | {
      /** A piece of the assistant's text. */
      type: "text-delta";
      /** The text, as the API sent it (never re-split). */
      delta: string;
    }
  | {
      /** A piece of the model's reasoning (thinking, a reasoning summary), where the API sends it. */
      type: "reasoning-delta";
      /** The text, as the API sent it. */
      delta: string;
    }
  | {
      /** A tool call begins: before the first `tool-input-delta` of its id. */
      type: "tool-input-start";
      /** The call's id, as in the final response's `toolCalls`. */
      toolCallId: string;
      /** The tool the model calls. */
      toolName: string;
    }
  | {
      /** A piece of a tool call's arguments, as raw JSON text (the pieces joined parse to its arguments). */
      type: "tool-input-delta";
      /** The id of a call a `tool-input-start` began. */
      toolCallId: string;
      /** The JSON text, as the API sent it. */
      delta: string;
    }
  | {
      /** The whole answer: always the last part. */
      type: "response";
      /** Content, calls with their arguments, finish reason and usage, as `chat` returns them. */
      response: LLMResponse;
    };

/** A part a stream yields before its answer: a piece of text, of reasoning or of a call's arguments. */
export type LLMStreamDelta = Exclude<LLMStreamPart, { type: "response" }>;

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
  /**
   * Optional: the same request as {@link LLMProvider.chat}, streamed. Yields a `text-delta` per
   * piece of text as it arrives (and `reasoning-delta`, `tool-input-start` / `tool-input-delta`
   * where the API streams them), then one `response` part (the last) with what `chat` would have
   * returned. The loop uses it only when someone listens for events (`onEvent`, `streamToolLoop`).
   * Aborting `signal` cancels the request and ends the iteration with the signal's reason; a
   * consumer that stops iterating early cancels the request too.
   * @param messages the transcript so far; do not mutate it
   * @param tools definitions to offer, or `undefined` when there are none
   * @param model model identifier
   * @param options provider options passed through to the API (e.g. `temperature`)
   * @param signal aborts the request and the iteration
   */
  chatStream?(
    messages: Message[],
    tools: ToolDefinition[] | undefined,
    model: string,
    options: Record<string, unknown>,
    signal?: AbortSignal,
  ): AsyncIterable<LLMStreamPart>;
  /** The model used when `ToolLoopConfig.model` is not set. */
  getDefaultModel(): string;
  /**
   * Optional: which provider this is, as the OpenTelemetry GenAI conventions name it in
   * `gen_ai.provider.name` (`"openai"`, `"anthropic"`, `"gcp.gemini"`, `"ollama"` …). Middleware
   * read it from `ModelCallRequest.providerName` (tracing, logs).
   */
  readonly providerName?: string;
}
