import { expect } from "vitest";
import { TextParts } from "../../src/adapters/shared/stream.js";
import {
  type LLMResponse,
  type LLMStreamPart,
  type Message,
  streamToolLoop,
  type ToolLoopConfig,
  type ToolLoopEvent,
  type ToolLoopMiddleware,
  type ToolLoopResult,
} from "../../src/index.js";

/** What a `chatStream` yielded, split up. */
export interface CollectedStream {
  /** Every part, in order. */
  parts: LLMStreamPart[];
  /** The `text-delta` parts' text, in order. */
  deltas: string[];
  /** The `reasoning-delta` parts' text, in order. */
  reasoning: string[];
  /** Per call id, in the order the calls started: the tool's name and the `tool-input-delta` pieces joined. */
  toolInputs: Map<string, { toolName: string; input: string }>;
  /** The `response` part's response (the stream must end with exactly one). */
  response: LLMResponse;
}

/**
 * Reads a `chatStream` to its end and checks its shape: delta parts (a call's `tool-input-start`
 * before its first `tool-input-delta`, once), then exactly one `response` part, last. Rejects with
 * what the stream threw.
 */
export async function collectStream(stream: AsyncIterable<LLMStreamPart>): Promise<CollectedStream> {
  const parts: LLMStreamPart[] = [];
  for await (const part of stream) parts.push(part);
  const last = parts[parts.length - 1];
  if (last?.type !== "response")
    throw new Error(`the stream did not end with a response part: ${JSON.stringify(parts)}`);
  const deltas: string[] = [];
  const reasoning: string[] = [];
  const toolInputs = new Map<string, { toolName: string; input: string }>();
  for (const part of parts.slice(0, -1)) {
    switch (part.type) {
      case "text-delta":
        deltas.push(part.delta);
        break;
      case "reasoning-delta":
        reasoning.push(part.delta);
        break;
      case "tool-input-start":
        if (toolInputs.has(part.toolCallId)) throw new Error(`a second tool-input-start for ${part.toolCallId}`);
        toolInputs.set(part.toolCallId, { toolName: part.toolName, input: "" });
        break;
      case "tool-input-delta": {
        const call = toolInputs.get(part.toolCallId);
        if (call === undefined) throw new Error(`a tool-input-delta before its start: ${JSON.stringify(part)}`);
        call.input += part.delta;
        break;
      }
      default:
        throw new Error(`a response part before the end: ${JSON.stringify(parts)}`);
    }
  }
  return { parts, deltas, reasoning, toolInputs, response: last.response };
}

/** An in-process stream of `events`, as an official client's `create({ stream: true })` resolves with. */
export async function* eventsOf<T>(events: Iterable<T>): AsyncGenerator<T, void> {
  for (const event of events) yield event;
}

/** The text-assembly work of a stream, as {@link countTextAssembly} measured it. */
export interface TextAssembly<T> {
  /** What the measured function resolved with. */
  value: T;
  /** Pieces added to a `TextParts` (strings: anything else is ignored). */
  added: number;
  /** Characters of all the texts joined (a join copies its whole text). */
  joinedChars: number;
}

/**
 * Runs `body` counting the work of the adapters' text assembly (`TextParts`): a deterministic
 * measure of linear time that no machine load can change. Assembling N pieces in linear time adds
 * each piece once and joins each text once (`joinedChars` about the output's length); joining on
 * every delta would copy about N²/2 characters.
 */
export async function countTextAssembly<T>(body: () => Promise<T>): Promise<TextAssembly<T>> {
  const { add, text } = TextParts.prototype;
  let added = 0;
  let joinedChars = 0;
  // Wrappers that count and keep nothing (a spy would keep every joined text).
  TextParts.prototype.add = function (this: TextParts, part: unknown): part is string {
    const isPiece = add.call(this, part);
    if (isPiece) added++;
    return isPiece;
  };
  TextParts.prototype.text = function (this: TextParts): string {
    const joined = text.call(this);
    joinedChars += joined.length;
    return joined;
  };
  try {
    return { value: await body(), added, joinedChars };
  } finally {
    TextParts.prototype.add = add;
    TextParts.prototype.text = text;
  }
}

/** The tool arguments of {@link collectMegabyteArguments}'s streams: `pieces` deltas of `piece`, over a megabyte. */
export const MEGABYTE_ARGUMENTS = { pieces: 100_000, piece: '"0123456789",' } as const;

/** What {@link collectMegabyteArguments} collected. */
export interface MegabyteArguments {
  /** The stream, collected. */
  collected: CollectedStream;
  /** The length of the call's whole arguments text (`open`, the pieces and `close`). */
  size: number;
}

/**
 * Reads the stream `read` makes, in which the call `callId` streams its arguments as `open`, then
 * {@link MEGABYTE_ARGUMENTS}' pieces, then `close` (one delta each), counting its text assembly
 * ({@link countTextAssembly}), and checks that it took linear work: over a megabyte, each piece
 * added once, the arguments joined once (no more characters than they hold; a join per delta would
 * copy about 65e9), and the call's streamed input whole.
 */
export async function collectMegabyteArguments(
  read: () => AsyncIterable<LLMStreamPart>,
  { callId, open, close }: { callId: string; open: string; close: string },
): Promise<MegabyteArguments> {
  const { pieces, piece } = MEGABYTE_ARGUMENTS;
  const { value, added, joinedChars } = await countTextAssembly(() => collectStream(read()));
  const size = open.length + pieces * piece.length + close.length;
  expect(size).toBeGreaterThan(1_000_000);
  expect(added).toBe(pieces + 2);
  expect(joinedChars).toBeLessThanOrEqual(size);
  expect(value.toolInputs.get(callId)?.input).toHaveLength(size);
  return { collected: value, size };
}

/**
 * Checks a collected stream's tool input against its response: each call of the response was
 * started (`tool-input-start` with the call's id and name; calls may start in any order), no other
 * call was, and
 * each call's deltas join to JSON text that parses to the call's arguments (the raw text may differ
 * in whitespace from the transcript's; in strict mode it is `function.arguments`, the raw text the
 * model sent, that the deltas must give). Returns the joined inputs, in call order.
 */
export function checkToolInputs({ toolInputs, response }: CollectedStream): string[] {
  expect([...toolInputs.keys()].sort()).toEqual(response.toolCalls.map((call) => call.id).sort());
  return response.toolCalls.map((call) => {
    const streamed = toolInputs.get(call.id ?? "");
    expect(streamed?.toolName).toBe(call.name);
    const input = streamed?.input ?? "";
    const raw = call.function?.arguments ?? call.arguments;
    const parse = (text: string): unknown => (text.trim() === "" ? {} : JSON.parse(text));
    expect(parse(input)).toEqual(typeof raw === "string" ? parse(raw) : raw);
    return input;
  });
}

/** What {@link streamedRun} collected. */
export interface StreamedRun {
  /** Every event of the run, in order. */
  events: ToolLoopEvent[];
  /** The run's result. */
  result: ToolLoopResult;
  /** `ModelCallRequest.providerName` of each model call, as a middleware saw it. */
  providerNames: Array<string | undefined>;
}

/**
 * Runs `streamToolLoop` with `config` to its end, every event taken, with a middleware (added
 * outermost) that records each model call's `providerName`.
 */
export async function streamedRun(config: ToolLoopConfig, messages: Message[]): Promise<StreamedRun> {
  const providerNames: Array<string | undefined> = [];
  const spy: ToolLoopMiddleware = {
    name: "spy",
    wrapModelCall: (request, next) => {
      providerNames.push(request.providerName);
      return next(request);
    },
  };
  const run = streamToolLoop({ ...config, middleware: [spy, ...(config.middleware ?? [])] }, messages);
  const events: ToolLoopEvent[] = [];
  for await (const event of run) events.push(event);
  return { events, result: await run.result, providerNames };
}

/**
 * Checks a streamed run's input for the call `toolCallId` of the tool `toolName`: the run's first
 * `tool-input-start` event is this call's, in iteration 1, and every `tool-input-delta` event comes
 * before the first `tool-call-start` (the input streams before the call runs). Returns the call's
 * deltas joined.
 */
export function checkStreamedInput(
  events: ToolLoopEvent[],
  { toolCallId, toolName }: { toolCallId: string; toolName: string },
): string {
  const types = events.map((event) => event.type);
  expect(events[types.indexOf("tool-input-start")]).toEqual({
    type: "tool-input-start",
    iteration: 1,
    toolCallId,
    toolName,
  });
  expect(types.lastIndexOf("tool-input-delta")).toBeLessThan(types.indexOf("tool-call-start"));
  return events
    .flatMap((event) => (event.type === "tool-input-delta" && event.toolCallId === toolCallId ? [event.delta] : []))
    .join("");
}
