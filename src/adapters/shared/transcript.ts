import { contentText } from "../../content-part.js";
import { isPlainObject } from "../../internal/describe.js";
import type { Message, ProviderToolCall, ToolCall } from "../../provider.js";

/**
 * What an adapter kept on a call under `providerMetadata[key]` (e.g. `"gemini"`), when it is an
 * object; else `undefined` (a call made by another provider, or a transcript edited by hand).
 */
export function providerMetadataOf(call: ToolCall | undefined, key: string): Record<string, unknown> | undefined {
  const metadata = call?.providerMetadata?.[key];
  return isPlainObject(metadata) ? metadata : undefined;
}

/**
 * A turn's calls by id, so that each answer finds its call in O(1) (a search per answer would make
 * a turn of n calls cost O(n²)). Of two calls with one id, the first is kept, as a search finds it.
 */
export function callsById(calls: readonly ToolCall[]): ReadonlyMap<string, ToolCall> {
  const byId = new Map<string, ToolCall>();
  for (const call of calls) if (!byId.has(call.id)) byId.set(call.id, call);
  return byId;
}

/** How {@link assistantTurnParts} builds an assistant turn's parts. */
export interface AssistantTurnShape<P> {
  /** The key of the adapter's `providerMetadata`, e.g. `"anthropic"`. */
  key: string;
  /** The field of that metadata holding parts to replay before the turn, e.g. `"thinking"`. */
  replayed: string;
  /** The part for the turn's text. */
  text(text: string): P;
  /** The part for one call, given what the adapter kept on it (`providerMetadata[key]`). */
  call(call: ToolCall, kept: Record<string, unknown> | undefined): P;
}

/**
 * An assistant turn's parts in the order the APIs that replay reasoning require: the parts kept on
 * its calls' metadata (thinking blocks, reasoning parts — copied, unchanged), then its text (when
 * not empty), then one part per call.
 */
export function assistantTurnParts<P>(message: Message, shape: AssistantTurnShape<P>): P[] {
  const calls = message.toolCalls ?? [];
  const parts: P[] = [];
  for (const call of calls) {
    const kept = providerMetadataOf(call, shape.key)?.[shape.replayed];
    if (Array.isArray(kept)) parts.push(...kept.filter(isPlainObject).map((part) => ({ ...part }) as P));
  }
  if (message.content !== "") parts.push(shape.text(contentText(message.content)));
  for (const call of calls) parts.push(shape.call(call, providerMetadataOf(call, shape.key)));
  return parts;
}

/** A transcript call's arguments as an object to send back: `{}` for anything else. */
export function argumentsObject(call: ToolCall): Record<string, unknown> {
  return isPlainObject(call.arguments) ? call.arguments : {};
}

/** What {@link keepOnFirstCall} keeps. */
export interface KeptParts {
  /** The key of the adapter's `providerMetadata`, e.g. `"anthropic"`. */
  key: string;
  /** The field to set, e.g. `"thinking"`. */
  field: string;
  /** The parts to keep; nothing is kept when there are none. */
  parts: readonly unknown[];
}

/**
 * Keeps a response's reasoning parts on its first call's `providerMetadata[key][field]` (beside
 * what is there), so that {@link assistantTurnParts} replays them with the turn. A response
 * without calls keeps nothing: its turn is not sent back with calls.
 */
export function keepOnFirstCall(toolCalls: ProviderToolCall[], { key, field, parts }: KeptParts): void {
  const [first] = toolCalls;
  if (first === undefined || parts.length === 0) return;
  const metadata = first.providerMetadata?.[key];
  first.providerMetadata = { [key]: { ...(isPlainObject(metadata) ? metadata : {}), [field]: parts } };
}
