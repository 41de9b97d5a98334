import { randomBytes } from "node:crypto";
import { constants, type Dirent, type Stats } from "node:fs";
import { type FileHandle, link, lstat, mkdir, open, opendir, rename, unlink } from "node:fs/promises";
import { basename, dirname, extname, join } from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import { formatPatch, type StructuredPatchHunk, structuredPatch } from "diff";
import { failure } from "../execute-tool-call.js";
import { boundText, quoteName } from "../internal/describe.js";
import { checkCount, optionError } from "../internal/options.js";
import type { Tool, ToolContext } from "../tool.js";
import { errorResult, newToolResult, silentResult, ToolResult } from "../tool-result.js";
import { findText } from "./find-text.js";
import {
  checkWorkspaceOptions,
  errorCode,
  heldRealPath,
  isAllowedRealPath,
  OUTSIDE_WORKSPACE,
  resolveWorkspacePath,
  type WorkspaceAccess,
  type WorkspaceOptions,
} from "./workspace.js";

/** Options of {@link createFileTools}: the workspace, and limits of what the tools read and touch. */
export interface FileToolsOptions extends WorkspaceOptions {
  /**
   * Most bytes `read_file` returns in one call, counted on what it returns (each line's `N|`
   * prefix and the line feeds between lines included); the rest is cut with a marker that names
   * the `start_line` to read on from. @default 65536
   */
  maxReadBytes?: number;
  /**
   * When given, `read_file`, `write_file`, `edit_file` and `append_file` only touch files whose
   * real path ends in one of these extensions (case-insensitive; `"md"` and `".md"` alike; `""`
   * for files without one). `list_dir` lists everything. @default undefined (any file)
   */
  allowedExtensions?: string[];
}

/**
 * @internal Test seams (never public): called after a path passed the guard and before the tool
 * opens it (`afterCheck`), and after a temporary file is written and before it replaces its
 * target (`beforeCommit`), so a test can swap a directory or fail a write at that exact moment;
 * `withoutProc` runs the tools as where there is no `/proc` (the path-based fallback).
 */
export const FILE_TOOL_HOOKS: unique symbol = Symbol("toolloop.builtin.fileToolHooks");

/** @internal The shape of {@link FILE_TOOL_HOOKS}. */
export interface FileToolHooks {
  /** After the guard accepted `path` (real, absolute) for `access`, before it is opened. */
  afterCheck?(path: string, access: WorkspaceAccess): Promise<void> | void;
  /** After the temporary file `tempPath` (its real path) holds the new content, before it replaces the target. */
  beforeCommit?(tempPath: string): Promise<void> | void;
  /** Act as if `/proc/self/fd` were missing (non-Linux): the path-based checks. @default false */
  withoutProc?: boolean;
}

const WHERE = "createFileTools";
const DEFAULT_MAX_READ_BYTES = 65_536;
/** Largest file `edit_file` loads (it rewrites the whole file). */
export const MAX_EDIT_BYTES = 10 * 1024 * 1024;
/** Most entries `list_dir` reads from one directory. */
export const MAX_LIST_ENTRIES = 1_000;
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
/**
 * Most bytes `read_file` scans of a file whose size reads 0 when it is opened: a file in `/proc`
 * (its size is not known ahead), or an empty file something appends to while it is read.
 */
const MAX_SIZELESS_BYTES = 1024 * 1024;
/** Bytes before `line_offset` that `read_file` keeps, to tell whether the offset splits a character. */
const LEAD_BYTES = 3;
/** Bytes read at a time, and the sample `read_file` judges binary content on. */
const CHUNK_BYTES = 65_536;
const SAMPLE_BYTES = 8_192;
/** More control characters than this share of the sample makes a file binary. */
const MAX_CONTROL_SHARE = 0.1;
/** `O_NOFOLLOW` and `O_NONBLOCK` (a FIFO never blocks the open); 0 where the platform has none. */
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const NONBLOCK = constants.O_NONBLOCK ?? 0;
const DIRECTORY = constants.O_DIRECTORY ?? 0;

interface FileSettings {
  readonly workspace: WorkspaceOptions;
  readonly maxReadBytes: number;
  readonly extensions: ReadonlySet<string> | undefined;
  readonly hooks: FileToolHooks;
}

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
        "per call: a longer file is cut with a note naming the start_line (and line_offset) to continue from.",
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

// ─── Paths ──────────────────────────────────────────────────────────────────────────────────────

type Checked = { ok: true; path: string } | { ok: false; result: ToolResult };

/**
 * The model's `path` through the workspace guard (for each access), then the extension allow-list
 * (`file`: not for list_dir), then the `afterCheck` seam.
 */
async function checkPath(
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
async function isWhatWasChecked(
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
async function kernelPath(settings: FileSettings, handle: FileHandle): Promise<string | undefined> {
  return settings.hooks.withoutProc === true ? undefined : heldRealPath(handle);
}

/**
 * `true` when what `handle` holds may be used for `access`: on Linux its real path as the kernel
 * names it passes the guard (no path is looked up again, so no swap can come between); elsewhere
 * `path` must still name it ({@link isWhatWasChecked}). Any failure to tell refuses.
 */
async function isHeldAllowed(
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
function hardLinked(settings: FileSettings, shown: string, stats: Stats): ToolResult | undefined {
  if (settings.workspace.restrictToWorkspace === false || !stats.isFile() || stats.nlink <= 1) return undefined;
  return errorResult(
    `${quoteName(shown)} has ${stats.nlink} hard links: the file tools refuse a file with more than one name (another one may be outside the workspace)`,
  );
}

const REASONS: ReadonlyMap<string, string> = new Map([
  ["ENOENT", "not found"],
  ["EISDIR", "is a directory"],
  ["ENOTDIR", "a part of the path is not a directory"],
  ["EACCES", "permission denied"],
  ["EPERM", "operation not permitted"],
  ["EEXIST", "already exists"],
  ["ENOSPC", "no space left on the device"],
  ["EROFS", "read-only file system"],
  ["ENAMETOOLONG", "a name in the path is too long"],
  ["ELOOP", OUTSIDE_WORKSPACE],
  ["ENXIO", "not a regular file"],
  ["EBUSY", "busy"],
  ["EMFILE", "too many open files, try again"],
]);

/** An error result for a failed filesystem call: the model's path and a short reason, never the Node message (it holds the real path). */
function fsFailure(tool: string, path: string, error: unknown): ToolResult {
  const code = errorCode(error);
  const reason = (code !== undefined ? REASONS.get(code) : undefined) ?? `failed (${code ?? "unexpected error"})`;
  if (reason === OUTSIDE_WORKSPACE) return failure(tool, "tool_failed", OUTSIDE_WORKSPACE, error);
  return failure(tool, "tool_failed", `${quoteName(path)}: ${reason}`, error);
}

async function closeQuietly(handle: FileHandle | undefined): Promise<void> {
  await handle?.close().catch(() => {});
}

/**
 * Opens an existing regular file for reading (`O_NOFOLLOW`: a symlink in its place is refused),
 * then checks what was opened (see {@link isHeldAllowed}) and refuses a file with several hard links.
 */
async function openForReading(
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

// ─── read_file ──────────────────────────────────────────────────────────────────────────────────

function lineArgument(name: string, value: unknown, least = 1): number | string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "number" && Number.isInteger(value) && value >= least) return value;
  return `${name} must be an integer ≥ ${least}`;
}

/** `true` for content that is not text: a NUL byte, or more than 10 % control characters. */
function looksBinary(sample: Uint8Array): boolean {
  let control = 0;
  for (const byte of sample) {
    if (byte === 0) return true;
    // Tab, line feed, form feed, carriage return and escape (colour codes) occur in text.
    if ((byte < 0x20 && byte !== 9 && byte !== 10 && byte !== 12 && byte !== 13 && byte !== 27) || byte === 0x7f)
      control++;
  }
  return sample.length > 0 && control / sample.length > MAX_CONTROL_SHARE;
}

const isContinuation = (byte: number) => (byte & 0xc0) === 0x80;

/** How many bytes the UTF-8 character led by `byte` has (1 for a byte that leads none). */
function sequenceLength(byte: number): number {
  if (byte >= 0xc2 && byte <= 0xdf) return 2;
  if (byte >= 0xe0 && byte <= 0xef) return 3;
  if (byte >= 0xf0 && byte <= 0xf4) return 4;
  return 1;
}

/**
 * Where the UTF-8 character that `at` splits in `bytes` begins (a lead byte at most 3 bytes back,
 * followed by continuation bytes on both sides of `at`) and ends; `undefined` when `at` splits none.
 * Never looks further back: a long run of stray continuation bytes is invalid anyway, each of them
 * U+FFFD on its own.
 */
function splitCharacter(bytes: Uint8Array, at: number): { start: number; end: number } | undefined {
  if (at <= 0 || at >= bytes.length || !isContinuation(bytes[at] as number)) return undefined;
  for (let back = at - 1; back >= 0 && back >= at - 3; back--) {
    const byte = bytes[back] as number;
    if (isContinuation(byte)) continue;
    const end = back + sequenceLength(byte);
    return end > at ? { start: back, end } : undefined;
  }
  return undefined;
}

/** `at`, or the start of the UTF-8 character it would split. */
function utf8Boundary(bytes: Uint8Array, at: number): number {
  return splitCharacter(bytes, Math.min(at, bytes.length))?.start ?? Math.min(at, bytes.length);
}

/** Bytes decoded at a time by {@link fitUtf8}. */
const FIT_BLOCK_BYTES = 4_096;

/**
 * The longest start of `bytes` that ends between two characters and whose text — decoded, each
 * invalid byte as U+FFFD, 3 bytes in UTF-8 — is at most `room` bytes of UTF-8: the text, and how many
 * of `bytes` it took. Decoded a block at a time (blocks end between characters, so they decode as
 * the whole would), and the block where the room ends by bisection: time linear in `room`.
 */
function fitUtf8(bytes: Uint8Array, room: number): { text: string; taken: number } {
  const pieces: string[] = [];
  let used = 0;
  let taken = 0;
  const decode = (from: number, to: number) => new TextDecoder().decode(bytes.subarray(from, to));
  while (taken < bytes.length) {
    const end = utf8Boundary(bytes, taken + FIT_BLOCK_BYTES);
    const piece = decode(taken, end);
    const size = Buffer.byteLength(piece);
    if (used + size <= room) {
      pieces.push(piece);
      used += size;
      taken = end;
      continue;
    }
    // The room ends in this block: the last cut between characters in it that fits.
    let low = taken;
    let high = end;
    let best = "";
    while (high - low > 1) {
      const middle = (low + high) >>> 1;
      // A cut between characters near the middle: before the character the middle splits, or after
      // it when that one starts at `low`.
      const split = splitCharacter(bytes, middle);
      const cut = split === undefined ? middle : split.start > low ? split.start : split.end;
      if (cut >= high) break;
      const candidate = decode(taken, cut);
      if (used + Buffer.byteLength(candidate) <= room) {
        low = cut;
        best = candidate;
      } else high = cut;
    }
    pieces.push(best);
    taken = low;
    break;
  }
  return { text: pieces.join(""), taken };
}

async function readFile(
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
    return await readLines(settings, opened.handle, shown, { start, end, offset, size }, context.signal);
  } catch (error) {
    return fsFailure("read_file", shown, error);
  } finally {
    await closeQuietly(opened.handle);
  }
}

/** What `read_file` reads: lines `start` to `end`, the first from its byte `offset`, in the first `size` bytes. */
interface LineRange {
  readonly start: number;
  readonly end: number | undefined;
  readonly offset: number;
  readonly size: number;
}

/**
 * Streams the file chunk by chunk: lines before `start` are skipped (never held), lines from
 * `start` are kept until `end`, the end of the file (at most `size` bytes), or `maxReadBytes` of
 * them, counted on the text returned.
 */
async function readLines(
  settings: FileSettings,
  handle: FileHandle,
  shown: string,
  range: LineRange,
  signal: AbortSignal,
): Promise<ToolResult> {
  const { start, end, offset, size } = range;
  const budget = settings.maxReadBytes;
  const decoder = new TextDecoder();
  const out: string[] = [];
  let used = 0;
  let line = 1;
  let parts: Buffer[] = [];
  let partBytes = 0;
  /** Bytes of the current line so far (kept or not). */
  let lineBytes = 0;
  /** The current line has more bytes than were kept. */
  let over = false;
  let position = 0;
  let sampled = false;
  let cut: string | undefined;
  let problem: ToolResult | undefined;
  const binary = () =>
    errorResult(
      `${quoteName(shown)} looks like a binary file (NUL bytes or control characters): read_file only reads text`,
    );
  // Adds the finished line `line` (its bytes in `parts`); returns false when the output is full.
  const finishLine = (): boolean => {
    if (line >= start) {
      let bytes = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, partBytes);
      /** Where `bytes` start in the line. */
      let from = 0;
      if (line === start && offset > 0) {
        if (offset >= lineBytes) {
          problem = errorResult(`line_offset ${offset} is past the end of line ${line} (it has ${lineBytes} bytes)`);
          return false;
        }
        // `bytes` begin up to 3 bytes before the offset: an offset inside a character starts at the next one.
        const context = Math.min(LEAD_BYTES, offset);
        const skip = splitCharacter(bytes, context)?.end ?? context;
        bytes = bytes.subarray(skip);
        from = offset - context + skip;
      }
      const prefix = `${line}|`;
      const joint = out.length > 0 ? 1 : 0;
      // The budget counts what is returned: the `N|` prefix, the line feed that joins the line to
      // the previous one (a file of empty lines is all prefixes), and the text as decoded (an
      // invalid byte is U+FFFD, 3 bytes).
      if (!over) {
        const text = bytes.length === 0 ? "" : decoder.decode(bytes);
        // Valid UTF-8 decodes to as many bytes as it has; only U+FFFD (a bad byte, or one in the
        // file) needs the text counted.
        const cost = joint + prefix.length + (text.includes("\ufffd") ? Buffer.byteLength(text) : bytes.length);
        if (used + cost <= budget) {
          used += cost;
          out.push(`${prefix}${text}`);
          parts = [];
          partBytes = 0;
          lineBytes = 0;
          over = false;
          line++;
          return end === undefined || line <= end;
        }
      }
      if (out.length > 0) {
        cut = `[cut: read_file returns at most ${budget} bytes per call; read the rest with start_line=${line}]`;
        return false;
      }
      // The first line shown is cut to what fits after its prefix (the prefix is always shown).
      const { text, taken } = fitUtf8(bytes, Math.max(0, budget - prefix.length));
      out.push(`${prefix}${text}`);
      cut =
        taken > 0
          ? `[cut: line ${line} is longer than the ${budget} bytes read_file returns per call; read on in it with start_line=${line} and line_offset=${from + taken}, or from the next line with start_line=${line + 1}]`
          : `[cut: line ${line} does not fit in the ${budget} bytes read_file returns per call and was cut; read on with start_line=${line + 1}]`;
      return false;
    }
    parts = [];
    partBytes = 0;
    lineBytes = 0;
    over = false;
    line++;
    return true;
  };
  let pending = false; // the current line has bytes not yet ended by a line feed
  // Keeps `chunk[from, to)` of the current line.
  const keep = (chunk: Buffer, from: number, to: number) => {
    if (to > from) pending = true;
    const before = lineBytes;
    lineBytes += to - from;
    // Keep a line only if it is shown, from its offset, and never more of it than the budget
    // (plus one byte to know it is over).
    if (line < start) return;
    // The start line is kept from its offset, and up to 3 bytes before it (the character it may split).
    const skipped = line === start ? Math.max(0, offset - LEAD_BYTES) : 0;
    const most = budget + 1 + (line === start ? Math.min(LEAD_BYTES, offset) : 0);
    const first = Math.min(to, from + Math.max(0, skipped - before));
    if (to - first > most - partBytes) over = true;
    if (partBytes >= most) return;
    const taken = chunk.subarray(first, Math.min(to, first + most - partBytes));
    if (taken.length === 0) return;
    parts.push(Buffer.from(taken));
    partBytes += taken.length;
  };
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  let ended = false; // stopped before the end of the file
  reading: while (position < size) {
    if (signal.aborted) return errorResult("read_file aborted");
    const { bytesRead } = await handle.read(buffer, 0, Math.min(CHUNK_BYTES, size - position), position);
    if (bytesRead === 0) break;
    position += bytesRead;
    const chunk = buffer.subarray(0, bytesRead);
    if (!sampled) {
      sampled = true;
      if (looksBinary(chunk.subarray(0, SAMPLE_BYTES))) return binary();
    }
    if (chunk.includes(0)) return binary();
    let from = 0;
    for (let newline = chunk.indexOf(10, from); newline !== -1; newline = chunk.indexOf(10, from)) {
      keep(chunk, from, newline);
      from = newline + 1;
      pending = false;
      if (!finishLine()) {
        ended = true;
        break reading;
      }
    }
    keep(chunk, from, chunk.length);
  }
  // The last line of a file that does not end with a line feed.
  if (!ended && pending) finishLine();
  if (problem !== undefined) return problem;
  if (out.length === 0) {
    if (position === 0 && start === 1 && offset === 0) return newToolResult("(empty file)");
    const lines = line - 1;
    return errorResult(
      `start_line ${start} is past the end of ${quoteName(shown)} (it has ${lines} ${lines === 1 ? "line" : "lines"})`,
    );
  }
  if (cut !== undefined) out.push(cut);
  return newToolResult(out.join("\n"));
}

// ─── Writing ────────────────────────────────────────────────────────────────────────────────────

/** The directory a file is written in, held open while the tool creates, links, renames and removes names in it. */
interface Place {
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
async function openPlace(
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

/**
 * Writes `content` (one string, or consecutive parts) to `path` (real, checked) all at once — see
 * {@link writeParts} for how it is encoded: into a new temporary file in the held
 * directory (`O_EXCL | O_NOFOLLOW`), which is checked to be inside what the guard accepts before
 * a byte is written, then renamed over the target (`overwrite`) or hard-linked to it (fails when
 * the target exists, so no check-then-write window), both through the held directory. The target
 * is never partly written; the temporary file is removed on every failure; a target with several
 * hard links is refused.
 */
async function writeAtomically(
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

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

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

async function writeFile(settings: FileSettings, args: Record<string, unknown>): Promise<ToolResult> {
  const { content, overwrite = false } = args;
  if (typeof content !== "string") return errorResult("content must be a string");
  if (typeof overwrite !== "boolean") return errorResult("overwrite must be a boolean");
  const checked = await checkPath(settings, args.path, ["write"], true);
  if (!checked.ok) return checked.result;
  const shown = args.path as string;
  const failed = await writeAtomically(settings, "write_file", shown, checked.path, content, overwrite);
  return failed ?? silentResult(`File written: ${quoteName(shown)} (${Buffer.byteLength(content)} bytes)`);
}

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
async function editDiff(
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
        let keep = at + Math.max(0, room - mark.length - 1);
        const last = text.charCodeAt(keep - 1);
        if (keep > at && last >= 0xd800 && last <= 0xdbff) keep--; // never half a surrogate pair
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

async function editFile(
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

// ─── append_file ────────────────────────────────────────────────────────────────────────────────

async function appendFile(settings: FileSettings, args: Record<string, unknown>): Promise<ToolResult> {
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

// ─── list_dir ───────────────────────────────────────────────────────────────────────────────────

async function listDir(settings: FileSettings, args: Record<string, unknown>): Promise<ToolResult> {
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
