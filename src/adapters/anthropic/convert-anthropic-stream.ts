import { isRecord } from "../../internal/describe.js";
import type { LLMStreamPart } from "../../provider.js";
import { errorBodyProblem, invalidResponse } from "../shared/invalid-response.js";
import { byIndex, streamEvents, streamIndex, TextParts } from "../shared/stream.js";
import {
  type AnthropicContentBlockLike,
  type AnthropicMessageLike,
  type AnthropicUsageLike,
  fromAnthropicMessage,
  PROVIDER,
} from "./convert-anthropic-response.js";

/** One content block being assembled from its events. */
interface BlockParts {
  /** The block as `content_block_start` sent it. */
  block: Record<string, unknown>;
  /** `text_delta` pieces (after the start's own text). */
  text: TextParts;
  /** `input_json_delta` pieces: a `tool_use` block's input as JSON text. */
  json: TextParts;
  /** `thinking_delta` pieces. */
  thinking: TextParts;
  /** `signature_delta` pieces. */
  signature: TextParts;
  /** A `tool_use` block's id once its `tool-input-start` was yielded. */
  callId: string | undefined;
}

/** What {@link fromAnthropicStream} reads. */
export interface AnthropicStreamRequest {
  /** What `client.messages.create({ …, stream: true })` resolved with: its events. */
  stream: unknown;
  /** The loop's signal: an abort ends the iteration with its reason. */
  signal?: AbortSignal | undefined;
  /** The final tool carrying a structured answer, as for {@link fromAnthropicMessage}. */
  outputTool?: string | undefined;
}

/**
 * Reads a streamed Messages API answer (`RawMessageStreamEvent`s): yields a `text-delta` per
 * piece of text, a `reasoning-delta` per piece of a `thinking` block (`thinking_delta`), and per
 * `tool_use` block a `tool-input-start` (`content_block_start`; its id the block's, as in the
 * final response) and a `tool-input-delta` per `input_json_delta` (the raw `partial_json` text;
 * the output tool's input, with `outputTool`, is no call and not streamed as one). It assembles the content blocks by their `index` (a `tool_use` block's input from
 * its `input_json_delta` pieces, parsed once the stream ends; `thinking` blocks with their
 * signature), and ends with one `response` part read by {@link fromAnthropicMessage} — the same
 * answer `chat` gives. Usage is `message_start`'s, updated by `message_delta`'s counts (which are
 * cumulative). Input JSON that does not parse reaches the loop as text, which tells the model.
 * `ping` and unknown events are ignored. With `outputTool`, a final answer given through that tool
 * is also yielded as one `text-delta` (its JSON text) before the `response`.
 * @throws InvalidProviderResponseError for an `error` event the client passed on, a stream that
 *   ends before the answer is finished (neither a `message_delta` with a `stop_reason` nor
 *   `message_stop`), and for what {@link fromAnthropicMessage} refuses; the client's
 *   own error for an `event: error` propagates as it is
 */
export async function* fromAnthropicStream({
  stream,
  signal,
  outputTool,
}: AnthropicStreamRequest): AsyncGenerator<LLMStreamPart, void> {
  const blocks = new Map<number, BlockParts>();
  let stopReason: string | null = null;
  let usage: Record<string, unknown> | undefined;
  let stopped = false;
  for await (const event of streamEvents({ provider: PROVIDER, stream, signal })) {
    if (!isRecord(event)) continue;
    switch (event.type) {
      case "message_start": {
        const { message } = event;
        if (!isRecord(message)) break;
        if (isRecord(message.usage)) usage = { ...message.usage };
        if (typeof message.stop_reason === "string") stopReason = message.stop_reason;
        break;
      }
      case "content_block_start":
        yield* blockStartParts({ blocks, event, outputTool });
        break;
      case "content_block_delta": {
        const parts = blocks.get(streamIndex(event.index) ?? -1);
        if (parts !== undefined && isRecord(event.delta)) yield* blockDeltaParts(parts, event.delta);
        break;
      }
      case "message_delta": {
        if (isRecord(event.delta) && typeof event.delta.stop_reason === "string") stopReason = event.delta.stop_reason;
        if (isRecord(event.usage)) usage = { ...usage, ...withoutNulls(event.usage) };
        break;
      }
      case "error":
        throw invalidResponse({
          provider: PROVIDER,
          problem: errorBodyProblem(event) ?? "the response is an error",
          body: event,
        });
      case "message_stop":
        stopped = true;
        break;
    }
    if (stopped) break;
  }
  const message: AnthropicMessageLike = { content: byIndex(blocks).map(assembledBlock), stop_reason: stopReason };
  // The counts as the API sent them; fromAnthropicMessage reads only finite numbers.
  if (usage !== undefined) message.usage = usage as AnthropicUsageLike;
  // `message_delta` brings the stop reason after the last content block; `message_stop` only closes.
  if (!stopped && stopReason === null) {
    const problem = "the stream ended without a stop_reason or message_stop";
    throw invalidResponse({ provider: PROVIDER, problem, body: message });
  }
  yield* answerParts(message, outputTool);
}

/**
 * The streamed message's last parts: its `response`, after one `text-delta` of the answer when the
 * output tool gave it (that answer came as `input_json_delta`, never as text).
 */
function* answerParts(message: AnthropicMessageLike, outputTool: string | undefined): Generator<LLMStreamPart> {
  const response = fromAnthropicMessage(message, { outputTool });
  const answered =
    outputTool !== undefined &&
    response.toolCalls.length === 0 &&
    message.content.some((block) => block.type === "tool_use" && (block as { name?: unknown }).name === outputTool);
  if (answered) yield { type: "text-delta", delta: response.content };
  yield { type: "response", response };
}

/** What {@link blockStartParts} reads. */
interface BlockStart {
  /** The blocks so far, by index. */
  blocks: Map<number, BlockParts>;
  /** The `content_block_start` event. */
  event: Record<string, unknown>;
  outputTool: string | undefined;
}

/**
 * A started block, recorded (a second start of an index is ignored), and its first parts: the
 * text or thinking it starts with, or a call's `tool-input-start`.
 */
function* blockStartParts({ blocks, event, outputTool }: BlockStart): Generator<LLMStreamPart> {
  const index = streamIndex(event.index);
  const block = event.content_block;
  if (index === undefined || !isRecord(block) || blocks.has(index)) return;
  const parts: BlockParts = {
    block,
    text: new TextParts(),
    json: new TextParts(),
    thinking: new TextParts(),
    signature: new TextParts(),
    callId: undefined,
  };
  blocks.set(index, parts);
  if (block.type === "text" && typeof block.text === "string" && block.text !== "") {
    yield { type: "text-delta", delta: block.text };
  } else if (block.type === "thinking" && typeof block.thinking === "string" && block.thinking !== "") {
    yield { type: "reasoning-delta", delta: block.thinking };
  } else if (isCall(block, outputTool)) {
    parts.callId = block.id;
    yield { type: "tool-input-start", toolCallId: block.id, toolName: block.name };
  }
}

/** What a `content_block_delta` adds to its block, and the delta part it yields. */
function* blockDeltaParts(parts: BlockParts, delta: Record<string, unknown>): Generator<LLMStreamPart> {
  if (delta.type === "text_delta" && parts.block.type === "text") {
    if (parts.text.add(delta.text) && delta.text !== "") yield { type: "text-delta", delta: delta.text };
  } else if (delta.type === "input_json_delta") {
    const input = delta.partial_json;
    if (parts.json.add(input) && input !== "" && parts.callId !== undefined) {
      yield { type: "tool-input-delta", toolCallId: parts.callId, delta: input };
    }
  } else if (delta.type === "thinking_delta") {
    if (parts.thinking.add(delta.thinking) && delta.thinking !== "") {
      yield { type: "reasoning-delta", delta: delta.thinking };
    }
  } else if (delta.type === "signature_delta") {
    parts.signature.add(delta.signature);
  }
}

/**
 * Whether a started block is a call the response will carry: a `tool_use` with an id and a name,
 * other than the output tool (whose input is the answer, not a call).
 */
function isCall(
  block: Record<string, unknown>,
  outputTool: string | undefined,
): block is { type: "tool_use"; id: string; name: string } {
  return (
    block.type === "tool_use" &&
    typeof block.id === "string" &&
    block.id !== "" &&
    typeof block.name === "string" &&
    block.name !== "" &&
    block.name !== outputTool
  );
}

function withoutNulls(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== null && value !== undefined));
}

/** A content block as the stream built it. */
function assembledBlock({
  block,
  text,
  json,
  thinking,
  signature,
}: BlockParts): AnthropicContentBlockLike & Record<string, unknown> {
  switch (block.type) {
    case "text":
      return { ...block, type: "text", text: (typeof block.text === "string" ? block.text : "") + text.text() };
    case "tool_use":
      return json.empty
        ? { ...block, type: "tool_use" }
        : { ...block, type: "tool_use", input: parsedInput(json.text()) };
    case "thinking":
      return {
        ...block,
        type: "thinking",
        thinking: (typeof block.thinking === "string" ? block.thinking : "") + thinking.text(),
        ...(signature.empty ? {} : { signature: signature.text() }),
      };
    default:
      return { ...block, type: String(block.type) };
  }
}

/**
 * A `tool_use` input from its JSON text: the parsed value (`{}` for empty text, as the API's own
 * `input: {}`), or the text itself when it does not parse, for the loop to tell the model.
 */
function parsedInput(text: string): unknown {
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
