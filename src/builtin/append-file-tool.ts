import { constants } from "node:fs";
import { type FileHandle, open, unlink } from "node:fs/promises";
import { basename } from "node:path";
import { quoteName } from "../internal/describe.js";
import { errorResult, silentResult, type ToolResult } from "../tool-result.js";
import { checkPath, closeQuietly, hardLinked, isHeldAllowed, NOFOLLOW, NONBLOCK } from "./file-guard.js";
import type { FileSettings } from "./file-tool-settings.js";
import { fsFailure } from "./fs-failure.js";
import { errorCode, OUTSIDE_WORKSPACE } from "./workspace.js";
import { openPlace } from "./write-place.js";

/** `append_file { path, content }`: `content` added at the end of the file, which is created when missing. */
export async function appendFile(settings: FileSettings, args: Record<string, unknown>): Promise<ToolResult> {
  const { content } = args;
  if (typeof content !== "string") return errorResult("content must be a string");
  const checked = await checkPath(settings, args.path, ["write"], true);
  if (!checked.ok) return checked.result;
  const shown = args.path as string;
  const path = checked.path;
  const opened = await openPlace(settings, "append_file", shown, path);
  if (!opened.ok) return opened.result;
  const place = opened.place;
  const target = place.at(basename(path));
  let handle: FileHandle | undefined;
  let created = false;
  try {
    const flags = constants.O_WRONLY | constants.O_APPEND | NOFOLLOW | NONBLOCK;
    try {
      handle = await open(target, flags);
    } catch (error) {
      if (errorCode(error) !== "ENOENT") throw error;
      // Created here with O_EXCL, so a refusal below removes only a file this call made.
      handle = await open(target, flags | constants.O_CREAT | constants.O_EXCL, 0o644);
      created = true;
    }
    if (!(await isHeldAllowed(settings, handle, target, "write"))) {
      await closeQuietly(handle);
      handle = undefined;
      if (created) await unlink(target).catch(() => {});
      return errorResult(OUTSIDE_WORKSPACE);
    }
    const stats = await handle.stat();
    if (!stats.isFile()) return errorResult(`${quoteName(shown)} is not a regular file`);
    const linked = hardLinked(settings, shown, stats);
    if (linked !== undefined) return linked;
    await handle.writeFile(content, "utf8");
  } catch (error) {
    return fsFailure("append_file", shown, error);
  } finally {
    await closeQuietly(handle);
    await place.close();
  }
  return silentResult(`Appended ${Buffer.byteLength(content)} bytes to ${quoteName(shown)}`);
}
