/**
 * Images and files: a user message with an image, and a tool that hands the model a screenshot
 * with `mediaResult`, on the built-in scripted provider (no API key, no network). Prints what the
 * model was sent. Run: npx tsx examples/vision-tool.ts
 *
 * With a real model, replace the ScriptedProvider with an adapter (docs/adapters.md says how each
 * provider receives the parts, e.g. OpenAI Chat adds a tool's images in a user message after the
 * tool messages).
 */
import { type ContentPart, defineTool, type Message, mediaResult, runToolLoop } from "toolloop";
import { ScriptedProvider, textResponse, toolCallResponse } from "toolloop/testing";
import { z } from "zod";

// A 1×1 transparent PNG: a real screenshot tool would capture the page (e.g. with Playwright).
const PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

const screenshot = defineTool({
  name: "screenshot",
  description: "Takes a screenshot of a web page and shows it to you",
  parameters: z.object({ url: z.string().url() }),
  // The text says what the image is, for a model (or a log) that cannot see it.
  execute: async ({ url }) =>
    mediaResult(`Screenshot of ${url} (1×1 PNG)`, [{ type: "image", mediaType: "image/png", data: PNG_1X1 }]),
});

// The scripted "model": asks for a screenshot, then answers from what it was shown.
const provider = new ScriptedProvider([
  toolCallResponse({ name: "screenshot", arguments: { url: "https://example.com" } }, "Let me look at the page."),
  (call) => {
    const shown = call.messages.flatMap((message) => (typeof message.content === "string" ? [] : message.content));
    const images = shown.filter((part) => part.type === "image").length;
    return textResponse(`I was shown ${images} images: your logo and the page, which is blank.`);
  },
]);

const messages: Message[] = [
  {
    role: "user",
    content: [
      { type: "text", text: "Here is our logo. Does example.com show it?" },
      { type: "image", url: "https://example.com/logo.png", mediaType: "image/png" },
    ],
  },
];

const result = await runToolLoop({ provider, tools: [screenshot], maxIterations: 3 }, messages);

/** A part as one line: text as it is, an image or file by its type and size (never its bytes). */
function describe(part: ContentPart): string {
  if (part.type === "text") return JSON.stringify(part.text);
  if ("url" in part) return `[image from ${part.url}]`;
  const bytes = Buffer.from(part.data, "base64").length;
  return `[${part.type} ${part.mediaType}, ${bytes} bytes]`;
}

console.log("What the model was sent in its second call:");
for (const message of provider.calls[1]?.messages ?? []) {
  const content =
    typeof message.content === "string" ? [JSON.stringify(message.content)] : message.content.map(describe);
  const calls = message.toolCalls?.map((call) => ` → calls ${call.name}`).join("") ?? "";
  console.log(`  ${message.role.padEnd(9)} ${content.join(" + ")}${calls}`);
}
console.log(`\n${result.stopReason}: ${result.content}`);
