import { type ContentPart, contentPartBytes, resultPartsProblem } from "../content-part.js";
import type { ToolResult } from "../tool-result.js";
import { describeType, errorMessage } from "./describe.js";

/** `maxResultBytes`'s default: 20 MB of decoded bytes in one result's parts. */
export const DEFAULT_MAX_RESULT_BYTES = 20 * 1024 * 1024;

// Parts arrays found valid, with their decoded size: a result is checked when its call ends and
// its message built later, and megabytes of base64 are scanned once.
const checkedParts = new WeakMap<readonly unknown[], number>();

/** A tool message's text: `contentForLLM()`, which reads a tool's own `err` and so may throw. */
export function contentOf(result: ToolResult): string {
  try {
    const content: unknown = result.contentForLLM();
    if (typeof content === "string") return content;
    return `the tool's result has no text (got ${describeType(content)})`;
  } catch (error) {
    return `the tool's result cannot be read: ${errorMessage(error)}`;
  }
}

const NO_PARTS = Object.freeze({ parts: undefined, problem: undefined });

/** A result's `parts` and what is wrong with them (`"parts[3] data is not base64"`), read once. */
function readParts(result: ToolResult): { parts: readonly ContentPart[] | undefined; problem: string | undefined } {
  let parts: unknown;
  let problem: string | undefined;
  try {
    parts = result.parts;
    if (parts === undefined) return NO_PARTS;
    if (Array.isArray(parts) && checkedParts.has(parts)) return { parts, problem };
    problem = resultPartsProblem(parts);
  } catch (error) {
    problem = ` cannot be read: ${errorMessage(error)}`;
  }
  if (problem !== undefined) return { parts: undefined, problem: `parts${problem}` };
  const valid = parts as readonly ContentPart[];
  let bytes = 0;
  for (const part of valid) bytes += contentPartBytes(part);
  checkedParts.set(valid, bytes);
  return { parts: valid, problem };
}

/**
 * What is wrong with a result's `parts` (see `ToolResult.parts`), `undefined` when it has none or
 * they are valid: the call's answer is then an invalid result.
 */
export function partsProblem(result: ToolResult): string | undefined {
  return readParts(result).problem;
}

/**
 * A tool message's content (or an async result's, fed back): `text` alone when the result has no
 * parts, else `text` as a text part followed by the parts — unless they are invalid or their decoded
 * bytes exceed `maxBytes` (`maxResultBytes`): then `text` and a note saying why they are not shown.
 */
export function messageContent(result: ToolResult, text: string, maxBytes: number): string | ContentPart[] {
  const { parts, problem } = readParts(result);
  if (problem !== undefined) return `${text}\n[images and files not shown: ${problem}]`;
  if (parts === undefined || parts.length === 0) return text;
  const bytes = checkedParts.get(parts) as number;
  if (bytes > maxBytes) {
    return `${text}\n[${parts.length} images or files not shown: ${bytes} bytes, over maxResultBytes (${maxBytes})]`;
  }
  return [{ type: "text", text }, ...parts];
}
