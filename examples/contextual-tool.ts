/**
 * A tool that needs to know who is talking: the race-free way is the per-call `ToolContext`
 * (channel, chatId, metadata); `setContext`/`setMetadata` (Go's ContextualTool /
 * MetadataAwareTool) are also called for fidelity.
 * Run: npx tsx examples/contextual-tool.ts
 */
import {
  type ContextualTool,
  type MetadataAwareTool,
  runToolLoop,
  silentResult,
  type ToolContext,
  ToolRegistry,
  type ToolResult,
} from "toolloop";
import { ScriptedProvider, textResponse, toolCallResponse } from "toolloop/testing";

const outbox: string[] = [];

class SendMessageTool implements ContextualTool, MetadataAwareTool {
  readonly name = "send_message";
  readonly description = "Send a message to the current conversation";
  readonly parameters = { type: "object", properties: { text: { type: "string" } }, required: ["text"] };
  lastContext = "";

  // Shared-instance mixins, kept for fidelity with Go. Prefer `context` in execute: two
  // concurrent calls of this instance would overwrite these fields.
  setContext(channel: string, chatId: string): void {
    this.lastContext = `${channel}/${chatId}`;
  }
  setMetadata(_metadata: Record<string, string>): void {}

  execute(args: Record<string, unknown>, context: ToolContext): ToolResult {
    outbox.push(`[${context.channel}:${context.chatId} reply to #${context.metadata.message_id}] ${args.text}`);
    return silentResult("message sent");
  }
}

const registry = new ToolRegistry();
registry.register(new SendMessageTool());

const provider = new ScriptedProvider([
  toolCallResponse({ name: "send_message", arguments: { text: "On my way!" } }),
  textResponse("Sent."),
]);

await runToolLoop(
  { provider, tools: registry, maxIterations: 3 },
  [{ role: "user", content: "Tell them I'm coming" }],
  {
    channel: "telegram",
    chatId: "chat-42",
    metadata: { message_id: "1001", user_id: "u-7" },
  },
);

console.log(outbox.join("\n"));
