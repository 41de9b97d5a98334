import { type ChildProcess, spawn } from "node:child_process";
import { type Dirent, realpathSync } from "node:fs";
import { opendir } from "node:fs/promises";
import { isAbsolute, join, relative } from "node:path";
import { StringDecoder } from "node:string_decoder";
import { isValidTimeout, TIMEOUT_EXPECTATION } from "../execute-tool-call.js";
import { subscribeAbort } from "../internal/abort.js";
import { errorMessage, quoteName } from "../internal/describe.js";
import { checkCount, checkMetadata, checkString, optionError } from "../internal/options.js";
import type { Tool, ToolContext } from "../tool.js";
import { errorResult, newToolResult, type ToolResult } from "../tool-result.js";
import { EXTRACTOR_OPTION_VARIABLES, extractionTarget } from "./archive-extraction.js";
import {
  type ArchiveExtraction,
  archiveExtractions,
  type CommandPatterns,
  type CommandWord,
  checkCommand,
  commandName,
  copyPattern,
  shellLayers,
} from "./command-guard.js";
import { ProcessSession } from "./process-session.js";
import {
  checkWorkspaceOptions,
  isInside,
  PathLookups,
  resolveWorkspacePath,
  type WorkspaceOptions,
} from "./workspace.js";
import { takeTurn } from "./workspace-turns.js";

/** Options of {@link createExecTool}: the workspace, and how commands run. */
export interface ExecToolOptions extends WorkspaceOptions {
  /** The tool's name, as the model calls it. @default "execute_bash" */
  name?: string;
  /**
   * How long a call may take, in milliseconds, the workspace check before the run included; then
   * every process of the command is killed (its session, see docs/builtin-tools.md) and the result
   * is `command timed out after Ns` with the output so far. `Infinity` for none. @default 30000
   */
  timeoutMs?: number;
  /** Longest output the model reads; the rest is cut with `... (truncated, N more chars)`. @default 10000 */
  maxOutputChars?: number;
  /**
   * Refuse commands that match any of these, in addition to the default deny list (never
   * instead). Matched, case-insensitively, on the normalised command (lower case, quotes and
   * backslashes removed, see docs/builtin-tools.md). They run on V8's backtracking engine on a hostile command of up to
   * 8,192 characters: keep them free of nested quantifiers. A pattern that throws refuses.
   */
  denyPatterns?: RegExp[];
  /**
   * When given (not empty), every simple command of a command must match one of these, or it is
   * refused. Checked after the deny lists, which still apply to allowed commands.
   */
  allowPatterns?: RegExp[];
  /**
   * Extra environment variables for the command. The command never sees this process's
   * environment: only `PATH`, `HOME` (the workspace) and these (which may replace those two).
   */
  env?: Record<string, string>;
}

const WHERE = "createExecTool";
const DEFAULT_NAME = "execute_bash";
const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_OUTPUT_CHARS = 10_000;
/** `PATH` of the command when this process has none. */
const FALLBACK_PATH = "/usr/local/bin:/usr/bin:/bin";
/** After the session was killed, how long to wait for the pipes to close (a process that left it may hold them). */
const CLOSE_GRACE_MS = 1_000;
/** Most entries of one directory read to check what a wildcard could match. */
const MAX_WILDCARD_ENTRIES = 1_000;
/** Absolute paths outside the workspace that a restricted command may still name. */
const DEVICE_PATHS = new Set([
  "/dev/null",
  "/dev/zero",
  "/dev/stdin",
  "/dev/stdout",
  "/dev/stderr",
  "/dev/random",
  "/dev/urandom",
]);

interface ExecSettings {
  readonly workspace: WorkspaceOptions;
  /** The workspace's real path: whose turns its commands take (see workspace-turns.ts). */
  readonly turnKey: string;
  readonly restricted: boolean;
  readonly timeoutMs: number;
  readonly maxOutputChars: number;
  readonly patterns: CommandPatterns;
  readonly env: Readonly<Record<string, string>>;
}

/**
 * The `execute_bash` tool (picoclaw's `ExecTool`): `{ command, working_directory? }` runs
 * `sh -c command` in a session of its own (every process of which is killed when the call ends),
 * in the workspace (or `working_directory` inside it), with a minimal environment. The result is
 * stdout, then `STDERR:` and stderr, cut at `maxOutputChars`; a non-zero exit, a timeout, an
 * abort and every refusal (deny list, allow list, a path outside the workspace) are error results.
 * A deny list is not a sandbox: see docs/builtin-tools.md, and run untrusted models in a container.
 * @throws TypeError for a bad option (echoing it)
 * @example
 * ```ts
 * registry.register(createExecTool({ workspace: "/srv/agent/workspace", timeoutMs: 10_000 }));
 * ```
 */
export function createExecTool(options: ExecToolOptions): Tool {
  checkWorkspaceOptions(options, WHERE);
  const name = checkString(WHERE, "name", options.name) ?? DEFAULT_NAME;
  const settings = execSettings(options);
  return Object.freeze({
    name,
    description:
      "Run a shell command (sh -c) in the workspace and return its output (stdout, then STDERR:). " +
      `Times out after ${seconds(settings.timeoutMs)}; background processes are killed when it ends. ` +
      "Dangerous commands (rm -rf, sudo, curl | sh, $(...), heredocs, ...) are refused" +
      (settings.restricted
        ? ", and so are paths outside the workspace (absolute paths, '..') and values the shell computes " +
          "as it runs ($variables other than $HOME and $PWD, xargs): write paths out literally."
        : "."),
    parameters: {
      type: "object",
      properties: {
        command: { type: "string", description: "The shell command to run" },
        working_directory: {
          type: "string",
          description: "Optional: the directory to run it in, relative to the workspace (default: the workspace)",
        },
      },
      required: ["command"],
      additionalProperties: false,
    },
    execute: (args: Record<string, unknown>, context: ToolContext) => execute(settings, args, context),
  });
}

function checkPatterns(option: string, value: unknown): RegExp[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw optionError(WHERE, option, "an array of RegExp", value);
  return value.map((pattern: unknown, index) => {
    if (!(pattern instanceof RegExp)) throw optionError(WHERE, `${option}[${index}]`, "a RegExp", pattern);
    try {
      return copyPattern(pattern);
    } catch {
      throw optionError(WHERE, `${option}[${index}]`, "a RegExp", pattern);
    }
  });
}

function execSettings(options: ExecToolOptions): ExecSettings {
  const { timeoutMs = DEFAULT_TIMEOUT_MS } = options;
  if (!isValidTimeout(timeoutMs)) throw optionError(WHERE, "timeoutMs", TIMEOUT_EXPECTATION, timeoutMs);
  const extra = checkMetadata(WHERE, "env", options.env) ?? {};
  // A null-prototype object: a key such as `__proto__` is an ordinary variable name here.
  const env: Record<string, string> = Object.create(null);
  env.PATH = process.env.PATH ?? FALLBACK_PATH;
  env.HOME = options.workspace;
  for (const [key, value] of Object.entries(extra)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) {
      throw optionError(WHERE, `env[${JSON.stringify(key)}]`, "an environment variable name", key);
    }
    if (value.includes("\0")) throw optionError(WHERE, `env.${key}`, "a string without NUL", value);
    env[key] = value;
  }
  // A copy: the caller changing its options object later changes nothing here.
  const workspace: WorkspaceOptions = {
    workspace: options.workspace,
    restrictToWorkspace: options.restrictToWorkspace !== false,
  };
  if (options.allowReadPaths !== undefined) workspace.allowReadPaths = [...options.allowReadPaths];
  if (options.allowWritePaths !== undefined) workspace.allowWritePaths = [...options.allowWritePaths];
  let turnKey = options.workspace;
  try {
    turnKey = realpathSync(options.workspace);
  } catch {
    // checkWorkspaceOptions found it a directory a moment ago: keep the path as given
  }
  return {
    workspace: Object.freeze(workspace),
    turnKey,
    restricted: workspace.restrictToWorkspace === true,
    timeoutMs,
    maxOutputChars: checkCount(WHERE, "maxOutputChars", options.maxOutputChars, DEFAULT_MAX_OUTPUT_CHARS),
    patterns: {
      deny: checkPatterns("denyPatterns", options.denyPatterns),
      allow: checkPatterns("allowPatterns", options.allowPatterns),
    },
    env,
  };
}

/** `30000` → `"30s"`, `300` → `"0.3s"`. */
function seconds(ms: number): string {
  return ms === Number.POSITIVE_INFINITY ? "no time limit" : `${Number((ms / 1000).toFixed(3))}s`;
}

async function execute(
  settings: ExecSettings,
  args: Record<string, unknown>,
  context: ToolContext,
): Promise<ToolResult> {
  const { command, working_directory: directory } = args;
  if (typeof command !== "string" || command.trim() === "") return errorResult("command is empty: nothing to run");
  const refusal = checkCommand(command, settings.patterns);
  if (refusal !== undefined) return errorResult(refusal);
  if (directory !== undefined && typeof directory !== "string") {
    return errorResult("working_directory must be a string");
  }
  // The time limit covers the checks before the run too: together they take at most timeoutMs.
  const budget = new CheckBudget(MAX_CHECK_OPERATIONS, settings.timeoutMs, context.signal);
  // One cache of lookups for the whole check: a path component is read once however many words share it.
  const check: Check = { budget, lookups: new PathLookups(() => budget.spend()) };
  const extractions = settings.restricted ? archiveExtractions(command) : [];
  // In restricted mode, an extraction's check and run never overlap another command's (see workspace-turns.ts).
  const turn = settings.restricted ? takeTurn(settings.turnKey, extractions.length > 0) : undefined;
  try {
    let prepared: { cwd: string } | string;
    try {
      if (turn !== undefined && !turn.held) {
        try {
          await budget.race(turn.granted);
        } catch (error) {
          if (!(error instanceof CheckStopped) || error.reason !== "timeout") throw error;
          return errorResult(
            `command timed out after ${seconds(settings.timeoutMs)} while it waited for an archive extraction in the ` +
              "workspace, or for the commands running when it started, to end; nothing ran",
          );
        }
      }
      prepared = await budget.race(prepare(settings, command, directory, extractions, check));
    } catch (error) {
      if (!(error instanceof CheckStopped)) throw error;
      return errorResult(stoppedMessage(error.reason, settings.timeoutMs));
    } finally {
      budget.dispose();
    }
    if (typeof prepared === "string") return errorResult(prepared);
    if (context.signal.aborted) return errorResult(ABORTED_BEFORE_START);
    const left = budget.remainingMs();
    if (left <= 0) return errorResult(stoppedMessage("timeout", settings.timeoutMs));
    return await run(settings, command, prepared.cwd, context, left);
  } finally {
    // Ends the turn, or the wait for it.
    turn?.end();
  }
}

/** The working directory of the command, or why it may not run (a refusal the model reads). */
async function prepare(
  settings: ExecSettings,
  command: string,
  directory: string | undefined,
  extractions: readonly ArchiveExtraction[],
  check: Check,
): Promise<{ cwd: string } | string> {
  let cwd = settings.workspace.workspace;
  if (directory !== undefined && directory !== "") {
    // Like an operand: the command may read or write there.
    const resolved = await resolveWorkspacePath(settings.workspace, directory, "read", check.lookups);
    if (!resolved.ok) return `working_directory ${quoteName(directory)}: ${resolved.error}`;
    const writable = await resolveWorkspacePath(settings.workspace, resolved.path, "write", check.lookups);
    if (!writable.ok) return `working_directory ${quoteName(directory)}: ${writable.error}`;
    // A real path (no symlink left): what it is was read while resolving it.
    if ((await check.lookups.entry(resolved.path)).kind !== "directory") {
      return `working_directory ${quoteName(directory)} is not a directory`;
    }
    cwd = resolved.path;
  }
  if (settings.restricted) {
    const outside = await checkOperands(settings, command, cwd, extractions, check);
    if (outside !== undefined) return outside;
  }
  return { cwd };
}

// ─── The limits of the checks before the run ────────────────────────────────────────────────────
//
// The workspace check reads the filesystem (every word resolved through symlinks, every directory
// a wildcard lists read): a hostile command can make that a lot of work (`echo d0/* … d99/*` over
// 100,000 symlinks). So it does one filesystem operation at a time (it never holds more than one
// of libuv's threads, which the rest of the process needs too), counts them, and stops at
// MAX_CHECK_OPERATIONS, at the call's timeout, or when its signal aborts. What it looked up once
// it knows for the rest of the check (a PathLookups): `d/a d/b …` reads `d` once, and only what is
// really read is counted.

/**
 * Most filesystem operations the checks before a run may do (a path component looked up, a
 * symlink read, a directory listed, an entry of it read); a command that needs more is refused.
 */
const MAX_CHECK_OPERATIONS = 4_000;
const ABORTED_BEFORE_START = "command aborted before it started";

/** Why the checks before the run stopped early. */
type CheckStop = "abort" | "timeout" | "too many";

/** What the checks before a run share: their budget, and what they already looked up. */
interface Check {
  readonly budget: CheckBudget;
  readonly lookups: PathLookups;
}

/** Thrown inside the checks when they must stop; never leaves {@link execute}. */
class CheckStopped extends Error {
  readonly reason: CheckStop;

  constructor(reason: CheckStop) {
    super(`the check before the run stopped: ${reason}`);
    this.reason = reason;
  }
}

function stoppedMessage(reason: CheckStop, timeoutMs: number): string {
  switch (reason) {
    case "abort":
      return ABORTED_BEFORE_START;
    case "timeout":
      return `command timed out after ${seconds(timeoutMs)} while its paths were checked; nothing ran`;
    default:
      return (
        `command refused: checking its paths takes more than ${MAX_CHECK_OPERATIONS.toLocaleString("en-US")} ` +
        "filesystem operations (paths looked up, directory entries read), too many to check; name fewer files, " +
        "or quote a pattern for a program that matches it itself (find . -name '*.ts')"
      );
  }
}

/**
 * The operations left to the checks before a run, and the call's deadline and signal: {@link spend}
 * before each filesystem operation throws {@link CheckStopped} once any of them is used up, and
 * {@link race} settles as soon as the deadline passes or the signal aborts, even while an
 * operation is still under way.
 */
class CheckBudget {
  #left: number;
  #stop: CheckStop | undefined;
  #wake: ((error: CheckStopped) => void) | undefined;
  readonly #deadline: number;
  readonly #timer: NodeJS.Timeout | undefined;
  readonly #unsubscribe: (() => void) | undefined;

  constructor(operations: number, timeoutMs: number, signal: AbortSignal) {
    this.#left = operations;
    this.#deadline = performance.now() + timeoutMs;
    if (signal.aborted) this.#stop = "abort";
    else this.#unsubscribe = subscribeAbort(signal, () => this.#halt("abort"));
    if (timeoutMs !== Number.POSITIVE_INFINITY) this.#timer = setTimeout(() => this.#halt("timeout"), timeoutMs);
  }

  /** Counts `count` operations about to be done; throws {@link CheckStopped} when the checks must stop. */
  spend(count = 1): void {
    if (this.#stop === undefined) {
      this.#left -= count;
      if (this.#left < 0) this.#stop = "too many";
    }
    if (this.#stop !== undefined) throw new CheckStopped(this.#stop);
  }

  /** Settles with `work`, or rejects with {@link CheckStopped} as soon as the deadline passes or the signal aborts. */
  race<T>(work: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.#stop !== undefined) reject(new CheckStopped(this.#stop));
      this.#wake = reject;
      work.then(resolve, reject);
    });
  }

  /** The milliseconds left until the deadline (`Infinity` without one). */
  remainingMs(): number {
    return this.#deadline - performance.now();
  }

  dispose(): void {
    clearTimeout(this.#timer);
    this.#unsubscribe?.();
    this.#wake = undefined;
  }

  #halt(reason: CheckStop): void {
    this.#stop ??= reason;
    this.#wake?.(new CheckStopped(this.#stop));
  }
}

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

const URL_PATTERN = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;
const FILE_URL = /^file:/i;
/** `..` as a path segment, also inside an option (`-o../x`) or after `=`. */
const PARENT_SEGMENT = /\.\.\/|(?:^|[/=])\.\.$|^-[A-Za-z]+\.\.$/;
const STAY_INSIDE = " (paths must stay inside the workspace)";
/** Expansions whose value is a number (`$?`, `$!`, `$$`, `$#`): never a path that leads anywhere. */
const NUMERIC_PARAMETERS = ["?", "!", "$", "#"];
/**
 * A variable that decides where `cd` goes, named as a variable (`read HOME`, `HOME=x`,
 * `export PWD`, `CDPATH=sub`), not expanded (`$HOME`).
 */
const NAMES_DIRECTORY_VARIABLE = /(?:^|[^A-Za-z0-9_$])(HOME|PWD|OLDPWD|CDPATH)(?![A-Za-z0-9_])/g;
const DIRECTORY_VARIABLES = ["HOME", "PWD", "OLDPWD", "CDPATH"];
/** A `$HOME` or `$PWD` expansion in a word's text. */
const HOME_OR_PWD_VALUE = /\$(HOME|PWD)(?![A-Za-z0-9_])/g;
/** Commands whose arguments come from their input, which the check cannot read. */
const ARGUMENTS_FROM_INPUT = new Set(["xargs", "parallel"]);
const CHANGE_DIRECTORY = new Set(["cd", "pushd"]);
const RUNTIME = "which the workspace check cannot see";

/**
 * The `$` expansions a restricted command may use: `$?`, `$!`, `$$`, `$#`; `$HOME` when it is the
 * workspace (the default) and `$PWD` (only a checked `cd` changes it), each unless the command
 * names the variable itself, which could give it any value (`read HOME < f`).
 */
function harmlessParameters(settings: ExecSettings, named: ReadonlySet<string>): Set<string> {
  const harmless = new Set(NUMERIC_PARAMETERS);
  if (!named.has("HOME") && settings.env.HOME === settings.workspace.workspace) harmless.add("HOME");
  if (!named.has("PWD")) harmless.add("PWD");
  return harmless;
}

/** Which of `HOME`, `PWD`, `OLDPWD` and `CDPATH` the words name as variables. */
function namedVariables(words: readonly CommandWord[]): Set<string> {
  const named = new Set<string>();
  for (const { text } of words) {
    for (const match of text.matchAll(NAMES_DIRECTORY_VARIABLE)) named.add(match[1] as string);
  }
  return named;
}

/** The word a `cd` or `pushd` at `index` changes to (after its options), if any. */
function directoryTarget(words: readonly CommandWord[], index: number): CommandWord | undefined {
  let next = index + 1;
  while (/^-[LPe@]+$|^--$/.test(words[next]?.text ?? "")) next++;
  return words[next];
}

/** Why a word is refused before any path check: a `$` expansion, `xargs`, a `cd` to a computed target. */
function runtimeRefusal(words: readonly CommandWord[], index: number, harmless: Set<string>): string | undefined {
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
 * path from that `/` on (which option letters end where is not known, so both are checked).
 */
function operandsOf(word: string): string[] {
  const parts: string[] = [];
  const equals = word.indexOf("=");
  if (equals !== -1) parts.push(word.slice(equals + 1));
  if (!word.startsWith("-")) parts.push(word);
  else if (equals === -1 && word.length > 2 && word[1] !== "-") {
    parts.push(word.slice(2));
    const slash = word.indexOf("/");
    if (slash > 1 && /^[A-Za-z]+$/.test(word.slice(1, slash))) parts.push(word.slice(slash));
  }
  return parts;
}

/** The path of a `file:` URL: `file:/p`, `file:///p` and `file://host/p` all name `/p`. */
function filePath(url: string): string {
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
function mayMatchParent(last: string): boolean {
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
function wildcardIndex(word: string): number {
  const star = word.search(/[*?]/);
  const open = word.indexOf("[");
  const bracket = open !== -1 && word.includes("]", open + 1) ? open : -1;
  if (star === -1) return bracket;
  return bracket === -1 ? star : Math.min(star, bracket);
}

async function checkOperands(
  settings: ExecSettings,
  command: string,
  cwd: string,
  extractions: readonly ArchiveExtraction[],
  check: Check,
): Promise<string | undefined> {
  // checkCommand refused inline shells nested too deep: every layer is here.
  const words = shellLayers(command).layers.flatMap((layer) => layer.words);
  const named = namedVariables(words);
  const harmless = harmlessParameters(settings, named);
  // Each candidate path, and whether the shell may expand it (an unquoted `*`, `?`, `[` or `{`).
  const candidates = new Map<string, boolean>();
  const add = (path: string, expands: boolean) => candidates.set(path, expands || candidates.get(path) === true);
  // Each directory a wildcard lists is read once per command, however many wildcards name it.
  const listed = new Map<string, Promise<DirectoryFinding>>();
  // Where a `cd` may lead: each word is checked from there too (`cd sub; cat leak/x`).
  const targets = new Set<string>();
  for (const [index, { text, expands }] of words.entries()) {
    const runtime = runtimeRefusal(words, index, harmless);
    if (runtime !== undefined) return `command refused: ${runtime}`;
    if (CHANGE_DIRECTORY.has(commandName(text))) {
      targets.add("~"); // a `cd` alone goes HOME
      const target = directoryTarget(words, index)?.text;
      if (target !== undefined && target !== "") targets.add(target);
    }
    if (PARENT_SEGMENT.test(text)) return `command refused: ${quoteName(text)} has a '..' segment${STAY_INSIDE}`;
    for (const part of operandsOf(text)) {
      if (named.has("HOME") && (part === "~" || part.startsWith("~/"))) {
        return `command refused: ${quoteName(part)} is HOME, which this command sets itself`;
      }
      if (FILE_URL.test(part)) {
        // A percent escape could spell `..` for the program that decodes it.
        if (part.includes("%")) return `command refused: ${quoteName(part)} is a file URL with a percent escape`;
        add(filePath(part), expands);
      } else if (!URL_PATTERN.test(part)) add(part, expands);
    }
  }
  const extraction = extractionOptionsRefusal(extractions, words);
  if (extraction !== undefined) return `command refused: ${extraction}`;
  const home = settings.env.HOME ?? settings.workspace.workspace;
  if (targets.size > 0) {
    // `cd` goes HOME, back to OLDPWD, along CDPATH: values the command (or options.env) may set.
    const variable = DIRECTORY_VARIABLES.find(
      (name) => named.has(name) || (name !== "HOME" && settings.env[name] !== undefined),
    );
    if (variable !== undefined) {
      return `command refused: it changes directory and sets ${variable}, which decides where cd goes, ${RUNTIME}`;
    }
    if (!(await isPermitted(settings, home, check))) {
      return "command refused: it changes directory, and a cd alone goes to HOME, which is outside the workspace";
    }
  }
  const directories = targets.size === 0 ? [cwd] : await reachableDirectories(settings, cwd, targets, check);
  if (directories === undefined) {
    return (
      `command refused: it may change into more than ${MAX_DIRECTORIES} directories, too many to check; ` +
      "use working_directory instead"
    );
  }
  // Where the extractions may write: the working directory unless they all send their files
  // elsewhere, and every directory a word names (`-C dir`, `-d dir`, find's start directories).
  const destinations =
    extractions.length > 0 && extractions.some(({ name, args }) => extractionTarget(name, args).workingDirectory)
      ? [...directories]
      : [];
  for (const [candidate, expands] of candidates) {
    // An absolute path or `~` names the same file from every directory.
    const from = isAbsolute(candidate) || candidate.startsWith("~") ? [cwd] : directories;
    for (const directory of from) {
      // The value of a harmless `$HOME` or `$PWD` is known: the path is checked with it.
      const path = candidate.replace(HOME_OR_PWD_VALUE, (_match, name: string) => (name === "HOME" ? home : directory));
      const refusal = await checkOperand(settings, path, expands, directory, listed, check);
      if (refusal !== undefined) return `command refused: ${refusal}`;
      if (extractions.length > 0) destinations.push(operandDirectory(settings, path, expands, directory));
    }
  }
  if (extractions.length === 0) return undefined;
  const refusal = await destinationRefusal(settings, destinations, check);
  return refusal === undefined ? undefined : `command refused: ${refusal}`;
}

/** Most directories a restricted command's `cd`s may lead to, each of which its words are checked from. */
const MAX_DIRECTORIES = 16;

/**
 * The working directory and every existing directory inside the workspace that the `cd` targets
 * lead to from it, repeatedly (a `cd sub` in a loop goes on into `sub/sub`); `undefined` when
 * there are more than {@link MAX_DIRECTORIES}. A target that leads outside is not followed: the
 * word itself is refused.
 */
async function reachableDirectories(
  settings: ExecSettings,
  cwd: string,
  targets: ReadonlySet<string>,
  check: Check,
): Promise<string[] | undefined> {
  const home = settings.env.HOME ?? settings.workspace.workspace;
  const found = new Set([cwd]);
  let frontier = [cwd];
  while (frontier.length > 0) {
    const next: string[] = [];
    for (const base of frontier) {
      for (const target of targets) {
        const path =
          target === "~" || target.startsWith("~/")
            ? join(home, target.slice(1))
            : isAbsolute(target)
              ? target
              : join(base, target);
        if (found.has(path) || (await permittedDirectory(settings, path, check)) === undefined) continue;
        found.add(path);
        if (found.size > MAX_DIRECTORIES) return undefined;
        next.push(path);
      }
    }
    frontier = next;
  }
  return [...found];
}

/** The absolute path a word (already checked by {@link checkOperand}) names from `cwd`; for a wildcard, the directory it lists. */
function operandDirectory(settings: ExecSettings, word: string, expands: boolean, cwd: string): string {
  let path = word;
  if (word === "~" || word.startsWith("~/"))
    path = join(settings.env.HOME ?? settings.workspace.workspace, word.slice(1));
  const wildcard = expands ? wildcardIndex(path) : -1;
  if (wildcard !== -1) path = path.slice(0, path.lastIndexOf("/", wildcard) + 1) || ".";
  return isAbsolute(path) ? path : join(cwd, path);
}

async function checkOperand(
  settings: ExecSettings,
  word: string,
  expands: boolean,
  cwd: string,
  listed: Map<string, Promise<DirectoryFinding>>,
  check: Check,
): Promise<string | undefined> {
  if (word === "") return undefined;
  const shown = quoteName(word);
  if (PARENT_SEGMENT.test(word)) return `${shown} has a '..' segment${STAY_INSIDE}`;
  let path = word;
  // HOME is the workspace unless options.env replaced it: where the shell's `~` leads.
  if (word === "~" || word.startsWith("~/"))
    path = join(settings.env.HOME ?? settings.workspace.workspace, word.slice(1));
  else if (word.startsWith("~")) return `${shown} names another user's home directory`;
  if (DEVICE_PATHS.has(path)) return undefined;
  // A shell whose sh is bash expands {.,.}. to `..`: a word that could hold a brace expansion is refused.
  if (expands && path.includes("{") && path.includes("}") && (path.includes(",") || path.includes(".."))) {
    return `${shown} may be a brace expansion, which could name any path`;
  }
  const wildcard = expands ? wildcardIndex(path) : -1;
  if (wildcard !== -1) {
    // What the shell would expand: only in the last part of a path, where the directory it lists
    // can be checked for symlinks that lead outside.
    if (path.includes("/", wildcard)) return `${shown} has a wildcard before its last '/'; name the directory`;
    if (mayMatchParent(path.slice(path.lastIndexOf("/") + 1))) {
      return `${shown} is a wildcard that may match '..' (sh expands .* and .? to it); name the files`;
    }
    const slash = path.lastIndexOf("/");
    const relative = slash === -1 ? "." : path.slice(0, slash + 1);
    const directory = isAbsolute(relative) ? relative : join(cwd, relative);
    let finding = listed.get(directory);
    if (finding === undefined) {
      finding = inspectDirectory(settings, directory, check);
      listed.set(directory, finding);
    }
    return wildcardRefusal(await finding, shown);
  }
  const absolute = isAbsolute(path) ? path : join(cwd, path);
  return (await isPermitted(settings, absolute, check)) ? undefined : `${shown} is outside the workspace`;
}

/**
 * The real path of `path` when the command may name it: it passes the path guard for both reading
 * and writing (a command may do either); `undefined` when it does not.
 */
async function permittedPath(settings: ExecSettings, path: string, check: Check): Promise<string | undefined> {
  const read = await resolveWorkspacePath(settings.workspace, path, "read", check.lookups);
  if (!read.ok) return undefined;
  // Everything the second resolution reads was read by the first: it costs nothing.
  const write = await resolveWorkspacePath(settings.workspace, path, "write", check.lookups);
  return write.ok ? read.path : undefined;
}

/** A path the command may name ({@link permittedPath}). */
async function isPermitted(settings: ExecSettings, path: string, check: Check): Promise<boolean> {
  return (await permittedPath(settings, path, check)) !== undefined;
}

/** The real path of `path` when it is a directory the command may name, else `undefined`. */
async function permittedDirectory(settings: ExecSettings, path: string, check: Check): Promise<string | undefined> {
  const real = await permittedPath(settings, path, check);
  // A real path has no symlink left: what it is was read while resolving it.
  return real !== undefined && (await check.lookups.entry(real)).kind === "directory" ? real : undefined;
}

/**
 * Whether an entry a directory listing gave is a symlink or a directory. Some filesystems do not
 * say what an entry is in a listing (d_type unknown: some XFS, NFS, FUSE mounts), and then Node's
 * entry answers `false` to every question: such an entry is looked up, or a symlink would pass as
 * "not a symlink".
 */
async function entryKind(entry: Dirent, path: string, check: Check): Promise<"link" | "directory" | "other"> {
  if (entry.isSymbolicLink()) return "link";
  if (entry.isDirectory()) return "directory";
  const known =
    entry.isFile() || entry.isFIFO() || entry.isSocket() || entry.isBlockDevice() || entry.isCharacterDevice();
  if (known) return "other";
  const { kind } = await check.lookups.entry(path);
  return kind === "link" || kind === "directory" ? kind : "other";
}

/** What a wildcard's directory holds, as far as the workspace check cares. */
type DirectoryFinding =
  | { kind: "fine" }
  | { kind: "outside" }
  | { kind: "too many" }
  | { kind: "symlink out"; name: string };

async function inspectDirectory(settings: ExecSettings, directory: string, check: Check): Promise<DirectoryFinding> {
  if (!(await isPermitted(settings, directory, check))) return { kind: "outside" };
  let listing: Awaited<ReturnType<typeof opendir>>;
  check.budget.spend();
  try {
    listing = await opendir(directory);
  } catch {
    return { kind: "fine" }; // nothing to expand: the shell passes the word as it is
  }
  let count = 0;
  // for await closes the directory however the loop ends.
  for await (const entry of listing) {
    if (++count > MAX_WILDCARD_ENTRIES) return { kind: "too many" };
    check.budget.spend();
    const path = join(directory, entry.name);
    if ((await entryKind(entry, path, check)) === "link" && !(await isPermitted(settings, path, check))) {
      return { kind: "symlink out", name: entry.name };
    }
  }
  return { kind: "fine" };
}

function wildcardRefusal(finding: DirectoryFinding, shown: string): string | undefined {
  switch (finding.kind) {
    case "outside":
      return `${shown} is outside the workspace`;
    case "too many":
      return `${shown} is a wildcard over more than ${MAX_WILDCARD_ENTRIES} entries, too many to check; name the files`;
    case "symlink out":
      return `${shown} could match ${quoteName(finding.name)}, a symlink that leads outside the workspace`;
    default:
      return undefined;
  }
}

// ─── Archive extraction (restricted mode) ───────────────────────────────────────────────────────
//
// An extraction creates what the archive holds, and GNU tar (like unzip) writes *through* a
// symlink to a directory that is already there: `link -> /outside` extracted in one call, then
// `link/x` in the next, writes outside the workspace. The command guard lets an extraction run
// only alone; here, every directory it may write into (the working directory, unless an option
// such as `tar -C dir` or `unzip -d dir` sends everything elsewhere, and every directory its words
// name) is walked, all the way down and through the symlinks that stay inside, and the command is
// refused when any symlink there leads outside — or when the walk takes more than the check's
// operations. Options that write the archive's own absolute paths and `..` (`tar -P`, `unzip -:`,
// cpio, pax) are refused, and so are the environment variables that give an extractor options the
// check cannot read (`TAR_OPTIONS`).

/** Why an extraction is refused before anything is read: options that write outside, or options the check cannot read. */
function extractionOptionsRefusal(
  extractions: readonly ArchiveExtraction[],
  words: readonly CommandWord[],
): string | undefined {
  if (extractions.length === 0) return undefined;
  for (const { name, args } of extractions) {
    const { unconfined } = extractionTarget(name, args);
    if (unconfined !== undefined) {
      return (
        `${unconfined} writes the paths an archive holds as they are (absolute ones, '..'), which may be outside ` +
        "the workspace; extract it with tar or unzip without that option (bsdtar also reads cpio and pax archives)"
      );
    }
  }
  const variable = words.find(({ text }) => EXTRACTOR_OPTION_VARIABLES.test(text));
  if (variable !== undefined) {
    const name = variable.text.slice(0, variable.text.indexOf("="));
    return `it extracts an archive and sets ${name}, options ${RUNTIME}; write the options in the command`;
  }
  return undefined;
}

/**
 * Walks every directory an extraction may write into (each of `roots` that is a directory the
 * command may name), and the directories below, following the symlinks that stay inside; a
 * refusal when a symlink there leads outside, or when the walk needs more operations than are left.
 */
async function destinationRefusal(
  settings: ExecSettings,
  roots: readonly string[],
  check: Check,
): Promise<string | undefined> {
  try {
    return await symlinkOutBelow(settings, roots, check);
  } catch (error) {
    if (!(error instanceof CheckStopped) || error.reason !== "too many") throw error;
    return (
      "it extracts an archive, which writes through any symlink below where it extracts, and checking those " +
      `directories for symlinks that lead outside the workspace takes more than ${MAX_CHECK_OPERATIONS.toLocaleString("en-US")} ` +
      "filesystem operations; extract into a new or small directory (tar -C dir, unzip -d dir, or working_directory)"
    );
  }
}

async function symlinkOutBelow(
  settings: ExecSettings,
  roots: readonly string[],
  check: Check,
): Promise<string | undefined> {
  const seen = new Set<string>();
  const pending: string[] = [];
  const enqueue = async (path: string) => {
    const real = await permittedDirectory(settings, path, check);
    if (real !== undefined && !seen.has(real)) {
      seen.add(real);
      pending.push(real);
    }
  };
  for (const root of roots) await enqueue(root);
  const workspace = await check.lookups.realWorkspace(settings.workspace.workspace);
  for (let directory = pending.pop(); directory !== undefined; directory = pending.pop()) {
    check.budget.spend();
    let listing: Awaited<ReturnType<typeof opendir>>;
    try {
      listing = await opendir(directory);
    } catch {
      continue; // gone, or not readable: nothing to write through that the check could see
    }
    // for await closes the directory however the loop ends.
    for await (const entry of listing) {
      check.budget.spend();
      const path = join(directory, entry.name);
      const kind = await entryKind(entry, path, check);
      if (kind === "directory") {
        // A real path: its parent is one, and it is no symlink.
        if (!seen.has(path)) {
          seen.add(path);
          pending.push(path);
        }
      } else if (kind === "link") {
        if (!(await isPermitted(settings, path, check))) {
          // Named from the workspace (a host path the model did not send is never shown).
          const shown = workspace !== undefined && isInside(path, workspace) ? relative(workspace, path) : entry.name;
          return (
            `it extracts an archive where ${quoteName(shown)} is a symlink that leads outside the workspace, ` +
            "which the extraction could write through; remove the symlink, or extract into another directory"
          );
        }
        await enqueue(path);
      }
    }
  }
  return undefined;
}

// ─── Running the command ────────────────────────────────────────────────────────────────────────

/**
 * One output stream, kept up to `limit` characters; the rest is only counted, so a flood (`yes`)
 * costs no more memory than the limit.
 */
class BoundedText {
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
function formatOutput(stdout: BoundedText, stderr: BoundedText, max: number): string {
  let kept = stdout.kept;
  let total = stdout.total;
  if (stderr.total > 0) {
    const header = stdout.total === 0 || stdout.last === "\n" ? "STDERR:\n" : "\nSTDERR:\n";
    kept += header + stderr.kept;
    total += header.length + stderr.total;
  }
  if (total === 0) return "(no output)";
  if (total <= max) return kept;
  let cut = max;
  const last = kept.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut--; // never end on half a surrogate pair
  return `${kept.slice(0, cut)}\n... (truncated, ${total - cut} more chars)`;
}

/** The sessions of the commands running now, killed if this process exits first (a detached session would outlive it). */
const running = new Set<ProcessSession>();
let exitHookInstalled = false;

function track(session: ProcessSession): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on("exit", () => {
      for (const each of running) each.endSync();
    });
  }
  running.add(session);
}

type Ending =
  | { kind: "exit"; code: number | null; signal: NodeJS.Signals | null }
  | { kind: "timeout" }
  | { kind: "abort" }
  | { kind: "error"; error: Error };

function run(
  settings: ExecSettings,
  command: string,
  cwd: string,
  context: ToolContext,
  timeoutMs: number,
): Promise<ToolResult> {
  const { signal } = context;
  const stdout = new BoundedText(settings.maxOutputChars);
  const stderr = new BoundedText(settings.maxOutputChars);
  return new Promise<ToolResult>((resolve) => {
    let child: ChildProcess;
    try {
      child = spawn("/bin/sh", ["-c", command], {
        cwd,
        env: settings.env,
        // Its own session and process group, so that a timeout or an abort finds everything it started.
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
    } catch (error) {
      resolve(startFailure(error));
      return;
    }
    // Read now, before the shell can be reaped: it identifies the session (see process-session.ts).
    const session = child.pid === undefined ? undefined : new ProcessSession(child.pid);
    let ending: Ending | undefined;
    let timer: NodeJS.Timeout | undefined;
    let grace: NodeJS.Timeout | undefined;
    let closed = false;
    let ended = session === undefined;
    let done = false;

    if (session !== undefined) track(session);
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearTimeout(grace);
      signal.removeEventListener("abort", onAbort);
      child.stdout?.destroy();
      child.stderr?.destroy();
      stdout.end();
      stderr.end();
      resolve(result(ending, formatOutput(stdout, stderr, settings.maxOutputChars), settings.timeoutMs));
    };
    /** Every process of the session is gone (or as many as could be killed): the result may go. */
    const onEnded = () => {
      ended = true;
      if (session !== undefined) {
        running.delete(session);
        const { survivors } = session;
        if (survivors > 0) {
          context.logger.warn(
            { pid: session.pid, survivors },
            "execute_bash: processes of the command survived every kill",
          );
        }
      }
      // The pipes close once every process holding them died; one that left the session may not.
      if (closed) finish();
      else grace ??= setTimeout(finish, CLOSE_GRACE_MS);
    };
    const stop = (why: Ending) => {
      // Ended once: after the session is gone its ids may be reused, so a later kill could hit another.
      if (ending !== undefined) return;
      ending = why;
      clearTimeout(timer);
      if (session === undefined) return;
      void session.end().then(onEnded, onEnded);
    };
    const onAbort = () => stop({ kind: "abort" });

    child.stdout?.on("data", (chunk: Buffer) => stdout.write(chunk));
    child.stderr?.on("data", (chunk: Buffer) => stderr.write(chunk));
    child.on("error", (error) => {
      // Not started (no pid), or a failure while it runs: nothing of it may stay behind.
      if (ending === undefined) stop({ kind: "error", error });
      if (ended) finish();
    });
    // The shell is done (and reaped): what it left running is killed too (no orphans).
    child.on("exit", (code, exitSignal) => {
      if (session !== undefined) session.leaderReaped = true;
      stop({ kind: "exit", code, signal: exitSignal });
    });
    child.on("close", () => {
      closed = true;
      if (ended) finish();
    });
    signal.addEventListener("abort", onAbort, { once: true });
    if (timeoutMs !== Number.POSITIVE_INFINITY) {
      timer = setTimeout(() => stop({ kind: "timeout" }), timeoutMs);
    }
  });
}

function startFailure(error: unknown): ToolResult {
  const result = errorResult(`the command could not be started: ${errorMessage(error)}`);
  return error instanceof Error ? result.withError(error) : result;
}

function result(ending: Ending | undefined, text: string, timeoutMs: number): ToolResult {
  const output = text.endsWith("\n") ? text.slice(0, -1) : text;
  switch (ending?.kind) {
    case "timeout":
      return errorResult(`command timed out after ${seconds(timeoutMs)}\n${output}`);
    case "abort":
      return errorResult(`command aborted\n${output}`);
    case "error":
      return startFailure(ending.error);
    case "exit":
      if (ending.code === 0) return newToolResult(output);
      if (ending.code !== null) return errorResult(`${output}\n[exit code ${ending.code}]`);
      return errorResult(`${output}\n[killed by signal ${ending.signal ?? "unknown"}]`);
    default:
      return errorResult(`${output}\n[the command ended without an exit status]`);
  }
}
