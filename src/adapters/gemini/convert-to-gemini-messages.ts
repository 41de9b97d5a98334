import { contentText } from "../../content-part.js";
import type { Message, ToolCall } from "../../provider.js";
import { callsById, providerMetadataOf } from "../shared/transcript.js";

/** A function call in a Gemini part; the Gemini Developer API usually gives no `id`. */
export interface GeminiFunctionCall {
  /** The call's id, when the API gave one (echoed in the answer's `functionResponse.id`). */
  id?: string;
  /** The function's name. */
  name?: string;
  /** The call's arguments, as an object. */
  args?: Record<string, unknown>;
}

/** A function result in a Gemini part. */
export interface GeminiFunctionResponse {
  /** The id of the call it answers, when the call had one. */
  id?: string;
  /** The name of the function that answered (Gemini pairs answers with calls by name). */
  name?: string;
  /** `{ output: "<tool text>" }`, or `{ error: "<text>" }` for a failed tool. */
  response?: Record<string, unknown>;
}

/** One part of a Gemini content (only the fields this adapter reads or writes). */
export interface GeminiPart {
  /** A text part. */
  text?: string;
  /** `true` on the model's thought summaries, which are not part of the answer. */
  thought?: boolean;
  /** Opaque signature the model attaches to (the first of) its function calls; it must be sent back. */
  thoughtSignature?: string;
  /** A call the model made. */
  functionCall?: GeminiFunctionCall;
  /** A tool's answer. */
  functionResponse?: GeminiFunctionResponse;
}

/** A Gemini content: a turn of `"user"` or `"model"`. */
export interface GeminiContent {
  /** `"user"` (also for tool answers) or `"model"`. */
  role?: string;
  /** The turn's parts. */
  parts?: GeminiPart[];
}

/** What this adapter keeps in `ToolCall.providerMetadata.gemini`. */
export interface GeminiCallMetadata {
  /** The call id, when the API gave one (it is then echoed in `functionCall.id` and `functionResponse.id`). */
  id?: string;
  /** The part's `thoughtSignature`, sent back unchanged on the same call. */
  thoughtSignature?: string;
}

/** The key of this adapter's data in `ToolCall.providerMetadata`. */
export const METADATA_KEY = "gemini";

function metadataOf(call: ToolCall | undefined): GeminiCallMetadata {
  const metadata = providerMetadataOf(call, METADATA_KEY);
  const result: GeminiCallMetadata = {};
  if (typeof metadata?.id === "string") result.id = metadata.id;
  if (typeof metadata?.thoughtSignature === "string") result.thoughtSignature = metadata.thoughtSignature;
  return result;
}

function functionCallPart(call: ToolCall): GeminiPart {
  const { id, thoughtSignature } = metadataOf(call);
  const part: GeminiPart = {
    functionCall: { ...(id === undefined ? {} : { id }), name: call.name, args: call.arguments ?? {} },
  };
  if (thoughtSignature !== undefined) part.thoughtSignature = thoughtSignature;
  return part;
}

function functionResponsePart(message: Message, call: ToolCall | undefined): GeminiPart {
  const { id } = metadataOf(call);
  const text = message.content ?? "";
  return {
    functionResponse: {
      ...(id === undefined ? {} : { id }),
      // Gemini pairs answers with calls by name (and position): use the call's own name.
      name: call?.name ?? message.toolName ?? "",
      response: message.isError === true ? { error: text } : { output: text },
    },
  };
}

/** A transcript as `generateContent` takes it: the contents, and the system texts apart. */
export interface GeminiMessages {
  contents: GeminiContent[];
  /** The system messages' texts, in order, for `config.systemInstruction`. */
  system: string[];
}

/**
 * Converts a transcript to Gemini contents: system texts apart (for `systemInstruction`),
 * assistant turns as `model` contents of a text part and one `functionCall` part per call (with
 * the call's kept `id` and `thoughtSignature`), and all answers of a turn in one `user` content of
 * `functionResponse` parts (`{ output }`, or `{ error }` for a failed tool), named as their calls.
 */
export function toGeminiMessages(messages: readonly Message[]): GeminiMessages {
  const contents: GeminiContent[] = [];
  const system: string[] = [];
  let turnCalls: ReadonlyMap<string, ToolCall> = new Map();
  let answers: GeminiPart[] | undefined;

  for (const message of messages) {
    if (message.role !== "tool") answers = undefined;
    switch (message.role) {
      case "system":
        system.push(contentText(message.content));
        break;
      case "assistant": {
        const calls = message.toolCalls ?? [];
        turnCalls = callsById(calls);
        const parts: GeminiPart[] = [];
        if (typeof message.content === "string" && message.content !== "") parts.push({ text: message.content });
        parts.push(...calls.map(functionCallPart));
        if (parts.length > 0) contents.push({ role: "model", parts });
        break;
      }
      case "tool": {
        if (answers === undefined) {
          answers = [];
          contents.push({ role: "user", parts: answers });
        }
        // `toolCallId` may be missing from a hand-made transcript: a Map finds a call without id as a search would.
        answers.push(functionResponsePart(message, turnCalls.get(message.toolCallId as string)));
        break;
      }
      default:
        contents.push({ role: "user", parts: [{ text: contentText(message.content) }] });
    }
  }
  return { contents, system };
}
