import { failure } from "../execute-tool-call.js";
import { quoteName } from "../internal/describe.js";
import type { ToolResult } from "../tool-result.js";
import { errorCode, OUTSIDE_WORKSPACE } from "./workspace.js";

const REASONS: ReadonlyMap<string, string> = new Map([
  ["ENOENT", "not found"],
  ["EISDIR", "is a directory"],
  ["ENOTDIR", "a part of the path is not a directory"],
  ["EACCES", "permission denied"],
  ["EPERM", "operation not permitted"],
  ["EEXIST", "already exists"],
  ["ENOSPC", "no space left on the device"],
  ["EROFS", "read-only file system"],
  ["ENAMETOOLONG", "a name in the path is too long"],
  ["ELOOP", OUTSIDE_WORKSPACE],
  ["ENXIO", "not a regular file"],
  ["EBUSY", "busy"],
  ["EMFILE", "too many open files, try again"],
]);

/** An error result for a failed filesystem call: the model's path and a short reason, never the Node message (it holds the real path). */
export function fsFailure(tool: string, path: string, error: unknown): ToolResult {
  const code = errorCode(error);
  const reason = (code !== undefined ? REASONS.get(code) : undefined) ?? `failed (${code ?? "unexpected error"})`;
  if (reason === OUTSIDE_WORKSPACE) return failure(tool, "tool_failed", OUTSIDE_WORKSPACE, error);
  return failure(tool, "tool_failed", `${quoteName(path)}: ${reason}`, error);
}
