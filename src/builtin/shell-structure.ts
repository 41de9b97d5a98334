import { isBraceExpansion } from "./brace-expansion.js";
import { DETACHERS, SHELL_NAMES, WRAPPER_NAMES } from "./deny-rules.js";
import { type CommandWord, IO_NUMBER, REDIRECTIONS, type ShellToken, type WordToken } from "./shell-tokens.js";
import { isWildcard, wildcardNames } from "./wildcards.js";

// The structure of a command line for `execute_bash`'s command guard: which word is a command
// name, which an argument of a command that runs another; the checks read on it (a function
// definition, a wildcard command name, a pipe into a shell, a program that outlives the call);
// and the programs a line runs. Linear in the line's tokens.

export function commandName(word: string): string {
  const bare = word.replace(/\$[@*1-9]/g, "").toLowerCase();
  return bare.slice(bare.lastIndexOf("/") + 1);
}

const vocabularySets = new Map<readonly string[], ReadonlySet<string>>();

/**
 * The names of `vocabulary` a word may run as a command: its {@link commandName} when it is one of
 * them, or when it is an unquoted wildcard, every one it could match (`/usr/bin/sets?d` → setsid).
 */
export function namesIn(word: CommandWord, vocabulary: readonly string[]): readonly string[] {
  const name = commandName(word.text);
  if (word.expands && isWildcard(name)) return wildcardNames(name, vocabulary);
  let set = vocabularySets.get(vocabulary);
  if (set === undefined) {
    set = new Set(vocabulary);
    vocabularySets.set(vocabulary, set);
  }
  return set.has(name) ? [name] : [];
}

export const isShell = (word: CommandWord): boolean => namesIn(word, SHELL_NAMES).length > 0;

/**
 * What a word is where it stands: a command name (`command`), an argument of one (`argument`), an
 * assignment or a reserved word before a command name, or none of these (`other`: a case pattern,
 * the words of a `for` header). Operators are `operator`, or `pattern` inside a case pattern.
 */
type Role = "command" | "argument" | "assignment" | "keyword" | "other" | "operator" | "pattern";

/** A word or an operator of a layer, redirections removed, with its role. */
export interface Item {
  readonly token: ShellToken;
  readonly role: Role;
  /**
   * An argument of a command that runs another (timeout, nice, env, xargs, sudo, find's -exec …):
   * any of them may be a command name.
   */
  readonly wrapped: boolean;
}

/** Reserved words in command position that leave the next word in command position. */
const RESERVED = new Set(["{", "}", "!", "then", "do", "else", "elif", "if", "while", "until", "fi", "done", "esac"]);
/** A word that is an assignment before a command (`a=1`, bash's `a[0]=1`, `a+=1`). */
export const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=/;
const CASE_END = new Set([";;", ";&", ";;&"]);
export const FIND_EXEC = /^-(?:exec|execdir|ok|okdir)$/;
const FIND: readonly string[] = ["find"];

/**
 * The words and control operators of a layer, without its redirections (an operator such as
 * `2>&`, the IO number touching it and the word after it), each with its role. It reads reserved
 * words in command position, as the shell does (quoted ones too, which only checks more);
 * `for`/`select` headers and case patterns are no command names. A redirection `&>`/`&>>` stays as an operator (like `&`),
 * since dash reads `a &>b` as `a &` then `>b`: the word after it may be a command name; bash
 * reads a redirection, which {@link canonicalForm} drops. Linear.
 */
export function structureOf(tokens: readonly ShellToken[]): Item[] {
  const items: Item[] = [];
  let state: "command" | "arguments" | "header" | "subject" | "patterns" = "command";
  let cases = 0;
  let wrapper = false;
  let find = false;
  let afterExec = false;
  for (let index = 0; index < tokens.length; index++) {
    const token = tokens[index] as ShellToken;
    const following = tokens[index + 1];
    if (token.kind === "operator") {
      if (REDIRECTIONS.has(token.text)) {
        // The word after it is its target, not an argument.
        if (following?.kind === "word") index++;
        if (!token.text.startsWith("&")) continue;
        // Kept as an operator for the structure (dash); canonicalForm drops it (bash).
        items.push({ token, role: "operator", wrapped: false });
      } else if (state === "patterns") {
        items.push({ token, role: "pattern", wrapped: false });
        if (token.text === ")") state = "command";
        continue;
      } else items.push({ token, role: "operator", wrapped: false });
      state = CASE_END.has(token.text) && cases > 0 ? "patterns" : "command";
      wrapper = find = afterExec = false;
      continue;
    }
    const redirects = following?.kind === "operator" && REDIRECTIONS.has(following.text);
    if (redirects && following.start === token.end && !token.quoted && IO_NUMBER.test(token.text)) continue;
    // Read unquoted even when quoted: `"A"=1` or `"if"` taken for an assignment or a reserved word
    // only makes the next word a command name too, which is checked more, never less.
    const { text } = token;
    let role: Role = "other";
    if (state === "command") {
      if (ASSIGNMENT.test(text)) role = "assignment";
      else if (RESERVED.has(text)) {
        role = "keyword";
        if (text === "esac") cases = Math.max(0, cases - 1);
      } else if (text === "for" || text === "select") {
        role = "keyword";
        state = "header";
      } else if (text === "case") {
        role = "keyword";
        cases++;
        state = "subject";
      } else if (text === "function") {
        role = "keyword";
        state = "arguments";
      } else {
        role = "command";
        state = "arguments";
        wrapper = namesIn(token, WRAPPER_NAMES).length > 0;
        find = namesIn(token, FIND).length > 0;
      }
    } else if (state === "arguments") {
      role = "argument";
    } else if (state === "header" && text === "do") {
      role = "keyword";
      state = "command";
    } else if (state === "subject" && text === "in") {
      state = "patterns";
    } else if (state === "patterns" && text === "esac") {
      role = "keyword";
      cases = Math.max(0, cases - 1);
      state = "arguments";
    }
    items.push({ token, role, wrapped: role === "argument" && (wrapper || afterExec) });
    if (find && role === "argument" && FIND_EXEC.test(token.text)) afterExec = true;
  }
  return items;
}

const OPENERS = new Set(["{", "if", "while", "until", "for", "select", "case"]);
const CLOSERS = new Set(["}", "fi", "done", "esac"]);
const opens = (item: Item): boolean =>
  (item.role === "operator" && item.token.text === "(") || (item.role === "keyword" && OPENERS.has(item.token.text));
const closes = (item: Item): boolean =>
  (item.role === "operator" && item.token.text === ")") || (item.role === "keyword" && CLOSERS.has(item.token.text));

/**
 * Why the deny list refuses a layer for its structure, read on its words rather than on its text:
 * a shell function definition (`name()` outside quotes, whatever its body); a wildcard or brace
 * expansion in a command name (`/bin/kil? 1`, `{rm,-rf,x}`: it expands against /bin …); a pipe
 * into a shell anywhere in the subshell, group or compound command the pipe feeds
 * (`| (cd x; sh)`, `| while read l; do sh; done`).
 */
export function structureRefusal(items: readonly Item[]): string | undefined {
  for (let index = 0; index < items.length; index++) {
    const item = items[index] as Item;
    const { token } = item;
    if (token.kind !== "word") continue;
    const open = items[index + 1]?.token;
    const close = items[index + 2]?.token;
    // `a=()` is an empty array (bash), not a function.
    if (open?.kind === "operator" && open.text === "(" && close?.kind === "operator" && close.text === ")") {
      if (!(token.text.endsWith("=") && token.end === open.start)) return "shell function definition (fork bomb)";
    }
    if (item.role !== "command") continue;
    if (token.expands && (isWildcard(token.text) || isBraceExpansion(token.text))) {
      return "a wildcard or brace expansion in a command name (/bin/kil? …), which could run any program";
    }
  }
  return pipesIntoShell(items) ? "a pipe into a shell (curl … | sh)" : undefined;
}

/**
 * Whether a layer runs a program that exists to outlive the call ({@link DETACHERS}): as a command
 * name, or as a word of a command that runs another before the command it runs (`nohup tmux …`,
 * `timeout -s INT 5 at now`, `stdbuf -o L script …`, `find -exec screen …`, also spelled as a
 * wildcard: `timeout 5 /usr/bin/tmu? …`). The words after that command are its arguments, which
 * these names usually are (`timeout 60 grep -rn screen src`, `xargs grep -l tmux`).
 */
export function runsDetacher(items: readonly Item[]): boolean {
  // Whether the command that the wrappers of this simple command run was seen (or this -exec's).
  let found = false;
  for (let index = 0; index < items.length; index++) {
    const item = items[index] as Item;
    const { token } = item;
    if (token.kind !== "word") continue;
    if (item.role === "command" || (item.role === "argument" && FIND_EXEC.test(token.text))) found = false;
    if (item.role !== "command" && (!item.wrapped || found)) continue;
    if (namesIn(token, DETACHERS).length > 0) return true;
    if (item.wrapped && isRunCommand(token, items[index - 1])) found = true;
  }
  return false;
}

/**
 * Whether a word of a command that runs another is the command it runs (`grep` in `timeout 5 grep
 * …`): not an option, a number or duration, an assignment or another such command, and not the
 * value of an option before it (`KILL` in `timeout -s KILL 5 …`, as far as can be told: a word
 * after an option is read as its value, but after find's `-exec`).
 */
function isRunCommand(word: WordToken, before: Item | undefined): boolean {
  const { text } = word;
  if (text.startsWith("-") || /^[0-9.]+[smhd]?$/.test(text) || ASSIGNMENT.test(text)) return false;
  if (namesIn(word, WRAPPER_NAMES).length > 0) return false;
  const previous = before?.token.kind === "word" ? before.token.text : "";
  return !previous.startsWith("-") || FIND_EXEC.test(previous);
}

/**
 * Whether a pipe feeds a command that runs a shell: the simple command after it, or every command
 * of the subshell, group or compound command that starts there (to its matching end; to the end
 * of the layer when there is none). A command runs a shell when its name is one, or when it runs
 * another (timeout, nice …) and a later word of it is one. Linear: the ends are matched in one
 * pass, and the commands that run a shell are counted in prefix sums.
 */
function pipesIntoShell(items: readonly Item[]): boolean {
  const count = items.length;
  const endOf = new Int32Array(count).fill(count);
  const openers: number[] = [];
  // before[i]: how many commands that run a shell come before item i.
  const before = new Int32Array(count + 1);
  let command = -1;
  const runsShell = new Uint8Array(count);
  for (let index = 0; index < count; index++) {
    const item = items[index] as Item;
    if (opens(item)) openers.push(index);
    else if (closes(item)) {
      const opener = openers.pop();
      if (opener !== undefined) endOf[opener] = index;
    }
    if (item.token.kind === "word") {
      if (item.role === "command") {
        command = index;
        if (isShell(item.token)) runsShell[index] = 1;
      } else if (item.wrapped && command !== -1 && isShell(item.token)) runsShell[command] = 1;
    }
  }
  for (let index = 0; index < count; index++)
    before[index + 1] = (before[index] as number) + (runsShell[index] as number);
  // nextOperator[i]: the first control operator at or after item i.
  const nextOperator = new Int32Array(count + 1).fill(count);
  for (let index = count - 1; index >= 0; index--) {
    const item = items[index] as Item;
    nextOperator[index] = item.role === "operator" ? index : (nextOperator[index + 1] as number);
  }
  for (let index = 0; index < count; index++) {
    const item = items[index] as Item;
    if (item.role !== "operator" || (item.token.text !== "|" && item.token.text !== "|&")) continue;
    let first = index + 1;
    // What may stand between the pipe and its command: `!` and newlines (comments are no tokens).
    for (;;) {
      const next = items[first];
      if (next === undefined) break;
      if (
        (next.role === "keyword" && next.token.text === "!") ||
        (next.role === "operator" && next.token.text === "\n")
      ) {
        first++;
      } else break;
    }
    const start = items[first];
    if (start === undefined) continue;
    const last = opens(start) ? (endOf[first] as number) : (nextOperator[first] as number);
    if ((before[Math.min(last + 1, count)] as number) - (before[first] as number) > 0) return true;
  }
  return false;
}

/** A program of {@link programsIn}: the names its word may run as, and the arguments after it. */
export interface ProgramCall {
  readonly names: readonly string[];
  readonly args: string[];
}

/**
 * For each simple command of a layer (and each `-exec` of a find), the first word that may run one
 * of `vocabulary` — its command name, or a word a command that runs another runs (`timeout 60 tar
 * …`, `find -exec tar …`) — and the arguments after that word, up to the next `-exec`. Linear:
 * each word is read once as a name, its arguments once.
 */
export function programsIn(items: readonly Item[], vocabulary: readonly string[]): ProgramCall[] {
  const calls: ProgramCall[] = [];
  let examined = false;
  // Each -exec of a find starts a command of its own (`find -exec tar tf a \; -exec tar xf b \;`).
  const startsCommand = (item: Item) =>
    item.role === "command" || (item.role === "argument" && FIND_EXEC.test(item.token.text));
  for (let index = 0; index < items.length; index++) {
    const item = items[index] as Item;
    if (item.token.kind !== "word") continue;
    if (startsCommand(item)) examined = false;
    if (examined || (item.role !== "command" && !item.wrapped)) continue;
    const names = namesIn(item.token, vocabulary);
    if (names.length === 0) continue;
    examined = true;
    const args: string[] = [];
    for (let next = index + 1; next < items.length; next++) {
      const argument = items[next] as Item;
      if (argument.role !== "argument" || startsCommand(argument)) break;
      args.push(argument.token.text);
    }
    calls.push({ names, args });
  }
  return calls;
}
