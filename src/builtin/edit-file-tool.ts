import type { FileHandle } from "node:fs/promises";
import { basename } from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import { isHighSurrogate, isLowSurrogate, quoteName } from "../internal/describe.js";
import type { ToolContext } from "../tool.js";
import { errorResult, ToolResult } from "../tool-result.js";
import { editDiff } from "./edit-diff.js";
import { checkPath, closeQuietly, openForReading } from "./file-guard.js";
import { CHUNK_BYTES, type FileSettings } from "./file-tool-settings.js";
import { findText } from "./find-text.js";
import { fsFailure } from "./fs-failure.js";
import { writeAtomically } from "./write-atomically.js";

/** Largest file `edit_file` loads (it rewrites the whole file). */
export const MAX_EDIT_BYTES = 10 * 1024 * 1024;

/**
 * The file `handle` holds as text, read and decoded a chunk at a time (never 10 MiB copied and
 * decoded in one go on the event loop): `large` past `max` bytes (a file that grows while read stays
 * bounded), `binary` with a NUL byte anywhere, `invalid` when it is not UTF-8.
 */
async function readText(
  handle: FileHandle,
  max: number,
): Promise<{ ok: true; text: string } | { ok: false; problem: "large" | "binary" | "invalid" }> {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const pieces: string[] = [];
  let valid = true;
  let length = 0;
  const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  for (;;) {
    const { bytesRead } = await handle.read(chunk, 0, CHUNK_BYTES, length);
    if (bytesRead === 0) break;
    length += bytesRead;
    if (length > max) return { ok: false, problem: "large" };
    const bytes = chunk.subarray(0, bytesRead);
    if (bytes.includes(0)) return { ok: false, problem: "binary" };
    // After a decoding error, read on: a NUL byte later makes it binary rather than invalid.
    if (valid) {
      try {
        pieces.push(decoder.decode(bytes, { stream: true }));
      } catch {
        valid = false;
      }
    }
  }
  try {
    if (valid) pieces.push(decoder.decode());
  } catch {
    valid = false;
  }
  return valid ? { ok: true, text: pieces.join("") } : { ok: false, problem: "invalid" };
}

// ─── edit_file ──────────────────────────────────────────────────────────────────────────────────

/** Thrown by {@link findOnce}'s pause when the call's signal aborted. */
class EditAborted extends Error {}

/**
 * Where `needle` occurs in `text`: the first index, and whether there are more (non-overlapping).
 * A linear search done in slices ({@link findText}; `String#indexOf` can take seconds on one
 * hostile `old_text`), with a turn of the event loop between slices; stops with
 * {@link EditAborted} when `signal` aborts.
 */
async function findOnce(
  text: string,
  needle: string,
  signal: AbortSignal,
): Promise<{ index: number; count: 0 | 1 | 2 }> {
  const pause = async () => {
    await nextTurn();
    if (signal.aborted) throw new EditAborted();
  };
  const index = await findText(text, needle, 0, { pause });
  if (index === -1) return { index, count: 0 };
  return { index, count: (await findText(text, needle, index + needle.length, { pause })) === -1 ? 1 : 2 };
}

/**
 * `true` when replacing `before[index, index + removed)` by `added` leaves half of a character of
 * the file alone: the match begins with the second half of a surrogate pair (or ends with the
 * first) and what comes next to the other half is not its match. A file read as valid UTF-8 holds
 * whole pairs only, and a lone half would be written as U+FFFD: a character outside old_text lost.
 * (A match may still replace half a pair by another half: "\ude00" by "\ude01" turns 😀 into 😁.)
 */
function splitsCharacter(before: string, index: number, removed: number, added: string): boolean {
  const end = index + removed;
  const first = added.length > 0 ? added.charCodeAt(0) : before.charCodeAt(end);
  const last = added.length > 0 ? added.charCodeAt(added.length - 1) : before.charCodeAt(index - 1);
  return (
    (isHighSurrogate(before.charCodeAt(index - 1)) && !isLowSurrogate(first)) ||
    (isLowSurrogate(before.charCodeAt(end)) && !isHighSurrogate(last))
  );
}

/** `edit_file { path, old_text, new_text }`: the one exact match of `old_text` replaced, the file written at once; the user sees a diff. */
export async function editFile(
  settings: FileSettings,
  args: Record<string, unknown>,
  context: ToolContext,
): Promise<ToolResult> {
  const { old_text: oldText, new_text: newText } = args;
  if (typeof oldText !== "string" || typeof newText !== "string")
    return errorResult("old_text and new_text must be strings");
  if (oldText === "") return errorResult("old_text is empty: give the exact text to replace");
  const signal = context.signal;
  const aborted = () => errorResult("edit_file aborted: the file was not changed");
  if (signal.aborted) return aborted();
  const checked = await checkPath(settings, args.path, ["read", "write"], true);
  if (!checked.ok) return checked.result;
  const shown = args.path as string;
  const opened = await openForReading(settings, "edit_file", shown, checked.path);
  if (!opened.ok) return opened.result;
  let before: string;
  try {
    if (opened.stats.size > MAX_EDIT_BYTES) {
      return errorResult(
        `${quoteName(shown)} is too large to edit (${opened.stats.size} bytes; at most ${MAX_EDIT_BYTES})`,
      );
    }
    const read = await readText(opened.handle, MAX_EDIT_BYTES);
    if (!read.ok && read.problem === "large") {
      return errorResult(`${quoteName(shown)} is too large to edit (more than ${MAX_EDIT_BYTES} bytes)`);
    }
    if (!read.ok && read.problem === "binary")
      return errorResult(`${quoteName(shown)} looks like a binary file: edit_file only edits text`);
    if (!read.ok) return errorResult(`${quoteName(shown)} is not valid UTF-8: edit_file would change its other bytes`);
    before = read.text;
  } catch (error) {
    return fsFailure("edit_file", shown, error);
  } finally {
    await closeQuietly(opened.handle);
  }
  if (signal.aborted) return aborted();
  let found: { index: number; count: 0 | 1 | 2 };
  try {
    found = await findOnce(before, oldText, signal);
  } catch (error) {
    if (error instanceof EditAborted) return aborted();
    throw error;
  }
  const { index, count } = found;
  if (count === 0) {
    return errorResult(
      `old_text was not found in ${quoteName(shown)}: it must match the file exactly (spaces, indentation, line breaks); read the file and copy the text`,
    );
  }
  if (count > 1) {
    return errorResult(
      `old_text matches several places in ${quoteName(shown)}: include more surrounding lines so that it matches exactly one`,
    );
  }
  if (splitsCharacter(before, index, oldText.length, newText)) {
    return errorResult(
      `old_text matches half of a character in ${quoteName(shown)} (one half of a UTF-16 surrogate pair) and new_text does not complete it: include the whole character in old_text`,
    );
  }
  // Slices, not String#replace: `$&` and `$1` in the model's text stay as written. Written as its
  // three parts, so the new file is never one more 10 MiB string made on the event loop.
  const after = [before.slice(0, index), newText, before.slice(index + oldText.length)];
  if (signal.aborted) return aborted();
  const failed = await writeAtomically(settings, "edit_file", shown, checked.path, after, true);
  if (failed !== undefined) return failed;
  return new ToolResult({
    forLLM: `File edited: ${quoteName(shown)}`,
    forUser: await editDiff(basename(shown), before, newText, index, oldText.length),
  });
}
