import { abbreviates } from "./archive-extraction.js";

// Command lines that programs run from their own options: `tar --to-command='…'`, `tar -I '…'`,
// `zip -TT '…'`, `rsync -e '…'`, `flock f -c '…'`, `git -c core.pager='…'`, `watch '…'`, and
// environment variables such as `GIT_SSH_COMMAND='…'`. Each runs its string through `sh -c` (or
// splits it and runs it, which is no safer), so the command guard checks such a string like the
// script of an inline shell (`sh -c '…'`): every rule, the caller's patterns, no `$`, and in
// restricted mode its words as paths. Read from words only; linear in them.

/** The programs {@link programScripts} reads. */
export const SCRIPT_PROGRAMS: readonly string[] = [
  "tar",
  "gtar",
  "bsdtar",
  "zip",
  "rsync",
  "flock",
  "script",
  "watch",
  "git",
  "runuser",
  "su",
  "sg",
];

/**
 * The command lines the program `name` (one of {@link SCRIPT_PROGRAMS}) runs from these arguments:
 * - tar: `--to-command`, `--use-compress-program`/`-I`, `--info-script`/`-F`,
 *   `--new-volume-script`, `--rsh-command`, `--rmt-command`, `--checkpoint-action=exec=…`;
 * - zip: `-TT`/`--unzip-command`; rsync: `-e`/`--rsh`, `--rsync-path`;
 * - flock, script, runuser, su: `-c`/`--command`; sg: its command; watch: its command words;
 * - git: the value of each `-c name=value` (without a leading `!`), `--exec`/`-x`, `--extcmd`,
 *   `--upload-pack`, `--receive-pack`, `-O`, filter-branch's `--…-filter`s, and the words after
 *   `foreach` or `run`.
 *
 * Long options are also recognised by any prefix (GNU getopt takes an unambiguous one). Errs
 * towards finding more: a value read as a script when it is not one is only checked more.
 */
export function programScripts(name: string, args: readonly string[]): string[] {
  switch (name) {
    case "tar":
    case "gtar":
    case "bsdtar":
      return tarScripts(args);
    case "zip":
      return optionScripts(args, { long: ["--unzip-command"], short: "", valued: "", zipTest: true });
    case "rsync":
      return optionScripts(args, { long: ["--rsh", "--rsync-path"], short: "e", valued: "BTfM@" });
    case "flock": {
      // `flock file -c command`, or `flock file command args…`, which runs its words as they are.
      const scripts = optionScripts(args, { long: ["--command"], short: "c", valued: "wE" });
      const command = commandAfter(args, "wE", ["--timeout", "--conflict-exit-code"], 1);
      // After the file, only -c / --command may start with `-`.
      if (command !== undefined && !(command[0] as string).startsWith("-")) scripts.push(argvLine(command));
      return scripts;
    }
    case "script":
      return optionScripts(args, { long: ["--command"], short: "c", valued: "EIOBTmo" });
    case "runuser":
    case "su": {
      const scripts = optionScripts(args, { long: ["--command", "--session-command"], short: "c", valued: "ugGsw" });
      // `runuser -u user [--] command args…` runs its words as they are.
      const valued = ["--user", "--group", "--supp-group", "--shell", "--whitelist-environment", "--command"];
      const command = commandAfter(args, "cugGsw", valued, 0);
      if (command !== undefined && args.some((arg) => /^-[A-Za-z]*u|^--user/.test(arg)))
        scripts.push(argvLine(command));
      return scripts;
    }
    case "sg":
      return sgScripts(args);
    case "watch":
      return watchScripts(args);
    case "git":
      return gitScripts(args);
    default:
      return [];
  }
}

/** Where a program's options hold a command line: long ones, short letters, and the letters that take another value (a bundle of short options ends there). */
interface ScriptOptions {
  readonly long: readonly string[];
  readonly short: string;
  readonly valued: string;
  /** zip's two-letter `-TT`. */
  readonly zipTest?: boolean;
}

/** The value of a long option `--name=value` or `--name value` at `index` when `name` abbreviates one of `long`. */
function longValue(args: readonly string[], index: number, long: readonly string[]): string | undefined {
  const arg = args[index] as string;
  const equals = arg.indexOf("=");
  const name = equals === -1 ? arg : arg.slice(0, equals);
  if (!long.some((option) => abbreviates(name, option))) return undefined;
  return equals === -1 ? args[index + 1] : arg.slice(equals + 1);
}

/**
 * The value of short option `letter` in the bundle at `index` (`-e cmd`, `-ecmd`, `-avze cmd`), when
 * it comes before any letter of `valued`; a leading `=` dropped (some parsers keep it, some do not).
 */
function shortValue(args: readonly string[], index: number, letters: string, valued: string): string | undefined {
  const arg = args[index] as string;
  for (let letter = 1; letter < arg.length; letter++) {
    const char = arg.charAt(letter);
    if (letters.includes(char)) {
      const rest = arg.slice(letter + 1).replace(/^=/, "");
      return rest !== "" ? rest : args[index + 1];
    }
    if (valued.includes(char)) return undefined;
  }
  return undefined;
}

function optionScripts(args: readonly string[], options: ScriptOptions): string[] {
  const scripts: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] as string;
    if (arg === "--") break;
    let script: string | undefined;
    if (arg.startsWith("--")) script = longValue(args, index, options.long);
    else if (options.zipTest === true && /^-[A-Za-z]*TT/.test(arg)) {
      const rest = arg.slice(arg.indexOf("TT") + 2).replace(/^=/, "");
      script = rest !== "" ? rest : args[index + 1];
    } else if (arg.startsWith("-") && options.short !== "") {
      script = shortValue(args, index, options.short, options.valued);
    }
    if (script !== undefined && script !== "") scripts.push(script);
  }
  return scripts;
}

/**
 * The words after a program's options and its first `operands` operands (`flock file command …`):
 * a command it runs as it is; `undefined` when there are none. `valued`: short options that take
 * the next word when they end their bundle; `longValued`: long ones that take it without `=`.
 */
function commandAfter(
  args: readonly string[],
  valued: string,
  longValued: readonly string[],
  operands: number,
): string[] | undefined {
  let index = 0;
  for (; index < args.length; index++) {
    const arg = args[index] as string;
    if (arg === "--") {
      index++;
      break;
    }
    if (!arg.startsWith("-") || arg === "-") break;
    if (arg.startsWith("--")) {
      if (!arg.includes("=") && longValued.some((option) => abbreviates(arg, option))) index++;
      continue;
    }
    // The first letter that takes a value takes the rest of the bundle, or the next word.
    const letter = [...arg.slice(1)].findIndex((char) => valued.includes(char));
    if (letter === arg.length - 2) index++;
  }
  const command = args.slice(index + operands);
  return command.length === 0 ? undefined : command;
}

/** Words run as they are (no shell), as a command line that reads the same: each single-quoted. */
function argvLine(words: readonly string[]): string {
  return words.map((word) => `'${word.replace(/'/g, "'\\''")}'`).join(" ");
}

/** tar's long options whose value is a command line it runs. */
const TAR_SCRIPT_OPTIONS = [
  "--to-command",
  "--use-compress-program",
  "--info-script",
  "--new-volume-script",
  "--rsh-command",
  "--rmt-command",
];
/** tar's short options that take a value, in GNU tar and bsdtar together (a bundle ends at one of them). */
const TAR_VALUED = "bCfFgHIKLNTVXs";
/** Those of {@link TAR_VALUED} that take a value in one of GNU tar and bsdtar only. */
const TAR_EITHER = "FgHKLNVs";

function tarScripts(args: readonly string[]): string[] {
  const scripts: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] as string;
    if (arg === "--") break;
    if (arg.startsWith("--")) {
      const script = longValue(args, index, TAR_SCRIPT_OPTIONS);
      if (script !== undefined && script !== "") scripts.push(script);
      // `--checkpoint-action=exec=command`
      const action = longValue(args, index, ["--checkpoint-action"]);
      if (action?.startsWith("exec=") === true && action.length > 5) scripts.push(action.slice(5));
      continue;
    }
    if (index === 0 && !arg.startsWith("-")) {
      // Old-style options (`xIf zstd a.tar`): each letter that takes a value takes the next word in
      // turn. Where a letter takes one in one tar and not in the other, which word is -I's is not
      // known: then every such word is read.
      if (!/[IF]/.test(arg)) continue;
      const letters = [...arg].filter((char) => TAR_VALUED.includes(char));
      const unsure = letters.some((char) => TAR_EITHER.includes(char));
      letters.forEach((char, at) => {
        const value = args[1 + at];
        if (value !== undefined && value !== "" && (unsure || char === "I" || char === "F")) scripts.push(value);
      });
      continue;
    }
    if (!arg.startsWith("-")) continue;
    const script = shortValue(args, index, "IF", TAR_VALUED.replace(/[IF]/g, ""));
    if (script !== undefined && script !== "") scripts.push(script);
  }
  return scripts;
}

/** watch's options that take a value (short, and long without `=`). */
const WATCH_VALUED = "nq";
const WATCH_LONG_VALUED = ["--interval", "--equexit"];

/** watch runs its command words, joined by blanks, with `sh -c` (also with `-x`, read the same way here). */
function watchScripts(args: readonly string[]): string[] {
  const command = commandAfter(args, WATCH_VALUED, WATCH_LONG_VALUED, 0)?.join(" ") ?? "";
  return command === "" ? [] : [command];
}

/** `sg [-] group [-c] command`: the command, run with `sh -c`. */
function sgScripts(args: readonly string[]): string[] {
  let index = args[0] === "-" ? 1 : 0;
  index++; // the group
  if (args[index] === "-c") index++;
  const command = args[index];
  return command === undefined || command === "" ? [] : [command];
}

/** git's long options whose value is a command line it runs. */
const GIT_SCRIPT_OPTIONS = ["--exec", "--extcmd", "--upload-pack", "--receive-pack", "--open-files-in-pager"];

function gitScripts(args: readonly string[]): string[] {
  const scripts: string[] = [];
  const push = (script: string | undefined) => {
    // A `!` starts a shell command in an alias (`alias.x=!…`) or a credential helper.
    const command = script?.replace(/^!+/, "");
    if (command !== undefined && command !== "") scripts.push(command);
  };
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] as string;
    if (arg === "-c" || (arg.startsWith("-c") && arg.includes("="))) {
      // `-c name=value`: any setting may name a command (core.pager, core.sshCommand, alias.*, core.fsmonitor …).
      const setting = arg === "-c" ? args[index + 1] : arg.slice(2);
      const equals = setting?.indexOf("=") ?? -1;
      if (setting !== undefined && equals !== -1) push(setting.slice(equals + 1));
    } else if (arg.startsWith("--")) {
      push(longValue(args, index, GIT_SCRIPT_OPTIONS));
      if (/^--[a-z-]+-filter(?:=|$)/.test(arg))
        push(arg.includes("=") ? arg.slice(arg.indexOf("=") + 1) : args[index + 1]);
    } else if (arg === "-x") push(args[index + 1]);
    else if (/^-[xO]./.test(arg)) push(arg.slice(2));
    else if (arg === "foreach" || arg === "run") {
      // `submodule foreach [--recursive] command…`, `bisect run command…`: the rest is the command.
      let start = index + 1;
      while (args[start]?.startsWith("-") === true) start++;
      push(args.slice(start).join(" "));
      break;
    }
  }
  return scripts;
}

/** Environment variables whose value a program runs as a command line (`GIT_SSH_COMMAND`, `PAGER` …). */
const COMMAND_VARIABLES = new Set([
  "RSYNC_RSH",
  "RSYNC_CONNECT_PROG",
  "GIT_SSH",
  "GIT_SSH_COMMAND",
  "GIT_PAGER",
  "GIT_EDITOR",
  "GIT_SEQUENCE_EDITOR",
  "GIT_EXTERNAL_DIFF",
  "GIT_ASKPASS",
  "SSH_ASKPASS",
  "GIT_PROXY_COMMAND",
  "PAGER",
  "MANPAGER",
  "EDITOR",
  "VISUAL",
  "LESSOPEN",
  "LESSCLOSE",
]);
/** Environment variables that hold a program's options, checked as that program's command line. */
const OPTION_VARIABLES: Readonly<Record<string, string>> = { TAR_OPTIONS: "tar", ZIPOPT: "zip" };

/**
 * The command line a word that sets an environment variable (`GIT_SSH_COMMAND=…`, as an
 * assignment, or for `env` or `export`) makes a program run: the value of a variable that holds a
 * command (`GIT_PAGER`, `RSYNC_RSH`, `GIT_CONFIG_VALUE_0` …); for `TAR_OPTIONS` and `ZIPOPT`, the
 * program with those options (`tar --to-command=…`), whose scripts are read in turn.
 */
export function variableScript(word: string): string | undefined {
  const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(word);
  if (match === null) return undefined;
  const [, name = "", value = ""] = match;
  if (value === "") return undefined;
  const program = OPTION_VARIABLES[name];
  if (program !== undefined) return `${program} ${value}`;
  if (!COMMAND_VARIABLES.has(name) && !/^GIT_CONFIG_VALUE_\d+$/.test(name)) return undefined;
  // LESSOPEN's `|` / `||` / `|-` say how to pipe; a git value's `!` that it is a command.
  const command = value.replace(/^(?:\|\|?-?|!+)/, "");
  return command === "" ? undefined : command;
}

/** (De)compressors that only filter their input to their output when given nothing but options. */
const COMPRESSORS = new Set([
  "gzip",
  "gunzip",
  "zcat",
  "pigz",
  "unpigz",
  "bzip2",
  "bunzip2",
  "bzcat",
  "pbzip2",
  "lbzip2",
  "xz",
  "unxz",
  "xzcat",
  "pixz",
  "lzma",
  "unlzma",
  "lzcat",
  "lzip",
  "plzip",
  "lzop",
  "lz4",
  "unlz4",
  "lz4cat",
  "zstd",
  "unzstd",
  "zstdcat",
  "pzstd",
  "brotli",
  "compress",
  "uncompress",
]);

/**
 * Whether a command line (its words, quotes removed) is a compressor with options only (`zstd`,
 * `xz -T0`, `/usr/bin/pigz -d`): what `tar -I` runs as a filter of the archive, which reads no
 * path of its own. Such a program may run alongside an extraction; any other may not.
 */
export function isCompressorFilter(words: readonly string[]): boolean {
  const [program, ...options] = words;
  if (program === undefined) return false;
  return COMPRESSORS.has(program.slice(program.lastIndexOf("/") + 1)) && options.every((word) => word.startsWith("-"));
}
