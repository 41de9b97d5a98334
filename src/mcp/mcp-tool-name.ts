import { createHash } from "node:crypto";

/** The longest tool name every provider API accepts (and the registry's limit). */
const MAX_NAME_LENGTH = 64;
/** `_` and 8 hex digits. */
const SUFFIX_LENGTH = 9;

/** `mcp_<server>_<tool>` lower-cased, every character outside `[a-z0-9_-]` replaced by `_` (uncut). */
function baseName(serverName: string, toolName: string): string {
  return `mcp_${serverName}_${toolName}`.toLowerCase().replace(/[^a-z0-9_-]/gu, "_");
}

/** 8 hex digits of SHA-256 over the server's and the tool's names as given: stable across runs and processes. */
function shortHash(serverName: string, toolName: string): string {
  return createHash("sha256").update(`${serverName}\u0000${toolName}`).digest("hex").slice(0, 8);
}

/** `base` with the hash suffix, cut first so that the whole fits in 64 characters. */
function suffixed(base: string, serverName: string, toolName: string): string {
  return `${base.slice(0, MAX_NAME_LENGTH - SUFFIX_LENGTH)}_${shortHash(serverName, toolName)}`;
}

/**
 * Registry names for one server's tools: `mcp_<server>_<tool>` lower-cased, characters outside
 * `[a-z0-9_-]` replaced by `_`, at most 64 characters (a longer name is cut and suffixed with `_`
 * and 8 hex digits of a hash of the server's and the tool's names as given).
 *
 * Two tools never share a name silently. When several tools (or a name `isTaken` says another
 * tool of the registry holds) come out the same, the tool whose name needed no change keeps the
 * plain name and every other gets the hash suffix; a suffixed name that is still not free (a hash
 * collision) maps to `undefined`, and the caller skips that tool. The result depends only on the
 * list and `isTaken`, not on the order of the list.
 *
 * @param toolNames distinct tool names as the server lists them
 * @param isTaken whether a name is held by a tool that is not one of these
 */
export function mcpToolNames(
  serverName: string,
  toolNames: readonly string[],
  isTaken: (name: string) => boolean,
): Map<string, string | undefined> {
  const plain = new Map<string, string>();
  const byPlain = new Map<string, string[]>();
  for (const toolName of toolNames) {
    const base = baseName(serverName, toolName);
    const name = base.length <= MAX_NAME_LENGTH ? base : suffixed(base, serverName, toolName);
    plain.set(toolName, name);
    const group = byPlain.get(name);
    if (group === undefined) byPlain.set(name, [toolName]);
    else group.push(toolName);
  }

  const result = new Map<string, string | undefined>();
  const used = new Set<string>();
  const suffixedTools: string[] = [];
  for (const [name, group] of byPlain) {
    if (group.length === 1 && !isTaken(name)) {
      result.set(group[0] as string, name);
      used.add(name);
      continue;
    }
    // Only a name that needed no change (and was not cut) may keep it: then the result does not
    // depend on which tool the server lists first.
    const exact = isTaken(name) ? undefined : group.find((toolName) => `mcp_${serverName}_${toolName}` === name);
    for (const toolName of group) {
      if (toolName === exact) {
        result.set(toolName, name);
        used.add(name);
      } else {
        suffixedTools.push(toolName);
      }
    }
  }
  for (const toolName of suffixedTools) {
    const name = suffixed(plain.get(toolName) as string, serverName, toolName);
    const free = !used.has(name) && !isTaken(name);
    result.set(toolName, free ? name : undefined);
    if (free) used.add(name);
  }
  return result;
}
