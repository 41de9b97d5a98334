import type { FileHandle } from "node:fs/promises";
import { quoteName } from "../internal/describe.js";
import { errorResult, newToolResult, type ToolResult } from "../tool-result.js";
import { CHUNK_BYTES, type FileSettings } from "./file-tool-settings.js";
import { fitUtf8, splitCharacter } from "./text-boundaries.js";

/** Bytes before `line_offset` that `read_file` keeps, to tell whether the offset splits a character. */
const LEAD_BYTES = 3;
/** The sample `read_file` judges binary content on. */
const SAMPLE_BYTES = 8_192;
/** More control characters than this share of the sample makes a file binary. */
const MAX_CONTROL_SHARE = 0.1;

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

/** What `read_file` reads: lines `start` to `end`, the first from its byte `offset`, in the first `size` bytes. */
export interface LineRange {
  readonly start: number;
  readonly end: number | undefined;
  readonly offset: number;
  readonly size: number;
}

/**
 * The lines one `read_file` call returns, collected as the file streams by: lines before `start`
 * are skipped (never held), lines from `start` are kept until `end`, or `budget` bytes of them,
 * counted on the text returned.
 */
class LineCollector {
  /** The lines shown so far, as `N|text`. */
  readonly out: string[] = [];
  /** The number of the current line. */
  line = 1;
  /** The current line has bytes not yet ended by a line feed. */
  pending = false;
  private readonly range: LineRange;
  private readonly budget: number;
  private readonly decoder = new TextDecoder();
  private used = 0;
  private parts: Buffer[] = [];
  private partBytes = 0;
  /** Bytes of the current line so far (kept or not). */
  private lineBytes = 0;
  /** The current line has more bytes than were kept. */
  private over = false;
  /** The marker that ends the output when it stopped before the end of what was asked. */
  private cut: string | undefined;
  /** The error the call answers instead of lines (a `line_offset` past its line's end). */
  private problem: ToolResult | undefined;

  constructor(range: LineRange, budget: number) {
    this.range = range;
    this.budget = budget;
  }

  /** Keeps `chunk[from, to)` of the current line. */
  keep(chunk: Buffer, from: number, to: number): void {
    const { start, offset } = this.range;
    if (to > from) this.pending = true;
    const before = this.lineBytes;
    this.lineBytes += to - from;
    // Keep a line only if it is shown, from its offset, and never more of it than the budget
    // (plus one byte to know it is over).
    if (this.line < start) return;
    // The start line is kept from its offset, and up to 3 bytes before it (the character it may split).
    const skipped = this.line === start ? Math.max(0, offset - LEAD_BYTES) : 0;
    const most = this.budget + 1 + (this.line === start ? Math.min(LEAD_BYTES, offset) : 0);
    const first = Math.min(to, from + Math.max(0, skipped - before));
    if (to - first > most - this.partBytes) this.over = true;
    if (this.partBytes >= most) return;
    const taken = chunk.subarray(first, Math.min(to, first + most - this.partBytes));
    if (taken.length === 0) return;
    this.parts.push(Buffer.from(taken));
    this.partBytes += taken.length;
  }

  /** Adds the finished current line (its bytes kept by {@link keep}); returns false when the output is full. */
  finishLine(): boolean {
    const { end } = this.range;
    if (this.line < this.range.start) {
      this.nextLine();
      return true;
    }
    const kept = this.keptBytes();
    if (kept === undefined) return false;
    const { bytes, from } = kept;
    const prefix = `${this.line}|`;
    const joint = this.out.length > 0 ? 1 : 0;
    // The budget counts what is returned: the `N|` prefix, the line feed that joins the line to
    // the previous one (a file of empty lines is all prefixes), and the text as decoded (an
    // invalid byte is U+FFFD, 3 bytes).
    if (!this.over) {
      const text = bytes.length === 0 ? "" : this.decoder.decode(bytes);
      // Valid UTF-8 decodes to as many bytes as it has; only U+FFFD (a bad byte, or one in the
      // file) needs the text counted.
      const cost = joint + prefix.length + (text.includes("\ufffd") ? Buffer.byteLength(text) : bytes.length);
      if (this.used + cost <= this.budget) {
        this.used += cost;
        this.out.push(`${prefix}${text}`);
        this.nextLine();
        return end === undefined || this.line <= end;
      }
    }
    if (this.out.length > 0) {
      this.cut = `[cut: read_file returns at most ${this.budget} bytes per call; read the rest with start_line=${this.line}]`;
      return false;
    }
    this.cutFirstLine(bytes, from, prefix);
    return false;
  }

  /**
   * The bytes kept of the current (shown) line, and where they start in it: the start line from
   * its offset (an offset inside a character starts at the next one); `undefined` after recording
   * the problem of an offset past the line's end.
   */
  private keptBytes(): { bytes: Buffer; from: number } | undefined {
    const { start, offset } = this.range;
    const parts = this.parts;
    const bytes = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, this.partBytes);
    if (this.line !== start || offset === 0) return { bytes, from: 0 };
    if (offset >= this.lineBytes) {
      this.problem = errorResult(
        `line_offset ${offset} is past the end of line ${this.line} (it has ${this.lineBytes} bytes)`,
      );
      return undefined;
    }
    // `bytes` begin up to 3 bytes before the offset: an offset inside a character starts at the next one.
    const context = Math.min(LEAD_BYTES, offset);
    const skip = splitCharacter(bytes, context)?.end ?? context;
    return { bytes: bytes.subarray(skip), from: offset - context + skip };
  }

  /** The first line shown is cut to what fits after its prefix (the prefix is always shown). */
  private cutFirstLine(bytes: Buffer, from: number, prefix: string): void {
    const { budget, line } = this;
    const { text, taken } = fitUtf8(bytes, Math.max(0, budget - prefix.length));
    this.out.push(`${prefix}${text}`);
    this.cut =
      taken > 0
        ? `[cut: line ${line} is longer than the ${budget} bytes read_file returns per call; read on in it with start_line=${line} and line_offset=${from + taken}, or from the next line with start_line=${line + 1}]`
        : `[cut: line ${line} does not fit in the ${budget} bytes read_file returns per call and was cut; read on with start_line=${line + 1}]`;
  }

  private nextLine(): void {
    this.parts = [];
    this.partBytes = 0;
    this.lineBytes = 0;
    this.over = false;
    this.line++;
  }

  /** The call's answer once reading stopped, `position` bytes into the file. */
  result(shown: string, position: number): ToolResult {
    const { start, offset } = this.range;
    if (this.problem !== undefined) return this.problem;
    if (this.out.length === 0) {
      if (position === 0 && start === 1 && offset === 0) return newToolResult("(empty file)");
      const lines = this.line - 1;
      return errorResult(
        `start_line ${start} is past the end of ${quoteName(shown)} (it has ${lines} ${lines === 1 ? "line" : "lines"})`,
      );
    }
    if (this.cut !== undefined) this.out.push(this.cut);
    return newToolResult(this.out.join("\n"));
  }
}

/**
 * Streams the file chunk by chunk into a {@link LineCollector}: lines `start` to `end`, up to the
 * end of the file (at most `size` bytes) or `maxReadBytes` of them, counted on the text returned.
 * `other`, given the first chunk, may answer instead (an image), before the binary check.
 */
export async function readLines(
  settings: FileSettings,
  handle: FileHandle,
  shown: string,
  range: LineRange,
  signal: AbortSignal,
  other?: (first: Buffer) => Promise<ToolResult | undefined>,
): Promise<ToolResult> {
  const { size } = range;
  const lines = new LineCollector(range, settings.maxReadBytes);
  const binary = () =>
    errorResult(
      `${quoteName(shown)} looks like a binary file (NUL bytes or control characters): read_file only reads text`,
    );
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  let position = 0;
  let sampled = false;
  let ended = false; // stopped before the end of the file
  reading: while (position < size) {
    if (signal.aborted) return errorResult("read_file aborted");
    const { bytesRead } = await handle.read(buffer, 0, Math.min(CHUNK_BYTES, size - position), position);
    if (bytesRead === 0) break;
    position += bytesRead;
    const chunk = buffer.subarray(0, bytesRead);
    if (!sampled) {
      sampled = true;
      const answer = other === undefined ? undefined : await other(chunk);
      if (answer !== undefined) return answer;
      if (looksBinary(chunk.subarray(0, SAMPLE_BYTES))) return binary();
    }
    if (chunk.includes(0)) return binary();
    let from = 0;
    for (let newline = chunk.indexOf(10, from); newline !== -1; newline = chunk.indexOf(10, from)) {
      lines.keep(chunk, from, newline);
      from = newline + 1;
      lines.pending = false;
      if (!lines.finishLine()) {
        ended = true;
        break reading;
      }
    }
    lines.keep(chunk, from, chunk.length);
  }
  // The last line of a file that does not end with a line feed.
  if (!ended && lines.pending) lines.finishLine();
  return lines.result(shown, position);
}
