import { StringDecoder } from "node:string_decoder";
import { wholeEnd } from "../internal/describe.js";

// The output of a command as the model reads it: each stream kept up to a limit, the rest counted.

/**
 * One output stream, kept up to `limit` characters; the rest is only counted, so a flood (`yes`)
 * costs no more memory than the limit.
 */
export class BoundedText {
  readonly #decoder = new StringDecoder("utf8");
  readonly #limit: number;
  /** The first `limit` characters (or fewer). */
  kept = "";
  /** How many characters the stream had in all. */
  total = 0;
  /** The stream's last character (`""` while empty). */
  last = "";

  constructor(limit: number) {
    this.#limit = limit;
  }

  write(chunk: Buffer): void {
    this.#add(this.#decoder.write(chunk));
  }

  end(): void {
    this.#add(this.#decoder.end());
  }

  #add(text: string): void {
    if (text === "") return;
    this.total += text.length;
    this.last = text.charAt(text.length - 1);
    const room = this.#limit - this.kept.length;
    if (room > 0) this.kept += text.length <= room ? text : text.slice(0, room);
  }
}

/** stdout, then `STDERR:` and stderr, cut at `max` characters with a count of the rest; `(no output)` when both are empty. */
export function formatOutput(stdout: BoundedText, stderr: BoundedText, max: number): string {
  let kept = stdout.kept;
  let total = stdout.total;
  if (stderr.total > 0) {
    const header = stdout.total === 0 || stdout.last === "\n" ? "STDERR:\n" : "\nSTDERR:\n";
    kept += header + stderr.kept;
    total += header.length + stderr.total;
  }
  if (total === 0) return "(no output)";
  if (total <= max) return kept;
  const cut = wholeEnd(kept, max); // never end on half a surrogate pair
  return `${kept.slice(0, cut)}\n... (truncated, ${total - cut} more chars)`;
}
