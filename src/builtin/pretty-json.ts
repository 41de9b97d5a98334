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

/**
 * What comes next in the text: `value` (the top one, an element after `,`, a member's after `:`),
 * `first-element` (after `[`: `]` or a value), `first-key` (after `{`: `}` or a key), `key` (after
 * `,` in an object), `colon` (after a key), `after` (after a value: `,`, the end of its container,
 * or of the text), `in-string` (a string is copied as written, a long one a slice at a time).
 */
type Expect = "value" | "first-element" | "first-key" | "key" | "colon" | "after" | "in-string";

type Step = "more" | "done" | "full" | "invalid";

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const HEX4 = /[0-9a-fA-F]{4}/y;
const LITERALS = ["true", "false", "null"] as const;

/**
 * A JSON pretty-printer that reads the text once, left to right, and writes the output as
 * `JSON.stringify(JSON.parse(text), null, 2)` lays it out — without building the tree and without
 * recursion, and only up to a number of characters: a hostile body (nested 500 deep, 10 MiB) costs
 * what is shown, not the gigabytes its indentation would take. Numbers, strings (escapes included)
 * and keys (order and duplicates) are kept as written. Work is done a slice at a time.
 */
class JsonPrinter {
  readonly #text: string;
  readonly #max: number;
  #pos = 0;
  readonly #out: string[] = [];
  #length = 0;
  /** Open containers, innermost last: `true` for an object. */
  readonly #stack: boolean[] = [];
  #expect: Expect = "value";
  /** In a string: whether the string is a key (a `:` follows) or a value. */
  #stringIsKey = false;
  #full = false;

  constructor(text: string, max: number) {
    this.#text = text;
    this.#max = max;
  }

  get output(): string {
    return this.#out.join("");
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
    const text = this.#text;
    const end = budget + this.#pos + this.#length;
    while (this.#pos + this.#length < end) {
      if (this.#full) return "full";
      if (this.#expect === "in-string") {
        const state = this.#string(end - this.#pos - this.#length);
        if (state !== "more") return state;
        continue;
      }
      if (this.#pos >= text.length) {
        return this.#expect === "after" && this.#stack.length === 0 ? "done" : "invalid";
      }
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
        if (this.#expect === "first-key") return this.#key(c);
        return this.#value(c);
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
    return this.#openString();
  }

  #openString(): Step {
    this.#pos++;
    this.#emit('"');
    this.#expect = "in-string";
    return "more";
  }

  #value(c: number): Step {
    const text = this.#text;
    if (c === 0x22) {
      this.#stringIsKey = false;
      return this.#openString();
    }
    if (c === 0x7b || c === 0x5b) {
      this.#pos++;
      this.#stack.push(c === 0x7b);
      this.#emit(c === 0x7b ? "{" : "[");
      this.#expect = c === 0x7b ? "first-key" : "first-element";
      return "more";
    }
    for (const literal of LITERALS) {
      if (text.startsWith(literal, this.#pos)) {
        this.#pos += literal.length;
        this.#emit(literal);
        this.#expect = "after";
        return "more";
      }
    }
    NUMBER.lastIndex = this.#pos;
    const number = NUMBER.exec(text);
    if (number === null) return "invalid";
    this.#pos += number[0].length;
    this.#emit(number[0]);
    this.#expect = "after";
    return "more";
  }

  /** Copies the string at `#pos` (after its opening quote) as written, reading at most `budget` characters. */
  #string(budget: number): Step {
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
        const escaped = text.charCodeAt(at + 1);
        if (escaped === 0x75) {
          HEX4.lastIndex = at + 2;
          if (!HEX4.test(text)) return "invalid";
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
    if (at >= text.length) return "invalid"; // the text ends inside the string
    // A slice of a long string: copy it and read on later (an escape may end past `stop`: `at` is after it).
    this.#emit(text.slice(start, at));
    this.#pos = at;
    return this.#full ? "full" : "more";
  }
}

/**
 * `text` (JSON) pretty-printed with two spaces, at most `maxChars` characters of it, or `undefined`
 * when it is not valid JSON (as far as it was read: past `maxChars` the rest is not read). The work
 * is bounded by what is shown and the text's length, never by its nesting, and is done a slice at a
 * time with a turn of the event loop between slices; `signal` stops it between slices.
 * @throws the signal's reason when it aborts
 */
export async function prettyJson(text: string, maxChars: number, signal: AbortSignal): Promise<PrettyJson | undefined> {
  const printer = new JsonPrinter(text, maxChars);
  for (;;) {
    const state = printer.step(SLICE_CHARS);
    if (state === "invalid") return undefined;
    if (state === "done") return { text: printer.output, cut: false };
    if (state === "full") return { text: printer.output, cut: true };
    await nextTurn();
    signal.throwIfAborted();
  }
}
