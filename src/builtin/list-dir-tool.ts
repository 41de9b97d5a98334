import { constants, type Dirent } from "node:fs";
import { type FileHandle, lstat, open, opendir } from "node:fs/promises";
import { quoteName } from "../internal/describe.js";
import { errorResult, newToolResult, type ToolResult } from "../tool-result.js";
import { checkPath, closeQuietly, DIRECTORY, isHeldAllowed, isWhatWasChecked, NOFOLLOW } from "./file-guard.js";
import type { FileSettings } from "./file-tool-settings.js";
import { fsFailure } from "./fs-failure.js";
import { OUTSIDE_WORKSPACE } from "./workspace.js";

/** Most entries `list_dir` reads from one directory. */
export const MAX_LIST_ENTRIES = 1_000;

/** `list_dir { path }`: one `DIR:  name` or `FILE: name` line per entry, sorted, at most {@link MAX_LIST_ENTRIES}. */
export async function listDir(settings: FileSettings, args: Record<string, unknown>): Promise<ToolResult> {
  const checked = await checkPath(settings, args.path, ["read"], false);
  if (!checked.ok) return checked.result;
  const shown = args.path as string;
  const path = checked.path;
  let handle: FileHandle | undefined;
  try {
    try {
      handle = await open(path, constants.O_RDONLY | DIRECTORY | NOFOLLOW);
    } catch (error) {
      // A symlink put in place of the checked directory (O_NOFOLLOW refuses it).
      const found = await lstat(path).catch(() => undefined);
      if (found?.isSymbolicLink()) return errorResult(OUTSIDE_WORKSPACE);
      if (found !== undefined && !found.isDirectory()) return errorResult(`${quoteName(shown)} is not a directory`);
      throw error;
    }
    if (!(await isHeldAllowed(settings, handle, path, "read"))) return errorResult(OUTSIDE_WORKSPACE);
    const entries = await readEntries(handle, path, settings.hooks.withoutProc !== true);
    // Where the directory is read by its path (no /proc), it must still be the one held.
    if (entries.byPath && !(await isWhatWasChecked(settings, handle, path, "read")))
      return errorResult(OUTSIDE_WORKSPACE);
    if (entries.list.length === 0) return newToolResult("(empty directory)");
    const lines = entries.list
      .map((entry) => `${entry.isDirectory() ? "DIR: " : "FILE:"} ${entry.name}`)
      .sort((a, b) => compareNames(a.slice(6), b.slice(6)));
    if (entries.more)
      lines.push(`[cut: the directory has more than ${MAX_LIST_ENTRIES} entries; only ${MAX_LIST_ENTRIES} are listed]`);
    return newToolResult(lines.join("\n"));
  } catch (error) {
    return fsFailure("list_dir", shown, error);
  } finally {
    await closeQuietly(handle);
  }
}

function compareNames(a: string, b: string): number {
  if (a === b) return 0;
  return a < b ? -1 : 1;
}

/**
 * Up to {@link MAX_LIST_ENTRIES} entries of the directory `handle` holds. On Linux it is read
 * through `/proc/self/fd/N`, which names the held directory itself, whatever happens to `path`.
 */
async function readEntries(
  handle: FileHandle,
  path: string,
  useProc: boolean,
): Promise<{ list: Dirent[]; more: boolean; byPath: boolean }> {
  let byPath = false;
  let directory: Awaited<ReturnType<typeof opendir>>;
  try {
    if (!useProc) throw new Error("no /proc");
    directory = await opendir(`/proc/self/fd/${handle.fd}`);
  } catch {
    byPath = true;
    directory = await opendir(path);
  }
  const list: Dirent[] = [];
  let more = false;
  try {
    for await (const entry of directory) {
      if (list.length === MAX_LIST_ENTRIES) {
        more = true;
        break;
      }
      list.push(entry);
    }
  } finally {
    await directory.close().catch(() => {});
  }
  return { list, more, byPath };
}
