import { RE2JS } from "re2js";

// The command guard of `execute_bash`: what a command is matched on (its normalised form), the
// default deny list, and the shell-like split into words that the workspace check reads. Nothing
// here touches the filesystem or starts a process.

/**
 * Longest command `execute_bash` accepts, in characters. Every check below is linear in the
 * command, and the caller's own patterns run on V8's backtracking engine: the bound keeps both
 * cheap. A longer command is refused (the model is told to write a script file and run that).
 */
export const MAX_COMMAND_CHARS = 8_192;

/** One rule of the default deny list: what the model is told, and an RE2 pattern on the normalised command. */
export interface DenyRule {
  /** What the refusal names (`command refused by the deny list: <name>`). */
  readonly name: string;
  /** RE2 syntax (linear-time engine), matched on {@link normalizeCommand}'s output. */
  readonly pattern: string;
}

// Building blocks. The normalised command is lower case, single-spaced, without quotes or
// backslashes, newlines turned into `;` (see normalizeCommand).
/** The rest of a simple command: anything up to a separator, then a space. */
const ARGS = String.raw`(?:[^;&|()]*\s)?`;
/** One word of the normalised command (no blank, no separator). */
const WORD = String.raw`[^\s;&|()]`;
/** Where a command name starts: the start, after a separator, or after a keyword that a command follows. */
const START = String.raw`(?:^|[;&|()!{]\s?|\b(?:then|do|else|elif|if|while|until)\s)`;
/**
 * What may come before a command name: assignments (`a=1 $cmd`, bash's `a[0]=1`, `a+=1`) and
 * redirections (`>out $cmd`, `2> /dev/null $cmd`, `>|out`, bash's `{fd}>out`), any number of them.
 */
const PREFIX = String.raw`(?:(?:[a-z_][a-z0-9_]*(?:\[[^\]\s;&|()]*\])?\+?=${WORD}*|(?:[0-9]*|\{[a-z_][a-z0-9_]*\})[<>]+[&|]?\s?[^\s;&|()<>]*)\s)*`;
/** The shells, as command names (`sh -c`, `| bash`, `xargs sh`). */
const SHELL_NAMES = [
  "sh",
  "bash",
  "dash",
  "zsh",
  "ksh",
  "mksh",
  "csh",
  "tcsh",
  "fish",
  "ash",
  "yash",
  "posh",
  "rbash",
  "rksh",
  "pdksh",
  "oksh",
  "pwsh",
  "elvish",
  "busybox",
  "toybox",
];
const SHELLS = SHELL_NAMES.join("|");
/**
 * Commands that run another command given later in their arguments (after options and values of
 * their own, such as `timeout 5 cmd`): any word after them may be a command name.
 */
const WRAPPERS = [
  "timeout",
  "stdbuf",
  "ionice",
  "taskset",
  "flock",
  "chrt",
  "nohup",
  "nice",
  "env",
  "command",
  "builtin",
  "exec",
  "xargs",
  "parallel",
  "time",
  "setsid",
  "sudo",
  "doas",
  "su",
  "pkexec",
  "runuser",
  "chroot",
  "unshare",
  "nsenter",
  "setpriv",
  "prlimit",
  "numactl",
  "cgexec",
  "unbuffer",
  "watch",
  "script",
  "strace",
  "ltrace",
  "fakeroot",
  "proot",
  "firejail",
  "eatmydata",
  "catchsegv",
  "sg",
  "newgrp",
  "busybox",
  "toybox",
  "coproc",
  "setarch",
  "linux32",
  "linux64",
  "arch",
  "torsocks",
  "proxychains",
  "proxychains4",
  "xvfb-run",
  "dbus-run-session",
  "ssh-agent",
  "faketime",
  "rlwrap",
  "chronic",
  "ifne",
  "sem",
  "nocache",
  "cpulimit",
  "trickle",
  "systemd-inhibit",
  "daemonize",
  "start-stop-daemon",
  "gosu",
  "su-exec",
  "chpst",
  "softlimit",
  "setuidgid",
  "tini",
  "dumb-init",
  "entr",
  "valgrind",
  "perf",
  "hyperfine",
  "capsh",
  "runcon",
  "bwrap",
  "lckdo",
  "run-one",
].join("|");
/** A wrapper in command position (also as a path, `/usr/bin/timeout`), or find's `-exec` family. */
const WRAPPER_START = String.raw`(?:${START}${PREFIX}(?:${WORD}*/)?(?:${WRAPPERS})|\s-(?:exec|execdir|ok|okdir))\s`;
/** The end of a word of the normalised command. */
const WORD_END = String.raw`(?:$|[\s;&|()<>])`;

export const DEFAULT_DENY_RULES: readonly DenyRule[] = Object.freeze([
  {
    // GNU getopt takes any unambiguous prefix of a long option: --r, --rec, --fo …
    name: "rm with -r/-f (or a $variable argument)",
    pattern: String.raw`\brm\s${ARGS}(?:-[a-z]*[rf]|--[rf]|\S*\$)`,
  },
  {
    name: "filesystem or partition tools (mkfs, wipefs, fdisk …)",
    pattern: String.raw`\b(?:mkfs|mke2fs|mkswap|wipefs|fdisk|sfdisk|parted)\b`,
  },
  { name: "dd with if= or of=", pattern: String.raw`\bdd\s${ARGS}(?:if|of)=` },
  { name: "find -delete", pattern: String.raw`\bfind\s${ARGS}-delete\b` },
  { name: "shred", pattern: String.raw`\bshred\b` },
  { name: "shell function definition (fork bomb)", pattern: String.raw`\(\s?\)\s?\{|\bfunction\s` },
  { name: "privilege escalation (sudo, su, doas, pkexec)", pattern: String.raw`\b(?:sudo|su|doas|pkexec)\b` },
  { name: "shutdown, reboot, poweroff, halt", pattern: String.raw`\b(?:shutdown|reboot|poweroff|halt)\b` },
  {
    name: "a pipe into a shell (curl … | sh)",
    pattern: String.raw`\|&?\s?(?:(?:${WORD}*/)?(?:${WRAPPERS})\s(?:[^;&|()]*[\s/])?|(?:${WORD}*/)?)(?:${SHELLS})${WORD_END}`,
  },
  {
    name: "xargs running a shell (… | xargs sh -c)",
    pattern: String.raw`(?:^|[\s;&|(/])xargs\s(?:[^;&|()]*[\s/])?(?:${SHELLS})${WORD_END}`,
  },
  {
    // It runs its input, or its `:::` arguments, as shell commands when given none: a shell.
    name: "GNU parallel (runs its input as shell commands)",
    pattern: String.raw`(?:^|[\s;&|(/])parallel${WORD_END}`,
  },
  { name: "process substitution <(…) / >(…)", pattern: String.raw`[<>]\(` },
  {
    name: "a block device (/dev/sda …)",
    pattern: String.raw`/dev/(?:sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|disk\d|dm-\d|mapper/|loop\d|md\d|sr\d)`,
  },
  {
    name: "chmod making files world-writable or setuid (chmod 777 …)",
    // numeric modes giving others write (…2, …3, …6, …7) or setuid/setgid (2xxx-7xxx); symbolic
    // modes giving a/o write (no "who" means all) or s, also inside a comma list (u+x,o+w).
    pattern: String.raw`\bchmod\s${ARGS}(?:[0-7]?[0-7][0-7][2367]\b|[2-7][0-7]{3}\b|(?:\S*,)?(?:[ug]*[ao][ugo]*)?[+=][rwxt]*w|(?:\S*,)?[ugoa]*[+=][rwxt]*s)`,
  },
  { name: "chown", pattern: String.raw`\bchown\b` },
  { name: "kill, pkill, killall", pattern: String.raw`\b(?:kill|pkill|killall|killall5|skill)\b` },
  { name: "setsid (leaving the command's process group)", pattern: String.raw`\bsetsid\b` },
  {
    name: "scheduled jobs, services and containers (crontab, systemd-run, docker run …)",
    pattern: String.raw`\b(?:crontab|systemd-run)\b|\b(?:docker|podman)\s${ARGS}(?:run|exec)\b`,
  },
  { name: "network redirection (/dev/tcp, /dev/udp)", pattern: "/dev/(?:tcp|udp)/" },
  {
    // /proc/<pid>/environ holds this process's secrets, readable by any program of the same user.
    // Also relative (`proc/…` after enough `cd`), and any word reaching such a file from elsewhere
    // (`cd /proc/1; cat environ`): `environ` and `mem` as words or path parts, `fd`, `root`,
    // `cwd`, `maps`, `exe` as the part after a directory (`self/fd`); a wildcard after `proc/`.
    name: "another process's environment, memory or files (/proc/…/environ, mem, fd, root, cwd)",
    pattern: String.raw`(?:^|[\s/<>=])proc/${WORD}*(?:environ|mem|fd|root|cwd|maps|\$|[*?[])|(?:^|[\s/<>=])(?:environ|mem)${WORD_END}|${WORD}/(?:fd|root|cwd|maps|exe)${WORD_END}`,
  },
  { name: "git push", pattern: String.raw`\bgit\s${ARGS}push\b` },
  { name: "ssh, scp, sftp", pattern: String.raw`\b(?:ssh|scp|sftp)(?:\s|$|;)` },
  { name: "eval", pattern: String.raw`\beval\b` },
  { name: "alias", pattern: String.raw`\balias\b` },
  {
    name: "source or . (running a file in this shell)",
    pattern: String.raw`\bsource\s|${START}${PREFIX}(?:(?:command|builtin)\s(?:-${WORD}*\s)*)?\.\s`,
  },
  { name: "command substitution $(…)", pattern: String.raw`\$\(` },
  { name: "command substitution with backticks", pattern: "`" },
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the name quotes shell syntax
  { name: "parameter expansion ${…}", pattern: String.raw`\$\{` },
  { name: "$IFS", pattern: String.raw`\$ifs\b` },
  {
    // After assignments and redirections too (`a=1 $cmd`, `>out $cmd`).
    name: "a $variable in the command name",
    pattern: String.raw`${START}${PREFIX}${WORD}*\$`,
  },
  {
    // `timeout 5 $cmd`, `nice -n 5 $cmd`: which word a wrapper runs is not known, so none may hold a `$`.
    name: "a $variable after a command that runs another (timeout, nice, env, xargs, find -exec …)",
    pattern: String.raw`${WRAPPER_START}[^;&|()]*\$`,
  },
  {
    // `a=rm; timeout 5 $a -rf x`: rm kept in a variable, or handed to another command.
    name: "rm as a word without arguments (a=rm; … $a)",
    pattern: String.raw`\brm\s?(?:$|[;&|)])`,
  },
  { name: "heredoc or herestring (<<)", pattern: "<<" },
]);

/**
 * Refused before normalisation, since normalising hides them: ANSI-C and locale quoting
 * (`$'\x72m'` spells `rm`), and NUL, which no command can hold.
 */
const RAW_RULES: ReadonlyArray<{ readonly name: string; readonly test: RegExp }> = [
  { name: "ANSI-C or locale quoting ($'…', $\"…\")", test: /\$['"]/ },
  { name: "a NUL character", test: /\0/ },
];

let defaultsCompiled: { any: RE2JS; each: RE2JS[] } | undefined;

/** The default rules compiled for re2js once, on first use: one pattern for them all, and one each to name the match. */
function compiledDefaults(): { any: RE2JS; each: RE2JS[] } {
  defaultsCompiled ??= {
    any: RE2JS.compile(DEFAULT_DENY_RULES.map((rule) => `(?:${rule.pattern})`).join("|")),
    each: DEFAULT_DENY_RULES.map((rule) => RE2JS.compile(rule.pattern)),
  };
  return defaultsCompiled;
}

/**
 * The form of a command that deny and allow patterns are matched on: lower case; a
 * backslash-newline (line continuation) removed; `$@`, `$*` and `$1`…`$9` removed (they are
 * empty in `sh -c command`, so `r$@m` is `rm`); every backslash, single and double quote removed
 * (`r\m`, `"rm"`, `'r'm`, `r""m` all read `rm`); each newline a `;`; every run of white space one
 * space; trimmed. It over-approximates the shell (`echo "a;b"` reads `echo a;b`), which can only
 * refuse more, never less. Linear in the command.
 */
export function normalizeCommand(command: string): string {
  // Empty in `sh -c command` (no arguments): `r$@m` is `rm`.
  return normalise(command.replace(/\$[@*1-9]/g, ""));
}

/**
 * {@link normalizeCommand} without removing `$@`, `$*`, `$1`…`$9`: the command may set them
 * (`set -- r m; $1$2 -rf x`), so the default rules also run on this form, where they are a `$`.
 */
function normalise(command: string): string {
  return command
    .toLowerCase()
    .replace(/\\\r?\n/g, "")
    .replace(/[\\'"]/g, "")
    .replace(/[\r\n]+/g, ";")
    .replace(/\s+/g, " ")
    .trim();
}

/**
 * The simple commands of a normalised command, for allow patterns: split at `;`, `&`, `|`, `(`,
 * `)` (not the `&` of a redirection such as `2>&1` or `&>`), each trimmed, empty ones dropped.
 */
export function simpleCommands(normalised: string): string[] {
  return normalised
    .replace(/([<>])&|&>/g, (_match, angle: string | undefined) => angle ?? ">")
    .split(/[;&|()]/)
    .map((part) => part.trim())
    .filter((part) => part !== "");
}

/**
 * Caller patterns copied at creation: without the `g`/`y` flags, whose `lastIndex` would make
 * `test` skip matches, and with `i`, since they match the lower-case normalised command (a
 * `/NPM_TOKEN/` deny pattern would otherwise never match).
 */
export function copyPattern(pattern: RegExp): RegExp {
  const flags = pattern.flags.replace(/[gy]/g, "");
  return new RegExp(pattern.source, flags.includes("i") ? flags : `${flags}i`);
}

/** The caller's patterns of {@link checkCommand}, already copied with {@link copyPattern}. */
export interface CommandPatterns {
  /** Added to the default deny list. */
  readonly deny: readonly RegExp[];
  /** When not empty, every simple command must match one of them (after the deny list). */
  readonly allow: readonly RegExp[];
}

/** `true` when the pattern matches; a pattern that throws counts as a match of `failClosed`. */
function matches(pattern: RegExp, text: string, failClosed: boolean): boolean {
  try {
    return pattern.test(text);
  } catch {
    return failClosed;
  }
}

/** How deep `sh -c` may nest inside `sh -c` (the command itself is depth 0); deeper is refused. */
export const MAX_SHELL_DEPTH = 3;

/**
 * Why the command is refused, or `undefined` when it may run: too long, a raw rule, the default
 * deny list, the caller's deny patterns, then (never instead) the caller's allow patterns; and
 * the same, again, for the script of every inline shell (`sh -c '…'`, see {@link shellLayers}),
 * whose script may not hold a `$` at all. A caller pattern that throws while matching refuses
 * the command (fails closed).
 */
export function checkCommand(command: string, patterns: CommandPatterns): string | undefined {
  if (command.length > MAX_COMMAND_CHARS) {
    return (
      `command refused: it is ${command.length} characters long, more than ${MAX_COMMAND_CHARS}; ` +
      "write a script file and run that instead"
    );
  }
  const { layers, tooDeep } = shellLayers(command);
  if (tooDeep)
    return `command refused by the deny list: inline shells (sh -c) nested more than ${MAX_SHELL_DEPTH} deep`;
  for (const layer of layers) {
    if (layer.depth > 0 && layer.text.includes("$")) {
      // In double quotes the outer shell expands it into the script; in single quotes the inner one does.
      return "command refused by the deny list: a $ in the script of an inline shell (sh -c '…$…')";
    }
    const refusal = checkLayer(layer.text, patterns);
    if (refusal !== undefined) return refusal;
  }
  return undefined;
}

/** {@link checkCommand} for one command line (the command, or the script of an inline shell). */
function checkLayer(command: string, patterns: CommandPatterns): string | undefined {
  for (const rule of RAW_RULES) {
    if (rule.test.test(command)) return `command refused by the deny list: ${rule.name}`;
  }
  const normalised = normalizeCommand(command);
  const defaults = compiledDefaults();
  if (xargsRunsItsInput(commandWords(command))) {
    return "command refused by the deny list: xargs running a command named by its input (xargs -I{} {} …)";
  }
  for (const form of [normalised, normalise(command)]) {
    if (defaults.any.test(form)) {
      const index = defaults.each.findIndex((rule) => rule.test(form));
      return `command refused by the deny list: ${DEFAULT_DENY_RULES[index]?.name ?? "a dangerous pattern"}`;
    }
  }
  for (const pattern of patterns.deny) {
    if (matches(pattern, normalised, true)) return "command refused by the deny list: a pattern of this application";
  }
  if (patterns.allow.length > 0) {
    for (const part of simpleCommands(normalised)) {
      if (!patterns.allow.some((pattern) => matches(pattern, part, false))) {
        return "command refused: it is not on this application's allow list";
      }
    }
  }
  return undefined;
}

/** xargs's short options that take a value, attached or as the next word (`-I {}`, `-n1`). */
const XARGS_VALUE = "aEIdLnPs";
/** xargs's short options whose value can only be attached (`-i{}`, `-e`, `-l1`). */
const XARGS_ATTACHED = "eil";
/** xargs's long options that take a value, after `=` or as the next word. */
const XARGS_LONG_VALUE = new Set([
  "--arg-file",
  "--delimiter",
  "--max-args",
  "--max-procs",
  "--max-chars",
  "--process-slot-var",
]);

/**
 * Whether an `xargs` among the words runs a command named by its input: its command word holds
 * the replace string of `-I`, `-i` or `--replace` (`… | xargs -I{} {} -rf x`, where the input
 * says `rm`). Linear: each word is read once.
 */
function xargsRunsItsInput(words: readonly CommandWord[]): boolean {
  for (let index = 0; index < words.length; index++) {
    if (commandName(words[index]?.text ?? "") !== "xargs") continue;
    let replace: string | undefined;
    let next = index + 1;
    for (; next < words.length; next++) {
      const option = words[next]?.text ?? "";
      if (option === "--") {
        next++;
        break;
      }
      if (!option.startsWith("-") || option === "-") break;
      if (option.startsWith("--")) {
        const equals = option.indexOf("=");
        const name = equals === -1 ? option : option.slice(0, equals);
        if (name === "--replace") replace = equals === -1 ? "{}" : option.slice(equals + 1);
        else if (equals === -1 && XARGS_LONG_VALUE.has(name)) next++;
        continue;
      }
      for (let letter = 1; letter < option.length; letter++) {
        const char = option.charAt(letter);
        const attached = option.slice(letter + 1);
        if (XARGS_VALUE.includes(char)) {
          const value = attached !== "" ? attached : words[++next]?.text;
          if (char === "I") replace = value;
          break;
        }
        if (XARGS_ATTACHED.includes(char)) {
          if (char === "i") replace = attached === "" ? "{}" : attached;
          break;
        }
      }
    }
    const command = words[next]?.text;
    if (replace !== undefined && replace !== "" && command?.includes(replace) === true) return true;
    index = next - 1;
  }
  return false;
}

/** A command line the shell runs: the command itself, or the script of an inline shell inside it. */
export interface ShellLayer {
  /** The command line, as the shell that runs it reads it. */
  readonly text: string;
  /** 0 for the command, 1 for the script of an `sh -c` in it, 2 for one in that script … */
  readonly depth: number;
  /** Its words ({@link commandWords}). */
  readonly words: readonly CommandWord[];
}

/**
 * The command and, recursively, the script of every inline shell in it: a word naming a shell
 * (`sh`, `bash`, `/bin/dash` …, also spelled `s$@h`), then options of which one holds `c`
 * (`-c`, `-ec`, `-lc`; `-o name` skipped), then the script; and the script of a `trap`. It
 * over-approximates: `echo sh -c x` counts too. Each layer is a part of the one it is in, so the work is at most
 * `MAX_SHELL_DEPTH + 1` times the command's length; `tooDeep` when a script nests deeper.
 */
export function shellLayers(command: string): { layers: ShellLayer[]; tooDeep: boolean } {
  const layers: ShellLayer[] = [];
  let pending = [command];
  for (let depth = 0; pending.length > 0; depth++) {
    if (depth > MAX_SHELL_DEPTH) return { layers, tooDeep: true };
    const next: string[] = [];
    for (const text of pending) {
      const words = commandWords(text);
      layers.push({ text, depth, words });
      next.push(...inlineScripts(words));
    }
    pending = next;
  }
  return { layers, tooDeep: false };
}

const SHELL_SET = new Set(SHELL_NAMES);

/** The basename of a word, lower case, without the `$@`, `$*`, `$1`…`$9` that are empty in `sh -c`. */
export function commandName(word: string): string {
  const bare = word.replace(/\$[@*1-9]/g, "").toLowerCase();
  return bare.slice(bare.lastIndexOf("/") + 1);
}

/** The scripts of the inline shells among these words (see {@link shellLayers}), and of `trap`s. */
function inlineScripts(words: readonly CommandWord[]): string[] {
  const scripts: string[] = [];
  for (let index = 0; index < words.length; index++) {
    const name = commandName(words[index]?.text ?? "");
    if (name === "trap") {
      // `trap 'script' EXIT` runs the script later, in this shell: like `sh -c`.
      const script = words[index + 1]?.text === "--" ? words[index + 2] : words[index + 1];
      if (script !== undefined && !/^-[lp]?$/.test(script.text)) scripts.push(script.text);
      continue;
    }
    if (!SHELL_SET.has(name)) continue;
    let inline = false;
    let next = index + 1;
    for (; next < words.length; next++) {
      const option = words[next]?.text ?? "";
      if (option === "--") {
        next++;
        break;
      }
      if (!/^[-+]/.test(option)) break;
      if (/^[-+][a-z]*c[a-z]*$/i.test(option)) inline = true;
      // Options that take the next word as their value.
      if (/^[-+][oO]$|^--(?:rcfile|init-file)$/.test(option)) next++;
    }
    const script = words[next];
    if (inline && script !== undefined) scripts.push(script.text);
    // The options are no shell names: go on after them.
    index = next - 1;
  }
  return scripts;
}

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

const EXPANDING = "*?[{";

/**
 * The words of a command, shell-like, for the workspace check: single quotes literal, double
 * quotes with `\` escaping `$`, `` ` ``, `"`, `\` and newline, a backslash outside quotes escaping
 * the next character, words split at blanks and at the operators `;`, `&`, `|`, `(`, `)`, `<`,
 * `>` and newlines (which are not words). `2>/dev/null` gives `2` and `/dev/null`. Linear.
 */
export function commandWords(command: string): CommandWord[] {
  const words: CommandWord[] = [];
  let text = "";
  let expands = false;
  let parameters: string[] = [];
  let inWord = false;
  let quote: "'" | '"' | undefined;
  const end = () => {
    if (inWord) words.push({ text, expands, parameters });
    text = "";
    expands = false;
    parameters = [];
    inWord = false;
  };
  /** At a `$` outside single quotes: records the expansion, if it is one, and returns how many characters it spans. */
  const dollar = (index: number): number => {
    const rest = command.slice(index + 1, index + 1 + 256);
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(rest)?.[0];
    const next = rest.charAt(0);
    if (name !== undefined) parameters.push(name);
    else if (next !== "" && "0123456789@*#?$!-{([".includes(next)) parameters.push(next);
    else if (quote === undefined && (next === "'" || next === '"')) parameters.push(next);
    else return 1;
    const length = 1 + (name?.length ?? 1);
    // `{(['"` open something the word goes on with: only the `$` is taken here.
    return "{(['\"".includes(next) ? 1 : length;
  };
  for (let index = 0; index < command.length; index++) {
    const char = command[index] as string;
    if (quote === "'") {
      if (char === "'") quote = undefined;
      else text += char;
      continue;
    }
    if (quote === '"') {
      const next = command[index + 1];
      if (char === '"') quote = undefined;
      else if (char === "\\" && next !== undefined && '$`"\\\n'.includes(next)) {
        if (next !== "\n") text += next;
        index++;
      } else if (char === "$") {
        const length = dollar(index);
        text += command.slice(index, index + length);
        index += length - 1;
      } else text += char;
      continue;
    }
    if (char === "\\") {
      const next = command[index + 1];
      if (next === undefined) continue;
      index++;
      if (next === "\n") continue;
      text += next;
      inWord = true;
    } else if (char === "'" || char === '"') {
      quote = char;
      inWord = true;
    } else if (" \t\n\r;&|()<>".includes(char)) {
      end();
    } else if (char === "$") {
      const length = dollar(index);
      text += command.slice(index, index + length);
      index += length - 1;
      inWord = true;
    } else {
      if (EXPANDING.includes(char)) expands = true;
      text += char;
      inWord = true;
    }
  }
  end();
  return words;
}
