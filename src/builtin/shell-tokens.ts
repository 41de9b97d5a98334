// The shell-like reading of a command line that every check of `execute_bash`'s command guard
// reads: line continuations joined, comments skipped, quotes removed, words and operators split as
// dash and bash split them (and what bash may read otherwise, named). Linear in the command.

/**
 * Longest command `execute_bash` accepts, in characters. Every check below is linear in the
 * command, and the caller's own patterns run on V8's backtracking engine: the bound keeps both
 * cheap. A longer command is refused (the model is told to write a script file and run that).
 */
export const MAX_COMMAND_CHARS = 8_192;

/** One word of a command as the shell would see it after quote removal. */
export interface CommandWord {
  /** The word, quotes removed and escapes applied, case kept. */
  readonly text: string;
  /** It holds an unquoted, unescaped `*`, `?`, `[` or `{`: the shell may expand it into other words. */
  readonly expands: boolean;
  /**
   * The expansions of `$` the shell makes in it (outside single quotes, not escaped), by what
   * follows the `$`: a name (`HOME`, `p`), a digit or special parameter (`1`, `?`, `!`, `@`), or
   * `{`, `(`, `[`, `'`, `"` for `${…}`, `$(…)`, `$[…]`, `$'…'`, `$"…"`. Empty when there is none.
   */
  readonly parameters: readonly string[];
}

/** A word of a command line, with where it is in the line. */
export interface WordToken extends CommandWord {
  readonly kind: "word";
  /** Where it starts and ends in the line (quotes included): an IO number touches its redirection. */
  readonly start: number;
  readonly end: number;
  /** It holds a quote or a backslash: not an IO number (`"2">x`), an assignment or a reserved word. */
  readonly quoted: boolean;
}

/** An operator of a command line: a control operator (`;`, `&&`, `|`, `(`, a newline …) or a redirection (`>`, `2>&`, `<<` …). */
interface OperatorToken {
  readonly kind: "operator";
  readonly text: string;
  readonly start: number;
}

export type ShellToken = WordToken | OperatorToken;

export const isWord = (token: ShellToken): token is WordToken => token.kind === "word";

/** The operators of more than one character, longest first. */
const LONG_OPERATORS = [
  "<<<",
  "<<-",
  ";;&",
  "&>>",
  "<<",
  ">>",
  "<&",
  ">&",
  "<>",
  ">|",
  "&>",
  "&&",
  "||",
  "|&",
  ";;",
  ";&",
];
export const REDIRECTIONS = new Set(["<", ">", ">>", "<&", ">&", "<>", ">|", "&>", "&>>", "<<", "<<<", "<<-"]);
/** What may stand before a redirection, touching it, as the file descriptor it redirects (`2>`, bash's `{fd}>`). */
export const IO_NUMBER = /^(?:[0-9]+|\{[A-Za-z_][A-Za-z0-9_]*\})$/;

const EXPANDING = "*?[{";

/**
 * The words of a command, as the shell reads them, for the workspace check: line continuations
 * joined ({@link joinContinuations}), comments skipped, single quotes literal, double quotes with
 * `\` escaping `$`, `` ` ``, `"` and `\`, a backslash outside quotes escaping the next character,
 * words split at blanks (space and tab) and at the operators `;`, `&`, `|`, `(`, `)`, `<`, `>`
 * and newlines (which are not words). `2>/dev/null` gives `2` and `/dev/null`. Linear.
 */
export function commandWords(command: string): CommandWord[] {
  return shellTokens(joinContinuations(command))
    .tokens.filter(isWord)
    .map(({ text, expands, parameters }) => ({ text, expands, parameters }));
}

/** Where a word starts for the shell: after one of these (unquoted), or at the start of the line. */
const WORD_BREAKS = " \t\n;&|()<>";

/**
 * A command line as dash and bash read it before they split it into words: each line continuation
 * (a backslash-newline outside single quotes, also inside double quotes) removed, except inside a
 * comment, which ends at the newline whatever comes before it (`# a \⏎ls` is a comment, then
 * `ls`). A comment starts at an unquoted `#` that starts a word. Linear.
 */
export function joinContinuations(command: string): string {
  if (!command.includes("\\\n")) return command;
  let joined = "";
  let state: "plain" | "single" | "double" | "comment" = "plain";
  // Whether the next character starts a word (a `#` there starts a comment).
  let wordStart = true;
  for (let index = 0; index < command.length; index++) {
    const char = command.charAt(index);
    const next = command.charAt(index + 1);
    if (state === "single") {
      if (char === "'") state = "plain";
      joined += char;
      continue;
    }
    if (state === "comment") {
      if (char === "\n") {
        state = "plain";
        wordStart = true;
      }
      joined += char;
      continue;
    }
    if (char === "\\") {
      if (next === "\n") {
        index++;
        continue;
      }
      // The escaped character is taken with it (`\'`, `\"`, `\#`, `\\`).
      joined += char + next;
      index++;
      wordStart = false;
      continue;
    }
    if (state === "double") {
      if (char === '"') state = "plain";
    } else if (char === "'") state = "single";
    else if (char === '"') state = "double";
    else if (char === "#" && wordStart) state = "comment";
    if (state === "plain" || char === "'" || char === '"') wordStart = state === "plain" && WORD_BREAKS.includes(char);
    joined += char;
  }
  return joined;
}

/**
 * What {@link shellTokens} read, and why the shells that may be `/bin/sh` (dash, bash) may read the
 * line otherwise, if they may: then the command is refused, since every check reads these tokens.
 */
export interface ShellReading {
  readonly tokens: ShellToken[];
  readonly doubt: string | undefined;
}

/** Characters that start a bash extended glob when `(` follows (`@(a|b)`, `!(x)`). */
const EXTGLOB = "@!+*?";
const DOUBT_EXTGLOB =
  "a pattern character touching '(' (@( !( +( *( ?( ), which bash reads as one word (an extended glob) " +
  "when extglob is on; write '! (…)' with a space for a negated subshell";
const DOUBT_ARITHMETIC =
  "'((' (bash reads an arithmetic command or for loop, dash two subshells); write '( (' with a space";
const DOUBT_REGEX = "'=~' (bash reads the regular expression after it with rules of its own); use grep -E";

/**
 * The words of {@link commandWords} and the operators between them, in order, of a command line
 * whose continuations are already joined; comments skipped (an unquoted `#` that starts a word, to
 * the end of the line: in a comment quotes and backslashes are nothing). A carriage return is an
 * ordinary character, as in dash and bash (not a blank). `doubt` names what bash may read
 * otherwise than dash and this reading: an extended glob (`@(…)`), `((`, `=~`. Linear.
 */
export function shellTokens(command: string): ShellReading {
  return new TokenReader(command).read();
}

/** The state of {@link shellTokens} while it reads a line, one step per method. */
class TokenReader {
  readonly tokens: ShellToken[] = [];
  doubt: string | undefined;
  text = "";
  expands = false;
  parameters: string[] = [];
  inWord = false;
  quoted = false;
  start = 0;
  quote: "'" | '"' | undefined;
  // The last character of the word so far when it was unquoted and unescaped, else "".
  plain = "";

  constructor(readonly command: string) {}

  read(): ShellReading {
    const { command } = this;
    for (let index = 0; index < command.length; index++) {
      if (this.quote === "'") {
        const char = command[index] as string;
        if (char === "'") this.quote = undefined;
        else this.text += char;
      } else if (this.quote === '"') index = this.doubleQuoted(index);
      else index = this.unquoted(index);
    }
    this.end(command.length);
    return { tokens: this.tokens, doubt: this.doubt };
  }

  /** Ends the word being read, if any, at `at`. */
  end(at: number): void {
    if (this.inWord) {
      const { text, expands, parameters, start, quoted } = this;
      this.tokens.push({ kind: "word", text, expands, parameters, start, end: at, quoted });
      if (!quoted && text === "=~") this.doubt ??= DOUBT_REGEX;
    }
    this.text = "";
    this.expands = false;
    this.parameters = [];
    this.inWord = false;
    this.quoted = false;
    this.plain = "";
  }

  /** Starts a word at `at`, unless one is being read. */
  begin(at: number): void {
    if (this.inWord) return;
    this.inWord = true;
    this.start = at;
  }

  /** At a `$` outside single quotes: records the expansion, if it is one, and returns how many characters it spans. */
  dollar(index: number): number {
    const rest = this.command.slice(index + 1, index + 1 + 256);
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(rest)?.[0];
    const next = rest.charAt(0);
    if (name !== undefined) this.parameters.push(name);
    else if (next !== "" && "0123456789@*#?$!-{([".includes(next)) this.parameters.push(next);
    else if (this.quote === undefined && (next === "'" || next === '"')) this.parameters.push(next);
    else return 1;
    const length = 1 + (name?.length ?? 1);
    // `{(['"` open something the word goes on with: only the `$` is taken here.
    return "{(['\"".includes(next) ? 1 : length;
  }

  /** Reads the character at `index` inside double quotes; returns the index of the last one it took. */
  doubleQuoted(index: number): number {
    const { command } = this;
    const char = command[index] as string;
    const next = command[index + 1];
    if (char === '"') this.quote = undefined;
    else if (char === "\\" && next !== undefined && '$`"\\\n'.includes(next)) {
      if (next !== "\n") this.text += next;
      return index + 1;
    } else if (char === "$") {
      const length = this.dollar(index);
      this.text += command.slice(index, index + length);
      return index + length - 1;
    } else this.text += char;
    return index;
  }

  /** Reads the character at `index` outside quotes; returns the index of the last one it took. */
  unquoted(index: number): number {
    const { command } = this;
    const char = command[index] as string;
    if (char === "\\") {
      // At the very end, dash and bash keep it as it is.
      const next = command[index + 1] ?? "\\";
      this.plain = "";
      if (next === "\n") return index + 1;
      this.begin(index);
      this.quoted = true;
      this.text += next;
      return index + 1;
    }
    if (char === "'" || char === '"') {
      this.begin(index);
      this.quote = char;
      this.quoted = true;
      this.plain = "";
    } else if (char === "#" && !this.inWord) {
      // A comment, to the end of the line (the newline is the operator after it).
      const newline = command.indexOf("\n", index);
      return (newline === -1 ? command.length : newline) - 1;
    } else if (char === " " || char === "\t") {
      this.end(index);
    } else if (";&|()<>\n".includes(char)) {
      return this.operator(index);
    } else if (char === "$") {
      this.begin(index);
      const length = this.dollar(index);
      this.text += command.slice(index, index + length);
      // bash reads `$@(` as `$` then the extended glob `@(`.
      this.plain = command.charAt(index + length - 1);
      return index + length - 1;
    } else {
      this.begin(index);
      if (EXPANDING.includes(char)) this.expands = true;
      this.text += char;
      this.plain = char;
    }
    return index;
  }

  /** Reads the operator that starts at `index` (`;`, `&&`, `2>&` …); returns the index of its last character. */
  operator(index: number): number {
    const { command } = this;
    const char = command[index] as string;
    if (char === "(") {
      if (this.inWord && EXTGLOB.includes(this.plain)) this.doubt ??= DOUBT_EXTGLOB;
      const last = this.tokens.at(-1);
      if (!this.inWord && last?.kind === "operator" && last.text === "(" && last.start === index - 1) {
        this.doubt ??= DOUBT_ARITHMETIC;
      }
    }
    this.end(index);
    const operator = LONG_OPERATORS.find((long) => command.startsWith(long, index)) ?? char;
    this.tokens.push({ kind: "operator", text: operator, start: index });
    return index + operator.length - 1;
  }
}
