import PQueue from "p-queue";
import { isToolExecutionError, ToolExecutionError } from "./errors.js";
import {
  callMetadata,
  type DispatchTarget,
  dispatchToolCall,
  failure,
  isValidTimeout,
  logCallEnd,
  TIMEOUT_EXPECTATION,
} from "./execute-tool-call.js";
import { cutName, isPlainObject, isRecord, quoteName } from "./internal/describe.js";
import { checkSignal, optionError } from "./internal/options.js";
import { type ProgressListener, ProgressReporter } from "./progress.js";
import { type ToolResult, withMetadata } from "./tool-result.js";

/** One call of a batch or of `executeAsync` (seed 003's `ToolRequest`). */
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

/** What {@link ToolRegistry.executeBatch} resolves to (seed 003's `BatchResult`). */
export interface BatchResult {
  /** Every request's result, keyed by request id (a null-prototype object: any id is a plain key). */
  results: Record<string, ToolResult>;
  /** The error of every request whose result is an error (seed 003's `ToolError`), keyed by request id; null-prototype too. */
  errors: Record<string, ToolExecutionError>;
  /** When the batch started, epoch milliseconds. */
  startTime: number;
  /** When the last request finished, epoch milliseconds. */
  endTime: number;
  /** `endTime - startTime`, in milliseconds (`performance.now()`, fractional). */
  durationMs: number;
}

const WHERE = "executeBatch";

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
  const planned = requests.map((request: unknown, index): PlannedRequest => {
    const where = `requests[${index}]`;
    if (!isRecord(request)) throw optionError(WHERE, where, "a request object", request);
    if (typeof request.name !== "string") throw optionError(WHERE, `${where}.name`, "a string", request.name);
    const id = request.id === undefined ? String(index) : request.id;
    if (typeof id !== "string") throw optionError(WHERE, `${where}.id`, "a string", id);
    if (indexes.has(id)) throw new TypeError(`${WHERE}: ${where}.id ${quoteName(id)} is used by an earlier request`);
    indexes.set(id, index);
    return {
      id,
      name: request.name,
      parameters: request.parameters as Record<string, unknown>,
      dependents: [],
      waitingFor: 0,
      failedDependency: undefined,
    };
  });
  requests.forEach((request: Record<string, unknown>, index) => {
    const { dependsOn } = request;
    if (dependsOn === undefined) return;
    const where = `requests[${index}].dependsOn`;
    if (!Array.isArray(dependsOn)) throw optionError(WHERE, where, "an array of request ids", dependsOn);
    for (const id of new Set<unknown>(dependsOn)) {
      const dependency = typeof id === "string" ? indexes.get(id) : undefined;
      if (dependency === undefined) throw optionError(WHERE, where, "ids of requests in this batch", id);
      (planned[dependency] as PlannedRequest).dependents.push(index);
      (planned[index] as PlannedRequest).waitingFor++;
    }
  });
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
  const seen: number[] = [];
  let current = stuck;
  while (!seen.includes(current)) {
    seen.push(current);
    current = dependencyOf.get(current) as number;
  }
  const cycle = [...seen.slice(seen.indexOf(current)), current];
  const names = cycle.map((index) => quoteName((planned[index] as PlannedRequest).id)).join(" → ");
  throw new TypeError(`${WHERE}: the requests' dependencies form a cycle: ${names} (each depends on the next)`);
}

interface ResolvedBatchOptions {
  concurrency: number;
  signal: AbortSignal | undefined;
  timeoutMs: number | undefined;
  onProgress: ProgressListener | undefined;
}

function checkOptions(options: unknown): ResolvedBatchOptions {
  if (!isPlainObject(options)) throw optionError(WHERE, "options", "an object", options);
  const { concurrency = Number.POSITIVE_INFINITY, timeoutMs, onProgress } = options as BatchOptions;
  if (!(concurrency === Number.POSITIVE_INFINITY || (Number.isInteger(concurrency) && concurrency >= 1))) {
    throw optionError(WHERE, "concurrency", "an integer ≥ 1 or Infinity", concurrency);
  }
  if (timeoutMs !== undefined && !isValidTimeout(timeoutMs)) {
    throw optionError(WHERE, "timeoutMs", TIMEOUT_EXPECTATION, timeoutMs);
  }
  if (onProgress !== undefined && typeof onProgress !== "function") {
    throw optionError(WHERE, "onProgress", "a function", onProgress);
  }
  return { concurrency, signal: checkSignal(WHERE, "signal", options.signal), timeoutMs, onProgress };
}

/** The `ToolExecutionError` of a failed result: its own `err`, or one made from its text. */
function errorOf(result: ToolResult, toolName: string): ToolExecutionError {
  if (isToolExecutionError(result.err)) return result.err;
  return new ToolExecutionError(result.forLLM, { toolName: cutName(toolName), code: "tool_failed", cause: result.err });
}

/**
 * Runs `requests` (seed 003's `ExecuteBatch`); see {@link ToolRegistry.executeBatch}.
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
        }).then((result) => settle(request, result));
      void queue.add(run);
    };
    // A loop over a work list, not recursion: a failure at the head of a long chain of dependents
    // answers the whole chain without growing the stack.
    const settle = (first: PlannedRequest, firstResult: ToolResult): void => {
      const settled: [PlannedRequest, ToolResult][] = [[first, firstResult]];
      for (let next = settled.pop(); next !== undefined; next = settled.pop()) {
        const [request, result] = next;
        results[request.id] = result;
        if (result.isError) errors[request.id] = errorOf(result, request.name);
        for (const index of request.dependents) {
          const dependent = planned[index] as PlannedRequest;
          if (result.isError) dependent.failedDependency ??= request.id;
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

/** The answer of a request whose dependency failed: logged, with metadata and a final progress update. */
function notRun(request: PlannedRequest, target: DispatchTarget, onProgress: ProgressListener | undefined): ToolResult {
  const { id: toolCallId, name, parameters } = request;
  const dependency = quoteName(request.failedDependency);
  const message = `tool ${quoteName(name)} was not run: its dependency ${dependency} failed`;
  const { logger, logPayloads } = target;
  const refused = logCallEnd(name, failure(name, "dependency_failed", message), 0, { logger, toolCallId, logPayloads });
  const result = withMetadata(refused, callMetadata({ name, args: parameters, toolCallId }, Date.now(), 0));
  if (onProgress === undefined) return result;
  return new ProgressReporter(onProgress, { toolName: name, toolCallId, logger }).finish(result);
}
