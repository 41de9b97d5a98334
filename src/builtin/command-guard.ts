import { RE2JS } from "re2js";
import { EXTRACTORS, extractsArchive } from "./archive-extraction.js";
import { isCompressorFilter, programScripts, SCRIPT_PROGRAMS, variableScript } from "./program-scripts.js";

// The command guard of `execute_bash`: what a command is matched on (its normalised forms), the
// default deny list, the checks that need the command's structure (which word is a command name,
// what a pipe feeds), and the shell-like split into words that the workspace check reads. Nothing
// here touches the filesystem or starts a process; every step is linear in the command (or bounded
// by a small constant per word).

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
const WRAPPER_NAMES = [
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
];
const WRAPPERS = WRAPPER_NAMES.join("|");
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
  {
    // The body of a function is any compound command, also on the next line (a newline reads `;`):
    // `f(){ …; }`, `f()(…)`, `f() if …`. Outside quotes, `name()` is found on the command's words
    // instead (see structureRefusal); this pattern also sees it inside a string another program
    // runs (`watch 'f()(f|f&);f'`). `function` is bash's keyword, in command position.
    name: "shell function definition (fork bomb)",
    pattern: String.raw`\(\s?\)\s?;?\s?(?:[({]|(?:if|for|while|until|case|select)\s|\[\[)|${START}${PREFIX}function\s`,
  },
  { name: "privilege escalation (sudo, su, doas, pkexec)", pattern: String.raw`\b(?:sudo|su|doas|pkexec)\b` },
  { name: "shutdown, reboot, poweroff, halt", pattern: String.raw`\b(?:shutdown|reboot|poweroff|halt)\b` },
  {
    // Also on the next line (a newline reads `;`), into a subshell or a group (`| (sh)`,
    // `| { sh; }`, `| ! sh`) and after assignments and redirections (`| A=1 sh`,
    // `|2>/dev/null sh`); a shell anywhere in a compound command the pipe feeds, or after a
    // comment, is found on the command's words (see structureRefusal).
    name: "a pipe into a shell (curl … | sh)",
    pattern: String.raw`\|&?\s?;?\s?(?:[({!]\s?)*${PREFIX}(?:(?:${WORD}*/)?(?:${WRAPPERS})\s(?:[^;&|()]*[\s/])?|(?:${WORD}*/)?)(?:${SHELLS})${WORD_END}`,
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
    // A program that walks a directory reads environ in it: /proc itself and a process's
    // directory (`grep -r x /proc/1/`, `find /proc/self …`, `/proc/1/task`) are refused, and so is
    // a cd into /proc (`cd /proc/1 && cat *`). (A word that could match environ as a wildcard,
    // `[e]nviron`, reads environ in the expanded form: see canonicalForm.)
    name: "another process's environment, memory or files (/proc/…/environ, mem, fd, root, cwd)",
    pattern:
      String.raw`(?:^|[\s/<>=])proc/${WORD}*(?:environ|mem(?:/|${WORD_END})|fd|root|cwd|maps|\$|[*?[])` +
      String.raw`|(?:^|[\s/<>=])(?:environ|mem)${WORD_END}|${WORD}/(?:fd|root|cwd|maps|exe)${WORD_END}` +
      String.raw`|(?:^|[\s<>=])/+proc/*${WORD_END}` +
      String.raw`|(?:^|[\s/<>=])proc/(?:${WORD}*/)?(?:self|thread-self|[0-9]+|task)/*${WORD_END}` +
      String.raw`|(?:^|[\s;&|(){!])(?:cd|pushd)\s(?:-${WORD}*\s)*(?:${WORD}*/)?proc(?:/|${WORD_END})`,
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
 * Most characters all the layers of a command may hold together (an `env -S` string rendered as
 * a command may be longer than in the command), and most layers; beyond, the command is refused.
 */
const MAX_LAYER_CHARS = 4 * MAX_COMMAND_CHARS;
const MAX_LAYERS = 64;

/**
 * Why the command is refused, or `undefined` when it may run: too long, a raw rule, the default
 * deny list, the checks of the command's structure (see {@link structureRefusal}), the caller's
 * deny patterns, then (never instead) the caller's allow patterns; and the same, again, for the
 * script of every inline shell (`sh -c '…'`, `env -S '…'`, see {@link shellLayers}), whose
 * script may not hold a `$` at all. An archive extraction must be the only command (see
 * {@link extractionRefusal}). A caller pattern that throws while matching refuses the command
 * (fails closed).
 */
export function checkCommand(command: string, patterns: CommandPatterns): string | undefined {
  if (command.length > MAX_COMMAND_CHARS) {
    return (
      `command refused: it is ${command.length} characters long, more than ${MAX_COMMAND_CHARS}; ` +
      "write a script file and run that instead"
    );
  }
  const { layers, tooDeep, tooLong } = analysedLayers(command);
  // The layers read so far first, even when there are more than can be read: a rule that names
  // the problem tells the model more than "too deep" (`timeout 1 [a-z]* …` reads as every program).
  for (const layer of layers) {
    if (layer.depth > 0 && layer.text.includes("$")) {
      // In double quotes the outer shell expands it into the script; in single quotes the inner one does.
      return "command refused by the deny list: a $ in the script of an inline shell (sh -c '…$…')";
    }
    const refusal = checkLayer(layer, patterns);
    if (refusal !== undefined) return refusal;
  }
  if (tooDeep) {
    return `command refused by the deny list: inline shells and the scripts programs run (sh -c, env -S, tar -I …) nested more than ${MAX_SHELL_DEPTH} deep`;
  }
  if (tooLong) {
    return (
      `command refused: its inline scripts (sh -c, env -S, trap, tar -I …) are more than ${MAX_LAYERS} or too long to ` +
      "check; write a script file and run that instead"
    );
  }
  return extractionRefusal(layers);
}

/** {@link checkCommand} for one command line (the command, or the script of an inline shell). */
function checkLayer(layer: AnalysedLayer, patterns: CommandPatterns): string | undefined {
  const { text: command, words, items } = layer;
  for (const rule of RAW_RULES) {
    if (rule.test.test(command)) return `command refused by the deny list: ${rule.name}`;
  }
  const normalised = normalizeCommand(command);
  const defaults = compiledDefaults();
  if (xargsRunsItsInput(words)) {
    return "command refused by the deny list: xargs running a command named by its input (xargs -I{} {} …)";
  }
  const checked = new Set<string>();
  const denied = (form: string): string | undefined => {
    // A form equal to one already read (the common case: no redirection, no wildcard) is not read again.
    if (checked.has(form)) return undefined;
    checked.add(form);
    if (!defaults.any.test(form)) return undefined;
    const index = defaults.each.findIndex((rule) => rule.test(form));
    return `command refused by the deny list: ${DEFAULT_DENY_RULES[index]?.name ?? "a dangerous pattern"}`;
  };
  for (const form of [normalised, normalise(command)]) {
    const refusal = denied(form);
    if (refusal !== undefined) return refusal;
  }
  const structure = structureRefusal(items);
  if (structure !== undefined) return `command refused by the deny list: ${structure}`;
  // The same rules on what runs: redirections removed, wildcards read as the names they could match.
  const canonical = canonicalForm(items);
  if (canonical === undefined) {
    return (
      "command refused by the deny list: its wildcards and brace expansions could name too many commands " +
      "or files the deny list looks for; write the names out"
    );
  }
  const expanded = normalizeCommand(canonical);
  for (const form of [expanded, normalise(canonical)]) {
    const refusal = denied(form);
    if (refusal !== undefined) return refusal;
  }
  for (const pattern of patterns.deny) {
    if (matches(pattern, normalised, true) || (expanded !== normalised && matches(pattern, expanded, true))) {
      return "command refused by the deny list: a pattern of this application";
    }
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

/** A layer with its structure: its words and operators, redirections removed, each word's role. */
interface AnalysedLayer extends ShellLayer {
  readonly items: readonly Item[];
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
function analysedLayers(command: string): { layers: AnalysedLayer[]; tooDeep: boolean; tooLong: boolean } {
  const layers: AnalysedLayer[] = [];
  let pending = [command];
  let total = 0;
  for (let depth = 0; pending.length > 0; depth++) {
    if (depth > MAX_SHELL_DEPTH) return { layers, tooDeep: true, tooLong: false };
    const next: string[] = [];
    for (const text of pending) {
      total += text.length;
      if (total > MAX_LAYER_CHARS || layers.length >= MAX_LAYERS) return { layers, tooDeep: false, tooLong: true };
      const tokens = shellTokens(text);
      const words = tokens.filter(isWord).map(({ text, expands, parameters }) => ({ text, expands, parameters }));
      const items = structureOf(tokens);
      layers.push({ text, depth, words, items });
      for (const script of inlineScripts(words)) next.push(script);
      for (const script of programLayerScripts(words, items)) next.push(script);
    }
    pending = next;
  }
  return { layers, tooDeep: false, tooLong: false };
}

/** The basename of a word, lower case, without the `$@`, `$*`, `$1`…`$9` that are empty in `sh -c`. */
export function commandName(word: string): string {
  const bare = word.replace(/\$[@*1-9]/g, "").toLowerCase();
  return bare.slice(bare.lastIndexOf("/") + 1);
}

const vocabularySets = new Map<readonly string[], ReadonlySet<string>>();

/**
 * The names of `vocabulary` a word may run as a command: its {@link commandName} when it is one of
 * them, or when it is an unquoted wildcard, every one it could match (`/usr/bin/sets?d` → setsid).
 */
function namesIn(word: CommandWord, vocabulary: readonly string[]): readonly string[] {
  const name = commandName(word.text);
  if (word.expands && isWildcard(name)) return wildcardNames(name, vocabulary);
  let set = vocabularySets.get(vocabulary);
  if (set === undefined) {
    set = new Set(vocabulary);
    vocabularySets.set(vocabulary, set);
  }
  return set.has(name) ? [name] : [];
}

const isShell = (word: CommandWord): boolean => namesIn(word, SHELL_NAMES).length > 0;
const TRAP: readonly string[] = ["trap"];
const ENV: readonly string[] = ["env"];

/** The scripts of the inline shells among these words (see {@link shellLayers}), of `trap`s and of `env -S`. */
function inlineScripts(words: readonly CommandWord[]): string[] {
  const scripts: string[] = [];
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

// ─── Words and operators ────────────────────────────────────────────────────────────────────────

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
interface WordToken extends CommandWord {
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

type ShellToken = WordToken | OperatorToken;

const isWord = (token: ShellToken): token is WordToken => token.kind === "word";

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
const REDIRECTIONS = new Set(["<", ">", ">>", "<&", ">&", "<>", ">|", "&>", "&>>", "<<", "<<<", "<<-"]);
/** What may stand before a redirection, touching it, as the file descriptor it redirects (`2>`, bash's `{fd}>`). */
const IO_NUMBER = /^(?:[0-9]+|\{[A-Za-z_][A-Za-z0-9_]*\})$/;

const EXPANDING = "*?[{";

/**
 * The words of a command, shell-like, for the workspace check: single quotes literal, double
 * quotes with `\` escaping `$`, `` ` ``, `"`, `\` and newline, a backslash outside quotes escaping
 * the next character, words split at blanks and at the operators `;`, `&`, `|`, `(`, `)`, `<`,
 * `>` and newlines (which are not words). `2>/dev/null` gives `2` and `/dev/null`. Linear.
 */
export function commandWords(command: string): CommandWord[] {
  return shellTokens(command)
    .filter(isWord)
    .map(({ text, expands, parameters }) => ({ text, expands, parameters }));
}

/** The words of {@link commandWords} and the operators between them, in order. Linear. */
function shellTokens(command: string): ShellToken[] {
  const tokens: ShellToken[] = [];
  let text = "";
  let expands = false;
  let parameters: string[] = [];
  let inWord = false;
  let quoted = false;
  let start = 0;
  let quote: "'" | '"' | undefined;
  const end = (at: number) => {
    if (inWord) tokens.push({ kind: "word", text, expands, parameters, start, end: at, quoted });
    text = "";
    expands = false;
    parameters = [];
    inWord = false;
    quoted = false;
  };
  const begin = (at: number) => {
    if (inWord) return;
    inWord = true;
    start = at;
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
      begin(index - 1);
      quoted = true;
      text += next;
    } else if (char === "'" || char === '"') {
      begin(index);
      quote = char;
      quoted = true;
    } else if (char === " " || char === "\t" || char === "\r") {
      end(index);
    } else if (";&|()<>\n".includes(char)) {
      end(index);
      const operator = LONG_OPERATORS.find((long) => command.startsWith(long, index)) ?? char;
      tokens.push({ kind: "operator", text: operator, start: index });
      index += operator.length - 1;
    } else if (char === "$") {
      begin(index);
      const length = dollar(index);
      text += command.slice(index, index + length);
      index += length - 1;
    } else {
      begin(index);
      if (EXPANDING.includes(char)) expands = true;
      text += char;
    }
  }
  end(command.length);
  return tokens;
}

// ─── Structure: which word is a command name ────────────────────────────────────────────────────

/**
 * What a word is where it stands: a command name (`command`), an argument of one (`argument`), an
 * assignment or a reserved word before a command name, or none of these (`other`: a case pattern,
 * the words of a `for` header). Operators are `operator`, or `pattern` inside a case pattern.
 */
type Role = "command" | "argument" | "assignment" | "keyword" | "other" | "operator" | "pattern";

/** A word or an operator of a layer, redirections removed, with its role. */
interface Item {
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
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=/;
const CASE_END = new Set([";;", ";&", ";;&"]);
const FIND_EXEC = /^-(?:exec|execdir|ok|okdir)$/;
const FIND: readonly string[] = ["find"];

/**
 * The words and control operators of a layer, without its redirections (an operator such as
 * `2>&`, the IO number touching it and the word after it), each with its role. It reads reserved
 * words in command position, as the shell does (quoted ones too, which only checks more);
 * `for`/`select` headers and case patterns are no command names. A redirection `&>`/`&>>` stays as an operator (like `&`),
 * since dash reads `a &>b` as `a &` then `>b`: the word after it may be a command name; bash
 * reads a redirection, which {@link canonicalForm} drops. Linear.
 */
function structureOf(tokens: readonly ShellToken[]): Item[] {
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
function structureRefusal(items: readonly Item[]): string | undefined {
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
  // nextOperator[i], nextNewline[i]: the first control operator, the first newline, at or after item i.
  const nextOperator = new Int32Array(count + 1).fill(count);
  const nextNewline = new Int32Array(count + 1).fill(count);
  for (let index = count - 1; index >= 0; index--) {
    const item = items[index] as Item;
    nextOperator[index] = item.role === "operator" ? index : (nextOperator[index + 1] as number);
    nextNewline[index] =
      item.role === "operator" && item.token.text === "\n" ? index : (nextNewline[index + 1] as number);
  }
  for (let index = 0; index < count; index++) {
    const item = items[index] as Item;
    if (item.role !== "operator" || (item.token.text !== "|" && item.token.text !== "|&")) continue;
    let first = index + 1;
    // What may stand between the pipe and its command: `!`, newlines, and comments up to a newline.
    for (;;) {
      const next = items[first];
      if (next === undefined) break;
      if (
        (next.role === "keyword" && next.token.text === "!") ||
        (next.role === "operator" && next.token.text === "\n")
      ) {
        first++;
      } else if (next.token.kind === "word" && !next.token.quoted && next.token.text.startsWith("#")) {
        first = nextNewline[first] as number;
      } else break;
    }
    const start = items[first];
    if (start === undefined) continue;
    const last = opens(start) ? (endOf[first] as number) : (nextOperator[first] as number);
    if ((before[Math.min(last + 1, count)] as number) - (before[first] as number) > 0) return true;
  }
  return false;
}

// ─── Archive extraction ─────────────────────────────────────────────────────────────────────────

/**
 * An archive extraction must be the only command of the command line (in every layer: `sh -c
 * 'tar xf a.tar; cat …'` is refused as well): the workspace check reads paths before the command
 * runs, so it cannot see a symlink the archive creates (`link -> /proc`) on the way, and the
 * next command could read through it (`tar xf a.tar && grep -r x link/self/`). Extracted on its
 * own, the next call's check sees the symlink. Counted as commands: every command name, each
 * `-exec` of a find beyond its own, and each command line the extractor runs while it extracts
 * (`tar --checkpoint-action=exec=…`, `--to-command`, `--info-script`), but for a compressor that
 * only filters the archive (`tar -I zstd`, `-I 'xz -T0'`).
 */
function extractionRefusal(layers: readonly AnalysedLayer[]): string | undefined {
  let extracts = false;
  let several = false;
  for (const { items } of layers) {
    if (commandCount(items) > 1) several = true;
    for (const { names, args } of programsIn(items, EXTRACTORS)) {
      for (const name of names) {
        if (!extractsArchive(name, args)) continue;
        extracts = true;
        // What the extractor itself runs while it extracts (`--checkpoint-action=exec=…`,
        // `--to-command`, `-I …`) runs alongside it: another command, but for a compressor
        // that only filters the archive (`-I zstd`).
        const scripts = programScripts(name, args);
        if (scripts.some((script) => !isCompressorFilter(commandWords(script).map(({ text }) => text)))) {
          several = true;
        }
      }
    }
  }
  if (!extracts || !several) return undefined;
  return (
    "command refused by the deny list: an archive extraction together with other commands (also those it runs " +
    "itself: tar --to-command, --checkpoint-action=exec …); extract it in a command of its own (it may create " +
    "symlinks that the checks of the other commands cannot see)"
  );
}

/** How many commands a layer runs: every command name, and each `-exec` of a find beyond its own. */
function commandCount(items: readonly Item[]): number {
  let commands = 0;
  let execs = 0;
  for (const item of items) {
    if (item.token.kind !== "word") continue;
    if (item.role === "command") {
      commands++;
      execs = 0;
    } else if (item.role === "argument" && FIND_EXEC.test(item.token.text) && ++execs > 1) commands++;
  }
  return commands;
}

/** A program of {@link programsIn}: the names its word may run as, and the arguments after it. */
interface ProgramCall {
  readonly names: readonly string[];
  readonly args: string[];
}

/**
 * For each simple command of a layer (and each `-exec` of a find), the first word that may run one
 * of `vocabulary` — its command name, or a word a command that runs another runs (`timeout 60 tar
 * …`, `find -exec tar …`) — and the arguments after that word, up to the next `-exec`. Linear:
 * each word is read once as a name, its arguments once.
 */
function programsIn(items: readonly Item[], vocabulary: readonly string[]): ProgramCall[] {
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

/** An archive extraction of a command: the extractor (`tar`, `unzip` …) and its arguments. */
export interface ArchiveExtraction {
  /** The extractor's name, as {@link commandName} reads it (`tar` for `/usr/bin/tar`). */
  readonly name: string;
  /** Its arguments, quotes removed, redirections left out. */
  readonly args: readonly string[];
}

/**
 * Every archive extraction of a command, in any of its layers (`sh -c 'tar xf a.tar'`, `timeout 60
 * unzip a.zip`): what the workspace check reads to find where it writes. Linear in the command.
 */
export function archiveExtractions(command: string): ArchiveExtraction[] {
  const extractions: ArchiveExtraction[] = [];
  for (const { items } of analysedLayers(command).layers) {
    for (const { names, args } of programsIn(items, EXTRACTORS)) {
      for (const name of names) if (extractsArchive(name, args)) extractions.push({ name, args });
    }
  }
  return extractions;
}

// ─── The canonical form: what runs ──────────────────────────────────────────────────────────────

/**
 * The layer as the rules should read it: its words (quotes removed) and control operators, without
 * redirections (`rm 2>&1 -rf x` is `rm -rf x`); a brace expansion's braces and commas as blanks
 * (`{rm,-rf,x}` is `rm -rf x`); and each wildcard part of a path (between slashes) that could
 * match a name the rules look for replaced by those names: `environ`, `mem` and `proc` in any
 * word, quoted or not (`[e]nviron`, `find -name 'e*'`), and after a command that runs another,
 * every command name of the rules (`timeout 5 /bin/kil? 1` is `… /bin/kill 1`). A part of only
 * `*` and `?` with at least one `*` matches anything and is kept. `undefined` when the form grows
 * longer than {@link MAX_CANONICAL_CHARS} (`timeout 1 [a-z]* …`: each word could be any name).
 */
function canonicalForm(items: readonly Item[]): string | undefined {
  const parts: string[] = [];
  let length = 0;
  // Where the words of a cd or pushd stand: its options, then its target.
  let changesDirectory = false;
  for (const { token, role, wrapped } of items) {
    if (token.kind === "operator") {
      // `&>` is a redirection for bash (`chmod &>x 4777 x`); structureOf kept it for dash.
      if (!REDIRECTIONS.has(token.text)) parts.push(token.text === "\n" ? ";" : token.text);
      changesDirectory = false;
      continue;
    }
    let target = false;
    if (role === "command") {
      const name = commandName(token.text);
      changesDirectory = name === "cd" || name === "pushd";
    } else if (changesDirectory && !/^-[LPe@]+$|^--$/.test(token.text)) {
      target = true;
      changesDirectory = false;
    }
    const words = token.expands && isBraceExpansion(token.text) ? braceExpansion(token.text) : [token.text];
    for (let word of words) {
      if (/[*?[]/.test(word) && role !== "command") {
        word = word
          .split("/")
          .map((part) => {
            if (!isWildcard(part)) return part;
            // Where a cd goes cannot be seen: any part that could be `proc` is (`cd /*\/self`).
            const names = target
              ? wildcardNames(part, PROC, true)
              : wildcardNames(part, wrapped && token.expands ? COMMAND_VOCABULARY : PATH_VOCABULARY);
            return names.length > 0 ? names.join(" ") : part;
          })
          .join("/");
      }
      length += word.length + 1;
      if (length > MAX_CANONICAL_CHARS) return undefined;
      parts.push(word);
    }
  }
  return parts.join(" ");
}

/** Longest {@link canonicalForm}: twice the longest command, so the rules stay as cheap as on the command. */
const MAX_CANONICAL_CHARS = 2 * MAX_COMMAND_CHARS;

/** Whether a word may be a brace expansion (`{a,b}`, `{1..3}`). */
function isBraceExpansion(text: string): boolean {
  const open = text.indexOf("{");
  return open !== -1 && text.indexOf("}", open + 1) !== -1 && (text.includes(",") || text.includes(".."));
}

/** Most words {@link braceExpansion} makes of one word, and most rounds; beyond, its braces and commas read as blanks. */
const MAX_BRACE_WORDS = 32;
const MAX_BRACE_ROUNDS = 8;

/**
 * The words bash makes of a word with `{a,b}` groups (`/{proc,x}/1` → `/proc/1`, `/x/1`;
 * `{rm,-rf,x}` → `rm`, `-rf`, `x`), innermost groups first; a sequence (`{1..3}`) is kept as it
 * is. When that would make more than {@link MAX_BRACE_WORDS} words or take more than
 * {@link MAX_BRACE_ROUNDS} rounds, the word with its braces and commas as blanks: it
 * over-approximates, and the work stays a constant times the word's length.
 */
function braceExpansion(word: string): string[] {
  let words = [word];
  for (let round = 0; round < MAX_BRACE_ROUNDS; round++) {
    const next: string[] = [];
    let expanded = false;
    for (const current of words) {
      const group = innermostGroup(current);
      if (group === undefined) {
        next.push(current);
        continue;
      }
      expanded = true;
      const head = current.slice(0, group.open);
      const tail = current.slice(group.close + 1);
      for (const alternative of current.slice(group.open + 1, group.close).split(",")) {
        next.push(head + alternative + tail);
      }
    }
    if (!expanded) return words;
    if (next.length > MAX_BRACE_WORDS) break;
    words = next;
  }
  return [word.replace(/[{},]/g, " ")];
}

/** The first `{…}` holding a comma and no brace, or `undefined`. Linear. */
function innermostGroup(word: string): { open: number; close: number } | undefined {
  let open = -1;
  let comma = false;
  for (let index = 0; index < word.length; index++) {
    const char = word.charAt(index);
    if (char === "{") {
      open = index;
      comma = false;
    } else if (char === "}") {
      if (open !== -1 && comma) return { open, close: index };
      open = -1;
    } else if (char === "," && open !== -1) comma = true;
  }
  return undefined;
}

// ─── Wildcards ──────────────────────────────────────────────────────────────────────────────────

/** The path parts the /proc rules look for. */
const PATH_VOCABULARY: readonly string[] = ["environ", "mem", "proc"];
const PROC: readonly string[] = ["proc"];
/** Every name the rules refuse or look at as a command, and the path parts. */
const COMMAND_VOCABULARY: readonly string[] = [
  ...new Set([
    ...PATH_VOCABULARY,
    ...SHELL_NAMES,
    ...WRAPPER_NAMES,
    ...["rm", "mkfs", "mke2fs", "mkswap", "wipefs", "fdisk", "sfdisk", "parted", "dd", "find", "shred"],
    ...["mkfs.ext2", "mkfs.ext3", "mkfs.ext4", "mkfs.xfs", "mkfs.btrfs", "mkfs.vfat", "mkfs.fat", "mkfs.exfat"],
    ...["sudo", "su", "doas", "pkexec", "shutdown", "reboot", "poweroff", "halt", "xargs", "parallel"],
    ...["chmod", "chown", "kill", "pkill", "killall", "killall5", "skill", "setsid", "crontab", "systemd-run"],
    ...["docker", "podman", "git", "ssh", "scp", "sftp", "eval", "alias", "source", "trap", "function"],
    ...EXTRACTORS,
  ]),
];
const LONGEST_NAME = Math.max(...COMMAND_VOCABULARY.map((name) => name.length));

/** Whether a word (or a part of a path) holds a wildcard: `*`, `?`, or a `[` closed later. */
function isWildcard(text: string): boolean {
  if (text.includes("*") || text.includes("?")) return true;
  const open = text.indexOf("[");
  return open !== -1 && text.indexOf("]", open + 1) !== -1;
}

/** A wildcard compiled: `*`, `?`, a literal character, or a bracket expression (accepted codes below 128; index 128: any other). */
type WildcardPart = "*" | "?" | { readonly char: string } | Uint8Array;

/** What each wildcard seen matched, per vocabulary; emptied when it grows large (it is only a cache). */
const wildcardCache = new Map<readonly string[], Map<string, string[]>>();
const MAX_CACHED = 1_000;

/**
 * The names of `vocabulary` that the wildcard (one path part, compared lower case) could match;
 * unless `anything`, none when it matches anything (only `*` and `?`, with a `*`: reading `ls *`
 * as naming every refused command would refuse it). Bounded: a wildcard with more literal parts
 * than the longest name matches none, and each name costs at most its length times the
 * wildcard's parts; results are cached per vocabulary.
 */
function wildcardNames(wildcard: string, vocabulary: readonly string[], anything = false): string[] {
  let cache = wildcardCache.get(vocabulary);
  if (cache === undefined) {
    cache = new Map();
    wildcardCache.set(vocabulary, cache);
  }
  const key = anything ? `*${wildcard}` : wildcard;
  const known = cache.get(key);
  if (known !== undefined) return known;
  const parts = compileWildcard(wildcard.toLowerCase());
  const matchesAnything = parts?.every((part) => part === "*" || part === "?") === true && parts.includes("*");
  const names =
    parts === undefined || (matchesAnything && !anything)
      ? []
      : vocabulary.filter((name) => wildcardMatches(parts, name));
  if (cache.size >= MAX_CACHED) cache.clear();
  cache.set(key, names);
  return names;
}

/** The parts of a wildcard, runs of `*` as one; `undefined` when it has more non-`*` parts than {@link LONGEST_NAME}. Linear. */
function compileWildcard(wildcard: string): WildcardPart[] | undefined {
  const parts: WildcardPart[] = [];
  let fixed = 0;
  const lastClose = wildcard.lastIndexOf("]");
  for (let index = 0; index < wildcard.length; index++) {
    const char = wildcard.charAt(index);
    if (char === "*") {
      if (parts.at(-1) !== "*") parts.push("*");
      continue;
    }
    if (++fixed > LONGEST_NAME) return undefined;
    if (char === "?") parts.push("?");
    else if (char === "[" && lastClose > index + 1) {
      // A `]` right after `[` (or `[!`) is a member; the expression ends at the next `]`.
      let first = index + 1;
      if (wildcard.charAt(first) === "!" || wildcard.charAt(first) === "^") first++;
      const close = wildcard.indexOf("]", first + 1);
      if (close === -1) parts.push({ char });
      else {
        parts.push(bracket(wildcard.slice(index + 1, close)));
        index = close;
      }
    } else parts.push({ char });
  }
  return parts;
}

/** A bracket expression's members (`a-z`, `!`/`^` negating), as accepted character codes. */
function bracket(body: string): Uint8Array {
  const negate = body.startsWith("!") || body.startsWith("^");
  const members = negate ? body.slice(1) : body;
  const accepts = new Uint8Array(129);
  for (let index = 0; index < members.length; index++) {
    const low = members.charCodeAt(index);
    let high = low;
    if (members.charAt(index + 1) === "-" && index + 2 < members.length) {
      high = members.charCodeAt(index + 2);
      index += 2;
    }
    if (high >= 128) accepts[128] = 1;
    for (let code = low; code <= Math.min(high, 127); code++) accepts[code] = 1;
  }
  if (negate) for (let code = 0; code < accepts.length; code++) accepts[code] = accepts[code] === 1 ? 0 : 1;
  return accepts;
}

/** Whether the compiled wildcard matches the whole name (the usual matcher: one `*` to go back to). */
function wildcardMatches(parts: readonly WildcardPart[], name: string): boolean {
  let part = 0;
  let at = 0;
  let star = -1;
  let starAt = 0;
  while (at < name.length) {
    const current = parts[part];
    if (current === "*") {
      star = part++;
      starAt = at;
    } else if (current !== undefined && accepts(current, name.charCodeAt(at))) {
      part++;
      at++;
    } else if (star !== -1) {
      part = star + 1;
      at = ++starAt;
    } else return false;
  }
  while (parts[part] === "*") part++;
  return part === parts.length;
}

function accepts(part: Exclude<WildcardPart, "*">, code: number): boolean {
  if (part === "?") return true;
  if (part instanceof Uint8Array) return part[Math.min(code, 128)] === 1;
  return part.char.charCodeAt(0) === code;
}
