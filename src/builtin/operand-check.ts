import { isAbsolute } from "node:path";
import { quoteName } from "../internal/describe.js";
import { extractionTarget } from "./archive-extraction.js";
import type { Check } from "./check-budget.js";
import { type ArchiveExtraction, type CommandWord, commandName, shellLayers } from "./command-guard.js";
import type { ExecSettings } from "./exec-options.js";
import { destinationRefusal, extractionOptionsRefusal } from "./extraction-check.js";
import {
  CHANGE_DIRECTORY,
  DIRECTORY_VARIABLES,
  directoryTarget,
  FILE_URL,
  filePath,
  HOME_OR_PWD_VALUE,
  harmlessParameters,
  namedVariables,
  operandsOf,
  PARENT_SEGMENT,
  RUNTIME,
  runtimeRefusal,
  STAY_INSIDE,
  URL_PATTERN,
} from "./operand-words.js";
import {
  checkOperand,
  type DirectoryFinding,
  isPermitted,
  MAX_DIRECTORIES,
  operandDirectory,
  reachableDirectories,
} from "./path-check.js";

// The workspace check of a restricted command's operands (see operand-words.ts for what is read
// as a path, path-check.ts for how each is checked).

/**
 * Why a restricted command may not run for the paths it names (a refusal the model reads), or
 * `undefined`: every word of every layer read as paths ({@link readOperands}), checked from every
 * directory its `cd`s may lead to ({@link workingDirectories}); an archive extraction's options,
 * and the directories it may write into walked for symlinks that lead outside.
 */
export async function checkOperands(
  settings: ExecSettings,
  command: string,
  cwd: string,
  extractions: readonly ArchiveExtraction[],
  check: Check,
): Promise<string | undefined> {
  // checkCommand refused inline shells nested too deep: every layer is here.
  const words = shellLayers(command).layers.flatMap((layer) => layer.words);
  const named = namedVariables(words);
  const operands = readOperands(words, named, harmlessParameters(settings, named));
  if (typeof operands === "string") return operands;
  const { candidates, targets } = operands;
  const extraction = extractionOptionsRefusal(extractions, words);
  if (extraction !== undefined) return `command refused: ${extraction}`;
  const home = settings.env.HOME ?? settings.workspace.workspace;
  const directories = await workingDirectories(settings, cwd, targets, named, check);
  if (typeof directories === "string") return directories;
  // Each directory a wildcard lists is read once per command, however many wildcards name it.
  const listed = new Map<string, Promise<DirectoryFinding>>();
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

/**
 * The paths the words name, each with whether the shell may expand it (an unquoted `*`, `?`, `[`
 * or `{`), and the targets of their `cd`s (`~` for a `cd` alone, which goes HOME); or why the
 * command is refused before any path is read (a `$` expansion, `xargs`, a `..` segment …).
 */
function readOperands(
  words: readonly CommandWord[],
  named: ReadonlySet<string>,
  harmless: Set<string>,
): { candidates: Map<string, boolean>; targets: Set<string> } | string {
  const candidates = new Map<string, boolean>();
  const add = (path: string, expands: boolean) => candidates.set(path, expands || candidates.get(path) === true);
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
  return { candidates, targets };
}

/**
 * The directories the command's words are read from: the working directory, and every one its
 * `cd` targets may lead to; or why it is refused (it sets a variable that decides where `cd` goes,
 * a `cd` alone would leave the workspace, or the directories are too many to check).
 */
async function workingDirectories(
  settings: ExecSettings,
  cwd: string,
  targets: ReadonlySet<string>,
  named: ReadonlySet<string>,
  check: Check,
): Promise<string[] | string> {
  if (targets.size === 0) return [cwd];
  // `cd` goes HOME, back to OLDPWD, along CDPATH: values the command (or options.env) may set.
  const variable = DIRECTORY_VARIABLES.find(
    (name) => named.has(name) || (name !== "HOME" && settings.env[name] !== undefined),
  );
  if (variable !== undefined) {
    return `command refused: it changes directory and sets ${variable}, which decides where cd goes, ${RUNTIME}`;
  }
  const home = settings.env.HOME ?? settings.workspace.workspace;
  if (!(await isPermitted(settings, home, check))) {
    return "command refused: it changes directory, and a cd alone goes to HOME, which is outside the workspace";
  }
  const directories = await reachableDirectories(settings, cwd, targets, check);
  if (directories === undefined) {
    return (
      `command refused: it may change into more than ${MAX_DIRECTORIES} directories, too many to check; ` +
      "use working_directory instead"
    );
  }
  return directories;
}
