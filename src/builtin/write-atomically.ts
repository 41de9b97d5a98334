import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { type FileHandle, link, lstat, open, rename, unlink } from "node:fs/promises";
import { basename, join } from "node:path";
import { isHighSurrogate, isLowSurrogate, quoteName } from "../internal/describe.js";
import { errorResult, type ToolResult } from "../tool-result.js";
import { closeQuietly, hardLinked, isHeldAllowed, NOFOLLOW } from "./file-guard.js";
import type { FileSettings } from "./file-tool-settings.js";
import { fsFailure } from "./fs-failure.js";
import { errorCode, isAllowedRealPath, OUTSIDE_WORKSPACE } from "./workspace.js";
import { openPlace } from "./write-place.js";

/**
 * Writes `content` (one string, or consecutive parts) to `path` (real, checked) all at once — see
 * {@link writeParts} for how it is encoded: into a new temporary file in the held
 * directory (`O_EXCL | O_NOFOLLOW`), which is checked to be inside what the guard accepts before
 * a byte is written, then renamed over the target (`overwrite`) or hard-linked to it (fails when
 * the target exists, so no check-then-write window), both through the held directory. The target
 * is never partly written; the temporary file is removed on every failure; a target with several
 * hard links is refused.
 */
export async function writeAtomically(
  settings: FileSettings,
  tool: string,
  shown: string,
  path: string,
  content: string | readonly string[],
  overwrite: boolean,
): Promise<ToolResult | undefined> {
  const opened = await openPlace(settings, tool, shown, path);
  if (!opened.ok) return opened.result;
  const place = opened.place;
  const tempName = `.toolloop-${randomBytes(8).toString("hex")}.tmp`;
  const temp = place.at(tempName);
  const target = place.at(basename(path));
  let handle: FileHandle | undefined;
  let created = false;
  try {
    // On Linux the temporary file is judged before it exists: never even an empty one outside.
    if (place.held && !(await isAllowedRealPath(settings.workspace, join(place.real, tempName), "write")))
      return errorResult(OUTSIDE_WORKSPACE);
    let mode = 0o644;
    // lstat through the held directory: a symlink put in place of the target is not followed.
    const existing = await lstat(target).catch(() => undefined);
    if (existing !== undefined) {
      if (!overwrite) return errorResult(`${quoteName(shown)} already exists: set overwrite to true to replace it`);
      if (!existing.isFile()) return errorResult(`${quoteName(shown)} is not a regular file`);
      const linked = hardLinked(settings, shown, existing);
      if (linked !== undefined) return linked;
      mode = existing.mode & 0o777;
    }
    handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW, mode);
    created = true;
    if (!(await isHeldAllowed(settings, handle, temp, "write"))) return errorResult(OUTSIDE_WORKSPACE);
    await handle.chmod(mode); // the umask may have narrowed it
    await writeParts(handle, typeof content === "string" ? [content] : content);
    await handle.sync();
    await handle.close();
    handle = undefined;
    await settings.hooks.beforeCommit?.(join(place.real, tempName));
    if (!(await place.stillAllowed(basename(path)))) return errorResult(OUTSIDE_WORKSPACE);
    if (overwrite) {
      await rename(temp, target);
    } else {
      try {
        await link(temp, target);
      } catch (error) {
        const code = errorCode(error);
        if (code === "EEXIST")
          return errorResult(`${quoteName(shown)} already exists: set overwrite to true to replace it`);
        // A filesystem without hard links: check, then rename (a narrow window, only on such filesystems).
        if (code !== "EPERM" && code !== "ENOTSUP" && code !== "ENOSYS" && code !== "EOPNOTSUPP") throw error;
        if ((await lstat(target).catch(() => undefined)) !== undefined) {
          return errorResult(`${quoteName(shown)} already exists: set overwrite to true to replace it`);
        }
        await rename(temp, target);
      }
    }
    return undefined;
  } catch (error) {
    return fsFailure(tool, shown, error);
  } finally {
    await closeQuietly(handle);
    // After a rename there is nothing left to remove (ENOENT, ignored); after a link, the second name goes.
    if (created) await unlink(temp).catch(() => {});
    await place.close();
  }
}

/** Characters of text encoded and written at a time by {@link writeParts}. */
const WRITE_CHARS = 1 << 20;

/**
 * Writes the parts of a text one after the other from the start of the file, as UTF-8, encoding at
 * most {@link WRITE_CHARS} characters at a time (with a turn of the event loop for each write), so a
 * 10 MiB text is never encoded in one go. The bytes are those of the joined text: a surrogate pair
 * is never split, also where one part ends with its first half and the next begins with its second.
 */
async function writeParts(handle: FileHandle, parts: readonly string[]): Promise<void> {
  let position = 0;
  let carry = "";
  for (const [number, part] of parts.entries()) {
    let text = carry + part;
    carry = "";
    const next = parts[number + 1];
    if (next !== undefined && isHighSurrogate(text.charCodeAt(text.length - 1)) && isLowSurrogate(next.charCodeAt(0))) {
      carry = text.slice(-1);
      text = text.slice(0, -1);
    }
    for (let at = 0; at < text.length; ) {
      let end = Math.min(text.length, at + WRITE_CHARS);
      if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end--;
      const bytes = Buffer.from(text.slice(at, end), "utf8");
      for (let written = 0; written < bytes.length; ) {
        const { bytesWritten } = await handle.write(bytes, written, bytes.length - written, position);
        written += bytesWritten;
        position += bytesWritten;
      }
      at = end;
    }
  }
}
