import { constants } from "node:fs";
import { type FileHandle, lstat, mkdir, open } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { quoteName } from "../internal/describe.js";
import { errorResult, type ToolResult } from "../tool-result.js";
import { closeQuietly, DIRECTORY, kernelPath, NOFOLLOW } from "./file-guard.js";
import type { FileSettings } from "./file-tool-settings.js";
import { fsFailure } from "./fs-failure.js";
import { errorCode, isAllowedRealPath, OUTSIDE_WORKSPACE } from "./workspace.js";

/** The directory a file is written in, held open while the tool creates, links, renames and removes names in it. */
export interface Place {
  /**
   * How the name `name` in the directory is reached: on Linux `/proc/self/fd/N/name`, the held
   * directory itself whatever happens to its path since; without `/proc`, by the directory's path.
   */
  at(name: string): string;
  /** The directory's real path (as the kernel names it on Linux). */
  readonly real: string;
  /** `true` when `at` goes through the held directory (Linux). */
  readonly held: boolean;
  /** `true` while the directory is still where it was checked (on Linux asked of the kernel again). */
  stillAllowed(name: string): Promise<boolean>;
  /** Closes the held directory. */
  close(): Promise<void>;
}

const DIRECTORY_FLAGS = constants.O_RDONLY | DIRECTORY | NOFOLLOW;

/** The result for a missing parent that cannot be a directory (a file is in the way). */
function notADirectory(shown: string): ToolResult {
  return errorResult(`${quoteName(shown)}: a part of the path is not a directory`);
}

/**
 * Opens the directory `path` (real, checked) is written in, creating its missing parents. On
 * Linux the nearest existing ancestor is opened (`O_DIRECTORY | O_NOFOLLOW`) and asked of the
 * kernel where it is: the target under it must pass the guard for writing before anything is
 * created; each missing directory is then made and opened by name under the held one, so none is
 * ever made outside. Without `/proc` the parents are made by path (`mkdir -p`).
 */
export async function openPlace(
  settings: FileSettings,
  tool: string,
  shown: string,
  path: string,
): Promise<{ ok: true; place: Place } | { ok: false; result: ToolResult }> {
  // Windows has neither /proc nor directories opened like files.
  if (process.platform === "win32") return placeByPath(tool, shown, path, true);
  const missing: string[] = [];
  let directory = dirname(path);
  let attempted = directory; // the directory being opened, to tell a symlink in its place
  let handle: FileHandle | undefined;
  try {
    for (;;) {
      try {
        attempted = directory;
        handle = await open(directory, DIRECTORY_FLAGS);
        break;
      } catch (error) {
        if (errorCode(error) !== "ENOENT" || directory === "/") throw error;
        missing.unshift(basename(directory));
        directory = dirname(directory);
      }
    }
    const real = await kernelPath(settings, handle);
    if (real === undefined) {
      await closeQuietly(handle);
      handle = undefined;
      return placeByPath(tool, shown, path, missing.length > 0);
    }
    if (!(await isAllowedRealPath(settings.workspace, join(real, ...missing, basename(path)), "write")))
      return { ok: false, result: errorResult(OUTSIDE_WORKSPACE) };
    for (const name of missing) {
      const parent: FileHandle = handle;
      const child = `/proc/self/fd/${parent.fd}/${name}`;
      await mkdir(child).catch((error: unknown) => {
        if (errorCode(error) !== "EEXIST") throw error;
      });
      attempted = child;
      handle = await open(child, DIRECTORY_FLAGS);
      await closeQuietly(parent);
    }
    const held: FileHandle = handle;
    handle = undefined;
    const at = (name: string) => `/proc/self/fd/${held.fd}/${name}`;
    const place: Place = {
      at,
      real: join(real, ...missing),
      held: true,
      stillAllowed: async (name) => {
        const now = await kernelPath(settings, held).catch(() => undefined);
        return now !== undefined && isAllowedRealPath(settings.workspace, join(now, name), "write");
      },
      close: () => closeQuietly(held),
    };
    return { ok: true, place };
  } catch (error) {
    const code = errorCode(error);
    // O_DIRECTORY | O_NOFOLLOW on a symlink put in place of a checked directory fails with ENOTDIR or ELOOP.
    if ((code === "ENOTDIR" || code === "ELOOP") && (await lstat(attempted).catch(() => undefined))?.isSymbolicLink())
      return { ok: false, result: errorResult(OUTSIDE_WORKSPACE) };
    if (code === "ENOTDIR" || (code === "EEXIST" && missing.length > 0))
      return { ok: false, result: notADirectory(shown) };
    return { ok: false, result: fsFailure(tool, shown, error) };
  } finally {
    await closeQuietly(handle);
  }
}

/** The fallback without `/proc`: the parents made by path (`mkdir -p`), names reached by the directory's path. */
async function placeByPath(
  tool: string,
  shown: string,
  path: string,
  create: boolean,
): Promise<{ ok: true; place: Place } | { ok: false; result: ToolResult }> {
  const directory = dirname(path);
  if (create) {
    try {
      await mkdir(directory, { recursive: true });
    } catch (error) {
      const code = errorCode(error);
      if (code === "EEXIST" || code === "ENOTDIR") return { ok: false, result: notADirectory(shown) };
      return { ok: false, result: fsFailure(tool, shown, error) };
    }
  }
  const place: Place = {
    at: (name) => join(directory, name),
    real: directory,
    held: false,
    stillAllowed: async () => true,
    close: async () => {},
  };
  return { ok: true, place };
}
