import { setImmediate as nextTurn } from "node:timers/promises";

/** What {@link prettyJson} made of a JSON text. */
export interface PrettyJson {
  /** The text pretty-printed with two spaces, at most `maxChars` characters of it. */
  readonly text: string;
  /** `true` when the pretty-printed text goes on past `maxChars` (nothing of the rest was made). */
  readonly cut: boolean;
}

/** Input read plus output written between two turns of the event loop. */
const SLICE_CHARS = 1 << 16;
/** The longest token read at once: an escape (`\u0041`) or a literal (`false`). */
const LOOKAHEAD = 6;

/**
 * What comes next in the text: `value` (the top one, an element after `,`, a member's after `:`),
 * `first-element` (after `[`: `]` or a value), `first-key` (after `{`: `}` or a key), `key` (after
 * `,` in an object), `colon` (after a key), `after` (after a value: `,`, the end of its container,
 * or of the text); inside a string or a number (both copied as written, a long one a piece at a
 * time): `in-string`, `in-number`.
 */
type Expect = "value" | "first-element" | "first-key" | "key" | "colon" | "after" | "in-string" | "in-number";

/**
 * Where a number is in JSON's grammar: after `-`, after a leading `0`, in the integer digits, after
 * `.`, in the fraction, after `e`, after the exponent's sign, in the exponent.
 */
type NumberState = "sign" | "zero" | "int" | "dot" | "frac" | "e" | "exp-sign" | "exp";

type Step = "more" | "done" | "full" | "invalid";

const LITERALS = ["true", "false", "null"] as const;
const HEX4 = /^[0-9a-fA-F]{4}$/;

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;

/** The state after `c` in a number in state `state`; `undefined` when `c` does not continue it. */
function nextNumberState(state: NumberState, c: number): NumberState | undefined {
  switch (state) {
    case "sign":
      return c === 0x30 ? "zero" : isDigit(c) ? "int" : undefined;
    case "zero":
    case "int":
      if (state === "int" && isDigit(c)) return "int";
      return c === 0x2e ? "dot" : c === 0x65 || c === 0x45 ? "e" : undefined;
    case "dot":
    case "frac":
      if (isDigit(c)) return "frac";
      return state === "frac" && (c === 0x65 || c === 0x45) ? "e" : undefined;
    case "e":
      return c === 0x2b || c === 0x2d ? "exp-sign" : isDigit(c) ? "exp" : undefined;
    case "exp-sign":
    case "exp":
      return isDigit(c) ? "exp" : undefined;
  }
}

/**
 * A JSON pretty-printer that reads the text once, left to right, a piece at a time, and writes the
 * output as `JSON.stringify(JSON.parse(text), null, 2)` lays it out — without building the tree,
 * without recursion, without joining the pieces, and only up to a number of characters: a hostile
 * body (nested 500 deep, 10 MiB) costs what is shown, not the gigabytes its indentation would take.
 * Numbers, strings (escapes included) and keys (order and duplicates) are kept as written.
 */
class JsonPrinter {
  readonly #pieces: readonly string[];
  /** The next piece to read. */
  #next = 0;
  /** What is being read: the rest of a piece, or a few characters of one and the next. */
  #text = "";
  #pos = 0;
  /** Characters read before `#text` began. */
  #base = 0;
  readonly #max: number;
  readonly #out: string[] = [];
  #length = 0;
  /** Open containers, innermost last: `true` for an object. */
  readonly #stack: boolean[] = [];
  #expect: Expect = "value";
  /** In a string: whether it is a key (a `:` follows) or a value. */
  #stringIsKey = false;
  #number: NumberState = "int";
  #full = false;

  constructor(pieces: readonly string[], max: number) {
    this.#pieces = pieces;
    this.#max = max;
  }

  get output(): string {
    return this.#out.join("");
  }

  /**
   * At least `count` characters from `#pos` in `#text`, unless the input ends sooner: the rest of
   * `#text` (fewer than `count` characters, so little is copied) and the next pieces.
   */
  #ensure(count: number): void {
    while (this.#text.length - this.#pos < count && this.#next < this.#pieces.length) {
      this.#base += this.#pos;
      this.#text = this.#text.slice(this.#pos) + (this.#pieces[this.#next++] as string);
      this.#pos = 0;
    }
  }

  /** Appends `piece`, or as much of it as fits (then the output is full). */
  #emit(piece: string): void {
    const room = this.#max - this.#length;
    if (piece.length > room) {
      this.#out.push(piece.slice(0, room));
      this.#length = this.#max;
      this.#full = true;
      return;
    }
    this.#out.push(piece);
    this.#length += piece.length;
  }

  /** A line break and the indentation of `depth`, never more spaces than there is room for. */
  #newline(depth: number): void {
    this.#emit(`\n${" ".repeat(Math.min(2 * depth, this.#max - this.#length))}`);
  }

  /** Runs until about `budget` characters were read or written; how it stopped. */
  step(budget: number): Step {
    const end = this.#base + this.#pos + this.#length + budget;
    while (this.#base + this.#pos + this.#length < end) {
      if (this.#full) return "full";
      this.#ensure(1);
      const text = this.#text;
      const atEnd = this.#pos >= text.length;
      if (this.#expect === "in-string") {
        if (atEnd) return "invalid"; // the text ends inside a string
        const state = this.#string(end - this.#base - this.#pos - this.#length);
        if (state !== "more") return state;
        continue;
      }
      if (this.#expect === "in-number") {
        const state = this.#numberPiece(atEnd);
        if (state !== "more") return state;
        continue;
      }
      if (atEnd) return this.#expect === "after" && this.#stack.length === 0 ? "done" : "invalid";
      const c = text.charCodeAt(this.#pos);
      // JSON's whitespace: space, tab, line feed, carriage return.
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) {
        this.#pos++;
        continue;
      }
      const state = this.#token(c);
      if (state !== "more") return state;
    }
    return this.#full ? "full" : "more";
  }

  /** One token at `#pos` (not whitespace, not the end). */
  #token(c: number): Step {
    const stack = this.#stack;
    switch (this.#expect) {
      case "first-element":
      case "first-key": {
        const close = this.#expect === "first-key" ? 0x7d : 0x5d;
        if (c === close) {
          this.#pos++;
          stack.pop();
          this.#emit(close === 0x7d ? "}" : "]");
          this.#expect = "after";
          return "more";
        }
        this.#newline(stack.length);
        return this.#expect === "first-key" ? this.#key(c) : this.#value(c);
      }
      case "key":
        return this.#key(c);
      case "colon":
        if (c !== 0x3a) return "invalid";
        this.#pos++;
        this.#emit(": ");
        this.#expect = "value";
        return "more";
      case "value":
        return this.#value(c);
      case "after": {
        const inObject = stack.at(-1);
        if (inObject === undefined) return "invalid"; // something after the top value
        if (c === 0x2c) {
          this.#pos++;
          this.#emit(",");
          this.#newline(stack.length);
          this.#expect = inObject ? "key" : "value";
          return "more";
        }
        if (c !== (inObject ? 0x7d : 0x5d)) return "invalid";
        this.#pos++;
        stack.pop();
        this.#newline(stack.length);
        this.#emit(inObject ? "}" : "]");
        return "more";
      }
      default:
        return "invalid";
    }
  }

  #key(c: number): Step {
    if (c !== 0x22) return "invalid";
    this.#stringIsKey = true;
    return this.#open("in-string", '"');
  }

  /** Consumes the character at `#pos`, writes `written` and moves to `expect`. */
  #open(expect: Expect, written: string): Step {
    this.#pos++;
    this.#emit(written);
    this.#expect = expect;
    return "more";
  }

  #value(c: number): Step {
    if (c === 0x22) {
      this.#stringIsKey = false;
      return this.#open("in-string", '"');
    }
    if (c === 0x7b || c === 0x5b) {
      this.#stack.push(c === 0x7b);
      return this.#open(c === 0x7b ? "first-key" : "first-element", c === 0x7b ? "{" : "[");
    }
    if (c === 0x2d || isDigit(c)) {
      this.#number = c === 0x2d ? "sign" : c === 0x30 ? "zero" : "int";
      return this.#open("in-number", String.fromCharCode(c));
    }
    this.#ensure(LOOKAHEAD);
    for (const literal of LITERALS) {
      if (this.#text.startsWith(literal, this.#pos)) {
        this.#pos += literal.length;
        this.#emit(literal);
        this.#expect = "after";
        return "more";
      }
    }
    return "invalid";
  }

  /** Copies what `#text` holds of a number as written; at its end (or the input's), checks that it is whole. */
  #numberPiece(atEnd: boolean): Step {
    const text = this.#text;
    const start = this.#pos;
    // Never read much past what the output can still take: the number is copied as it is.
    const stop = Math.min(text.length, start + this.#max - this.#length + 1);
    let at = start;
    let state = this.#number;
    for (; at < stop; at++) {
      const next = nextNumberState(state, text.charCodeAt(at));
      if (next === undefined) break;
      state = next;
    }
    this.#number = state;
    if (at > start) this.#emit(text.slice(start, at));
    this.#pos = at;
    if (this.#full) return "full";
    if (at === text.length && !atEnd) return "more"; // it may go on in the next piece
    if (state === "zero" || state === "int" || state === "frac" || state === "exp") {
      this.#expect = "after";
      return "more";
    }
    return "invalid";
  }

  /** Copies the string at `#pos` (after its opening quote) as written, reading at most `budget` characters. */
  #string(budget: number): Step {
    this.#ensure(LOOKAHEAD);
    const text = this.#text;
    const start = this.#pos;
    // Never read past what the output can still take: the string is copied as it is.
    const stop = Math.min(text.length, start + Math.max(1, budget), start + this.#max - this.#length + 1);
    let at = start;
    while (at < stop) {
      const c = text.charCodeAt(at);
      if (c === 0x22) {
        this.#emit(text.slice(start, at + 1));
        this.#pos = at + 1;
        this.#expect = this.#stringIsKey ? "colon" : "after";
        return "more";
      }
      if (c < 0x20) return "invalid";
      if (c === 0x5c) {
        // An escape cut by the end of `#text`: copy up to it, and read it whole next time.
        if (at + LOOKAHEAD > text.length && this.#next < this.#pieces.length) break;
        const escaped = text.charCodeAt(at + 1);
        if (escaped === 0x75) {
          if (!HEX4.test(text.slice(at + 2, at + 6))) return "invalid";
          at += 6;
        } else if (
          escaped === 0x22 ||
          escaped === 0x5c ||
          escaped === 0x2f ||
          escaped === 0x62 ||
          escaped === 0x66 ||
          escaped === 0x6e ||
          escaped === 0x72 ||
          escaped === 0x74
        ) {
          at += 2;
        } else {
          return "invalid";
        }
        continue;
      }
      at++;
    }
    // A piece of a long string: copy it and read on later (an escape may end past `stop`: `at` is after it).
    this.#emit(text.slice(start, at));
    this.#pos = at;
    return this.#full ? "full" : "more";
  }
}

/**
 * JSON given as consecutive pieces of text (a body decoded chunk by chunk; never joined here),
 * pretty-printed with two spaces: at most `maxChars` characters of it, or `undefined` when it is
 * not valid JSON (as far as it was read: past `maxChars` the rest is not read). The work is bounded
 * by what is shown and the text's length, never by its nesting, and is done a slice at a time with
 * a turn of the event loop between slices; `signal` stops it between slices.
 * @throws the signal's reason when it aborts
 */
export async function prettyJson(
  pieces: readonly string[],
  maxChars: number,
  signal: AbortSignal,
): Promise<PrettyJson | undefined> {
  const printer = new JsonPrinter(pieces, maxChars);
  for (;;) {
    const state = printer.step(SLICE_CHARS);
    if (state === "invalid") return undefined;
    if (state === "done") return { text: printer.output, cut: false };
    if (state === "full") return { text: printer.output, cut: true };
    await nextTurn();
    signal.throwIfAborted();
  }
}
