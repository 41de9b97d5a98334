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
 * A message's content with its text cut to at most `max` characters (`maxResultChars`;
 * `undefined`: no cut), `note` included and appended to its first text. Parts: the text parts share
 * the budget in order, each that overflows cut as {@link cutResult} does (a part past the budget
 * becomes its marker alone); images and files are kept whole, and no part given is changed.
 */
export function cutContent(
  content: string | ContentPart[],
  max: number | undefined,
  note = "",
): string | ContentPart[] {
  let room = max === undefined ? Number.POSITIVE_INFINITY : max - note.length;
  const cut = (text: string) => {
    const kept = text.length <= room ? text : cutResult(text, room);
    room = Math.max(0, room - kept.length);
    return kept;
  };
  if (typeof content === "string") return cut(content) + note;
  let first = true;
  return content.map((part) => {
    if (part.type !== "text") return part;
    let text = cut(part.text);
    if (first) text += note;
    first = false;
    return text === part.text ? part : { type: "text", text };
  });
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
