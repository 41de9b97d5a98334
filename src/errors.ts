import type { ContentPart } from "./content-part.js";
import { boundText, jsonText, showValue } from "./internal/describe.js";
import type { Message } from "./provider.js";

const ERROR_BRAND = Symbol.for("toolloop.error");

/** Where a tool call failed; set on {@link ToolExecutionError.code}. */
export type ToolErrorCode =
  | "tool_not_found"
  | "invalid_json"
  | "invalid_arguments"
  | "tool_failed"
  | "no_result"
  | "timeout"
  | "aborted"
  | "dependency_failed";

/** Why `runToolLoop` rejected; set on {@link ToolLoopError.code}. */
export type ToolLoopErrorCode =
  /** `context.signal` aborted (`cause`: its reason). */
  | "aborted"
  /** `provider.chat` threw or rejected (`cause`: what it threw). */
  | "provider_failed"
  /** The provider's response cannot be read (`cause`: an {@link InvalidProviderResponseError}). */
  | "invalid_response"
  /**
   * With `output`: the final answer was not JSON or failed the schema, also after `outputRetries`
   * more tries (`cause`: why the last one failed; `messages` end with that answer).
   */
  | "invalid_output"
  /** Anything else broke the loop, e.g. a registry that throws (`cause`: what was thrown). */
  | "internal";

/** The `code` of every error toolloop creates, one literal per subclass or per kind of failure. */
export type ToolloopBaseErrorCode =
  | ToolErrorCode
  | ToolLoopErrorCode
  | "invalid_provider_response"
  | "unsupported_content";

/**
 * Base class of every error toolloop creates. Check with {@link isToolloopBaseError}; branch on
 * `name` (the subclass) and `code` (the kind of failure). See docs/errors.md.
 */
export class ToolloopBaseError extends Error {
  /** The class: `"ToolloopBaseError"` here, each subclass its own literal. */
  override name: string = "ToolloopBaseError";
  /** The kind of failure: a literal per subclass or per kind (see {@link ToolloopBaseErrorCode}). */
  declare readonly code: ToolloopBaseErrorCode | undefined;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }

  /** @internal brand so guards work across duplicate installs. */
  get [ERROR_BRAND](): string {
    return this.name;
  }
}

/**
 * Attached as `err` to the error result of a failed tool call: the model sees the result's
 * text, your code sees the tool, the kind of failure and the original `cause`.
 */
export class ToolExecutionError extends ToolloopBaseError {
  /** Always `"ToolExecutionError"`. */
  override name = "ToolExecutionError" as const;
  /** Name of the tool the model asked for. */
  readonly toolName: string;
  /** The kind of failure. */
  override readonly code: ToolErrorCode;

  constructor(message: string, options: { toolName: string; code: ToolErrorCode; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.toolName = options.toolName;
    this.code = options.code;
  }
}

/**
 * `runToolLoop` rejects with this when the loop itself cannot go on: the provider failed, the
 * signal was aborted, or the provider returned something that is not a response.
 * `messages` is the transcript so far, in which every tool call has its answer, so the
 * conversation can be resumed.
 */
export class ToolLoopError extends ToolloopBaseError {
  /** Always `"ToolLoopError"`. */
  override name = "ToolLoopError" as const;
  /** Why the loop stopped: the caller aborted, the provider failed or answered unreadably, or another failure. */
  override readonly code: ToolLoopErrorCode;
  /** The transcript up to the failure (the caller's messages first). */
  readonly messages: Message[];
  /** Provider calls made, including the one that failed. */
  readonly iterations: number;

  constructor(
    message: string,
    options: { messages: Message[]; iterations: number; code?: ToolLoopErrorCode; cause?: unknown },
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = options.code ?? "internal";
    this.messages = options.messages;
    this.iterations = options.iterations;
  }
}

/** Longest excerpt of an unreadable response kept on {@link InvalidProviderResponseError.body}. */
const MAX_BODY_EXCERPT_CHARS = 2_000;

function excerpt(body: unknown): string {
  // Not serialisable (a cycle, a BigInt …): its type, or what it is.
  const text = typeof body === "string" ? body : jsonText(body);
  return text === undefined ? showValue(body) : boundText(text, MAX_BODY_EXCERPT_CHARS);
}

/**
 * An adapter (or the loop, for a custom provider) received a response it cannot read: an empty
 * body, an error object with status 200, a call without a name, a stream without a message …
 * Never turned into an empty answer: `runToolLoop` rejects with a {@link ToolLoopError} whose
 * `cause` is this error.
 */
export class InvalidProviderResponseError extends ToolloopBaseError {
  /** Always `"InvalidProviderResponseError"`. */
  override name = "InvalidProviderResponseError" as const;
  /** Always `"invalid_provider_response"`. */
  override readonly code = "invalid_provider_response" as const;
  /** Which API answered (`"OpenAI Chat Completions"`, `"Anthropic"`, `"Gemini"` …). */
  readonly provider: string;
  /** The start of the response as JSON text, at most 2,000 characters (cut with a marker). */
  readonly body: string;

  constructor(message: string, options: { provider: string; body: unknown; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.provider = options.provider;
    this.body = excerpt(options.body);
  }
}

/**
 * An adapter was given a content part its provider cannot take (an image URL for Ollama, a file for
 * an API without documents …). Thrown before any request is sent, never dropped silently:
 * `runToolLoop` rejects with a {@link ToolLoopError} (code `"provider_failed"`) whose `cause` is
 * this error.
 */
export class UnsupportedContentError extends ToolloopBaseError {
  /** Always `"UnsupportedContentError"`. */
  override name = "UnsupportedContentError" as const;
  /** Always `"unsupported_content"`. */
  override readonly code = "unsupported_content" as const;
  /** The adapter's provider, e.g. `"ollama"`. */
  readonly provider: string;
  /** The kind of part refused. */
  readonly part: ContentPart["type"];
  /** The index of the message holding it, in the messages passed to `chat`. */
  readonly messageIndex: number;

  constructor(message: string, options: { provider: string; part: ContentPart["type"]; messageIndex: number }) {
    super(message);
    this.provider = options.provider;
    this.part = options.part;
    this.messageIndex = options.messageIndex;
  }
}

/** `true` for an {@link UnsupportedContentError} (also from another installed copy). */
export function isUnsupportedContentError(value: unknown): value is UnsupportedContentError {
  return value instanceof UnsupportedContentError || hasBrand(value, "UnsupportedContentError");
}

function hasBrand(value: unknown, name?: string): boolean {
  if (typeof value !== "object" || value === null) return false;
  const brand = (value as Record<symbol, unknown>)[ERROR_BRAND];
  return typeof brand === "string" && (name === undefined || brand === name);
}

/** `true` for any error created by toolloop (also by another installed copy). */
export function isToolloopBaseError(value: unknown): value is ToolloopBaseError {
  return value instanceof ToolloopBaseError || hasBrand(value);
}

/** `true` for a {@link ToolLoopError} (also from another installed copy). */
export function isToolLoopError(value: unknown): value is ToolLoopError {
  return value instanceof ToolLoopError || hasBrand(value, "ToolLoopError");
}

/** `true` for a {@link ToolExecutionError} (also from another installed copy). */
export function isToolExecutionError(value: unknown): value is ToolExecutionError {
  return value instanceof ToolExecutionError || hasBrand(value, "ToolExecutionError");
}

/** `true` for an {@link InvalidProviderResponseError} (also from another installed copy). */
export function isInvalidProviderResponseError(value: unknown): value is InvalidProviderResponseError {
  return value instanceof InvalidProviderResponseError || hasBrand(value, "InvalidProviderResponseError");
}
