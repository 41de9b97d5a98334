import { type ContentPart, resultPartsProblem } from "./content-part.js";

const TOOL_RESULT_BRAND = Symbol.for("toolloop.ToolResult");

/**
 * What one call of the registry was: set on every result that
 * `execute`, `executeWithContext`, `executeBatch` and `executeAsync` return — also error results —
 * not on the loop's.
 */
export interface ToolExecutionMetadata {
  /** The name the call asked for (cut to a readable length when a model sent a huge one). */
  toolName: string;
  /** The call's `toolCallId`, when it had one. */
  toolCallId?: string;
  /** When the call started, epoch milliseconds (`Date.now()`). */
  startTime: number;
  /** When it ended, epoch milliseconds; `startTime + durationMs`. */
  endTime: number;
  /** How long it took, in milliseconds (`performance.now()`, fractional). */
  durationMs: number;
  /** The arguments as the caller passed them (the same object; `{}` when they were not an object). */
  parameters: Record<string, unknown>;
}

/** {@link ToolExecutionMetadata} with the keys of Go's JSON tags. */
export interface ToolExecutionMetadataJSON {
  /** {@link ToolExecutionMetadata.toolName}. */
  tool_name: string;
  /** {@link ToolExecutionMetadata.toolCallId}; omitted when absent. */
  tool_call_id?: string;
  /** {@link ToolExecutionMetadata.startTime}. */
  start_time: number;
  /** {@link ToolExecutionMetadata.endTime}. */
  end_time: number;
  /** {@link ToolExecutionMetadata.durationMs}. */
  duration_ms: number;
  /** {@link ToolExecutionMetadata.parameters}; omitted when absent. */
  parameters?: Record<string, unknown>;
}

/** The JSON form of a {@link ToolResult}, with the keys of Go's JSON tags. */
export interface ToolResultJSON {
  /** {@link ToolResult.forLLM}. */
  for_llm: string;
  /** {@link ToolResult.forUser}; omitted when empty (Go's `omitempty`). */
  for_user?: string;
  /** {@link ToolResult.silent}. */
  silent: boolean;
  /** {@link ToolResult.isError}. */
  is_error: boolean;
  /** {@link ToolResult.async}. */
  async: boolean;
  /** {@link ToolResult.responseHandled}; omitted when `false`. */
  response_handled?: boolean;
  /** {@link ToolResult.data}; omitted when absent. */
  data?: Record<string, unknown>;
  /** {@link ToolResult.metadata}; omitted when absent. */
  metadata?: ToolExecutionMetadataJSON;
  /** {@link ToolResult.parts}; omitted when absent. */
  parts?: readonly ContentPart[];
}

/** Fields accepted by the {@link ToolResult} constructor. */
export interface ToolResultInit {
  /** Content sent to the model as the tool message. */
  forLLM: string;
  /** Shown to the user unless `silent` is set. @default "" */
  forUser?: string;
  /** Show nothing to the user. @default false */
  silent?: boolean;
  /** The call failed; the model sees it and can explain or retry. @default false */
  isError?: boolean;
  /** The tool started background work and will report through its `AsyncCallback`. @default false */
  async?: boolean;
  /** The tool already answered the user: see {@link ToolResult.responseHandled}. @default false */
  responseHandled?: boolean;
  /** The underlying error, for your code and logs; never serialised. */
  err?: Error;
  /** Structured data for your code or a UI; the model does not see it. */
  data?: Record<string, unknown>;
  /** Images and files shown to the model after `forLLM` (see {@link ToolResult.parts}). */
  parts?: readonly ContentPart[];
}

/**
 * The only thing a tool returns: what the model sees (`forLLM`), what the user sees (`forUser`),
 * and how the outcome is treated (`silent`, `isError`, `async`).
 *
 * @example
 * ```ts
 * return errorResult("file not found").withError(error);
 * ```
 */
export class ToolResult {
  /** Content sent to the model as the tool message. */
  forLLM: string;
  /** Shown to the user unless `silent` is set. */
  forUser: string;
  /** When `true`, nothing is shown to the user (`forUser` is ignored). */
  silent: boolean;
  /** Marks the result as a failure; the model sees it and can explain or retry. */
  isError: boolean;
  /** The tool started background work and will report through its `AsyncCallback`. */
  async: boolean;
  /**
   * The tool already answered the user (picoclaw's `ResponseHandled`): when every result of a turn
   * has it, `runToolLoop` ends without another provider call (`stopReason: "response_handled"`).
   */
  responseHandled: boolean;
  /** Underlying error for logging and inspection; never serialised. */
  err?: Error;
  /**
   * Structured data for your code or a UI (e.g. `ask_question`'s
   * suggestions). The model does not see it: it reads `forLLM`. Serialised by `toJSON` as `data`.
   */
  data?: Record<string, unknown>;
  /**
   * What the call was: set by the registry on every result `execute`,
   * `executeWithContext`, `executeBatch` and `executeAsync` return, on a copy of the tool's result
   * (a shallow one: `data` is shared), so concurrent calls never share one.
   */
  metadata?: ToolExecutionMetadata;
  /**
   * Images and files the model is shown after `forLLM` (a screenshot, a chart, a PDF): the tool
   * message's content becomes `forLLM` as a text part followed by these. Checked when the call
   * ends; a result's parts above the loop's `maxResultBytes` are replaced by a note saying so.
   * Build with {@link mediaResult}.
   */
  parts?: readonly ContentPart[];

  constructor(init: ToolResultInit) {
    this.forLLM = init.forLLM;
    this.forUser = init.forUser ?? "";
    this.silent = init.silent ?? false;
    this.isError = init.isError ?? false;
    this.async = init.async ?? false;
    this.responseHandled = init.responseHandled ?? false;
    if (init.err !== undefined) this.err = init.err;
    if (init.data !== undefined) this.data = init.data;
    if (init.parts !== undefined) this.parts = init.parts;
  }

  /** Attaches an underlying error and returns this result, for chaining. */
  withError(err: Error): this {
    this.err = err;
    return this;
  }

  /** Attaches structured data (see {@link ToolResult.data}) and returns this result, for chaining. */
  withData(data: Record<string, unknown>): this {
    this.data = data;
    return this;
  }

  /** Sets {@link ToolResult.responseHandled} (picoclaw's `WithResponseHandled()`) and returns this result, for chaining. */
  withResponseHandled(): this {
    this.responseHandled = true;
    return this;
  }

  /** What the model is sent: `forLLM`, or the error's message when `forLLM` is empty. */
  contentForLLM(): string {
    if (this.forLLM === "" && this.err !== undefined) return this.err.message;
    return this.forLLM;
  }

  /**
   * Go's JSON shape: `for_llm`, `for_user` (omitted when empty), `silent`, `is_error`, `async`,
   * `response_handled` (omitted when `false`), `data`, `metadata` (Go-style keys) and `parts` (each
   * omitted when absent); never `err`.
   */
  toJSON(): ToolResultJSON {
    const json: ToolResultJSON = {
      for_llm: this.forLLM,
      silent: this.silent,
      is_error: this.isError,
      async: this.async,
    };
    if (this.forUser !== "") json.for_user = this.forUser;
    if (this.responseHandled) json.response_handled = true;
    if (this.data !== undefined) json.data = this.data;
    if (this.metadata !== undefined) json.metadata = metadataJSON(this.metadata);
    if (this.parts !== undefined) json.parts = this.parts;
    return json;
  }

  /** @internal brand checked by {@link isToolResult}, so results from another copy of toolloop are recognised. */
  get [TOOL_RESULT_BRAND](): true {
    return true;
  }
}

function metadataJSON(metadata: ToolExecutionMetadata): ToolExecutionMetadataJSON {
  const json: ToolExecutionMetadataJSON = {
    tool_name: metadata.toolName,
    start_time: metadata.startTime,
    end_time: metadata.endTime,
    duration_ms: metadata.durationMs,
  };
  if (metadata.toolCallId !== undefined) json.tool_call_id = metadata.toolCallId;
  if (metadata.parameters !== undefined) json.parameters = metadata.parameters;
  return json;
}

/**
 * A copy of `result` with `metadata` set: same prototype (a subclass stays one), every own field
 * (`err`, `data` …) kept. @internal
 */
export function withMetadata(result: ToolResult, metadata: ToolExecutionMetadata): ToolResult {
  const copy = Object.assign(Object.create(Object.getPrototypeOf(result) as object) as ToolResult, result);
  copy.metadata = metadata;
  return copy;
}

/** `true` for a {@link ToolResult}, also one created by another installed copy of toolloop. */
export function isToolResult(value: unknown): value is ToolResult {
  return (
    value instanceof ToolResult ||
    (typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[TOOL_RESULT_BRAND] === true)
  );
}

/** A basic result: the model sees `forLLM`, the user sees nothing extra. */
export function newToolResult(forLLM: string): ToolResult {
  return new ToolResult({ forLLM });
}

/** A result for the model only: no user message is sent. */
export function silentResult(forLLM: string): ToolResult {
  return new ToolResult({ forLLM, silent: true });
}

/** The tool started background work and will call its `AsyncCallback` when done. */
export function asyncResult(forLLM: string): ToolResult {
  return new ToolResult({ forLLM, async: true });
}

/** A failure the model sees (and can explain or retry); chain `.withError(error)` to keep the cause. */
export function errorResult(message: string): ToolResult {
  return new ToolResult({ forLLM: message, isError: true });
}

/**
 * A result that shows the model images or files (`parts`) after the text `forLLM`, which should say
 * what they are for a model that cannot see them. Throws a `TypeError` naming the part for a part of
 * none of {@link ContentPart}'s shapes, or for more than 999 parts (the tool message adds the text).
 *
 * @example
 * ```ts
 * return mediaResult("Screenshot of the page", [{ type: "image", mediaType: "image/png", data: png.toString("base64") }]);
 * ```
 */
export function mediaResult(forLLM: string, parts: readonly ContentPart[]): ToolResult {
  const problem = resultPartsProblem(parts);
  if (problem !== undefined) throw new TypeError(`mediaResult: parts${problem}`);
  return new ToolResult({ forLLM, parts });
}

/** The same content for the model and the user. */
export function userResult(content: string): ToolResult {
  return new ToolResult({ forLLM: content, forUser: content });
}
