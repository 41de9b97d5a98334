import { isRecord } from "../internal/describe.js";
import { optionError } from "../internal/options.js";
import type { ToolRegistry } from "../tool-registry.js";
import { createExecTool } from "./exec-tool.js";
import { createFileTools } from "./file-tools.js";
import { checkWorkspaceOptions, type WorkspaceOptions } from "./workspace.js";

/** Options of {@link registerBuiltinTools}: the workspace, and whether to add `execute_bash`. */
export interface BuiltinToolsOptions extends WorkspaceOptions {
  /** Also register `execute_bash`; `false` registers the file tools alone. @default true */
  exec?: boolean | undefined;
}

const WHERE = "registerBuiltinTools";

/**
 * Seed 003's `RegisterBuiltinTools`: registers the file tools (`read_file`, `write_file`,
 * `edit_file`, `append_file`, `list_dir`) and, unless `exec` is `false`, `execute_bash`, all on one
 * workspace and otherwise with their defaults (for other options, call `createFileTools` and
 * `createExecTool` yourself). Every tool is built before any is registered, so a bad option
 * registers nothing.
 * @throws TypeError for a bad option (echoing it) or a registry without `register`
 * @example
 * ```ts
 * const registry = new ToolRegistry();
 * registerBuiltinTools(registry, { workspace: "/srv/agent/workspace" });
 * ```
 */
export function registerBuiltinTools(registry: ToolRegistry, options: BuiltinToolsOptions): void {
  if (!isRecord(registry) || typeof registry.register !== "function") {
    throw optionError(WHERE, "registry", "a ToolRegistry", registry);
  }
  checkWorkspaceOptions(options, WHERE);
  const { exec = true, workspace, restrictToWorkspace, allowReadPaths, allowWritePaths } = options;
  if (typeof exec !== "boolean") throw optionError(WHERE, "exec", "a boolean", exec);
  // Only the workspace options reach the tools, whatever else the object holds.
  const shared: WorkspaceOptions = { workspace };
  if (restrictToWorkspace !== undefined) shared.restrictToWorkspace = restrictToWorkspace;
  if (allowReadPaths !== undefined) shared.allowReadPaths = allowReadPaths;
  if (allowWritePaths !== undefined) shared.allowWritePaths = allowWritePaths;
  const tools = createFileTools(shared);
  if (exec) tools.push(createExecTool(shared));
  for (const tool of tools) registry.register(tool);
}
