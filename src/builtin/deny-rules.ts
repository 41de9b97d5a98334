import { RE2JS } from "re2js";

// The default deny list of `execute_bash`'s command guard: its RE2 rules on the normalised command
// (see normalizeCommand in command-guard.ts), the rules read on the raw command, and the names
// other checks look for (shells, commands that run another, programs that outlive the call).

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
export const SHELL_NAMES = [
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
export const WRAPPER_NAMES = [
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
/**
 * A file mode (of chmod, or of `install -m`) that makes a file world-writable, setuid or setgid,
 * also after others in a comma list (`u+x,o+w`): a number, with an operator or not (GNU takes
 * `+777`, `=4755`), whose last digit gives others write (2, 3, 6, 7) or whose fourth digit from
 * the right sets setuid or setgid (2 to 7); a symbolic mode that gives all (no "who" means all)
 * or others write, or a copy of the owner's or group's bits (`o=u`), or that sets s.
 */
const UNSAFE_MODE = String.raw`(?:\S*,)?(?:[+=]?[0-7]*(?:[2367]|[2-7][0-7]{3})(?:$|[\s,;&|()<>])|(?:[ug]*[ao][ugo]*)?[+=](?:[rwxt]*w|[ugo])|[ugoa]*[+=][rwxt]*s)`;

/** The refusal of a program that exists to outlive the call (tmux, at, script …). */
export const OUTLIVES =
  "a program that exists to outlive the call (tmux, screen, at, batch, script, daemonize, start-stop-daemon, " +
  "ssh-agent …): what it starts would escape the kill at the end of the call";

/**
 * Programs that exist to run something after the call ended, or apart from it: terminal
 * multiplexers (whose server also runs what another client asks for), `at`/`batch` (atd runs the
 * job), `script` (its command runs in a new session), daemonizers, and agents that detach.
 * `setsid` and `systemd-run` have rules of their own.
 */
export const DETACHERS: readonly string[] = [
  "tmux",
  "screen",
  "byobu",
  "dtach",
  "abduco",
  "at",
  "batch",
  "script",
  "daemonize",
  "start-stop-daemon",
  "ssh-agent",
  "gpg-agent",
  "dbus-daemon",
  "dbus-launch",
];

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
  {
    name: "privilege escalation (sudo, su, doas, pkexec, run0)",
    pattern: String.raw`\b(?:sudo|sudoedit|su|ksu|doas|pkexec|run0)\b`,
  },
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
    // Also as a wildcard (`/dev/sd?` reads `/dev/sda`, see canonicalForm), and a cd into /dev.
    pattern:
      String.raw`/+dev/+(?:sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|disk\d|dm-\d|mapper(?:/|${WORD_END})|loop\d|md\d|sr\d)` +
      String.raw`|(?:^|[\s;&|(){!])(?:cd|pushd)\s(?:-${WORD}*\s)*/+dev/*${WORD_END}`,
  },
  {
    name: "chmod making files world-writable or setuid (chmod 777 …)",
    // Also copied from another file: `--reference=/tmp` is 1777 (GNU getopt takes `--ref`).
    pattern: String.raw`\bchmod\s${ARGS}(?:${UNSAFE_MODE}|--ref)`,
  },
  {
    name: "install, mkdir, mknod or mkfifo with a world-writable or setuid mode (install -m 4755 …)",
    pattern: String.raw`\b(?:install|ginstall|mkdir|mknod|mkfifo)\s${ARGS}(?:-[a-z]*m\s?|--m[a-z]*[=\s])${UNSAFE_MODE}`,
  },
  { name: "chown", pattern: String.raw`\bchown\b` },
  { name: "kill, pkill, killall", pattern: String.raw`\b(?:kill|pkill|killall|killall5|skill)\b` },
  { name: "setsid (leaving the command's process group)", pattern: String.raw`\bsetsid\b` },
  {
    // The other programs that exist to outlive the call are found on the command's words (see
    // runsDetacher); these are git's, whose names say so.
    name: OUTLIVES,
    pattern:
      String.raw`\bgit(?:\s${ARGS}|-)(?:instaweb|fsmonitor--daemon|credential-cache--daemon)\b` +
      String.raw`|\bgit(?:\s${ARGS}|-)daemon\s${ARGS}--detach\b|\bgit(?:\s${ARGS}|-)maintenance\s${ARGS}(?:start|register)\b`,
  },
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
  {
    // Also the plumbing and the helpers that push (`git send-pack`, `/usr/lib/git-core/git-push`,
    // `git remote-https`, which reads `push` commands), and `ext::` remotes, which run a command.
    name: "git push (or send-pack, http-push, svn dcommit, p4 submit, send-email, imap-send, remote helpers, ext::)",
    pattern:
      String.raw`\bgit(?:\s${ARGS}|-)(?:push|send-pack|http-push|dcommit|send-email|imap-send|remote-[a-z0-9]+)\b` +
      String.raw`|\bgit(?:\s${ARGS}|-)p4\s${ARGS}submit\b|\bext::`,
  },
  { name: "ssh, scp, sftp", pattern: String.raw`\b(?:ssh|scp|sftp)(?:\s|$|;)` },
  { name: "eval", pattern: String.raw`\beval\b` },
  {
    // shopt changes how bash reads the lines after it (extglob, expand_aliases,
    // interactive_comments); a BASH_ENV file runs before an inline bash reads its script, and may
    // do the same or define aliases.
    name: "changing how bash reads commands (shopt, BASH_ENV)",
    pattern: String.raw`\b(?:shopt|bash_env)\b`,
  },
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
 * (`$'\x72m'` spells `rm`), bash's `$[…]`, and NUL, which no command can hold.
 */
export const RAW_RULES: ReadonlyArray<{ readonly name: string; readonly test: RegExp }> = [
  { name: "ANSI-C or locale quoting ($'…', $\"…\")", test: /\$['"]/ },
  // bash reads what is inside as one word whatever it holds (`$[ 1 #]`), dash as several.
  { name: "arithmetic expansion $[…]", test: /\$\[/ },
  { name: "a NUL character", test: /\0/ },
];

let defaultsCompiled: { any: RE2JS; each: RE2JS[] } | undefined;

/** The default rules compiled for re2js once, on first use: one pattern for them all, and one each to name the match. */
export function compiledDefaults(): { any: RE2JS; each: RE2JS[] } {
  defaultsCompiled ??= {
    any: RE2JS.compile(DEFAULT_DENY_RULES.map((rule) => `(?:${rule.pattern})`).join("|")),
    each: DEFAULT_DENY_RULES.map((rule) => RE2JS.compile(rule.pattern)),
  };
  return defaultsCompiled;
}
