import type { InvalidProviderResponseError } from "../../errors.js";
import { describeType, isPlainObject, isRecord, showValue } from "../../internal/describe.js";
import type { FinishReason, LLMResponse, ProviderToolCall, UsageInfo } from "../../provider.js";
import { toCallArguments } from "../shared/call-arguments.js";
import { mapFinishReason } from "../shared/finish-reason.js";
import { errorBodyProblem, invalidResponse } from "../shared/invalid-response.js";
import { toLLMResponse } from "../shared/llm-response.js";
import { keepOnFirstCall } from "../shared/transcript.js";
import { tokenCount, usageInfo } from "../shared/usage.js";
import {
  type AnthropicThinkingBlockParam,
  type AnthropicToolCallMetadata,
  METADATA_KEY,
  PROVIDER,
} from "./convert-to-anthropic-messages.js";

/** A content block of a response, as far as this adapter reads it. */
export interface AnthropicContentBlockLike {
  /** The block's type: `"text"`, `"tool_use"`, `"thinking"` … (others are ignored). */
  type: string;
}

/** Token counts of a response (`Usage` in the SDK). */
export interface AnthropicUsageLike {
  /** Uncached input tokens. */
  input_tokens?: number | null;
  /** Output tokens. */
  output_tokens?: number | null;
  /** Input tokens written to the prompt cache. */
  cache_creation_input_tokens?: number | null;
  /** Input tokens read from the prompt cache. */
  cache_read_input_tokens?: number | null;
  /** The output breakdown: `thinking_tokens`, the output tokens spent thinking (newer API versions). */
  output_tokens_details?: {
    /** Output tokens spent thinking (part of `output_tokens`). */
    thinking_tokens?: number | null;
  } | null;
}

/** The part of a Messages API response (`Message` in the SDK) this adapter reads. */
export interface AnthropicMessageLike {
  /** The response's content blocks. */
  content: readonly AnthropicContentBlockLike[];
  /** Why the model stopped: `"end_turn"`, `"tool_use"`, `"max_tokens"` …. */
  stop_reason?: string | null;
  /** Token counts. */
  usage?: AnthropicUsageLike | null;
}

const STOP_REASONS: ReadonlyMap<string, FinishReason> = new Map([
  ["tool_use", "tool_calls"],
  ["end_turn", "stop"],
  ["stop_sequence", "stop"],
  ["max_tokens", "length"],
  ["model_context_window_exceeded", "length"],
  ["refusal", "content_filter"],
]);

function count(value: unknown): number {
  return tokenCount(value) ?? 0;
}

/**
 * Maps usage: prompt tokens are all input tokens (Anthropic's `input_tokens` counts only the
 * uncached ones; the cache writes and reads are added, as OpenAI counts cached tokens in
 * `prompt_tokens`), of which `cache_read_input_tokens` → `cachedInputTokens` and
 * `cache_creation_input_tokens` → `cacheWriteTokens` (each only when reported); completion tokens
 * are `output_tokens` (thinking included), of which `output_tokens_details.thinking_tokens` →
 * `reasoningTokens` when reported; the total is their sum (the API reports none).
 */
function toUsage(usage: AnthropicUsageLike | null | undefined): UsageInfo | undefined {
  if (!isPlainObject(usage)) return undefined;
  const cacheWriteTokens = tokenCount(usage.cache_creation_input_tokens);
  const cachedInputTokens = tokenCount(usage.cache_read_input_tokens);
  const promptTokens = count(usage.input_tokens) + (cacheWriteTokens ?? 0) + (cachedInputTokens ?? 0);
  const details = usage.output_tokens_details;
  return usageInfo({
    promptTokens,
    completionTokens: count(usage.output_tokens),
    cachedInputTokens,
    cacheWriteTokens,
    reasoningTokens: isPlainObject(details) ? tokenCount(details.thinking_tokens) : undefined,
  });
}

export { PROVIDER };

function unreadable(problem: string, response: unknown): InvalidProviderResponseError {
  return invalidResponse({ provider: PROVIDER, problem, body: response });
}

/** Options of {@link fromAnthropicMessage}. */
export interface AnthropicResponseOptions {
  /**
   * The name of the final tool that carries a structured answer (`structuredOutput: "tool"`): a
   * `tool_use` of it is the final answer, its `input` as JSON text, when the model called no other
   * tool in the turn.
   */
  outputTool?: string | undefined;
}

/**
 * Converts a Messages API response: `text` blocks are joined into `content`, `tool_use` blocks
 * become calls with `arguments` = `input` (absent → `{}`), and `thinking` blocks are kept on the
 * first call's `providerMetadata.anthropic` so they can be replayed. Other blocks are ignored.
 * An empty `content` array is an empty answer (the model may have nothing to add).
 *
 * With `outputTool`, a `tool_use` of that tool is not a call: when it is the turn's only call, the
 * answer is final, its `content` the tool's `input` as JSON text (`finishReason` `"stop"`); beside
 * other calls it is left out, so those run and the model is asked again.
 * @throws InvalidProviderResponseError when the response is not a message: not an object, an
 *   error body (`{ type: "error", error }`), no `content` array, or a `tool_use` block without a name
 */
export function fromAnthropicMessage(
  message: AnthropicMessageLike,
  { outputTool }: AnthropicResponseOptions = {},
): LLMResponse {
  const response: unknown = message;
  if (!isRecord(response)) {
    throw unreadable(`the response is not an object (got ${describeType(response)})`, response);
  }
  if (!Array.isArray(response.content)) {
    const problem =
      errorBodyProblem(response) ?? `the response has no content array (got ${describeType(response.content)})`;
    throw unreadable(problem, response);
  }
  const texts: string[] = [];
  const thinking: AnthropicThinkingBlockParam[] = [];
  const toolCalls: ProviderToolCall[] = [];
  let output: string | undefined;
  for (const raw of response.content) {
    if (!isPlainObject(raw)) continue;
    const block = raw as Record<string, unknown>;
    if (block.type === "text" && typeof block.text === "string") {
      texts.push(block.text);
    } else if (block.type === "thinking" || block.type === "redacted_thinking") {
      thinking.push({ ...block } as AnthropicThinkingBlockParam);
    } else if (block.type === "tool_use") {
      if (typeof block.name !== "string" || block.name === "") {
        throw unreadable(`a tool_use block has no name (got ${showValue(block.name)})`, response);
      }
      if (outputTool !== undefined && block.name === outputTool) {
        // Text input (a stream's JSON that did not parse) is the answer as it is, for the loop to check.
        output ??= typeof block.input === "string" ? block.input : JSON.stringify(block.input ?? {});
        continue;
      }
      const call: ProviderToolCall = {
        type: "function",
        name: block.name,
        arguments: toCallArguments(block.input),
      };
      if (typeof block.id === "string") call.id = block.id;
      if (block.caller !== undefined && block.caller !== null) {
        call.providerMetadata = { [METADATA_KEY]: { caller: block.caller } satisfies AnthropicToolCallMetadata };
      }
      toolCalls.push(call);
    }
  }
  keepOnFirstCall(toolCalls, { key: METADATA_KEY, field: "thinking", parts: thinking });
  if (output !== undefined && toolCalls.length === 0) {
    return toLLMResponse({ content: output, toolCalls, finishReason: "stop", usage: toUsage(message.usage) });
  }
  return toLLMResponse({
    content: texts.join(""),
    toolCalls,
    finishReason: mapFinishReason({ reason: message.stop_reason, hasCalls: toolCalls.length > 0, table: STOP_REASONS }),
    usage: toUsage(message.usage),
  });
}
