import { checkCount, optionError } from "../internal/options.js";
import type { Tool, ToolContext } from "../tool.js";
import type { ToolResult } from "../tool-result.js";
import { appendFile } from "./append-file-tool.js";
import { editFile } from "./edit-file-tool.js";
import { FILE_TOOL_HOOKS, type FileSettings, type FileToolHooks } from "./file-tool-settings.js";
import { listDir, MAX_LIST_ENTRIES } from "./list-dir-tool.js";
import { readFile } from "./read-file-tool.js";
import { checkWorkspaceOptions, type WorkspaceOptions } from "./workspace.js";
import { writeFile } from "./write-file-tool.js";

/** Options of {@link createFileTools}: the workspace, and limits of what the tools read and touch. */
export interface FileToolsOptions extends WorkspaceOptions {
  /**
   * Most bytes `read_file` returns in one call, counted on what it returns (each line's `N|`
   * prefix and the line feeds between lines included); the rest is cut with a marker that names
   * the `start_line` to read on from. Also the largest image (PNG, JPEG, GIF, WebP) it returns as
   * an image part, in bytes of the file; a larger one is an error result. @default 65536
   */
  maxReadBytes?: number;
  /**
   * When given, `read_file`, `write_file`, `edit_file` and `append_file` only touch files whose
   * real path ends in one of these extensions (case-insensitive; `"md"` and `".md"` alike; `""`
   * for files without one). `list_dir` lists everything. @default undefined (any file)
   */
  allowedExtensions?: string[];
}

const WHERE = "createFileTools";
const DEFAULT_MAX_READ_BYTES = 65_536;

/**
 * The file tools (picoclaw's `ReadFileTool`, `WriteFileTool`, `EditFileTool`, `AppendFileTool`,
 * `ListDirTool`): `read_file`, `write_file`, `edit_file`, `append_file` and `list_dir`, each
 * confined to the workspace (see {@link WorkspaceOptions}). Every refusal and failure is an error
 * result the model reads; messages name paths only as the model wrote them. See
 * docs/builtin-tools.md for what each returns and how a directory swapped for a symlink is caught.
 * @throws TypeError for a bad option (echoing it)
 * @example
 * ```ts
 * for (const tool of createFileTools({ workspace: "/srv/agent/workspace" })) registry.register(tool);
 * ```
 */
export function createFileTools(options: FileToolsOptions): Tool[] {
  checkWorkspaceOptions(options, WHERE);
  const settings = fileSettings(options);
  const tool = (
    name: string,
    description: string,
    properties: Record<string, unknown>,
    required: string[],
    run: (settings: FileSettings, args: Record<string, unknown>, context: ToolContext) => Promise<ToolResult>,
  ): Tool =>
    Object.freeze({
      name,
      description,
      parameters: { type: "object", properties, required, additionalProperties: false },
      execute: (args: Record<string, unknown>, context: ToolContext) => run(settings, args, context),
    });
  const path = (what: string) => ({ type: "string", description: `${what}, relative to the workspace` });
  return [
    tool(
      "read_file",
      `Read a text file. Each line comes back as "N|text" (N = line number). At most ${settings.maxReadBytes} bytes ` +
        "per call: a longer file is cut with a note naming the start_line (and line_offset) to continue from. " +
        "A PNG, JPEG, GIF or WebP image of at most that size comes back as an image you can see.",
      {
        path: path("The file to read"),
        start_line: { type: "integer", minimum: 1, description: "Optional: first line to read (1-based)" },
        end_line: { type: "integer", minimum: 1, description: "Optional: last line to read (≥ start_line)" },
        line_offset: {
          type: "integer",
          minimum: 0,
          description: "Optional: bytes of start_line to skip, to read on in a line longer than one call returns",
        },
      },
      ["path"],
      readFile,
    ),
    tool(
      "write_file",
      "Write a file (created with its missing parent directories). An existing file is only replaced with overwrite: true.",
      {
        path: path("The file to write"),
        content: { type: "string", description: "The whole content of the file" },
        overwrite: { type: "boolean", description: "Replace the file if it exists (default false)" },
      },
      ["path", "content"],
      writeFile,
    ),
    tool(
      "edit_file",
      "Replace one exact piece of text in a file. old_text must match exactly once (spaces, indentation and " +
        "line breaks included); read the file first and include enough surrounding lines to make it unique.",
      {
        path: path("The file to edit"),
        old_text: { type: "string", description: "The exact text to replace" },
        new_text: { type: "string", description: "The text to put in its place" },
      },
      ["path", "old_text", "new_text"],
      editFile,
    ),
    tool(
      "append_file",
      "Append text to the end of a file (created with its missing parent directories if it does not exist).",
      { path: path("The file to append to"), content: { type: "string", description: "The text to append" } },
      ["path", "content"],
      appendFile,
    ),
    tool(
      "list_dir",
      `List a directory: one "DIR:  name" or "FILE: name" line per entry, sorted by name (at most ${MAX_LIST_ENTRIES}).`,
      { path: path('The directory to list ("." for the workspace)') },
      ["path"],
      listDir,
    ),
  ];
}

function fileSettings(options: FileToolsOptions): FileSettings {
  const { allowedExtensions } = options;
  const maxReadBytes = checkCount(WHERE, "maxReadBytes", options.maxReadBytes, DEFAULT_MAX_READ_BYTES);
  let extensions: Set<string> | undefined;
  if (allowedExtensions !== undefined) {
    if (!Array.isArray(allowedExtensions))
      throw optionError(WHERE, "allowedExtensions", "an array of strings", allowedExtensions);
    extensions = new Set();
    allowedExtensions.forEach((extension: unknown, index) => {
      if (typeof extension !== "string" || /[/\\\0]/.test(extension)) {
        throw optionError(WHERE, `allowedExtensions[${index}]`, 'a file extension such as ".md"', extension);
      }
      const lower = extension.toLowerCase();
      extensions?.add(lower === "" || lower.startsWith(".") ? lower : `.${lower}`);
    });
  }
  // A copy: the caller changing its options object later changes nothing here.
  const workspace: WorkspaceOptions = {
    workspace: options.workspace,
    restrictToWorkspace: options.restrictToWorkspace !== false,
  };
  if (options.allowReadPaths !== undefined) workspace.allowReadPaths = [...options.allowReadPaths];
  if (options.allowWritePaths !== undefined) workspace.allowWritePaths = [...options.allowWritePaths];
  const hooks = (options as { [FILE_TOOL_HOOKS]?: FileToolHooks })[FILE_TOOL_HOOKS] ?? {};
  return { workspace, maxReadBytes, extensions, hooks };
}
