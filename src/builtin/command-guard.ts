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

/**
 * The default deny list, in the spirit of picoclaw's `defaultDenyPatterns`. It runs on re2js, an
 * RE2 engine whose matching time is linear in the command whatever the pattern: a hostile command
 * cannot make the guard slow (the same pattern on V8 is quadratic on `rm rm rm …`).
 */
export const DEFAULT_DENY_RULES: readonly DenyRule[] = Object.freeze([
  {
    name: "rm with -r/-f (or a $variable argument)",
    pattern: String.raw`\brm\s${ARGS}(?:-[a-z]*[rf]|--(?:recursive|force)|\S*\$)`,
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
    pattern: String.raw`\|&?\s?(?:[^\s;&|()]*/)?(?:env\s)?(?:sh|bash|dash|zsh|ksh|mksh|csh|tcsh|fish|ash|busybox)\b`,
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
    name: "another process's environment, memory or files (/proc/…/environ, mem, fd, root, cwd)",
    pattern: String.raw`/proc/[^\s;&|()]*(?:environ|mem|fd|root|cwd|maps)`,
  },
  { name: "git push", pattern: String.raw`\bgit\s${ARGS}push\b` },
  { name: "ssh, scp, sftp", pattern: String.raw`\b(?:ssh|scp|sftp)(?:\s|$|;)` },
  { name: "eval", pattern: String.raw`\beval\b` },
  { name: "alias", pattern: String.raw`\balias\b` },
  { name: "source or . (running a file in this shell)", pattern: String.raw`\bsource\s|(?:^|[;&|(]\s?)\.\s` },
  { name: "command substitution $(…)", pattern: String.raw`\$\(` },
  { name: "command substitution with backticks", pattern: "`" },
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the name quotes shell syntax
  { name: "parameter expansion ${…}", pattern: String.raw`\$\{` },
  { name: "$IFS", pattern: String.raw`\$ifs\b` },
  {
    name: "a $variable in the command name",
    pattern: String.raw`(?:^|[;&|(!{]\s?|\b(?:then|do|else|if|while|until|exec|command|builtin|env|xargs|nohup|time|nice)\s)[^\s;&|()]*\$`,
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
  return (
    command
      .toLowerCase()
      .replace(/\\\r?\n/g, "")
      // Empty in `sh -c command` (no arguments): `r$@m` is `rm`.
      .replace(/\$[@*1-9]/g, "")
      .replace(/[\\'"]/g, "")
      .replace(/[\r\n]+/g, ";")
      .replace(/\s+/g, " ")
      .trim()
  );
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

/**
 * Why the command is refused, or `undefined` when it may run: too long, a raw rule, the default
 * deny list, the caller's deny patterns, then (never instead) the caller's allow patterns. A
 * caller pattern that throws while matching refuses the command (fails closed).
 */
export function checkCommand(command: string, patterns: CommandPatterns): string | undefined {
  if (command.length > MAX_COMMAND_CHARS) {
    return (
      `command refused: it is ${command.length} characters long, more than ${MAX_COMMAND_CHARS}; ` +
      "write a script file and run that instead"
    );
  }
  for (const rule of RAW_RULES) {
    if (rule.test.test(command)) return `command refused by the deny list: ${rule.name}`;
  }
  const normalised = normalizeCommand(command);
  const defaults = compiledDefaults();
  if (defaults.any.test(normalised)) {
    const index = defaults.each.findIndex((rule) => rule.test(normalised));
    return `command refused by the deny list: ${DEFAULT_DENY_RULES[index]?.name ?? "a dangerous pattern"}`;
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

/** One word of a command as the shell would see it after quote removal. */
export interface CommandWord {
  /** The word, quotes removed and escapes applied, case kept. */
  readonly text: string;
  /** It holds an unquoted, unescaped `*`, `?`, `[` or `{`: the shell may expand it into other words. */
  readonly expands: boolean;
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
  let inWord = false;
  let quote: "'" | '"' | undefined;
  const end = () => {
    if (inWord) words.push({ text, expands });
    text = "";
    expands = false;
    inWord = false;
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
    } else {
      if (EXPANDING.includes(char)) expands = true;
      text += char;
      inWord = true;
    }
  }
  end();
  return words;
}
