/**
 * Human approval of dangerous calls: delete_file needs approval, list_files does not. The
 * "user" (a function here; a dialog in a UI) approves one deletion and denies another with a
 * reason the model reads. Runs on the scripted provider (no API key, no network).
 * Run: npx tsx examples/approval.ts
 */
import { type ApprovalRequest, runToolLoop, ToolRegistry } from "toolloop";
import { ScriptedProvider, textResponse, toolCallResponse } from "toolloop/testing";

const files = new Set(["notes.txt", "draft.md", "thesis.pdf"]);

const registry = new ToolRegistry();
registry.register({
  name: "list_files",
  description: "Lists the files",
  parameters: { type: "object", properties: {} },
  execute: () => [...files].join(", "),
});
registry.register({
  name: "delete_file",
  description: "Deletes a file",
  parameters: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
  needsApproval: true,
  execute: (args) => {
    files.delete(String(args.name));
    return `deleted ${String(args.name)}`;
  },
});

// The user keeps the thesis.
async function askTheUser(request: ApprovalRequest) {
  const name = String(request.arguments.name);
  const approved = name !== "thesis.pdf";
  console.log(`approve ${request.toolName}(${name})? ${approved ? "yes" : "no"}`);
  return approved ? true : { approved: false, reason: "keep the thesis" };
}

const provider = new ScriptedProvider([
  toolCallResponse({ name: "list_files" }),
  toolCallResponse([
    { name: "delete_file", arguments: { name: "draft.md" } },
    { name: "delete_file", arguments: { name: "thesis.pdf" } },
  ]),
  textResponse("I deleted draft.md; you asked me to keep thesis.pdf."),
]);

const result = await runToolLoop({ provider, tools: registry, maxIterations: 5, approve: askTheUser }, [
  { role: "user", content: "Clean up my drafts and old files." },
]);

for (const message of result.messages.filter((each) => each.role === "tool")) {
  console.log(`${message.toolName}: ${message.isError ? "error: " : ""}${message.content}`);
}
console.log(`files left: ${[...files].join(", ")}`);
console.log(`${result.stopReason}: ${result.content}`);
