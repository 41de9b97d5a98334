import { programScripts, SCRIPT_PROGRAMS, variableScript } from "./program-scripts.js";
import { type Item, isShell, namesIn, programsIn, structureOf } from "./shell-structure.js";
import { type CommandWord, isWord, joinContinuations, MAX_COMMAND_CHARS, shellTokens } from "./shell-tokens.js";

// The layers of a command line for `execute_bash`'s command guard: the command itself, and the
// script of every inline shell in it (`sh -c '…'`, `trap '…'`, `env -S '…'`) and of every program
// that runs a command line from its options or environment (`tar -I '…'`, `GIT_SSH_COMMAND`),
// each read as the shell reads it. Bounded in depth, count and length.

export const MAX_SHELL_DEPTH = 3;

/**
 * Most characters all the layers of a command may hold together (an `env -S` string rendered as
 * a command may be longer than in the command), and most layers; beyond, the command is refused.
 */
const MAX_LAYER_CHARS = 4 * MAX_COMMAND_CHARS;
export const MAX_LAYERS = 64;

export interface ShellLayer {
  /** The command line, as the shell that runs it reads it. */
  readonly text: string;
  /** 0 for the command, 1 for the script of an `sh -c` in it, 2 for one in that script … */
  readonly depth: number;
  /** Its words ({@link commandWords}). */
  readonly words: readonly CommandWord[];
}

/** A layer with its structure: its words and operators, redirections removed, each word's role. */
export interface AnalysedLayer extends ShellLayer {
  readonly items: readonly Item[];
  /** Why the shell that runs it may not read it as the guard does ({@link ShellReading}), if it may not. */
  readonly doubt: string | undefined;
}

/**
 * The command and, recursively, the script of every inline shell in it: a word naming a shell
 * (`sh`, `bash`, `/bin/dash` …, also spelled `s$@h` or `/bin/ba?h`), then options of which one
 * holds `c` (`-c`, `-ec`, `-lc`; `-o name` skipped), then the script; the script of a `trap`; and
 * the string of an `env -S` (`--split-string`), split as env splits it (see {@link envScript});
 * and the command lines programs run from their options or from environment variables
 * (`tar --to-command='…'`, `rsync -e '…'`, `GIT_SSH_COMMAND='…'`, see {@link programLayerScripts}).
 * It over-approximates: `echo sh -c x` counts too. Each layer is a part of the one it is in (an
 * `env -S` string rendered as a command at most a few times longer), so the work is bounded by
 * `MAX_SHELL_DEPTH + 1` times a small multiple of the command's length; `tooDeep` when a script
 * nests deeper, or the layers are more or longer than {@link checkCommand} reads (it refuses
 * such a command): then the layers are incomplete.
 */
export function shellLayers(command: string): { layers: ShellLayer[]; tooDeep: boolean } {
  const { layers, tooDeep, tooLong } = analysedLayers(command);
  return { layers: layers.map(({ text, depth, words }) => ({ text, depth, words })), tooDeep: tooDeep || tooLong };
}

/**
 * {@link shellLayers} with each layer's structure; `tooLong` when the layers hold more than
 * {@link MAX_LAYER_CHARS} characters or are more than {@link MAX_LAYERS}.
 */
export function analysedLayers(command: string): { layers: AnalysedLayer[]; tooDeep: boolean; tooLong: boolean } {
  const layers: AnalysedLayer[] = [];
  let pending = [command];
  let total = 0;
  for (let depth = 0; pending.length > 0; depth++) {
    if (depth > MAX_SHELL_DEPTH) return { layers, tooDeep: true, tooLong: false };
    const next: string[] = [];
    for (const script of pending) {
      total += script.length;
      if (total > MAX_LAYER_CHARS || layers.length >= MAX_LAYERS) return { layers, tooDeep: false, tooLong: true };
      // Every check reads the line as the shell does: its line continuations removed first.
      const text = joinContinuations(script);
      const reading = shellTokens(text);
      const words = reading.tokens
        .filter(isWord)
        .map(({ text, expands, parameters }) => ({ text, expands, parameters }));
      const items = structureOf(reading.tokens);
      const inline = inlineScripts(words);
      const doubt = reading.doubt ?? (inline.interactive ? INTERACTIVE_SHELL : undefined);
      layers.push({ text, depth, words, items, doubt });
      for (const inner of inline.scripts) next.push(inner);
      for (const inner of programLayerScripts(words, items)) next.push(inner);
    }
    pending = next;
  }
  return { layers, tooDeep: false, tooLong: false };
}

const TRAP: readonly string[] = ["trap"];
const ENV: readonly string[] = ["env"];

/**
 * Why an inline shell is refused: an interactive one (`bash -ic '…'`) reads startup files from
 * HOME (the workspace) that may turn comments off (`shopt -u interactive_comments`) or define
 * aliases, so its script may not be read as the guard reads it.
 */
const INTERACTIVE_SHELL =
  "an interactive inline shell (sh -i -c '…'), which reads startup files that change how it reads its script";

/**
 * The scripts of the inline shells among these words (see {@link shellLayers}), of `trap`s and of
 * `env -S`; `interactive` when an inline shell has the option `-i` (or zsh's `--interactive`).
 */
function inlineScripts(words: readonly CommandWord[]): { scripts: string[]; interactive: boolean } {
  const scripts: string[] = [];
  let interactive = false;
  for (let index = 0; index < words.length; index++) {
    const word = words[index] as CommandWord;
    if (namesIn(word, TRAP).length > 0) {
      // `trap 'script' EXIT` runs the script later, in this shell: like `sh -c`.
      const script = words[index + 1]?.text === "--" ? words[index + 2] : words[index + 1];
      if (script !== undefined && !/^-[lp]?$/.test(script.text)) scripts.push(script.text);
      continue;
    }
    if (namesIn(word, ENV).length > 0) {
      // Its options are no command names: go on after them (each word is read once).
      index = envScripts(words, index, scripts) - 1;
      continue;
    }
    if (!isShell(word)) continue;
    let inline = false;
    let asked = false;
    let next = index + 1;
    for (; next < words.length; next++) {
      const option = words[next]?.text ?? "";
      if (option === "--") {
        next++;
        break;
      }
      if (!/^[-+]/.test(option)) break;
      if (/^[-+][a-z]*c[a-z]*$/i.test(option)) inline = true;
      if (/^-[a-z]*i[a-z]*$/i.test(option) || option === "--interactive") asked = true;
      // Options that take the next word as their value.
      if (/^[-+][oO]$|^--(?:rcfile|init-file)$/.test(option)) next++;
    }
    const script = words[next];
    if (inline && script !== undefined) {
      scripts.push(script.text);
      if (asked) interactive = true;
    }
    // The options are no shell names: go on after them.
    index = next - 1;
  }
  return { scripts, interactive };
}

/**
 * The command lines that programs among these words run from their options (`tar -I '…'`,
 * `rsync -e '…'`, `git -c core.pager='…'`, see {@link programScripts}) and from environment
 * variables set by any word (`GIT_SSH_COMMAND='…' git …`, `env PAGER='…' …`, see
 * {@link variableScript}). Linear: see {@link programsIn}.
 */
function programLayerScripts(words: readonly CommandWord[], items: readonly Item[]): string[] {
  const scripts: string[] = [];
  for (const { names, args } of programsIn(items, SCRIPT_PROGRAMS)) {
    for (const name of names) scripts.push(...programScripts(name, args));
  }
  for (const { text } of words) {
    const script = variableScript(text);
    if (script !== undefined) scripts.push(script);
  }
  return scripts;
}

/** GNU env's short options that take a value, attached or as the next word (`-u NAME`, `-C DIR`, `-a ARG0`, `-S STRING`). */
const ENV_VALUE = "uCaS";
/** GNU env's long options that take a value (any unambiguous prefix of three or more characters names them). */
const ENV_LONG_VALUE = ["--unset", "--chdir", "--argv0"];

/**
 * Adds to `scripts` the command of each `env -S STRING` (`-iS…`, `--split-string=…`, `--sp …`)
 * after the `env` at `index`, as a command line: `env` and the words env splits the string into
 * ({@link envSplit}), each single-quoted, so that the line is checked like the script of an
 * inline shell. env stops at its first operand (`+` in its getopt string). Returns the index of
 * the first word after env's options.
 */
function envScripts(words: readonly CommandWord[], index: number, scripts: string[]): number {
  let next = index + 1;
  for (; next < words.length; next++) {
    const option = words[next]?.text ?? "";
    if (option === "--" || !option.startsWith("-")) break;
    if (option.startsWith("--")) {
      const equals = option.indexOf("=");
      const name = equals === -1 ? option : option.slice(0, equals);
      const value = () => (equals === -1 ? words[++next]?.text : option.slice(equals + 1));
      if (name.length >= 3 && "--split-string".startsWith(name)) {
        const string = value();
        if (string !== undefined) scripts.push(envScript(string));
      } else if (equals === -1 && name.length >= 3 && ENV_LONG_VALUE.some((long) => long.startsWith(name))) next++;
      continue;
    }
    for (let letter = 1; letter < option.length; letter++) {
      const char = option.charAt(letter);
      if (!ENV_VALUE.includes(char)) continue;
      const value = letter + 1 < option.length ? option.slice(letter + 1) : words[++next]?.text;
      if (char === "S" && value !== undefined) scripts.push(envScript(value));
      break;
    }
  }
  return next;
}

/** An `env -S` string as the command line it runs: `env` and its words, each single-quoted. */
const envScript = (string: string): string => `env ${envSplit(string).map(singleQuoted).join(" ")}`;

const singleQuoted = (text: string): string => `'${text.replace(/'/g, "'\\''")}'`;

/**
 * The words GNU env's `-S` makes of a string: split at blanks, and at `\_` outside quotes (a
 * blank inside double quotes); single quotes literal but for `\\` and `\'`; `\f`, `\n`, `\r`,
 * `\t`, `\v` a blank here (the rules read them as one); `\c` ends the string; any other escaped
 * character is itself. `${NAME}` stays as it is (a `$` in the script is refused). A `#` comment is
 * kept: reading more can only refuse more. Linear.
 */
function envSplit(string: string): string[] {
  const words: string[] = [];
  let current = "";
  let started = false;
  let quote: "'" | '"' | undefined;
  const flush = () => {
    if (started) words.push(current);
    current = "";
    started = false;
  };
  for (let index = 0; index < string.length; index++) {
    const char = string.charAt(index);
    const next = string.charAt(index + 1);
    if (quote === "'") {
      if (char === "'") quote = undefined;
      else if (char === "\\" && (next === "\\" || next === "'")) current += string.charAt(++index);
      else current += char;
      continue;
    }
    if (char === "\\" && next !== "") {
      index++;
      if (next === "_" && quote === undefined) flush();
      else if (next === "c") break;
      else {
        current += "_fnrtv".includes(next) ? " " : next;
        started = true;
      }
      continue;
    }
    if (quote === '"') {
      if (char === '"') quote = undefined;
      else current += char;
      continue;
    }
    if (char === "'" || char === '"') {
      quote = char;
      started = true;
    } else if (" \t\n\v\f\r".includes(char)) flush();
    else {
      current += char;
      started = true;
    }
  }
  flush();
  return words;
}
