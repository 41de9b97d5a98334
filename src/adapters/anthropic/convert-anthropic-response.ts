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
 * Maps usage: prompt tokens are all input tokens (uncached plus cache writes and reads, as
 * OpenAI counts cached tokens in `prompt_tokens`), completion tokens are `output_tokens`, and the
 * total is their sum (the API reports none).
 */
function toUsage(usage: AnthropicUsageLike | null | undefined): UsageInfo | undefined {
  if (!isPlainObject(usage)) return undefined;
  const promptTokens =
    count(usage.input_tokens) + count(usage.cache_creation_input_tokens) + count(usage.cache_read_input_tokens);
  return usageInfo({ promptTokens, completionTokens: count(usage.output_tokens) });
}

/** @internal The API's name in error messages. */
export const PROVIDER = "Anthropic";

function unreadable(problem: string, response: unknown): InvalidProviderResponseError {
  return invalidResponse({ provider: PROVIDER, problem, body: response });
}

/**
 * Converts a Messages API response: `text` blocks are joined into `content`, `tool_use` blocks
 * become calls with `arguments` = `input` (absent → `{}`), and `thinking` blocks are kept on the
 * first call's `providerMetadata.anthropic` so they can be replayed. Other blocks are ignored.
 * An empty `content` array is an empty answer (the model may have nothing to add).
 * @throws InvalidProviderResponseError when the response is not a message: not an object, an
 *   error body (`{ type: "error", error }`), no `content` array, or a `tool_use` block without a name
 */
export function fromAnthropicMessage(message: AnthropicMessageLike): LLMResponse {
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
  return toLLMResponse({
    content: texts.join(""),
    toolCalls,
    finishReason: mapFinishReason({ reason: message.stop_reason, hasCalls: toolCalls.length > 0, table: STOP_REASONS }),
    usage: toUsage(message.usage),
  });
}
