import { type ContentPart, contentPartBytes, resultPartsProblem } from "../content-part.js";
import type { ToolResult } from "../tool-result.js";
import { describeType, errorMessage } from "./describe.js";

/** `maxResultBytes`'s default: 20 MB of decoded bytes in one result's parts. */
export const DEFAULT_MAX_RESULT_BYTES = 20 * 1024 * 1024;

/** A result's parts as read and checked, or what is wrong with them. */
interface ReadParts {
  /** The parts as checked: a copy of each, never the tool's own objects, which it may change later. */
  parts: readonly ContentPart[] | undefined;
  /** Their decoded size in bytes. */
  bytes: number;
  /** What is wrong with them, to follow `parts` (`"[3] data is not base64"`). */
  problem: string | undefined;
}

// Parts arrays found valid, with their snapshot: a result is checked when its call ends and its
// message built later from what was checked then (megabytes of base64 are scanned once, and a part
// the tool pushes or changes after its call ended never reaches the transcript unchecked).
const checkedParts = new WeakMap<readonly unknown[], ReadParts>();

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

const NO_PARTS: ReadParts = Object.freeze({ parts: undefined, bytes: 0, problem: undefined });

/** A result's `parts`, read and checked once (see {@link ReadParts}). */
function readParts(result: ToolResult): ReadParts {
  let problem: string | undefined;
  try {
    const parts: unknown = result.parts;
    if (parts === undefined) return NO_PARTS;
    const known = Array.isArray(parts) ? checkedParts.get(parts) : undefined;
    if (known !== undefined) return known;
    const snapshot: ContentPart[] = [];
    problem = resultPartsProblem(parts, snapshot);
    if (problem === undefined) {
      let bytes = 0;
      for (const part of snapshot) bytes += contentPartBytes(part);
      const read = { parts: snapshot, bytes, problem };
      checkedParts.set(parts as readonly unknown[], read);
      return read;
    }
  } catch (error) {
    problem = ` cannot be read: ${errorMessage(error)}`;
  }
  return { parts: undefined, bytes: 0, problem: `parts${problem}` };
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
  const { parts, bytes, problem } = readParts(result);
  if (problem !== undefined) return `${text}\n[images and files not shown: ${problem}]`;
  if (parts === undefined || parts.length === 0) return text;
  if (bytes > maxBytes) {
    return `${text}\n[${parts.length} images or files not shown: ${bytes} bytes, over maxResultBytes (${maxBytes})]`;
  }
  return [{ type: "text", text }, ...parts];
}
