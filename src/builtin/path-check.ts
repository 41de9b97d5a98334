import type { Dirent } from "node:fs";
import { opendir } from "node:fs/promises";
import { isAbsolute, join } from "node:path";
import { quoteName } from "../internal/describe.js";
import type { Check } from "./check-budget.js";
import type { ExecSettings } from "./exec-options.js";
import { mayMatchParent, PARENT_SEGMENT, STAY_INSIDE, wildcardIndex } from "./operand-words.js";
import { resolveWorkspacePath } from "./workspace.js";

// How the workspace check of a restricted command checks one path it names: resolved through
// symlinks as a file tool's path; a wildcard's directory listed for symlinks that lead outside;
// the directories its `cd`s may lead to.

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

/** Most directories a restricted command's `cd`s may lead to, each of which its words are checked from. */
export const MAX_DIRECTORIES = 16;

/**
 * The working directory and every existing directory inside the workspace that the `cd` targets
 * lead to from it, repeatedly (a `cd sub` in a loop goes on into `sub/sub`); `undefined` when
 * there are more than {@link MAX_DIRECTORIES}. A target that leads outside is not followed: the
 * word itself is refused.
 */
export async function reachableDirectories(
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
export function operandDirectory(settings: ExecSettings, word: string, expands: boolean, cwd: string): string {
  let path = word;
  if (word === "~" || word.startsWith("~/"))
    path = join(settings.env.HOME ?? settings.workspace.workspace, word.slice(1));
  const wildcard = expands ? wildcardIndex(path) : -1;
  if (wildcard !== -1) path = path.slice(0, path.lastIndexOf("/", wildcard) + 1) || ".";
  return isAbsolute(path) ? path : join(cwd, path);
}

export async function checkOperand(
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
export async function isPermitted(settings: ExecSettings, path: string, check: Check): Promise<boolean> {
  return (await permittedPath(settings, path, check)) !== undefined;
}

/** The real path of `path` when it is a directory the command may name, else `undefined`. */
export async function permittedDirectory(
  settings: ExecSettings,
  path: string,
  check: Check,
): Promise<string | undefined> {
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
export async function entryKind(entry: Dirent, path: string, check: Check): Promise<"link" | "directory" | "other"> {
  if (entry.isSymbolicLink()) return "link";
  if (entry.isDirectory()) return "directory";
  const known =
    entry.isFile() || entry.isFIFO() || entry.isSocket() || entry.isBlockDevice() || entry.isCharacterDevice();
  if (known) return "other";
  const { kind } = await check.lookups.entry(path);
  return kind === "link" || kind === "directory" ? kind : "other";
}

/** What a wildcard's directory holds, as far as the workspace check cares. */
export type DirectoryFinding =
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
