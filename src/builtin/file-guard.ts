import { constants, type Stats } from "node:fs";
import { type FileHandle, lstat, open } from "node:fs/promises";
import { extname } from "node:path";
import { quoteName } from "../internal/describe.js";
import { errorResult, type ToolResult } from "../tool-result.js";
import type { FileSettings } from "./file-tool-settings.js";
import { fsFailure } from "./fs-failure.js";
import {
  heldRealPath,
  isAllowedRealPath,
  OUTSIDE_WORKSPACE,
  resolveWorkspacePath,
  type WorkspaceAccess,
} from "./workspace.js";

/** `O_NOFOLLOW` and `O_NONBLOCK` (a FIFO never blocks the open); 0 where the platform has none. */
export const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
export const NONBLOCK = constants.O_NONBLOCK ?? 0;
export const DIRECTORY = constants.O_DIRECTORY ?? 0;

export type Checked = { ok: true; path: string } | { ok: false; result: ToolResult };

/**
 * The model's `path` through the workspace guard (for each access), then the extension allow-list
 * (`file`: not for list_dir), then the `afterCheck` seam.
 */
export async function checkPath(
  settings: FileSettings,
  path: unknown,
  accesses: WorkspaceAccess[],
  file: boolean,
): Promise<Checked> {
  if (typeof path !== "string") return { ok: false, result: errorResult("path must be a string") };
  let real = "";
  for (const access of accesses) {
    const resolved = await resolveWorkspacePath(settings.workspace, path, access);
    if (!resolved.ok) return { ok: false, result: errorResult(resolved.error) };
    real = resolved.path;
  }
  if (file && settings.extensions !== undefined) {
    const extension = extname(real).toLowerCase();
    if (!settings.extensions.has(extension)) {
      const allowed = [...settings.extensions].map((item) => (item === "" ? "(none)" : item)).join(", ");
      const kind = extension === "" ? "no extension" : JSON.stringify(extension);
      return {
        ok: false,
        result: errorResult(`file type not allowed: ${quoteName(path)} (${kind}; allowed: ${allowed})`),
      };
    }
  }
  for (const access of accesses) await settings.hooks.afterCheck?.(real, access);
  return { ok: true, path: real };
}

/**
 * The fallback where the kernel cannot name an open file (no `/proc`): `true` when what `handle`
 * holds is what `path` names now, and `path` still passes the guard unchanged. A directory swapped
 * for a symlink after the check makes the same path resolve elsewhere (refused), or name another
 * file than the one opened (refused); a swap between these lookups is not caught.
 */
export async function isWhatWasChecked(
  settings: FileSettings,
  handle: FileHandle,
  path: string,
  access: WorkspaceAccess,
): Promise<boolean> {
  const again = await resolveWorkspacePath(settings.workspace, path, access);
  if (!again.ok || again.path !== path) return false;
  let held: Stats;
  let named: Stats;
  try {
    [held, named] = await Promise.all([handle.stat(), lstat(path)]);
  } catch {
    return false;
  }
  return held.dev === named.dev && held.ino === named.ino;
}

/** The kernel's real path of what `handle` holds; `undefined` without `/proc` (or the `withoutProc` seam). */
export async function kernelPath(settings: FileSettings, handle: FileHandle): Promise<string | undefined> {
  return settings.hooks.withoutProc === true ? undefined : heldRealPath(handle);
}

/**
 * `true` when what `handle` holds may be used for `access`: on Linux its real path as the kernel
 * names it passes the guard (no path is looked up again, so no swap can come between); elsewhere
 * `path` must still name it ({@link isWhatWasChecked}). Any failure to tell refuses.
 */
export async function isHeldAllowed(
  settings: FileSettings,
  handle: FileHandle,
  path: string,
  access: WorkspaceAccess,
): Promise<boolean> {
  let real: string | undefined;
  try {
    real = await kernelPath(settings, handle);
  } catch {
    return false;
  }
  if (real === undefined) return isWhatWasChecked(settings, handle, path, access);
  return isAllowedRealPath(settings.workspace, real, access);
}

/**
 * The refusal of a regular file with more than one name (with `restrictToWorkspace`): a hard link
 * inside the workspace may be a file outside, and a path check cannot tell. `undefined` when fine.
 */
export function hardLinked(settings: FileSettings, shown: string, stats: Stats): ToolResult | undefined {
  if (settings.workspace.restrictToWorkspace === false || !stats.isFile() || stats.nlink <= 1) return undefined;
  return errorResult(
    `${quoteName(shown)} has ${stats.nlink} hard links: the file tools refuse a file with more than one name (another one may be outside the workspace)`,
  );
}

/** Closes `handle` (when there is one), ignoring a failure to close. */
export async function closeQuietly(handle: FileHandle | undefined): Promise<void> {
  await handle?.close().catch(() => {});
}

/**
 * Opens an existing regular file for reading (`O_NOFOLLOW`: a symlink in its place is refused),
 * then checks what was opened (see {@link isHeldAllowed}) and refuses a file with several hard links.
 */
export async function openForReading(
  settings: FileSettings,
  tool: string,
  shown: string,
  path: string,
): Promise<{ ok: true; handle: FileHandle; stats: Stats } | { ok: false; result: ToolResult }> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(path, constants.O_RDONLY | NOFOLLOW | NONBLOCK);
    if (!(await isHeldAllowed(settings, handle, path, "read"))) {
      await closeQuietly(handle);
      return { ok: false, result: errorResult(OUTSIDE_WORKSPACE) };
    }
    const stats = await handle.stat();
    if (stats.isDirectory()) {
      await closeQuietly(handle);
      return { ok: false, result: errorResult(`${quoteName(shown)} is a directory: use list_dir`) };
    }
    if (!stats.isFile()) {
      await closeQuietly(handle);
      return { ok: false, result: errorResult(`${quoteName(shown)} is not a regular file`) };
    }
    const linked = hardLinked(settings, shown, stats);
    if (linked !== undefined) {
      await closeQuietly(handle);
      return { ok: false, result: linked };
    }
    return { ok: true, handle, stats };
  } catch (error) {
    await closeQuietly(handle);
    return { ok: false, result: fsFailure(tool, shown, error) };
  }
}
