import type { WorkspaceAccess, WorkspaceOptions } from "./workspace.js";

/**
 * @internal Test seams (never public): called after a path passed the guard and before the tool
 * opens it (`afterCheck`), and after a temporary file is written and before it replaces its
 * target (`beforeCommit`), so a test can swap a directory or fail a write at that exact moment;
 * `withoutProc` runs the tools as where there is no `/proc` (the path-based fallback).
 */
export const FILE_TOOL_HOOKS: unique symbol = Symbol("toolloop.builtin.fileToolHooks");

/** @internal The shape of {@link FILE_TOOL_HOOKS}. */
export interface FileToolHooks {
  /** After the guard accepted `path` (real, absolute) for `access`, before it is opened. */
  afterCheck?(path: string, access: WorkspaceAccess): Promise<void> | void;
  /** After the temporary file `tempPath` (its real path) holds the new content, before it replaces the target. */
  beforeCommit?(tempPath: string): Promise<void> | void;
  /** Act as if `/proc/self/fd` were missing (non-Linux): the path-based checks. @default false */
  withoutProc?: boolean;
}

/** Bytes read at a time from a file. */
export const CHUNK_BYTES = 65_536;

/** What every file tool is given: the checked options of `createFileTools`, copied. */
export interface FileSettings {
  readonly workspace: WorkspaceOptions;
  readonly maxReadBytes: number;
  readonly extensions: ReadonlySet<string> | undefined;
  readonly hooks: FileToolHooks;
}
