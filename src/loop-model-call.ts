import {
  InvalidProviderResponseError,
  isInvalidProviderResponseError,
  isToolLoopError,
  type ToolLoopError,
} from "./errors.js";
import { errorMessage, isPlainObject } from "./internal/describe.js";
import { responseProblem } from "./internal/response-problem.js";
import type { LoopFeatures } from "./loop-features.js";
import { definitionsOf } from "./loop-hidden-tools.js";
import type { ResolvedConfig } from "./loop-options.js";
import type { LoopState } from "./loop-state.js";
import { ModelCallChain, modelCallFailure } from "./middleware-chain.js";
import type { LLMResponse, Message, ToolDefinition, UsageInfo } from "./provider.js";
import type { ModelCallRequest } from "./tool-loop-middleware.js";

function invalidResponse(problem: string, response: unknown): InvalidProviderResponseError {
  return new InvalidProviderResponseError(`the provider returned an invalid response: ${problem}`, {
    provider: "LLMProvider",
    body: response,
  });
}

/** A running count plus a reported one (a missing count adds 0). */
function add(a: number | undefined, b: unknown): number {
  return (a ?? 0) + (typeof b === "number" ? b : 0);
}

/** A detail count so far plus a reported one: `undefined` while no call has reported it. */
function addDetail(before: number | undefined, count: unknown): number | undefined {
  return typeof count === "number" ? (before ?? 0) + count : before;
}

/**
 * The run's usage with one call's added: the three totals always (a missing count adds 0); a
 * detail count only once a call reported it (so an unreported count stays absent, a reported 0 is
 * kept). Field by field: a loop over key names read and wrote through V8's generic keyed path at
 * every step (10K of the realistic loop's 292K instructions on Node 22), and so did a helper taking
 * the key on Node 20 (+49K).
 */
function addUsage(total: UsageInfo | undefined, usage: UsageInfo | undefined): UsageInfo | undefined {
  if (!isPlainObject(usage)) return total;
  const sum: UsageInfo = {
    promptTokens: add(total?.promptTokens, usage.promptTokens),
    completionTokens: add(total?.completionTokens, usage.completionTokens),
    totalTokens: add(total?.totalTokens, usage.totalTokens),
  };
  const cached = addDetail(total?.cachedInputTokens, usage.cachedInputTokens);
  if (cached !== undefined) sum.cachedInputTokens = cached;
  const written = addDetail(total?.cacheWriteTokens, usage.cacheWriteTokens);
  if (written !== undefined) sum.cacheWriteTokens = written;
  const reasoning = addDetail(total?.reasoningTokens, usage.reasoningTokens);
  if (reasoning !== undefined) sum.reasoningTokens = reasoning;
  return sum;
}

/**
 * The model-call middleware of a run around the provider call (streamed when the features stream);
 * the provider's response is checked before any middleware sees it. `undefined` without them.
 */
export function modelCallChain(config: ResolvedConfig): ModelCallChain | undefined {
  const layers = config.middleware?.model;
  if (layers === undefined || layers.length === 0) return undefined;
  const { provider, features } = config;
  const send = (request: ModelCallRequest): unknown => {
    const { messages, model, options, signal } = request;
    const tools = request.tools as ToolDefinition[] | undefined;
    return features === undefined
      ? provider.chat(messages as Message[], tools, model, options, signal)
      : features.send(provider, request);
  };
  return new ModelCallChain(layers, send, invalidResponse);
}

/**
 * The provider call of one step with features or middleware: a fresh request through the features,
 * then the middleware (which get copies of the transcript and options: what they change is theirs).
 */
function send(run: LoopState, definitions: ToolDefinition[] | undefined, iteration: number): Promise<LLMResponse> {
  const { transcript, features, modelChain, signal } = run;
  if (modelChain === undefined) {
    const { provider, model, llmOptions } = run.config;
    const { providerName } = provider;
    const request = {
      messages: transcript,
      tools: definitions,
      model,
      options: llmOptions,
      iteration,
      signal,
      providerName,
    };
    // Only called with features when there is no middleware.
    const around = features as LoopFeatures;
    return around.callModel(request, (sent) => around.send(provider, sent));
  }
  const request = chainRequest(run, definitions, iteration);
  if (features === undefined) return modelChain.call(request);
  return features.callModel(request, (sent) => modelChain.call(sent));
}

/** A model call's request as the middleware get it: copies of the transcript and the options. */
function chainRequest(run: LoopState, tools: ToolDefinition[] | undefined, iteration: number): ModelCallRequest {
  const { model, llmOptions, provider } = run.config;
  const { providerName } = provider;
  return {
    messages: run.transcript.slice(),
    tools,
    model,
    options: { ...llmOptions },
    iteration,
    signal: run.signal,
    providerName,
  };
}

/** The run's error for a provider call that failed: named after the middleware that caused it, if one did. */
function callFailed(run: LoopState, error: unknown): ToolLoopError {
  const author = run.modelChain?.authorOf(error);
  if (author !== undefined) return run.fail("provider_failed", modelCallFailure(author, error), error);
  const code = isInvalidProviderResponseError(error) ? "invalid_response" : "provider_failed";
  return run.fail(code, `LLM call failed: ${errorMessage(error)}`, error);
}

/**
 * One step's provider call (Go's `provider.Chat`), the registry's definitions offered: what the
 * loop awaits and hands to {@link answerOf}. Rejects with the run's `ToolLoopError`, or — without
 * features — with the call's own failure, which {@link loopFailure} names.
 */
export function callModel(run: LoopState, iteration: number): Promise<unknown> {
  if (run.features !== undefined) return callAround(run, iteration);
  if (run.modelChain !== undefined) return callChain(run, run.modelChain, iteration);
  // Nothing around the call: the provider's promise itself, awaited by the loop and its answer
  // checked after (a promise and a tick less per step than a `then` here).
  const { transcript, signal } = run;
  const { provider, model, llmOptions } = run.config;
  const definitions = offered(run, iteration);
  let answer: Promise<unknown>;
  try {
    answer = run.race(Promise.resolve(provider.chat(transcript, definitions, model, llmOptions, signal)));
  } catch (error) {
    return Promise.reject(callError(run, error));
  }
  run.unchecked = "response";
  return answer;
}

/**
 * What {@link callModel}'s promise resolved to, as the loop takes it: the response checked (the
 * run's `ToolLoopError` otherwise) and its usage counted; `undefined` when the failed call was the
 * final-answer call, which ends the run as without it.
 */
export function answerOf(run: LoopState, answer: unknown): LLMResponse | undefined {
  const { unchecked } = run;
  if (unchecked === undefined) return answer as LLMResponse | undefined;
  run.unchecked = undefined;
  return unchecked === "response" ? checked(run, answer) : counted(run, answer as LLMResponse);
}

/**
 * The run's error for what broke it: a `ToolLoopError` as it is, a provider call's failure as the
 * call's (`"provider_failed"`, or `"aborted"`), anything else `"internal"`.
 */
export function loopFailure(run: LoopState, error: unknown): ToolLoopError {
  if (isToolLoopError(error)) return error;
  if (run.unchecked === undefined) return run.fail("internal", `tool loop failed: ${errorMessage(error)}`, error);
  run.unchecked = undefined;
  return callError(run, error);
}

/** The step's definitions (`undefined`: none to offer), after the step's `llm call` line. */
function offered(run: LoopState, iteration: number): ToolDefinition[] | undefined {
  const { tools, model } = run.config;
  const definitions = tools !== null && tools.count() > 0 ? definitionsOf(tools, run.scope.promotions) : undefined;
  run.debugLine(() => ({ iteration, model, messages: run.transcript.length }), "llm call");
  return definitions;
}

/**
 * The provider call through the model-call middleware only, without an async frame or a `then`:
 * the chain has checked the response (the provider's, then each middleware's), so the loop only
 * counts its usage.
 */
function callChain(run: LoopState, chain: ModelCallChain, iteration: number): Promise<unknown> {
  const request = chainRequest(run, offered(run, iteration), iteration);
  let answer: Promise<unknown>;
  try {
    answer = run.race(chain.call(request));
  } catch (error) {
    return Promise.reject(callError(run, error));
  }
  run.unchecked = "usage";
  return answer;
}

/** The provider call through the features and the model-call middleware. */
async function callAround(run: LoopState, iteration: number): Promise<LLMResponse | undefined> {
  const { transcript, features } = run;
  const definitions = offered(run, iteration);
  if (features !== undefined) {
    const started = features.stepStart(iteration);
    if (started !== undefined) await started;
    features.check(transcript, iteration - 1);
  }
  let response: unknown;
  try {
    response = await run.race(send(run, definitions, iteration));
  } catch (error) {
    if (run.aborted) throw run.abortError();
    if (features?.modelCallFailed(iteration, error, transcript) === true) return undefined;
    throw callFailed(run, error);
  }
  return checked(run, response);
}

/** The run's error for a provider call that failed or aborted. */
function callError(run: LoopState, error: unknown): ToolLoopError {
  return run.aborted ? run.abortError() : callFailed(run, error);
}

/** The provider's response, checked (the run's `ToolLoopError` otherwise), its usage counted. */
function checked(run: LoopState, response: unknown): LLMResponse {
  const problem = responseProblem(response);
  if (problem !== undefined) {
    const cause = invalidResponse(problem, response);
    throw run.fail("invalid_response", `LLM call failed: ${cause.message}`, cause);
  }
  return counted(run, response as LLMResponse);
}

/** A checked response, its usage counted. */
function counted(run: LoopState, response: LLMResponse): LLMResponse {
  run.usage = addUsage(run.usage, response.usage);
  return response;
}
