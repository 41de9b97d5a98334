import { quoteName } from "../internal/describe.js";
import { errorResult, silentResult, type ToolResult } from "../tool-result.js";
import { checkPath } from "./file-guard.js";
import type { FileSettings } from "./file-tool-settings.js";
import { writeAtomically } from "./write-atomically.js";

/** `write_file { path, content, overwrite? }`: the whole file written at once, an existing one only replaced with `overwrite`. */
export async function writeFile(settings: FileSettings, args: Record<string, unknown>): Promise<ToolResult> {
  const { content, overwrite = false } = args;
  if (typeof content !== "string") return errorResult("content must be a string");
  if (typeof overwrite !== "boolean") return errorResult("overwrite must be a boolean");
  const checked = await checkPath(settings, args.path, ["write"], true);
  if (!checked.ok) return checked.result;
  const shown = args.path as string;
  const failed = await writeAtomically(settings, "write_file", shown, checked.path, content, overwrite);
  return failed ?? silentResult(`File written: ${quoteName(shown)} (${Buffer.byteLength(content)} bytes)`);
}
