import { failure } from "../execute-tool-call.js";
import { isRecord, quoteName } from "../internal/describe.js";
import { checkFunction, optionError } from "../internal/options.js";
import type { Tool, ToolContext } from "../tool.js";
import { errorResult, silentResult, type ToolResult } from "../tool-result.js";

/** One message the `message` tool asks you to deliver. */
export interface OutgoingMessage {
  /** Where to send it: the model's `channel`, or the call's `context.channel` when it gave none. */
  channel: string;
  /** Which chat: the model's `chat_id`, or the call's `context.chatId` when it gave none. */
  chatId: string;
  /** The text the model wrote (not empty). */
  content: string;
}

/** Options of {@link createMessageTool}. */
export interface MessageToolOptions {
  /**
   * Delivers one message (to Telegram, Slack, a websocket …). It gets the call's own context too,
   * so it can refuse a target the conversation may not reach (compare `message.chatId` with
   * `context.chatId`) by throwing. A throw or a rejection becomes an error result the model reads
   * without the error's text (which may hold a token or an address); the error is kept as `err`.
   */
  send(message: OutgoingMessage, context: ToolContext): Promise<void> | void;
}

const NAME = "message";

/**
 * The `message` tool (picoclaw's `MessageTool`): `message { content, channel?, chat_id? }` sends
 * `content` through `options.send`, to the call's own channel and chat unless the model names
 * others. The result is silent (the user already has the message). Missing target, blank content
 * or a failing `send` are error results.
 * @throws TypeError when `options.send` is not a function
 * @example
 * ```ts
 * registry.register(createMessageTool({ send: ({ chatId, content }) => bot.sendMessage(chatId, content) }));
 * ```
 */
export function createMessageTool(options: MessageToolOptions): Tool {
  if (!isRecord(options)) throw optionError("createMessageTool", "options", "an object", options);
  const deliver = checkFunction("createMessageTool", "send", options.send);
  if (deliver === undefined) throw optionError("createMessageTool", "send", "a function", deliver);
  return Object.freeze({
    name: NAME,
    description:
      "Send a message to the user on a chat channel. By default it goes to the current conversation; " +
      "give channel and chat_id only to reach another chat.",
    parameters: {
      type: "object",
      properties: {
        content: { type: "string", description: "The text of the message" },
        channel: { type: "string", description: "Optional: the channel to send to (telegram, slack …)" },
        chat_id: { type: "string", description: "Optional: the chat or user id to send to" },
      },
      required: ["content"],
      additionalProperties: false,
    },
    execute: (args: Record<string, unknown>, context: ToolContext) => sendMessage(deliver, args, context),
  });
}

/** A model-given target, or the call's own when the model gave none (or `""`). */
function target(value: unknown, fallback: string): string {
  return typeof value === "string" && value !== "" ? value : fallback;
}

async function sendMessage(
  send: MessageToolOptions["send"],
  args: Record<string, unknown>,
  context: ToolContext,
): Promise<ToolResult> {
  const { content } = args;
  if (typeof content !== "string" || content.trim() === "") return errorResult("content is empty: nothing to send");
  // Read from this call's context, never from shared state: concurrent calls keep their own chat.
  const channel = target(args.channel, context.channel);
  const chatId = target(args.chat_id, context.chatId);
  if (channel === "" || chatId === "") {
    return errorResult("no chat to send to: this conversation has no channel and chat id; give channel and chat_id");
  }
  const where = `channel ${quoteName(channel)}, chat ${quoteName(chatId)}`;
  try {
    await send({ channel, chatId, content }, context);
  } catch (error) {
    // The error's own text stays out of what the model reads: a delivery error often carries the
    // bot token in a URL or an internal address. Your code reads it as `err.cause`.
    return failure(NAME, "tool_failed", `the message could not be sent to ${where}`, error);
  }
  return silentResult(`Message sent to ${where}.`);
}
