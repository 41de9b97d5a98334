import { cutName, errorMessage, isPlainObject } from "./internal/describe.js";
import type { ProviderToolCall } from "./provider.js";

/** At most this many calls are read from one reply; further blocks are reported in `errors`. */
export const MAX_TEXT_TOOL_CALLS = 64;
// A `</tool>` inside a JSON string ends a block early: the next few closing tags are tried too.
const MAX_CLOSING_TAGS_TRIED = 8;
const OPEN = "<tool>";
const CLOSE = "</tool>";

/** What {@link parseTextToolCalls} read from a reply. */
export interface ParsedTextToolCalls {
  /** The text outside `<tool>` blocks (blocks inside fenced code stay text), trimmed. */
  content: string;
  /** One call per readable block, in order (at most {@link MAX_TEXT_TOOL_CALLS}); ids are left to the loop. */
  calls: ProviderToolCall[];
  /** One message per block that could not be read (bad JSON, another server, no tool name, too many, unclosed). */
  errors: string[];
}

/** Start offsets of fenced code (``` or ~~~ at a line start) and their ends, in order. */
function fencedRanges(text: string): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  let open: { at: number; fence: string } | undefined;
  let lineStart = 0;
  while (lineStart <= text.length) {
    const lineEnd = text.indexOf("\n", lineStart);
    const end = lineEnd === -1 ? text.length : lineEnd;
    const line = text.slice(lineStart, Math.min(end, lineStart + 16)).trimStart();
    const fence = line.startsWith("```") ? "```" : line.startsWith("~~~") ? "~~~" : undefined;
    if (fence !== undefined) {
      if (open === undefined) open = { at: lineStart, fence };
      else if (open.fence === fence) {
        ranges.push([open.at, end]);
        open = undefined;
      }
    }
    if (lineEnd === -1) break;
    lineStart = lineEnd + 1;
  }
  if (open !== undefined) ranges.push([open.at, text.length]);
  return ranges;
}

/** `true` when `text[from, to)` ends inside a JSON string (an odd number of unescaped `"`). */
function endsInString(text: string, from: number, to: number): boolean {
  let inside = false;
  for (let index = from; index < to; index++) {
    const char = text.charCodeAt(index);
    if (char === 0x5c /* \ */ && inside) index++;
    else if (char === 0x22 /* " */) inside = !inside;
  }
  return inside;
}

/** Reads one block's JSON: a call, or why it is not one. */
function readBlock(json: string): ProviderToolCall | string {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    return `invalid JSON in <tool> block: ${errorMessage(error)}`;
  }
  if (!isPlainObject(value)) return "a <tool> block must hold a JSON object";
  const { server_name: server, tool_name: name, arguments: args } = value;
  if (server !== undefined && server !== "local")
    return `only server "local" is supported, got ${JSON.stringify(cutName(server))}`;
  if (typeof name !== "string" || name === "") return "a <tool> block needs a tool_name";
  if (args !== undefined && !isPlainObject(args))
    return `arguments of ${JSON.stringify(cutName(name))} must be a JSON object`;
  return { type: "function", name, arguments: (args as Record<string, unknown> | undefined) ?? {} };
}

/**
 * Reads Forge's text protocol from a model's reply: every
 * `<tool>{"server_name":"local","tool_name":"…","arguments":{…}}</tool>` block outside fenced code
 * becomes a call, in order; the rest of the text is `content`. A block that cannot be read goes to
 * `errors`, never to `calls`. Linear in the reply (a bounded number of closing tags is tried per
 * block), so a hostile reply cannot hang it.
 *
 * @example
 * ```ts
 * import { parseTextToolCalls } from "toolloop";
 *
 * const { content, calls } = parseTextToolCalls('Checking. <tool>{"server_name":"local","tool_name":"clock","arguments":{}}</tool>');
 * // content: "Checking.", calls: [{ type: "function", name: "clock", arguments: {} }]
 * ```
 */
export function parseTextToolCalls(text: string): ParsedTextToolCalls {
  const calls: ProviderToolCall[] = [];
  const errors: string[] = [];
  if (typeof text !== "string") return { content: "", calls, errors: ["the reply is not text"] };
  const fences = fencedRanges(text);
  let fence = 0;
  let content = "";
  let cursor = 0;
  let search = 0;
  for (;;) {
    const start = text.indexOf(OPEN, search);
    if (start === -1) break;
    while (fence < fences.length && (fences[fence] as [number, number])[1] < start) fence++;
    const range = fences[fence];
    if (range !== undefined && range[0] <= start) {
      search = range[1] + 1; // inside fenced code: text, not a call
      continue;
    }
    const bodyStart = start + OPEN.length;
    let close = text.indexOf(CLOSE, bodyStart);
    if (close === -1) {
      errors.push("unclosed <tool> block");
      break;
    }
    // A `</tool>` inside a JSON string (an odd number of unescaped quotes before it) is not the end.
    for (let tries = 1; tries < MAX_CLOSING_TAGS_TRIED && endsInString(text, bodyStart, close); tries++) {
      const next = text.indexOf(CLOSE, close + CLOSE.length);
      if (next === -1) break;
      close = next;
    }
    const outcome = readBlock(text.slice(bodyStart, close));
    content += text.slice(cursor, start);
    cursor = close + CLOSE.length;
    search = cursor;
    if (typeof outcome === "string") errors.push(outcome);
    else if (calls.length >= MAX_TEXT_TOOL_CALLS)
      errors.push(`more than ${MAX_TEXT_TOOL_CALLS} tool calls in one reply`);
    else calls.push(outcome);
  }
  content += text.slice(cursor);
  return { content: content.trim(), calls, errors };
}
