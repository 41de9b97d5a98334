import { EXTRACTORS, extractsArchive } from "./archive-extraction.js";
import { canonicalForm } from "./canonical-form.js";
import { compiledDefaults, DEFAULT_DENY_RULES, OUTLIVES, RAW_RULES } from "./deny-rules.js";
import { isCompressorFilter, programScripts } from "./program-scripts.js";
import { type AnalysedLayer, analysedLayers, MAX_LAYERS, MAX_SHELL_DEPTH } from "./shell-layers.js";
import { commandName, FIND_EXEC, type Item, programsIn, runsDetacher, structureRefusal } from "./shell-structure.js";
import { type CommandWord, commandWords, joinContinuations, MAX_COMMAND_CHARS } from "./shell-tokens.js";

export { DEFAULT_DENY_RULES, type DenyRule } from "./deny-rules.js";
export { MAX_SHELL_DEPTH, type ShellLayer, shellLayers } from "./shell-layers.js";
export { commandName } from "./shell-structure.js";
export { type CommandWord, commandWords, MAX_COMMAND_CHARS } from "./shell-tokens.js";

// The command guard of `execute_bash`: what a command is matched on (its normalised forms), and
// checkCommand, which runs every check on every layer of the command. The parts it reads are
// files of their own: the shell-like split into words (shell-tokens.ts), the default deny list
// (deny-rules.ts), the layers of inline shells (shell-layers.ts), the structure checks
// (shell-structure.ts), the form of what runs (canonical-form.ts, brace-expansion.ts,
// wildcards.ts). Nothing here touches the filesystem or starts a process; every step is linear in
// the command (or bounded by a small constant per word).

/**
 * The form of a command that deny and allow patterns are matched on: its line continuations
 * removed as the shell removes them ({@link joinContinuations}); lower case; `$@`, `$*` and
 * `$1`…`$9` removed (they are empty in `sh -c command`, so `r$@m` is `rm`); every backslash,
 * single and double quote removed (`r\m`, `"rm"`, `'r'm`, `r""m` all read `rm`); each newline
 * (and carriage return) a `;`; every run of white space one space; trimmed. Comments are kept. It
 * over-approximates the shell (`echo "a;b"` reads `echo a;b`), which can only refuse more, never
 * less. Linear in the command.
 */
export function normalizeCommand(command: string): string {
  return normalised(joinContinuations(command));
}

/** {@link normalizeCommand} of a command line whose continuations are already joined. */
function normalised(joined: string): string {
  // Empty in `sh -c command` (no arguments): `r$@m` is `rm`.
  return normalise(joined.replace(/\$[@*1-9]/g, ""));
}

/**
 * {@link normalised} without removing `$@`, `$*`, `$1`…`$9`: the command may set them
 * (`set -- r m; $1$2 -rf x`), so the default rules also run on this form, where they are a `$`.
 * A backslash-newline left is inside single quotes or a comment, where it joins nothing: its
 * newline reads `;`.
 */
function normalise(joined: string): string {
  return joined
    .toLowerCase()
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
  // After the rules, which name a problem more precisely (`script -qc 'rm -rf x'` is about rm).
  if (layers.some((layer) => runsDetacher(layer.items))) return `command refused by the deny list: ${OUTLIVES}`;
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
  const normalisedCommand = normalised(command);
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
  for (const form of [normalisedCommand, normalise(command)]) {
    const refusal = denied(form);
    if (refusal !== undefined) return refusal;
  }
  if (layer.doubt !== undefined) return `command refused by the deny list: ${layer.doubt}`;
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
  const expanded = normalised(canonical);
  for (const form of [expanded, normalise(canonical)]) {
    const refusal = denied(form);
    if (refusal !== undefined) return refusal;
  }
  for (const pattern of patterns.deny) {
    if (
      matches(pattern, normalisedCommand, true) ||
      (expanded !== normalisedCommand && matches(pattern, expanded, true))
    ) {
      return "command refused by the deny list: a pattern of this application";
    }
  }
  if (patterns.allow.length > 0) {
    for (const part of simpleCommands(normalisedCommand)) {
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
