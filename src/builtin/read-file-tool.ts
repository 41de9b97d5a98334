import type { ToolContext } from "../tool.js";
import { errorResult, type ToolResult } from "../tool-result.js";
import { checkPath, closeQuietly, openForReading } from "./file-guard.js";
import type { FileSettings } from "./file-tool-settings.js";
import { fsFailure } from "./fs-failure.js";
import { readImage } from "./read-image.js";
import { readLines } from "./read-lines.js";

/**
 * Most bytes `read_file` scans of a file whose size reads 0 when it is opened: a file in `/proc`
 * (its size is not known ahead), or an empty file something appends to while it is read.
 */
const MAX_SIZELESS_BYTES = 1024 * 1024;

function lineArgument(name: string, value: unknown, least = 1): number | string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "number" && Number.isInteger(value) && value >= least) return value;
  return `${name} must be an integer ≥ ${least}`;
}

/**
 * `read_file { path, start_line?, end_line?, line_offset? }`: lines of a text file as `N|text`,
 * bounded by `maxReadBytes`; a PNG, JPEG, GIF or WebP of at most `maxReadBytes` bytes as an image part.
 */
export async function readFile(
  settings: FileSettings,
  args: Record<string, unknown>,
  context: ToolContext,
): Promise<ToolResult> {
  const start = lineArgument("start_line", args.start_line) ?? 1;
  const end = lineArgument("end_line", args.end_line);
  const offset = lineArgument("line_offset", args.line_offset, 0) ?? 0;
  if (typeof start === "string") return errorResult(start);
  if (typeof end === "string") return errorResult(end);
  if (typeof offset === "string") return errorResult(offset);
  if (end !== undefined && end < start) return errorResult(`end_line (${end}) is before start_line (${start})`);
  const checked = await checkPath(settings, args.path, ["read"], true);
  if (!checked.ok) return checked.result;
  const shown = args.path as string;
  const opened = await openForReading(settings, "read_file", shown, checked.path);
  if (!opened.ok) return opened.result;
  try {
    // Never past the size the file had when it was opened: a file another process keeps
    // appending to would keep a far start_line reading for as long as it grows.
    const size = opened.stats.size > 0 ? opened.stats.size : MAX_SIZELESS_BYTES;
    // An image is shown to the model whole (the line arguments do not apply to it), never as text;
    // told by the first chunk, read once. A file of unknown size (0) is read as text only.
    const { handle } = opened;
    const image =
      opened.stats.size > 0
        ? (first: Buffer) => readImage(handle, shown, first, size, settings.maxReadBytes)
        : undefined;
    return await readLines(settings, handle, shown, { start, end, offset, size }, context.signal, image);
  } catch (error) {
    return fsFailure("read_file", shown, error);
  } finally {
    await closeQuietly(opened.handle);
  }
}
