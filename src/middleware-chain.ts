import { isToolLoopError, ToolLoopError } from "./errors.js";
import { type CallWrapper, failure } from "./execute-tool-call.js";
import { subscribeAbort } from "./internal/abort.js";
import { compose, composeChecked, type Next } from "./internal/compose.js";
import { partsProblem } from "./internal/content-of.js";
import { cutName, describeType, errorMessage, isPlainObject, isRecord, quoteName } from "./internal/describe.js";
import { isAbortSignal, optionError } from "./internal/options.js";
import { responseProblem } from "./internal/response-problem.js";
import type { LLMResponse, Message } from "./provider.js";
import type { ModelCallRequest, RunRequest, ToolCallRequest, ToolLoopMiddleware } from "./tool-loop-middleware.js";
import type { StopReason, ToolLoopResult } from "./tool-loop-result.js";
import { isToolResult, type ToolResult } from "./tool-result.js";

const HOOKS = ["wrapRun", "wrapModelCall", "wrapToolCall"] as const;

/** One middleware's hook of one kind, called as its method. */
interface Layer<Request, Result> {
  readonly name: string;
  readonly owner: ToolLoopMiddleware;
  readonly hook: (this: ToolLoopMiddleware, request: Request, next: Next<Request, Result>) => Promise<Result>;
}

/** The configured middleware, checked, split by hook (each list outermost first). */
export interface MiddlewareLayers {
  readonly run: readonly Layer<RunRequest, ToolLoopResult>[];
  readonly model: readonly Layer<ModelCallRequest, LLMResponse>[];
  readonly tool: readonly Layer<ToolCallRequest, ToolResult>[];
}

/**
 * Checks `ToolLoopConfig.middleware`: `undefined` or `null` for none, else an array of objects
 * with a string `name` and hooks that are functions (a `TypeError` naming the index otherwise).
 * `undefined` when no middleware has any hook: the loop then takes its path without them.
 */
export function checkMiddleware(where: string, value: unknown): MiddlewareLayers | undefined {
  if (value === undefined || value === null) return undefined;
  const shape = "{ name, wrapRun?, wrapModelCall?, wrapToolCall? }";
  if (!Array.isArray(value)) throw optionError(where, "middleware", `an array of middleware ${shape}`, value);
  const layers = { run: [] as unknown[], model: [] as unknown[], tool: [] as unknown[] };
  for (let index = 0; index < value.length; index++) {
    const middleware: unknown = value[index];
    const at = `middleware[${index}]`;
    if (!isRecord(middleware)) throw optionError(where, at, `a middleware object ${shape}`, middleware);
    const { name } = middleware;
    if (typeof name !== "string") throw optionError(where, `${at}.name`, "a string", name);
    for (const key of HOOKS) {
      const hook = middleware[key];
      if (hook === undefined) continue;
      if (typeof hook !== "function") throw optionError(where, `${at}.${key}`, "a function", hook);
      const list = key === "wrapRun" ? layers.run : key === "wrapModelCall" ? layers.model : layers.tool;
      list.push({ name, owner: middleware, hook });
    }
  }
  if (layers.run.length === 0 && layers.model.length === 0 && layers.tool.length === 0) return undefined;
  return layers as unknown as MiddlewareLayers;
}

/** The text of a middleware's failure: `middleware "<name>" failed: <message>`. */
function failedText(name: string, message: string): string {
  return `middleware ${quoteName(name)} failed: ${message}`;
}

/**
 * The tool-call middleware of one run, given to the registry with each call: they run around the
 * tool once its arguments are validated, inside the call's timeout. What a middleware throws, or
 * returns that is not a `ToolResult`, is the call's error result naming it.
 */
export class ToolCallChain implements CallWrapper {
  iteration = 0;
  readonly wrap: CallWrapper["wrap"];

  constructor(layers: readonly Layer<ToolCallRequest, ToolResult>[]) {
    // The name is read before the hook runs: a middleware may change the request it was given.
    this.wrap = composeChecked(layers, callHook, checkedToolAnswer, toolNameOf);
  }
}

const toolNameOf = (request: ToolCallRequest): string => request.toolName;

/** Calls a layer's hook as its middleware's method. */
function callHook<Request, Result>(
  layer: Layer<Request, Result>,
  request: Request,
  next: Next<Request, Result>,
): unknown {
  return layer.hook.call(layer.owner, request, next);
}

/** A tool-call middleware's answer (or failure) as the call's result. */
async function checkedToolAnswer(
  layer: Layer<ToolCallRequest, ToolResult>,
  answer: unknown,
  toolName: string,
): Promise<ToolResult> {
  let result: unknown;
  try {
    result = await answer;
  } catch (error) {
    return failure(cutName(toolName), "tool_failed", failedText(layer.name, errorMessage(error)), error);
  }
  const problem = toolResultProblem(result);
  return problem === undefined
    ? (result as ToolResult)
    : failure(cutName(toolName), "tool_failed", failedText(layer.name, `wrapToolCall returned ${problem}`));
}

/** Why a middleware's answer to a tool call is not one, or `undefined` when it is. */
function toolResultProblem(value: unknown): string | undefined {
  if (!isToolResult(value)) return `${describeType(value)}, not a ToolResult`;
  try {
    if (typeof value.forLLM !== "string") return `a ToolResult whose forLLM is ${describeType(value.forLLM)}`;
    void value.isError;
    const problem = partsProblem(value);
    if (problem !== undefined) return `a ToolResult whose ${problem}`;
  } catch {
    return "a ToolResult that cannot be read";
  }
  return undefined;
}

/**
 * The model-call middleware of one run: they run around `step` (the provider call, whose response
 * is checked before any middleware sees it). Every error a call rejects with is remembered with its
 * author — the provider, or the first middleware that threw it as its own — so that an error a
 * middleware passes on from `next` keeps its origin.
 */
export class ModelCallChain {
  readonly #chain: (request: ModelCallRequest, step: Next<ModelCallRequest, LLMResponse>) => Promise<LLMResponse>;
  readonly #step: Next<ModelCallRequest, LLMResponse>;
  // Made on the first failure: most runs have none.
  #authors: Map<unknown, string | undefined> | undefined;
  // Made once per run: the check of an answer that is not what `next` returned.
  readonly #check = (layer: Layer<ModelCallRequest, LLMResponse>, answer: unknown) => this.#checked(layer, answer);

  /**
   * @param send the provider call: its response or a promise of it (it may throw)
   * @param invalid the error for a provider response that cannot be read
   */
  constructor(
    layers: readonly Layer<ModelCallRequest, LLMResponse>[],
    send: (request: ModelCallRequest) => unknown,
    invalid: (problem: string, response: unknown) => Error,
  ) {
    // What a middleware sends on is checked in its `next`, so that a bad request is its failure.
    this.#chain = composeChecked(layers, callHook, this.#check, undefined, (layer, sent) => this.#refuse(layer, sent));
    // Made once: the provider's answer is checked and its failure claimed in one `then`, without
    // an async frame or a closure per call.
    const accept = (response: unknown): LLMResponse => {
      const problem = responseProblem(response);
      if (problem === undefined) return response as LLMResponse;
      const error = invalid(problem, response);
      this.#claim(error, undefined);
      throw error;
    };
    const providerFailed = (error: unknown): never => {
      this.#claim(error, undefined);
      throw error;
    };
    this.#step = (request) => {
      let answer: unknown;
      try {
        answer = send(request);
      } catch (error) {
        this.#claim(error, undefined);
        return Promise.reject(error);
      }
      return Promise.resolve(answer).then(accept, providerFailed);
    };
  }

  /** Runs one provider call through the middleware. */
  call(request: ModelCallRequest): Promise<LLMResponse> {
    return this.#chain(request, this.#step);
  }

  /** The middleware `error` came from, or `undefined` when the provider (or nothing known) threw it. */
  authorOf(error: unknown): string | undefined {
    return this.#authors?.get(error);
  }

  #claim(error: unknown, author: string | undefined): void {
    this.#authors ??= new Map();
    if (!this.#authors.has(error)) this.#authors.set(error, author);
  }

  /** A rejection when what `layer` passed to `next` cannot be sent, else `undefined`. */
  #refuse(layer: Layer<ModelCallRequest, LLMResponse>, sent: ModelCallRequest): Promise<LLMResponse> | undefined {
    const problem = modelRequestProblem(sent);
    if (problem === undefined) return undefined;
    const error = new TypeError(`next was given an invalid request: ${problem}`);
    this.#claim(error, layer.name);
    return Promise.reject(error);
  }

  /** A model-call middleware's answer, checked; what it threw or returned wrongly is claimed as its own. */
  async #checked(layer: Layer<ModelCallRequest, LLMResponse>, answer: unknown): Promise<LLMResponse> {
    let response: unknown;
    try {
      response = await answer;
    } catch (error) {
      this.#claim(error, layer.name);
      throw error;
    }
    const problem = responseProblem(response);
    if (problem === undefined) return response as LLMResponse;
    const error = new TypeError(`wrapModelCall returned an invalid response: ${problem}`);
    this.#claim(error, layer.name);
    throw error;
  }
}

/** Why what a middleware passed to a model call's `next` cannot be sent, or `undefined` when it can. */
function modelRequestProblem(request: unknown): string | undefined {
  if (!isRecord(request)) return `expected a ModelCallRequest object, got ${describeType(request)}`;
  const { messages, tools, model, options, signal } = request;
  if (!Array.isArray(messages)) return `messages must be an array, got ${describeType(messages)}`;
  if (tools !== undefined && !Array.isArray(tools))
    return `tools must be an array or undefined, got ${describeType(tools)}`;
  if (typeof model !== "string") return `model must be a string, got ${describeType(model)}`;
  if (!isPlainObject(options)) return `options must be an object, got ${describeType(options)}`;
  if (signal !== undefined && !isAbortSignal(signal))
    return `signal must be an AbortSignal, got ${describeType(signal)}`;
  return undefined;
}

/** The message of a model call's failure a middleware caused (`LLM call failed: middleware "x" failed: …`). */
export function modelCallFailure(author: string, error: unknown): string {
  return `LLM call failed: ${failedText(author, errorMessage(error))}`;
}

const STOP_REASON_LIST = [
  "completed",
  "max_iterations",
  "loop_breaking_tool",
  "response_handled",
  "repeated_failure",
  "interrupted",
] as const satisfies readonly StopReason[];
// Every StopReason is in the list: a reason added to the type and not here fails this check.
type MissingStopReason = Exclude<StopReason, (typeof STOP_REASON_LIST)[number]>;
const STOP_REASONS: ReadonlySet<string> & ([MissingStopReason] extends [never] ? unknown : MissingStopReason) = new Set(
  STOP_REASON_LIST,
);

/** Why what a `wrapRun` returned is not a `ToolLoopResult`, or `undefined` when it is. */
function runResultProblem(value: unknown): string | undefined {
  if (!isRecord(value)) return `${describeType(value)}, not a ToolLoopResult`;
  const { content, iterations, messages, stopReason } = value;
  if (typeof content !== "string") return `a result whose content is ${describeType(content)}`;
  if (typeof iterations !== "number" || !Number.isSafeInteger(iterations) || iterations < 0) {
    return `a result whose iterations is ${describeType(iterations)}`;
  }
  if (!Array.isArray(messages)) return `a result whose messages is ${describeType(messages)}`;
  if (typeof stopReason !== "string" || !STOP_REASONS.has(stopReason)) {
    return `a result whose stopReason is ${typeof stopReason === "string" ? quoteName(stopReason) : describeType(stopReason)}`;
  }
  return undefined;
}

/** Where a run stands, for the errors its middleware cause: the transcript and provider calls last known. */
interface RunProgress {
  messages: Message[];
  iterations: number;
}

/**
 * The run middleware: they run around the loop (`step`). A `ToolLoopError` passes through
 * unchanged; anything else a middleware throws, or returns that is not a `ToolLoopResult`, rejects
 * with a `ToolLoopError` (code `"internal"`) naming it. An abort of `signal` rejects the run as
 * aborted wherever a middleware waits — except while the loop itself runs, which rejects with its
 * own transcript.
 */
export function runThroughMiddleware(
  layers: readonly Layer<RunRequest, ToolLoopResult>[],
  request: RunRequest,
  step: Next<RunRequest, ToolLoopResult>,
  signal: AbortSignal | undefined,
  iterations: number,
): Promise<ToolLoopResult> {
  const progress: RunProgress = { messages: [...request.messages], iterations };
  let running = 0;
  let abort: (() => void) | undefined;
  const settle = () => {
    if (running === 0 && signal?.aborted === true) abort?.();
  };
  const tracked: Next<RunRequest, ToolLoopResult> = (sent) => {
    let started: Promise<ToolLoopResult>;
    try {
      started = step(sent);
    } catch (error) {
      started = Promise.reject(error);
    }
    running++;
    const pending = started.then(
      (result) => {
        ({ messages: progress.messages, iterations: progress.iterations } = result);
        running--;
        settle();
        return result;
      },
      (error: unknown) => {
        if (isToolLoopError(error)) ({ messages: progress.messages, iterations: progress.iterations } = error);
        running--;
        settle();
        throw error;
      },
    );
    // A middleware that drops `next`'s promise must not leave an unhandled rejection behind.
    pending.catch(() => {});
    return pending;
  };
  const chain = compose(layers, (layer, sent: RunRequest, next: Next<RunRequest, ToolLoopResult>) =>
    invokeRunLayer(layer, sent, next, progress),
  );
  const run = chain(request, tracked);
  if (signal === undefined) return run;
  return new Promise<ToolLoopResult>((resolve, reject) => {
    const aborted = () => {
      const { reason } = signal;
      reject(
        new ToolLoopError(`tool loop aborted: ${errorMessage(reason)}`, {
          messages: progress.messages,
          iterations: progress.iterations,
          code: "aborted",
          cause: reason,
        }),
      );
    };
    abort = aborted;
    const unsubscribe = signal.aborted ? () => {} : subscribeAbort(signal, settle);
    settle();
    run.then(
      (result) => {
        unsubscribe();
        resolve(result);
      },
      (error: unknown) => {
        unsubscribe();
        reject(error);
      },
    );
  });
}

async function invokeRunLayer(
  layer: Layer<RunRequest, ToolLoopResult>,
  request: RunRequest,
  next: Next<RunRequest, ToolLoopResult>,
  progress: RunProgress,
): Promise<ToolLoopResult> {
  // The loop rejects only with a ToolLoopError: anything else comes from checking what this
  // middleware sent on (a TypeError), and is its failure.
  const checked: Next<RunRequest, ToolLoopResult> = (sent) =>
    next(sent).catch((error: unknown) => {
      if (isToolLoopError(error)) throw error;
      throw new ToolLoopError(failedText(layer.name, `next was given an invalid request: ${errorMessage(error)}`), {
        messages: progress.messages,
        iterations: progress.iterations,
        code: "internal",
        cause: error,
      });
    });
  let result: unknown;
  try {
    result = await layer.hook.call(layer.owner, request, checked);
  } catch (error) {
    if (isToolLoopError(error)) throw error;
    throw new ToolLoopError(failedText(layer.name, errorMessage(error)), {
      messages: progress.messages,
      iterations: progress.iterations,
      code: "internal",
      cause: error,
    });
  }
  const problem = runResultProblem(result);
  if (problem === undefined) return result as ToolLoopResult;
  throw new ToolLoopError(failedText(layer.name, `wrapRun returned ${problem}`), {
    messages: progress.messages,
    iterations: progress.iterations,
    code: "internal",
  });
}
