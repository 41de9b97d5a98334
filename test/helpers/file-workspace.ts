import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { FILE_TOOL_HOOKS, type FileToolHooks } from "../../src/builtin/file-tool-settings.js";
import { createFileTools, type FileToolsOptions } from "../../src/builtin/index.js";
import { ToolRegistry, type ToolResult } from "../../src/index.js";

// The file tools' tests share one fixture: a temporary root holding the workspace and a directory
// outside it, made anew for each test (the bindings below are live: importers see each test's paths).

/** The refusal of a path outside the workspace. */
export const DENIED = "access denied: path is outside the workspace";

/** The test's temporary directory (holding `ws` and `outside`), its real path; new for each test. */
export let root: string;
/** The workspace the tools are confined to: `sub/` and `notes.txt` ("one\ntwo\nthree\n"). */
export let workspace: string;
/** A directory beside the workspace, holding `secret.txt`. */
export let outside: string;

/** Makes a fresh workspace and outside directory before each test of the calling file, and removes them after. */
export function useFileWorkspace(): void {
  beforeEach(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), "toolloop-files-")));
    workspace = join(root, "ws");
    outside = join(root, "outside");
    mkdirSync(join(workspace, "sub"), { recursive: true });
    mkdirSync(outside);
    writeFileSync(join(workspace, "notes.txt"), "one\ntwo\nthree\n");
    writeFileSync(join(outside, "secret.txt"), "secret\n");
  });

  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
  });
}

/** A registry holding the file tools on the workspace, and `call` to run one of them. */
export function setup(options: Partial<FileToolsOptions> = {}, hooks?: FileToolHooks) {
  const registry = new ToolRegistry();
  const all = {
    workspace,
    ...options,
    ...(hooks === undefined ? {} : { [FILE_TOOL_HOOKS]: hooks }),
  } as FileToolsOptions;
  for (const tool of createFileTools(all)) registry.register(tool);
  const call = (name: string, args: Record<string, unknown>): Promise<ToolResult> => registry.execute(name, args);
  return { registry, call };
}

/** What the model reads, and whether it is an error. */
export async function read(result: Promise<ToolResult>): Promise<{ text: string; isError: boolean }> {
  const done = await result;
  return { text: done.contentForLLM(), isError: done.isError };
}

/** A path inside the workspace. */
export const ws = (...parts: string[]) => join(workspace, ...parts);
/** Files of a directory, to show that nothing (no temporary file) was left behind. */
export const names = (directory: string) => readdirSync(directory).sort();

/** Whether the tests run on Linux (where names go through /proc/self/fd). */
export const linux = process.platform === "linux";
