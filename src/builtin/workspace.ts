import { statSync } from "node:fs";
import { access as accessPath, type FileHandle, lstat, readlink, realpath } from "node:fs/promises";
import { isAbsolute, resolve, sep } from "node:path";
import { isRecord } from "../internal/describe.js";
import { optionError } from "../internal/options.js";

/**
 * Where the built-in tools may touch the filesystem: a workspace directory, and optionally paths
 * outside it that may be read or written. Shared by the file tools and `execute_bash`.
 */
export interface WorkspaceOptions {
  /** The absolute path of an existing directory; every relative path a model sends is resolved inside it. */
  workspace: string;
  /**
   * Refuse every path that leads outside the workspace (after resolving `..` and symlinks), except
   * those the allow lists name. `false` lets the tools reach any path the process can. @default true
   */
  restrictToWorkspace?: boolean;
  /**
   * Paths outside the workspace that may be read: a path is allowed when one of these matches its
   * real absolute path (symlinks resolved, e.g. `/private/tmp/…` on macOS). Never allows writing.
   */
  allowReadPaths?: RegExp[];
  /**
   * Paths outside the workspace that may be written, matched like `allowReadPaths`. Never allows
   * reading.
   */
  allowWritePaths?: RegExp[];
}

/** What a path is used for: the allow list that may exempt it (`allowReadPaths` or `allowWritePaths`). */
export type WorkspaceAccess = "read" | "write";

/**
 * The answer of {@link resolveWorkspacePath}: the real absolute path to use, or why the path is
 * refused (a message the model may read: it never shows a host path the model did not send).
 */
export type WorkspacePathResult = { ok: true; path: string } | { ok: false; error: string };

/** The refusal of every path that leads outside the workspace (and is not allowed for this access). */
export const OUTSIDE_WORKSPACE = "access denied: path is outside the workspace";

/** Longest path a model may send (Linux's `PATH_MAX`). */
export const MAX_PATH_CHARS = 4_096;

/** Most symlinks followed while resolving one path (Linux's limit); more is a loop. */
const MAX_SYMLINKS = 40;

/**
 * Checks workspace options at creation (`where` names the factory in the message), so that a bad
 * configuration fails at once rather than as every call's error.
 * @throws TypeError echoing the bad value: `workspace` not an absolute path of an existing
 * directory, `restrictToWorkspace` not a boolean, an allow list not an array of RegExp
 */
export function checkWorkspaceOptions(options: unknown, where: string): asserts options is WorkspaceOptions {
  if (!isRecord(options)) throw optionError(where, "options", "an object", options);
  const { workspace, restrictToWorkspace } = options;
  if (typeof workspace !== "string" || !isAbsolute(workspace) || workspace.includes("\0")) {
    throw optionError(where, "workspace", "an absolute directory path", workspace);
  }
  let isDirectory = false;
  try {
    isDirectory = statSync(workspace).isDirectory();
  } catch {
    // reported below
  }
  if (!isDirectory) throw optionError(where, "workspace", "an existing directory", workspace);
  if (restrictToWorkspace !== undefined && typeof restrictToWorkspace !== "boolean") {
    throw optionError(where, "restrictToWorkspace", "a boolean", restrictToWorkspace);
  }
  for (const option of ["allowReadPaths", "allowWritePaths"] as const) {
    const list = options[option];
    if (list === undefined) continue;
    if (!Array.isArray(list)) throw optionError(where, option, "an array of RegExp", list);
    list.forEach((pattern: unknown, index) => {
      if (!(pattern instanceof RegExp)) throw optionError(where, `${option}[${index}]`, "a RegExp", pattern);
    });
  }
}

/**
 * Resolves a path a model sent (relative to the workspace, or absolute) to the real absolute path
 * a tool should use: every symlink resolved, a missing tail (a file to create) kept as written.
 * With `restrictToWorkspace` (the default) it is refused with {@link OUTSIDE_WORKSPACE} when
 * either the path as written (`..` resolved) or its real path leads outside the workspace's real
 * path — `..` traversal, an absolute path outside, a symlink (the file or any ancestor, also a
 * dangling one or the nearest existing ancestor of a new file) that leads out — unless the real
 * path matches `allowReadPaths` (for `"read"`) or `allowWritePaths` (for `"write"`). An empty
 * path, a NUL byte, a path over {@link MAX_PATH_CHARS} characters and a symlink loop are refused
 * too. Between this check and the use of the path the filesystem may change: a tool that must not
 * be raced opens first and checks what it opened (see docs/builtin-tools.md).
 * @param lookups where the filesystem is read: one {@link PathLookups} shared by the paths of one
 * check reads each path component once (default: a fresh one, which caches nothing between calls)
 * @throws only what the `onOperation` of `lookups` throws (a check's way to stop); never otherwise
 */
export async function resolveWorkspacePath(
  options: WorkspaceOptions,
  path: string,
  access: WorkspaceAccess,
  lookups: PathLookups = new PathLookups(),
): Promise<WorkspacePathResult> {
  if (typeof path !== "string") return refused("path must be a string");
  if (path === "") return refused("path is empty");
  if (path.includes("\0")) return refused("path contains a NUL byte");
  if (path.length > MAX_PATH_CHARS)
    return refused(`path is too long (${path.length} characters; at most ${MAX_PATH_CHARS})`);
  const workspace: unknown = options.workspace;
  if (typeof workspace !== "string" || !isAbsolute(workspace))
    return refused("the workspace directory is not available");
  const restricted = options.restrictToWorkspace !== false;
  const realWorkspace = await lookups.realWorkspace(workspace);
  if (realWorkspace === undefined) return refused("the workspace directory is not available");
  const lexical = resolve(workspace, path);
  const lexicalWorkspace = resolve(workspace);
  // Resolved from the path as written (not `lexical`): `link/..` goes where the kernel goes.
  const real = await realPath(isAbsolute(path) ? path : `${workspace}/${path}`, lookups);
  if (typeof real !== "string") return refused(real.error);
  if (!restricted) return { ok: true, path: real };
  const inside = isInside(lexical, lexicalWorkspace) || isInside(lexical, realWorkspace);
  if (inside && isInside(real, realWorkspace)) return { ok: true, path: real };
  if (isAllowed(options, real, access)) return { ok: true, path: real };
  return refused(OUTSIDE_WORKSPACE);
}

/**
 * `true` when the real absolute path `real` (e.g. from {@link heldRealPath}) may be used for
 * `access`: `restrictToWorkspace` is `false`, or it is inside the workspace's real path, or it
 * matches the allow list of that access. Never throws (an unavailable workspace allows nothing).
 */
export async function isAllowedRealPath(
  options: WorkspaceOptions,
  real: string,
  access: WorkspaceAccess,
): Promise<boolean> {
  if (options.restrictToWorkspace === false) return true;
  const workspace: unknown = options.workspace;
  if (typeof real !== "string" || !isAbsolute(real) || typeof workspace !== "string" || !isAbsolute(workspace))
    return false;
  let realWorkspace: string;
  try {
    realWorkspace = await realpath(workspace);
  } catch {
    return false;
  }
  return isInside(real, realWorkspace) || isAllowed(options, real, access);
}

/** Where Linux names the open files of this process. */
const PROC_FDS = "/proc/self/fd";
/** What Linux adds to the name of an open file that has no name left. */
const DELETED = " (deleted)";

/**
 * The real absolute path of the file or directory `handle` holds, as the kernel names it
 * (`readlink /proc/self/fd/N`): no path is looked up again, so a directory renamed or swapped for
 * a symlink since the open changes nothing. A file removed since the open is named by its last
 * path. `undefined` where there is no `/proc/self/fd` (not Linux): the caller must fall back.
 * @throws the filesystem error when `/proc/self/fd` exists but the link cannot be read
 */
export async function heldRealPath(handle: FileHandle): Promise<string | undefined> {
  let target: string;
  try {
    target = await readlink(`${PROC_FDS}/${handle.fd}`);
  } catch (error) {
    if (
      errorCode(error) === "ENOENT" &&
      !(await accessPath(PROC_FDS).then(
        () => true,
        () => false,
      ))
    )
      return undefined;
    throw error;
  }
  // Only a file that really has no name left (nlink 0) loses the suffix: a file may be named "x (deleted)".
  if (target.endsWith(DELETED) && (await handle.stat()).nlink === 0) return target.slice(0, -DELETED.length);
  return target;
}

/**
 * `true` when `path` (absolute, normalised) is `directory` or inside it. Exported for the tools
 * that check a path they opened; `directory` should be a real path.
 */
export function isInside(path: string, directory: string): boolean {
  if (path === directory) return true;
  const prefix = directory.endsWith(sep) ? directory : directory + sep;
  return path.startsWith(prefix);
}

/** `true` when `real` matches the allow list of `access`. */
function isAllowed(options: WorkspaceOptions, real: string, access: WorkspaceAccess): boolean {
  const allowed: unknown = access === "read" ? options.allowReadPaths : options.allowWritePaths;
  return Array.isArray(allowed) && allowed.some((pattern: unknown) => matches(pattern, real));
}

function refused(error: string): WorkspacePathResult {
  return { ok: false, error };
}

/** A caller's pattern on a real path; a `g`/`y` pattern is copied without them (no `lastIndex` state), a throwing one does not match. */
function matches(pattern: unknown, path: string): boolean {
  if (!(pattern instanceof RegExp)) return false;
  try {
    const stateless =
      pattern.global || pattern.sticky ? new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, "")) : pattern;
    return stateless.test(path);
  } catch {
    return false;
  }
}

/**
 * What a path is, as far as resolving paths needs: nothing (`ENOENT`, `ENOTDIR`), a symlink and its
 * target, a directory, anything else, or a filesystem error (its code).
 */
export type PathEntry =
  | { readonly kind: "missing" }
  | { readonly kind: "link"; readonly target: string }
  | { readonly kind: "directory" }
  | { readonly kind: "other" }
  | { readonly kind: "error"; readonly code: string };

/**
 * The filesystem lookups of {@link resolveWorkspacePath}, cached for many paths checked together
 * (the words of one command): each path it resolves through is looked up once (`lstat`, and
 * `readlink` for a symlink), the workspace's real path once, so `d/a`, `d/b` … resolve `d` once.
 * It keeps what it saw: use one per check, since the filesystem changes afterwards.
 */
export class PathLookups {
  readonly #entries = new Map<string, Promise<PathEntry>>();
  readonly #workspaces = new Map<string, Promise<string | undefined>>();
  readonly #onOperation: (() => void) | undefined;
  /** How many filesystem operations it did (a cached answer costs none). */
  operations = 0;

  /**
   * @param onOperation called before each filesystem operation it really does (none for a cached
   * answer); it may throw to stop the check, and the error propagates to the caller
   */
  constructor(onOperation?: () => void) {
    this.#onOperation = onOperation;
  }

  /** What `path` (absolute) is, not following a symlink at its end: looked up once. */
  entry(path: string): Promise<PathEntry> {
    const known = this.#entries.get(path);
    if (known !== undefined) return known;
    // Counted (and maybe stopped) before the lookup; a stop throws here, before anything is cached.
    this.#operation();
    const looked = this.#lookUp(path);
    this.#entries.set(path, looked);
    return looked;
  }

  /** The real path of the workspace directory `workspace`, or `undefined` when it is not available: looked up once. */
  realWorkspace(workspace: string): Promise<string | undefined> {
    const known = this.#workspaces.get(workspace);
    if (known !== undefined) return known;
    this.#operation();
    const looked = realpath(workspace).catch(() => undefined);
    this.#workspaces.set(workspace, looked);
    return looked;
  }

  #operation(): void {
    this.operations++;
    this.#onOperation?.();
  }

  async #lookUp(path: string): Promise<PathEntry> {
    let kind: PathEntry["kind"];
    try {
      const stats = await lstat(path);
      kind = stats.isSymbolicLink() ? "link" : stats.isDirectory() ? "directory" : "other";
    } catch (error) {
      const code = errorCode(error);
      if (code === "ENOENT" || code === "ENOTDIR") return { kind: "missing" };
      return { kind: "error", code: code ?? "error" };
    }
    if (kind !== "link") return { kind };
    // A second operation: counted like the first (a stop rejects this lookup, and so every later one of it).
    this.#operation();
    try {
      return { kind: "link", target: await readlink(path) };
    } catch (error) {
      return { kind: "error", code: errorCode(error) ?? "error" };
    }
  }
}

/**
 * The real path of `path` (absolute), resolving each component as the kernel does (`..` after a
 * symlink goes up from its target); from the first missing component on, the rest is kept as
 * written. Unlike `fs.realpath` it resolves a dangling symlink to where it points, so a new file
 * "behind" it is judged by where it would really be created.
 */
async function realPath(path: string, lookups: PathLookups): Promise<string | { error: string }> {
  const pending = path.split("/").reverse();
  let current = "/";
  let missing = false;
  let links = 0;
  while (pending.length > 0) {
    const part = pending.pop() as string;
    if (part === "" || part === ".") continue;
    if (part === "..") {
      current = parentOf(current);
      continue;
    }
    const next = current === "/" ? `/${part}` : `${current}/${part}`;
    if (missing) {
      current = next;
      continue;
    }
    const entry = await lookups.entry(next);
    if (entry.kind === "error") return { error: `path cannot be resolved (${entry.code})` };
    if (entry.kind === "missing") {
      // Nothing is here: the rest is what a write would create.
      missing = true;
      current = next;
      continue;
    }
    if (entry.kind !== "link") {
      current = next;
      continue;
    }
    if (++links > MAX_SYMLINKS) return { error: "path cannot be resolved: too many levels of symlinks" };
    const { target } = entry;
    if (target.startsWith("/")) current = "/";
    pending.push(...target.split("/").reverse());
  }
  return current;
}

function parentOf(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash <= 0 ? "/" : path.slice(0, slash);
}

/** The `code` of a Node filesystem error (`ENOENT` …), or `undefined`. */
export function errorCode(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const code: unknown = (error as { code?: unknown }).code;
  return typeof code === "string" ? code : undefined;
}
