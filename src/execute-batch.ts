import PQueue from "p-queue";
import { callMetadata, type DispatchTarget, dispatchToolCall } from "./dispatch-tool-call.js";
import { isToolExecutionError, ToolExecutionError } from "./errors.js";
import { checkTimeout, failure } from "./execute-tool-call.js";
import {
  boundText,
  cutName,
  errorMessage,
  isPlainObject,
  isRecord,
  MAX_ERROR_MESSAGE_CHARS,
  quoteName,
} from "./internal/describe.js";
import { checkConcurrency, checkFunction, checkSignal, optionError } from "./internal/options.js";
import { logCallEnd } from "./log-tool-call.js";
import { finishUnrun, type ProgressListener } from "./progress.js";
import { type ToolResult, withMetadata } from "./tool-result.js";

/** One call of a batch or of `executeAsync`. */
export interface ToolRequest {
  /**
   * Names the request in `BatchResult`, in `dependsOn`, as the call's `toolCallId` and in its
   * progress updates. @default its index in the batch, as a string (`"0"`, `"1"` …)
   */
  id?: string | undefined;
  /** The tool to call. */
  name: string;
  /** The tool's arguments. */
  parameters: Record<string, unknown>;
  /** Ids of requests of the same batch that must finish first; when one of them failed, this one is not run. */
  dependsOn?: readonly string[] | undefined;
}

/** Options of {@link ToolRegistry.executeBatch}. */
export interface BatchOptions {
  /** Most requests running at once. @default Infinity */
  concurrency?: number | undefined;
  /** Aborts every request still running, and answers those not started yet without running them. */
  signal?: AbortSignal | undefined;
  /** Timeout of each request, in milliseconds (not of the whole batch). @default no timeout */
  timeoutMs?: number | undefined;
  /** Receives every request's progress updates (`toolCallId` is the request id), its final one included. */
  onProgress?: ProgressListener | undefined;
}

/** What {@link ToolRegistry.executeBatch} resolves to. */
export interface BatchResult {
  /** Every request's result, keyed by request id (a null-prototype object: any id is a plain key). */
  results: Record<string, ToolResult>;
  /** The error of every request whose result is an error, keyed by request id; null-prototype too. */
  errors: Record<string, ToolExecutionError>;
  /** When the batch started, epoch milliseconds. */
  startTime: number;
  /** When the last request finished, epoch milliseconds. */
  endTime: number;
  /** `endTime - startTime`, in milliseconds (`performance.now()`, fractional). */
  durationMs: number;
}

const WHERE = "executeBatch";
const MAX_NAMED_IN_CYCLE = 10;

interface PlannedRequest {
  readonly id: string;
  readonly name: string;
  readonly parameters: Record<string, unknown>;
  /** Indexes of the requests that wait for this one. */
  readonly dependents: number[];
  /** Dependencies not finished yet. */
  waitingFor: number;
  /** The id of a dependency that failed, once one did. */
  failedDependency: string | undefined;
}

/** Checks the requests and orders their dependencies; a `TypeError` for anything that cannot run. */
function plan(requests: unknown): PlannedRequest[] {
  if (!Array.isArray(requests)) throw optionError(WHERE, "requests", "an array of requests", requests);
  const indexes = new Map<string, number>();
  // By index, not map/forEach, which skip the holes of a sparse array.
  const planned: PlannedRequest[] = [];
  for (let index = 0; index < requests.length; index++) {
    const request: unknown = requests[index];
    const where = `requests[${index}]`;
    if (!isRecord(request)) throw optionError(WHERE, where, "a request object", request);
    if (typeof request.name !== "string") throw optionError(WHERE, `${where}.name`, "a string", request.name);
    const id = request.id === undefined ? String(index) : request.id;
    if (typeof id !== "string") throw optionError(WHERE, `${where}.id`, "a string", id);
    if (indexes.has(id)) throw new TypeError(`${WHERE}: ${where}.id ${quoteName(id)} is used by an earlier request`);
    indexes.set(id, index);
    planned.push({
      id,
      name: request.name,
      parameters: request.parameters as Record<string, unknown>,
      dependents: [],
      waitingFor: 0,
      failedDependency: undefined,
    });
  }
  for (let index = 0; index < requests.length; index++) {
    const { dependsOn } = requests[index] as Record<string, unknown>;
    if (dependsOn === undefined) continue;
    const where = `requests[${index}].dependsOn`;
    if (!Array.isArray(dependsOn)) throw optionError(WHERE, where, "an array of request ids", dependsOn);
    for (const id of new Set<unknown>(dependsOn)) {
      const dependency = typeof id === "string" ? indexes.get(id) : undefined;
      if (dependency === undefined) throw optionError(WHERE, where, "ids of requests in this batch", id);
      (planned[dependency] as PlannedRequest).dependents.push(index);
      (planned[index] as PlannedRequest).waitingFor++;
    }
  }
  checkAcyclic(planned);
  return planned;
}

/** Kahn's algorithm on a copy of the counts; names one cycle when some requests can never start. */
function checkAcyclic(planned: readonly PlannedRequest[]): void {
  const waiting = planned.map((request) => request.waitingFor);
  const ready = planned.flatMap((request, index) => (request.waitingFor === 0 ? [index] : []));
  for (let next = ready.pop(); next !== undefined; next = ready.pop()) {
    for (const dependent of (planned[next] as PlannedRequest).dependents) {
      if (--(waiting[dependent] as number) === 0) ready.push(dependent);
    }
  }
  const stuck = waiting.findIndex((count) => count > 0);
  if (stuck === -1) return;
  // Walk back through unfinished dependencies until a request repeats: that is a cycle.
  const dependencyOf = new Map<number, number>();
  planned.forEach((request, index) => {
    for (const dependent of request.dependents) if ((waiting[index] as number) > 0) dependencyOf.set(dependent, index);
  });
  const position = new Map<number, number>();
  const path: number[] = [];
  let current = stuck;
  while (!position.has(current)) {
    position.set(current, path.length);
    path.push(current);
    current = dependencyOf.get(current) as number;
  }
  const cycle = path.slice(position.get(current));
  // A cycle of 100,000 requests is named by its first ids, not in a message of megabytes.
  const shown = cycle.slice(0, MAX_NAMED_IN_CYCLE).map((index) => quoteName((planned[index] as PlannedRequest).id));
  if (cycle.length > MAX_NAMED_IN_CYCLE) shown.push(`… (${cycle.length - MAX_NAMED_IN_CYCLE} more)`);
  shown.push(quoteName((planned[current] as PlannedRequest).id));
  throw new TypeError(
    `${WHERE}: the requests' dependencies form a cycle: ${shown.join(" → ")} (each depends on the next)`,
  );
}

interface ResolvedBatchOptions {
  concurrency: number;
  signal: AbortSignal | undefined;
  timeoutMs: number | undefined;
  onProgress: ProgressListener | undefined;
}

function checkOptions(options: unknown): ResolvedBatchOptions {
  if (!isPlainObject(options)) throw optionError(WHERE, "options", "an object", options);
  const { concurrency, timeoutMs, onProgress, signal } = options as BatchOptions;
  return {
    concurrency: checkConcurrency(WHERE, "concurrency", concurrency),
    signal: checkSignal(WHERE, "signal", signal),
    timeoutMs: checkTimeout(WHERE, "timeoutMs", timeoutMs),
    onProgress: checkFunction(WHERE, "onProgress", onProgress),
  };
}

/**
 * The `ToolExecutionError` of a failed request, `undefined` for a success: its result's own `err`,
 * or one made from its text and set as its `err` (the result is this batch's copy).
 */
function errorOf(result: ToolResult, toolName: string): ToolExecutionError | undefined {
  try {
    if (!result.isError) return undefined;
    if (isToolExecutionError(result.err)) return result.err;
    const message = boundText(String(result.forLLM), MAX_ERROR_MESSAGE_CHARS);
    const error = new ToolExecutionError(message, {
      toolName: cutName(toolName),
      code: "tool_failed",
      cause: result.err,
    });
    result.err = error;
    return error;
  } catch (cause) {
    // A tool's result class whose getters throw: the request failed, and nothing more can be read.
    const message = `tool ${quoteName(toolName)} returned a result that cannot be read`;
    return new ToolExecutionError(message, { toolName: cutName(toolName), code: "no_result", cause });
  }
}

/**
 * Runs `requests`; see {@link ToolRegistry.executeBatch}.
 * @internal
 */
export function executeBatch(target: DispatchTarget, requests: unknown, options: unknown = {}): Promise<BatchResult> {
  const planned = plan(requests);
  const { concurrency, signal, timeoutMs, onProgress } = checkOptions(options);
  const startTime = Date.now();
  const started = performance.now();
  const results: Record<string, ToolResult> = Object.create(null);
  const errors: Record<string, ToolExecutionError> = Object.create(null);
  const queue = new PQueue({ concurrency });
  let unfinished = planned.length;

  return new Promise<BatchResult>((resolve) => {
    const dispatch = (request: PlannedRequest): void => {
      const run = () =>
        dispatchToolCall(target, {
          name: request.name,
          args: request.parameters,
          channel: "",
          chatId: "",
          asyncCallback: undefined,
          options: { signal, timeoutMs, onProgress, toolCallId: request.id },
        });
      queue.add(run).then(
        (result) => settle(request, result),
        // Dispatch resolves every failure of a call; should it break anyway, the request is still answered.
        (error: unknown) => settle(request, unexpected(request, error)),
      );
    };
    // A loop over a work list, not recursion: a failure at the head of a long chain of dependents
    // answers the whole chain without growing the stack.
    const settle = (first: PlannedRequest, firstResult: ToolResult): void => {
      const settled: [PlannedRequest, ToolResult][] = [[first, firstResult]];
      for (let next = settled.pop(); next !== undefined; next = settled.pop()) {
        const [request, result] = next;
        results[request.id] = result;
        const error = errorOf(result, request.name);
        if (error !== undefined) errors[request.id] = error;
        for (const index of request.dependents) {
          const dependent = planned[index] as PlannedRequest;
          if (error !== undefined) dependent.failedDependency ??= request.id;
          if (--dependent.waitingFor > 0) continue;
          // After an abort every request is dispatched, to be answered "aborted" like the others.
          if (dependent.failedDependency === undefined || signal?.aborted === true) dispatch(dependent);
          else settled.push([dependent, notRun(dependent, target, onProgress)]);
        }
        if (--unfinished === 0) {
          const durationMs = performance.now() - started;
          resolve({ results, errors, startTime, endTime: startTime + durationMs, durationMs });
        }
      }
    };
    if (planned.length === 0) resolve({ results, errors, startTime, endTime: startTime, durationMs: 0 });
    for (const request of planned) if (request.waitingFor === 0) dispatch(request);
  });
}

/** The answer of a request whose dispatch broke (never expected: dispatch resolves every failure). */
function unexpected(request: PlannedRequest, error: unknown): ToolResult {
  const { id: toolCallId, name, parameters } = request;
  const result = failure(name, "tool_failed", `tool ${quoteName(name)} failed: ${errorMessage(error)}`, error);
  return withMetadata(result, callMetadata({ name, args: parameters, toolCallId }, Date.now(), 0));
}

/** The answer of a request whose dependency failed: logged, with metadata and a final progress update. */
function notRun(request: PlannedRequest, target: DispatchTarget, onProgress: ProgressListener | undefined): ToolResult {
  const { id: toolCallId, name, parameters } = request;
  const dependency = quoteName(request.failedDependency);
  const message = `tool ${quoteName(name)} was not run: its dependency ${dependency} failed`;
  const { logger, logPayloads } = target;
  const refused = logCallEnd(name, failure(name, "dependency_failed", message), undefined, {
    logger,
    toolCallId,
    logPayloads,
  });
  const result = withMetadata(refused, callMetadata({ name, args: parameters, toolCallId }, Date.now(), 0));
  return finishUnrun(onProgress, { toolName: name, toolCallId, logger }, result);
}
