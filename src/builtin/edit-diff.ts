import { setImmediate as nextTurn } from "node:timers/promises";
import { formatPatch, type StructuredPatchHunk, structuredPatch } from "diff";
import { boundText, wholeEnd } from "../internal/describe.js";

/** Longest diff shown to the user by `edit_file`. */
const MAX_DIFF_CHARS = 50_000;
/** Lines of context around a change in `edit_file`'s diff. */
const DIFF_CONTEXT = 3;
// The `diff` package's line diff runs on the event loop, in time that grows with lines × edits (39
// KiB of arguments once held it 44 s, and no timeout could fire). A change past any of these bounds
// is shown as all its old lines removed and all its new lines added, at a cost linear in its size.
/** Most characters of the old and new regions together that are diffed line by line. */
const MAX_DIFF_INPUT_CHARS = 256 * 1024;
/** Most lines of the old and new regions together that are diffed line by line. */
const MAX_DIFF_LINES = 10_000;
/** The diff's `maxEditLength`: most lines removed plus added in the smallest diff it looks for. */
const MAX_DIFF_EDITS = 200;
/** The diff's `timeout` in ms: a safety net only, the bounds above keep it far below on an idle machine. */
const DIFF_TIMEOUT_MS = 50;
/** Characters scanned between two turns of the event loop where a whole file's lines are counted. */
const SCAN_CHARS = 1 << 20;

/** Line feeds in `text[from, to)`, counted a slice at a time with a turn of the event loop between slices. */
async function countLineFeeds(text: string, from: number, to: number): Promise<number> {
  let count = 0;
  for (let start = from; start < to; start += SCAN_CHARS) {
    if (start > from) await nextTurn();
    const end = Math.min(to, start + SCAN_CHARS);
    for (let at = start; at < end; at++) if (text.charCodeAt(at) === 10) count++;
  }
  return count;
}

/** Lines in `text[from, to)`, a range that starts a line: its line feeds, and one more for a last line without one. */
async function countLines(text: string, from: number, to: number): Promise<number> {
  if (to <= from) return 0;
  return (await countLineFeeds(text, from, to)) + (text.charCodeAt(to - 1) === 10 ? 0 : 1);
}

/** Where a replacement's diff reads: line starts and ends in `before`, `shift` from there on in `after`. */
interface EditSpan {
  /** Start of the first line of context (up to {@link DIFF_CONTEXT} lines before `lineStart`). */
  readonly regionStart: number;
  /** Start of the line where the replaced text begins. */
  readonly lineStart: number;
  /** End (after its line feed) of the line holding the first character after the replaced text. */
  readonly lineEnd: number;
  /** End of the last line of context after `lineEnd`. */
  readonly contextEnd: number;
  /** `new_text.length - old_text.length`: where `before[lineEnd]` is in `after`. */
  readonly shift: number;
}

/** The lines around one replacement, found with native searches only (a file may be one 10 MiB line). */
function editSpan(before: string, index: number, removed: number, added: number): EditSpan {
  const lineStart = index === 0 ? 0 : before.lastIndexOf("\n", index - 1) + 1;
  let regionStart = lineStart;
  for (let lines = 0; lines < DIFF_CONTEXT && regionStart > 0; lines++) {
    // before[regionStart - 1] ends the line above; that line starts after the line feed before it.
    regionStart = regionStart < 2 ? 0 : before.lastIndexOf("\n", regionStart - 2) + 1;
  }
  // The first line feed at or after the replaced text: in `after` the new text runs on to it (old
  // text that ends with a line feed may be replaced by new text that does not).
  const feed = before.indexOf("\n", index + removed);
  const lineEnd = feed === -1 ? before.length : feed + 1;
  let contextEnd = lineEnd;
  for (let lines = 0; lines < DIFF_CONTEXT && contextEnd < before.length; lines++) {
    const next = before.indexOf("\n", contextEnd);
    contextEnd = next === -1 ? before.length : next + 1;
  }
  return { regionStart, lineStart, lineEnd, contextEnd, shift: added - removed };
}

/**
 * The unified diff of one replacement shown to the user: the smallest line diff of the changed
 * lines and their context when the change is small enough to look for it quickly (see
 * {@link MAX_DIFF_EDITS}), else {@link wholeLinesDiff}. Either is cut at {@link MAX_DIFF_CHARS}.
 */
export async function editDiff(
  name: string,
  before: string,
  newText: string,
  index: number,
  removed: number,
): Promise<string> {
  const span = editSpan(before, index, removed, newText.length);
  // `after[from, to)` around the new text, from its parts: the new file is never made one string here.
  const after = (from: number, to: number) =>
    before.slice(from, index) + newText + before.slice(index + removed, to - span.shift);
  const offset = await countLineFeeds(before, 0, span.regionStart);
  const oldChars = span.contextEnd - span.regionStart;
  const newChars = oldChars + span.shift;
  if (oldChars + newChars <= MAX_DIFF_INPUT_CHARS) {
    const oldRegion = before.slice(span.regionStart, span.contextEnd);
    const newRegion = after(span.regionStart, span.contextEnd + span.shift);
    const lines =
      (await countLines(oldRegion, 0, oldRegion.length)) + (await countLines(newRegion, 0, newRegion.length));
    const patch =
      lines <= MAX_DIFF_LINES
        ? structuredPatch(name, name, oldRegion, newRegion, undefined, undefined, {
            context: DIFF_CONTEXT,
            maxEditLength: MAX_DIFF_EDITS,
            timeout: DIFF_TIMEOUT_MS,
          })
        : undefined;
    if (patch !== undefined) {
      for (const hunk of patch.hunks) {
        hunk.oldStart += offset;
        hunk.newStart += offset;
      }
      return boundText(formatPatch(patch), MAX_DIFF_CHARS);
    }
  }
  return wholeLinesDiff(name, before, after(span.lineStart, span.lineEnd + span.shift), span, offset);
}

/**
 * A unified diff of one replacement that is not the smallest: one hunk, the context, every line
 * the replacement touches removed, then every line it makes added — built in time linear in the
 * change, and only up to {@link MAX_DIFF_CHARS}; a first line says so.
 */
async function wholeLinesDiff(
  name: string,
  before: string,
  added: string,
  span: EditSpan,
  offset: number,
): Promise<string> {
  const { regionStart, lineStart, lineEnd, contextEnd } = span;
  const lines: string[] = [];
  let room = MAX_DIFF_CHARS;
  let cut = false;
  // The lines of text[from, to) (a range of whole lines), each after `mark`, while there is room.
  const add = (mark: string, text: string, from: number, to: number) => {
    for (let at = from; at < to && !cut; ) {
      const feed = text.indexOf("\n", at);
      const end = feed === -1 || feed >= to ? to : feed;
      const width = mark.length + end - at + 1;
      if (width > room) {
        const roomEnd = at + Math.max(0, room - mark.length - 1);
        const keep = roomEnd > at ? wholeEnd(text, roomEnd) : roomEnd; // never half a surrogate pair
        lines.push(`${mark}${text.slice(at, keep)}`);
        cut = true;
        return;
      }
      lines.push(`${mark}${text.slice(at, end)}`);
      room -= width;
      if (end === to && text.charCodeAt(to - 1) !== 10) lines.push("\\ No newline at end of file");
      at = end + 1;
    }
  };
  add(" ", before, regionStart, lineStart);
  add("-", before, lineStart, lineEnd);
  add("+", added, 0, added.length);
  add(" ", before, lineEnd, contextEnd);
  const leading = await countLines(before, regionStart, lineStart);
  const trailing = await countLines(before, lineEnd, contextEnd);
  const removedLines = await countLines(before, lineStart, lineEnd);
  const addedLines = await countLines(added, 0, added.length);
  const hunk: StructuredPatchHunk = {
    oldStart: offset + 1,
    oldLines: leading + removedLines + trailing,
    newStart: offset + 1,
    newLines: leading + addedLines + trailing,
    lines,
  };
  const note =
    `[the change is too large to compare line by line: its ${removedLines} old ${removedLines === 1 ? "line is" : "lines are"} ` +
    `shown removed and its ${addedLines} new ${addedLines === 1 ? "line" : "lines"} added]`;
  const patch = formatPatch({
    oldFileName: name,
    newFileName: name,
    oldHeader: undefined,
    newHeader: undefined,
    hunks: [hunk],
  });
  return `${note}\n${patch}${cut ? `… [the diff is cut at ${MAX_DIFF_CHARS} characters]\n` : ""}`;
}
