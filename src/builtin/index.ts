/**
 * `toolloop/builtin`: tools that are safe to hand a model — files inside a workspace,
 * `execute_bash`, `web_fetch`, `message`, `spawn` and `subagent`. See docs/builtin-tools.md.
 * @packageDocumentation
 */
export type { ExecToolOptions } from "./exec-tool.js";
export { createExecTool } from "./exec-tool.js";
export type { FileToolsOptions } from "./file-tools.js";
export { createFileTools } from "./file-tools.js";
export type { MessageToolOptions, OutgoingMessage } from "./message-tool.js";
export { createMessageTool } from "./message-tool.js";
export type { BuiltinToolsOptions } from "./register-builtin-tools.js";
export { registerBuiltinTools } from "./register-builtin-tools.js";
export type { SpawnToolOptions } from "./spawn-tool.js";
export { createSpawnTool, createSubagentTool } from "./spawn-tool.js";
export type { WebFetchToolOptions } from "./web-fetch-tool.js";
export { createWebFetchTool } from "./web-fetch-tool.js";
export type { WorkspaceOptions } from "./workspace.js";
