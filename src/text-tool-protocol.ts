import { type ContentPart, contentText } from "./content-part.js";
import { cutName, errorMessage, isPlainObject, isRecord, jsonText, quoteName } from "./internal/describe.js";
import { checkProvider, optionError } from "./internal/options.js";
import type { LLMProvider, LLMResponse, Message, ProviderToolCall, ToolCall, ToolDefinition } from "./provider.js";

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
  /**
   * One message per block that could not be read (bad JSON, another server, no tool name, too many,
   * unclosed) — at most {@link MAX_TEXT_TOOL_CALLS}, then one message counting the rest.
   */
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
    const fence = text
      .slice(lineStart, Math.min(end, lineStart + 16))
      .trimStart()
      .slice(0, 3);
    if (fence === "```" || fence === "~~~") {
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
  if (server !== undefined && server !== "local") return `only server "local" is supported, got ${quoteName(server)}`;
  if (typeof name !== "string" || name === "") return "a <tool> block needs a tool_name";
  if (args !== undefined && !isPlainObject(args)) return `arguments of ${quoteName(name)} must be a JSON object`;
  return { type: "function", name, arguments: (args as Record<string, unknown> | undefined) ?? {} };
}

/**
 * Reads the text tool protocol from a model's reply: every
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
  const { content, calls, errors, unread } = readTextToolCalls(text);
  if (unread > 0) errors.push(`${unread} more <tool> blocks could not be read`);
  return { content, calls, errors };
}

/**
 * {@link parseTextToolCalls} with every kept outcome also in reply order (`blocks`: a call, or the
 * error of an unreadable block) and the errors beyond the bound counted in `unread`, not described.
 */
function readTextToolCalls(
  text: string,
): ParsedTextToolCalls & { blocks: (ProviderToolCall | string)[]; unread: number } {
  const calls: ProviderToolCall[] = [];
  const errors: string[] = [];
  const blocks: (ProviderToolCall | string)[] = [];
  if (typeof text !== "string") {
    errors.push("the reply is not text");
    return { content: "", calls, errors, blocks: [...errors], unread: 0 };
  }
  const fences = fencedRanges(text);
  let fence = 0;
  let content = "";
  let cursor = 0;
  let search = 0;
  let unread = 0; // errors beyond the bound, counted instead of kept
  const fail = (error: string) => {
    if (errors.length >= MAX_TEXT_TOOL_CALLS) unread++;
    else {
      errors.push(error);
      blocks.push(error);
    }
  };
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
      fail("unclosed <tool> block");
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
    if (typeof outcome === "string") fail(outcome);
    else if (calls.length >= MAX_TEXT_TOOL_CALLS) fail(`more than ${MAX_TEXT_TOOL_CALLS} tool calls in one reply`);
    else {
      calls.push(outcome);
      blocks.push(outcome);
    }
  }
  content += text.slice(cursor);
  return { content: content.trim(), calls, errors, blocks, unread };
}

/** Options of {@link withTextToolProtocol}. */
export interface TextToolProtocolOptions {
  /**
   * The role of the messages that carry tool answers to the model: `"user"` (consecutive answers
   * merged into one message, for chat templates that want alternating roles), or `"tool"` (one
   * message per answer, `toolCallId` and `toolName` kept) for a provider that accepts it.
   * @default "user"
   */
  toolResultRole?: "user" | "tool" | undefined;
}

/** The name of the call standing for an unreadable block: no registry can hold it (not `[A-Za-z0-9_-]`). */
export const UNREADABLE_TOOL_BLOCK = "unreadable <tool> block";
// The parse errors of one reply answered one by one; the rest are counted in one more answer.
const MAX_ERROR_ANSWERS = 8;
const WHERE = "withTextToolProtocol";
const META = "textToolProtocol";

const PROMPT_HEAD = `# Tools

You can call the tools below. To call one, write a block in exactly this format, its JSON on one line:
<tool>{"server_name":"local","tool_name":"TOOL_NAME","arguments":{}}</tool>
- "server_name" is always "local"; "arguments" is a JSON object matching the tool's parameters (JSON Schema).
- Several blocks in one reply run in order. A block inside a code fence is not run.
- Each answer comes back as <tool_result tool_name="…" call_id="…">…</tool_result>; wait for it.
- When you need no tool, answer in plain text without <tool> blocks.`;

/** The prompt part listing the tools: fixed text, then each definition in the order given. */
function toolPrompt(definitions: readonly ToolDefinition[]): string {
  let text = PROMPT_HEAD;
  for (const { function: fn } of definitions) {
    text += `\n\n## ${fn.name}\n${fn.description}\nParameters: ${jsonText(fn.parameters) ?? "{}"}`;
  }
  return text;
}

const ENTITIES: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" };
const attribute = (value: unknown) => cutName(value).replace(/[&<>"]/g, (char) => ENTITIES[char] as string);
// A tool's output (or an echo of the model's text) cannot close the block that holds it.
const neutralise = (text: string) => text.replace(/<\/(tool_result)/gi, "<\\/$1");

/** The error a call of {@link UNREADABLE_TOOL_BLOCK} stands for, kept in its `providerMetadata`. */
function blockError(call: ToolCall | undefined): string | undefined {
  if (call?.name !== UNREADABLE_TOOL_BLOCK) return undefined;
  const meta = call.providerMetadata?.[META];
  return isRecord(meta) && typeof meta.error === "string" ? meta.error : undefined;
}

/** An earlier call as the `<tool>` block the model wrote (an unreadable block has none). */
function callBlock(call: ToolCall): string {
  if (!isRecord(call) || blockError(call) !== undefined) return "";
  const body = jsonText({ server_name: "local", tool_name: call.name, arguments: call.arguments ?? {} });
  return `<tool>${body ?? "{}"}</tool>`;
}

/** A tool answer wrapped so the model knows which call it answers. */
function resultBlock(message: Message, call: ToolCall | undefined): string {
  const error = blockError(call);
  const name = error === undefined ? ` tool_name="${attribute(message.toolName ?? call?.name ?? "")}"` : "";
  const failed = message.isError === true || error !== undefined ? ' error="true"' : "";
  const body = neutralise(error ?? contentText(message.content));
  return `<tool_result${name} call_id="${attribute(message.toolCallId ?? "")}"${failed}>${body}</tool_result>`;
}

/** A tool answer as the model reads it: its block, then the result's images and files. */
function answerContent(message: Message, call: ToolCall | undefined): string | ContentPart[] {
  const block = resultBlock(message, call);
  const media = Array.isArray(message.content)
    ? message.content.filter((part) => isRecord(part) && part.type !== "text")
    : [];
  return media.length === 0 ? block : [{ type: "text", text: block }, ...media];
}

/** Two answers' contents in one user message: text joined by a line break, parts in order. */
function joined(first: string | ContentPart[], second: string | ContentPart[]): string | ContentPart[] {
  if (typeof first === "string" && typeof second === "string") return `${first}\n${second}`;
  const asParts = (content: string | ContentPart[]): ContentPart[] =>
    typeof content === "string" ? [{ type: "text", text: content }] : content;
  return [...asParts(first), ...asParts(second)];
}

/**
 * The text tool protocol as a provider wrapper, for models without native tool calling: the inner
 * provider gets no `tools`; instead the system prompt (a system message is added first when there
 * is none) ends with the tool list and the `<tool>{"server_name":"local",…}</tool>` format, earlier
 * calls are sent back as their `<tool>` blocks and answers as `<tool_result>` blocks. Replies are
 * read with {@link parseTextToolCalls}; calls get ids `text_<turn>_<index>` and finish reason
 * `"tool_calls"`. The caller's messages are never changed; the prompt depends only on the tool
 * definitions, so it stays the same from turn to turn (prompt caching).
 *
 * A block that cannot be read becomes a call of {@link UNREADABLE_TOOL_BLOCK} carrying the problem
 * in `providerMetadata.textToolProtocol.error`: the loop answers it (no registry holds that name,
 * so no tool runs), and the wrapper sends the model that problem as the answer, so the model reads
 * what was wrong with its block and may retry.
 *
 * @example
 * ```ts
 * import { Ollama } from "ollama";
 * import { runToolLoop, withTextToolProtocol } from "toolloop";
 * import { createOllamaProvider } from "toolloop/ollama";
 *
 * // A model Ollama refuses native tools for ("… does not support tools").
 * const provider = withTextToolProtocol(createOllamaProvider({ client: new Ollama(), model: "gemma:2b" }));
 * const result = await runToolLoop({ provider, tools: registry, maxIterations: 10 }, messages);
 * ```
 */
export function withTextToolProtocol(provider: LLMProvider, options: TextToolProtocolOptions = {}): LLMProvider {
  checkProvider(WHERE, provider);
  if (!isRecord(options)) throw optionError(WHERE, "options", "an object", options);
  const role = options.toolResultRole ?? "user";
  if (role !== "user" && role !== "tool") {
    throw optionError(WHERE, "options.toolResultRole", '"user" or "tool"', options.toolResultRole);
  }
  // The loop offers the registry's cached definitions: the prompt is built again only when they change.
  let cachedFor: readonly ToolDefinition[] | undefined;
  let cachedPrompt = "";

  const render = (messages: readonly Message[], definitions: readonly ToolDefinition[] | undefined): Message[] => {
    const sent: Message[] = [];
    let calls = new Map<string, ToolCall>();
    let merged: Message | undefined; // the user message collecting consecutive answers
    for (const message of messages) {
      if (message.role === "assistant") {
        calls = new Map((message.toolCalls ?? []).map((call) => [call?.id, call]));
        const blocks = (message.toolCalls ?? []).map(callBlock).filter((block) => block !== "");
        const content = [contentText(message.content), ...blocks].filter((part) => part !== "").join("\n");
        sent.push({ role: "assistant", content });
      } else if (message.role === "tool") {
        const content = answerContent(message, calls.get(message.toolCallId as string));
        if (role === "tool") sent.push({ ...message, content });
        else if (merged !== undefined && sent[sent.length - 1] === merged)
          merged.content = joined(merged.content, content);
        else {
          merged = { role: "user", content };
          sent.push(merged);
        }
      } else sent.push(message);
    }
    if (definitions === undefined || definitions.length === 0) return sent;
    if (definitions !== cachedFor) {
      cachedPrompt = toolPrompt(definitions);
      cachedFor = definitions;
    }
    const system = sent.findIndex((message) => message.role === "system");
    const first = sent[system];
    if (first === undefined) sent.unshift({ role: "system", content: cachedPrompt });
    else {
      const text = contentText(first.content);
      sent[system] = { ...first, content: text === "" ? cachedPrompt : `${text}\n\n${cachedPrompt}` };
    }
    return sent;
  };

  return {
    async chat(messages, tools, model, llmOptions, signal) {
      const response: LLMResponse = await provider.chat(render(messages, tools), undefined, model, llmOptions, signal);
      if (!isRecord(response) || typeof response.content !== "string") return response;
      const { content, blocks, errors, unread } = readTextToolCalls(response.content);
      if (blocks.length === 0) return response;
      const turn = messages.filter((message) => message.role === "assistant").length + 1;
      const toolCalls: ProviderToolCall[] = Array.isArray(response.toolCalls) ? [...response.toolCalls] : [];
      const unreadable = (error: string) =>
        toolCalls.push({
          id: `text_${turn}_${toolCalls.length}`,
          type: "function",
          name: UNREADABLE_TOOL_BLOCK,
          arguments: {},
          providerMetadata: { [META]: { error } },
        });
      // In reply order, so the model's n-th block is answered n-th; past a few unreadable blocks,
      // one last answer counts the rest.
      const unreadableBlocks = errors.length + unread;
      const answered = unreadableBlocks > MAX_ERROR_ANSWERS ? MAX_ERROR_ANSWERS - 1 : MAX_ERROR_ANSWERS;
      let errorAnswers = 0;
      for (const block of blocks) {
        if (typeof block !== "string") toolCalls.push({ ...block, id: `text_${turn}_${toolCalls.length}` });
        else if (errorAnswers++ < answered) unreadable(block);
      }
      if (unreadableBlocks > answered)
        unreadable(`${unreadableBlocks - answered} more <tool> blocks could not be read`);
      return { ...response, content, toolCalls, finishReason: "tool_calls" };
    },
    getDefaultModel: () => provider.getDefaultModel(),
  };
}
