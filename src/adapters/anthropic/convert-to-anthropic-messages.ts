import { contentText } from "../../content-part.js";
import type { Message } from "../../provider.js";
import { argumentsObject, assistantTurnParts } from "../shared/transcript.js";

/** A `text` content block. */
export interface AnthropicTextBlockParam {
  /** Always `"text"`. */
  type: "text";
  /** The text; never empty (the API rejects empty text blocks). */
  text: string;
}

/** A `tool_use` content block of an assistant turn in the history. */
export interface AnthropicToolUseBlockParam {
  /** Always `"tool_use"`. */
  type: "tool_use";
  /** The call's id, answered by a `tool_result` block's `tool_use_id`. */
  id: string;
  /** The tool's name. */
  name: string;
  /** The call's arguments, as an object. */
  input: Record<string, unknown>;
  /** Echoed from the response (`{ type: "direct" }` …) when the API sent one. */
  caller?: unknown;
}

/** A `tool_result` content block: the answer to one `tool_use`. */
export interface AnthropicToolResultBlockParam {
  /** Always `"tool_result"`. */
  type: "tool_result";
  /** The id of the `tool_use` block it answers. */
  tool_use_id: string;
  /** The tool's text; left out when empty (the API rejects empty text). */
  content?: string;
  /** `true` when the tool failed (`Message.isError`). */
  is_error?: boolean;
}

/** A `thinking` or `redacted_thinking` block, replayed unchanged before the turn's tool calls. */
export interface AnthropicThinkingBlockParam {
  /** The block's type; its other fields are the API's, kept as they came. */
  type: "thinking" | "redacted_thinking";
  [key: string]: unknown;
}

/** The content blocks this adapter sends. */
export type AnthropicContentBlockParam =
  | AnthropicTextBlockParam
  | AnthropicToolUseBlockParam
  | AnthropicToolResultBlockParam
  | AnthropicThinkingBlockParam;

/** One message of `messages[]` as this adapter sends it. */
export interface AnthropicMessageParam {
  /** `"user"` (also for tool results) or `"assistant"`. */
  role: "user" | "assistant";
  /** One text as a string, else the blocks. */
  content: string | AnthropicContentBlockParam[];
}

/** What this adapter keeps on a `ToolCall`'s `providerMetadata.anthropic` so it round-trips. */
export interface AnthropicToolCallMetadata {
  /** The `caller` of the `tool_use` block, echoed back in the history. */
  caller?: unknown;
  /**
   * `thinking` / `redacted_thinking` blocks of the turn (on its first call only): with extended
   * thinking the API requires them back, unchanged, before the turn's `tool_use` blocks.
   */
  thinking?: AnthropicThinkingBlockParam[];
}

/** The key of this adapter's data in `ToolCall.providerMetadata`. */
export const METADATA_KEY = "anthropic";

function assistantBlocks(message: Message): AnthropicContentBlockParam[] {
  return assistantTurnParts<AnthropicContentBlockParam>(message, {
    key: METADATA_KEY,
    replayed: "thinking",
    text: (text) => ({ type: "text", text }),
    call: (call, kept) => {
      const block: AnthropicToolUseBlockParam = {
        type: "tool_use",
        id: call.id,
        name: call.name,
        input: argumentsObject(call),
      };
      // The `caller` the API gave the block, echoed as the SDK's own tool runner does.
      if (kept?.caller !== undefined) block.caller = kept.caller;
      return block;
    },
  });
}

function toolResultBlock(message: Message): AnthropicToolResultBlockParam {
  const block: AnthropicToolResultBlockParam = { type: "tool_result", tool_use_id: message.toolCallId ?? "" };
  // An empty `content` is left out: the API rejects empty text.
  if (message.content !== "") block.content = contentText(message.content);
  if (message.isError === true) block.is_error = true;
  return block;
}

function blocksOf(message: Message): { role: "user" | "assistant"; blocks: AnthropicContentBlockParam[] } {
  if (message.role === "assistant") return { role: "assistant", blocks: assistantBlocks(message) };
  if (message.role === "tool") return { role: "user", blocks: [toolResultBlock(message)] };
  return {
    role: "user",
    blocks: contentText(message.content) === "" ? [] : [{ type: "text", text: contentText(message.content) }],
  };
}

function finish(role: "user" | "assistant", blocks: AnthropicContentBlockParam[]): AnthropicMessageParam {
  const [first] = blocks;
  if (blocks.length === 1 && first?.type === "text") return { role, content: first.text };
  if (role === "user") {
    // The API requires a turn's tool_result blocks first in the user message; text goes after.
    const results = blocks.filter((block) => block.type === "tool_result");
    const others = blocks.filter((block) => block.type !== "tool_result");
    return { role, content: [...results, ...others] };
  }
  return { role, content: blocks };
}

/**
 * Converts a transcript to the Messages API's `system` and `messages`: system messages are joined
 * (blank line between) into the top-level `system`; assistant messages become `text` then
 * `tool_use` blocks; tool messages become `tool_result` blocks of a user message; consecutive
 * messages of the same role are merged into one, with the `tool_result` blocks first. Empty texts
 * are left out (the API rejects them), and a message left with no content is dropped.
 */
export function toAnthropicMessages(messages: readonly Message[]): {
  system?: string;
  messages: AnthropicMessageParam[];
} {
  const system: string[] = [];
  const turns: Array<{ role: "user" | "assistant"; blocks: AnthropicContentBlockParam[] }> = [];
  for (const message of messages) {
    if (message.role === "system") {
      if (message.content !== "") system.push(contentText(message.content));
      continue;
    }
    const { role, blocks } = blocksOf(message);
    if (blocks.length === 0) continue;
    const last = turns.at(-1);
    if (last?.role === role) last.blocks.push(...blocks);
    else turns.push({ role, blocks });
  }
  const converted = turns.map(({ role, blocks }) => finish(role, blocks));
  return system.length > 0 ? { system: system.join("\n\n"), messages: converted } : { messages: converted };
}
