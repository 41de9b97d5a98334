import type { ContentPart } from "../content-part.js";
import type { ToolResult } from "../tool-result.js";
import { boundText, MAX_VALIDATION_MESSAGE_CHARS, quoteName, wholeEnd } from "./describe.js";

/**
 * The smallest `maxResultChars`: room for the cut marker (at most 36 characters) and, after it, the
 * repeated-failure note (at most 91): below it a tool message could not be cut to fit.
 */
export const MIN_RESULT_CHARS = 128;

/**
 * `text` cut to at most `max` characters (`maxResultChars`): its start, then the marker
 * `[… N characters cut]`. Never ends on the first half of a surrogate pair. Fits within `max` when
 * the marker does (`max` ≥ 36 always is); otherwise it is the marker alone.
 */
export function cutResult(text: string, max: number): string {
  if (text.length <= max) return text;
  // Room for the marker with the largest count it can show.
  const keep = wholeEnd(text, Math.max(0, max - `\n[… ${text.length} characters cut]`.length));
  return `${text.slice(0, keep)}\n[… ${text.length - keep} characters cut]`;
}

/**
 * A message's content with its text cut to at most `max` characters in all, `note` included
 * (`maxResultChars`; `undefined`: no cut), and `note` appended to its first text. Parts: the text
 * parts are counted in order; the one that overflows is cut and marked as {@link cutResult} does
 * (the count covering every character cut), the text parts after it are left out, and images and
 * files are kept whole. The parts themselves are never changed: cut ones are copies.
 */
export function cutContent(
  content: string | ContentPart[],
  max: number | undefined,
  note = "",
): string | ContentPart[] {
  const limit = max === undefined ? Number.POSITIVE_INFINITY : max - note.length;
  if (typeof content === "string") return (content.length <= limit ? content : cutResult(content, limit)) + note;
  let total = 0;
  for (const part of content) if (part.type === "text") total += part.text.length;
  // Room for the marker with the largest count it can show.
  let room = total <= limit ? total : Math.max(0, limit - `\n[… ${total} characters cut]`.length);
  let kept = 0;
  let cutAt = -1;
  const parts: ContentPart[] = [];
  for (const part of content) {
    if (part.type !== "text") parts.push(part);
    else if (part.text.length <= room) {
      parts.push(part);
      room -= part.text.length;
      kept += part.text.length;
    } else if (cutAt < 0) {
      const keep = wholeEnd(part.text, room);
      cutAt = parts.push({ type: "text", text: part.text.slice(0, keep) }) - 1;
      room = 0;
      kept += keep;
    }
  }
  if (cutAt >= 0) appendText(parts, cutAt, `\n[… ${total - kept} characters cut]`);
  if (note !== "") {
    const first = parts.findIndex((part) => part.type === "text");
    if (first < 0) parts.unshift({ type: "text", text: note.trimStart() });
    else appendText(parts, first, note);
  }
  return parts;
}

/** Replaces the text part at `index` by a copy with `text` appended. */
function appendText(parts: ContentPart[], index: number, text: string): void {
  const part = parts[index] as { type: "text"; text: string };
  parts[index] = { type: "text", text: part.text + text };
}

/**
 * `maxRepeatedFailures`: counts, per tool, how many times in a row it failed with the same text
 * (across turns); a success or another error text starts over.
 */
export class RepeatedFailures {
  readonly #limit: number;
  // A Map: tool names come from the model.
  readonly #last = new Map<string, { error: string; count: number }>();

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Records one answer; returns the note to append when this failure reached the limit. */
  record(toolName: string, result: ToolResult, text: string): string | undefined {
    if (result.isError !== true) {
      this.#last.delete(toolName);
      return undefined;
    }
    const last = this.#last.get(toolName);
    const count = last !== undefined && last.error === text ? last.count + 1 : 1;
    this.#last.set(toolName, { error: text, count });
    if (count < this.#limit) return undefined;
    return `\n\n[This call failed ${count} times in a row with the same error. Stop retrying it.]`;
  }

  /** The loop's final `content` after `toolName` failed too often with `error`. */
  static content(toolName: string, error: string, limit: number): string {
    const shown = boundText(error, MAX_VALIDATION_MESSAGE_CHARS);
    return `stopped: tool ${quoteName(toolName)} failed ${limit} times in a row with the same error: ${shown}`;
  }

  /** The limit this tracker stops at. */
  get limit(): number {
    return this.#limit;
  }
}

/** The note sent (not recorded) with `finalAnswerOnMaxIterations`'s last provider call. */
export const FINAL_ANSWER_NOTE =
  "You have reached the limit of tool calls for this task. Do not call any tool: answer now with what you have.";

/** The answer to a call the model makes in that last provider call. */
export const FINAL_TURN_REFUSAL = "no tool can be called: the iteration limit was reached";
