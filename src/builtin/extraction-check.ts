import { opendir } from "node:fs/promises";
import { join, relative } from "node:path";
import { quoteName } from "../internal/describe.js";
import { EXTRACTOR_OPTION_VARIABLES, extractionTarget } from "./archive-extraction.js";
import { type Check, CheckStopped, MAX_CHECK_OPERATIONS } from "./check-budget.js";
import type { ArchiveExtraction, CommandWord } from "./command-guard.js";
import type { ExecSettings } from "./exec-options.js";
import { RUNTIME } from "./operand-words.js";
import { entryKind, isPermitted, permittedDirectory } from "./path-check.js";
import { isInside } from "./workspace.js";

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
export function extractionOptionsRefusal(
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
export async function destinationRefusal(
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
