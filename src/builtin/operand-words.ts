import { quoteName } from "../internal/describe.js";
import { type CommandWord, commandName } from "./command-guard.js";
import type { ExecSettings } from "./exec-options.js";

// ─── The workspace check of operands (restricted mode) ──────────────────────────────────────────
//
// Every word of the command (split as the shell would, quotes removed), and of the script of every
// inline shell in it (`sh -c '…'`), and the part after `=` of a word such as `--output=/x` or
// `A=/x`, is read as a path relative to the working directory: `~` is HOME; an absolute path must
// be one the workspace options allow (or a harmless device such as /dev/null); a `..` segment is
// refused outright; any other word is resolved through symlinks, like a file tool's path, and
// refused when it leads outside. A word that names no file is harmless. An unquoted wildcard
// (`*`, `?`, `[`) may only be in the last part of a path, may not be able to match `..` (sh's
// `.*` does), and is refused when the directory it lists holds any symlink that leads outside
// (whether or not the wildcard would match it). A word that may be an unquoted brace expansion
// (`{a,b}`, `{1..3}`) is refused. URLs are skipped, except `file:` ones (paths).
//
// What the shell computes while it runs is invisible to such a check, so it is refused: a `$`
// expansion (`p=.; cd $p$p`) other than the few whose value is known to be harmless, `xargs` and
// `parallel` (their arguments come from their input), and a `cd`/`pushd` to a target that is not a
// literal word.

export const URL_PATTERN = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;
export const FILE_URL = /^file:/i;
/** `..` as a path segment, also inside an option (`-o../x`) or after `=`. */
export const PARENT_SEGMENT = /\.\.\/|(?:^|[/=])\.\.$|^-[A-Za-z]+\.\.$/;
export const STAY_INSIDE = " (paths must stay inside the workspace)";
/** Expansions whose value is a number (`$?`, `$!`, `$$`, `$#`): never a path that leads anywhere. */
const NUMERIC_PARAMETERS = ["?", "!", "$", "#"];
/**
 * A variable that decides where `cd` goes, named as a variable (`read HOME`, `HOME=x`,
 * `export PWD`, `CDPATH=sub`), not expanded (`$HOME`).
 */
const NAMES_DIRECTORY_VARIABLE = /(?:^|[^A-Za-z0-9_$])(HOME|PWD|OLDPWD|CDPATH)(?![A-Za-z0-9_])/g;
export const DIRECTORY_VARIABLES = ["HOME", "PWD", "OLDPWD", "CDPATH"];
/** A `$HOME` or `$PWD` expansion in a word's text. */
export const HOME_OR_PWD_VALUE = /\$(HOME|PWD)(?![A-Za-z0-9_])/g;
/** Commands whose arguments come from their input, which the check cannot read. */
const ARGUMENTS_FROM_INPUT = new Set(["xargs", "parallel"]);
export const CHANGE_DIRECTORY = new Set(["cd", "pushd"]);
export const RUNTIME = "which the workspace check cannot see";

/**
 * The `$` expansions a restricted command may use: `$?`, `$!`, `$$`, `$#`; `$HOME` when it is the
 * workspace (the default) and `$PWD` (only a checked `cd` changes it), each unless the command
 * names the variable itself, which could give it any value (`read HOME < f`).
 */
export function harmlessParameters(settings: ExecSettings, named: ReadonlySet<string>): Set<string> {
  const harmless = new Set(NUMERIC_PARAMETERS);
  if (!named.has("HOME") && settings.env.HOME === settings.workspace.workspace) harmless.add("HOME");
  if (!named.has("PWD")) harmless.add("PWD");
  return harmless;
}

/** Which of `HOME`, `PWD`, `OLDPWD` and `CDPATH` the words name as variables. */
export function namedVariables(words: readonly CommandWord[]): Set<string> {
  const named = new Set<string>();
  for (const { text } of words) {
    for (const match of text.matchAll(NAMES_DIRECTORY_VARIABLE)) named.add(match[1] as string);
  }
  return named;
}

/** The word a `cd` or `pushd` at `index` changes to (after its options), if any. */
export function directoryTarget(words: readonly CommandWord[], index: number): CommandWord | undefined {
  let next = index + 1;
  while (/^-[LPe@]+$|^--$/.test(words[next]?.text ?? "")) next++;
  return words[next];
}

/** Why a word is refused before any path check: a `$` expansion, `xargs`, a `cd` to a computed target. */
export function runtimeRefusal(
  words: readonly CommandWord[],
  index: number,
  harmless: Set<string>,
): string | undefined {
  const word = words[index] as CommandWord;
  const parameter = word.parameters.find((name) => !harmless.has(name));
  if (parameter !== undefined) {
    return `${quoteName(word.text)} expands $${parameter} when it runs, ${RUNTIME}; write the value out`;
  }
  const name = commandName(word.text);
  if (ARGUMENTS_FROM_INPUT.has(name)) return `${name} builds command lines from its input when it runs, ${RUNTIME}`;
  if (CHANGE_DIRECTORY.has(name)) {
    const target = directoryTarget(words, index);
    if (target?.expands === true) return `${name} to ${quoteName(target.text)}, which is not a literal directory`;
  }
  return undefined;
}

/**
 * The paths a word may name: the word itself unless it is an option; what follows `=`
 * (`--output=/x`, `VAR=/x`); and for a short option with its value attached (`-o/etc/x`,
 * `-xf/etc/x`), the value after the option letter and, when only letters come before a `/`, the
 * path from that `/` on (which option letters end where is not known, so both are checked). Each
 * of these that names a file after `@` or `<` adds that file ({@link fileReferences}), and so
 * does the text after the word's first `@` (httpie's `field@file`).
 */
export function operandsOf(word: string): string[] {
  const parts: string[] = [];
  const equals = word.indexOf("=");
  if (equals !== -1) parts.push(word.slice(equals + 1));
  if (!word.startsWith("-")) parts.push(word);
  else if (equals === -1 && word.length > 2 && word[1] !== "-") {
    parts.push(word.slice(2));
    const slash = word.indexOf("/");
    if (slash > 1 && /^[A-Za-z]+$/.test(word.slice(1, slash))) parts.push(word.slice(slash));
  }
  const at = word.indexOf("@");
  if (at > 0) parts.push(word.slice(at));
  return parts.flatMap((part) => [part, ...fileReferences(part)]);
}

/**
 * The files a value names by a leading `@` or `<`, which many programs read in its place: curl's
 * `--data @file`, `-d@file`, `-F f=@file;type=text/plain`, `-F 'f=<file'`, `-F 'f=@"a b"'`, a
 * compiler's `@response-file`, httpie's `field=@file`: the text after it, each piece of that text
 * between `;` and `,` (curl's `;type=…`, a list of files), and the name inside quotes after it.
 */
function fileReferences(part: string): string[] {
  if (!part.startsWith("@") && !part.startsWith("<")) return [];
  const file = part.slice(1);
  const references = [file];
  if (/[;,]/.test(file)) references.push(...file.split(/[;,]/));
  if (file.startsWith('"')) {
    const close = file.indexOf('"', 1);
    references.push(close === -1 ? file.slice(1) : file.slice(1, close));
  }
  return references;
}

/** The path of a `file:` URL: `file:/p`, `file:///p` and `file://host/p` all name `/p`. */
export function filePath(url: string): string {
  const rest = url.slice("file:".length);
  if (!rest.startsWith("//")) return rest;
  const slash = rest.indexOf("/", 2);
  return slash === -1 ? "/" : rest.slice(slash);
}

/**
 * Whether the last part of a wildcard may match `..`: sh (dash) matches `.*`, `.?`, `..*`, `.[.]`
 * to it (a leading `.` must be written; `*`, `?` and brackets never match one). Over-approximates:
 * brackets count as one character whatever they hold.
 */
export function mayMatchParent(last: string): boolean {
  if (!last.startsWith(".")) return false;
  let rest = last.slice(1);
  // Everything from the first `[` to the last `]` as one `?`: linear, and it can only say yes more often.
  const open = rest.indexOf("[");
  const close = rest.lastIndexOf("]");
  if (open !== -1 && close > open) rest = `${rest.slice(0, open)}?${rest.slice(close + 1)}`;
  if (!/^[*?.]*$/.test(rest)) return false;
  const single = rest.replace(/\*/g, "").length;
  return single === 1 || (single === 0 && rest !== "");
}

/** Where the first wildcard of a word is (`*`, `?`, or a `[` closed later), or -1. */
export function wildcardIndex(word: string): number {
  const star = word.search(/[*?]/);
  const open = word.indexOf("[");
  const bracket = open !== -1 && word.includes("]", open + 1) ? open : -1;
  if (star === -1) return bracket;
  return bracket === -1 ? star : Math.min(star, bracket);
}
