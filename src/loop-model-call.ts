import { InvalidProviderResponseError, isInvalidProviderResponseError, type ToolLoopError } from "./errors.js";
import type { Next } from "./internal/compose.js";
import { errorMessage, isPlainObject } from "./internal/describe.js";
import { logEnabled, writeLine } from "./internal/logger.js";
import { responseProblem } from "./internal/response-problem.js";
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

function addUsage(total: UsageInfo | undefined, usage: UsageInfo | undefined): UsageInfo | undefined {
  if (!isPlainObject(usage)) return total;
  const add = (a: number | undefined, b: unknown) => (a ?? 0) + (typeof b === "number" ? b : 0);
  return {
    promptTokens: add(total?.promptTokens, usage.promptTokens),
    completionTokens: add(total?.completionTokens, usage.completionTokens),
    totalTokens: add(total?.totalTokens, usage.totalTokens),
  };
}

/**
 * The model-call middleware of a run around the provider call (streamed when the features stream);
 * the provider's response is checked before any middleware sees it. `undefined` without them.
 */
export function modelCallChain(config: ResolvedConfig): ModelCallChain | undefined {
  const layers = config.middleware?.model;
  if (layers === undefined || layers.length === 0) return undefined;
  const { provider, features } = config;
  return new ModelCallChain(layers, async (request) => {
    const { messages, model, options, signal } = request;
    const tools = request.tools as ToolDefinition[] | undefined;
    const response: unknown = await (features === undefined
      ? provider.chat(messages as Message[], tools, model, options, signal)
      : features.send(provider, request));
    const problem = responseProblem(response);
    if (problem !== undefined) throw invalidResponse(problem, response);
    return response as LLMResponse;
  });
}

/**
 * The provider call of one step: straight to the provider without features and middleware (the
 * transcript and options as they are); otherwise a fresh request through the features, then the
 * middleware (which get copies of the transcript and options: what they change is theirs).
 */
function send(run: LoopState, definitions: ToolDefinition[] | undefined, iteration: number): Promise<LLMResponse> {
  const { transcript, features, modelChain, signal } = run;
  const { provider, model, llmOptions } = run.config;
  if (modelChain === undefined) {
    if (features === undefined)
      return Promise.resolve(provider.chat(transcript, definitions, model, llmOptions, signal));
    const request = { messages: transcript, tools: definitions, model, options: llmOptions, iteration, signal };
    return features.callModel(request, (sent) => features.send(provider, sent));
  }
  const request: ModelCallRequest = {
    messages: transcript.slice(),
    tools: definitions,
    model,
    options: { ...llmOptions },
    iteration,
    signal,
  };
  const next: Next<ModelCallRequest, LLMResponse> = (sent) => modelChain.call(sent);
  return features === undefined ? next(request) : features.callModel(request, next);
}

/** The run's error for a provider call that failed: named after the middleware that caused it, if one did. */
function callFailed(run: LoopState, error: unknown): ToolLoopError {
  const author = run.modelChain?.authorOf(error);
  if (author !== undefined) return run.fail("provider_failed", modelCallFailure(author, error), error);
  const code = isInvalidProviderResponseError(error) ? "invalid_response" : "provider_failed";
  return run.fail(code, `LLM call failed: ${errorMessage(error)}`, error);
}

/**
 * One step's provider call (Go's `provider.Chat`): the registry's definitions offered, the
 * response checked and its usage counted. Rejects with the run's `ToolLoopError`; `undefined` when
 * the failed call was the final-answer call, which ends the run as without it.
 */
export async function callModel(run: LoopState, iteration: number): Promise<LLMResponse | undefined> {
  const { transcript, features, scope } = run;
  const { tools, logger, model } = run.config;
  const definitions = tools !== null && tools.count() > 0 ? definitionsOf(tools, scope.promotions) : undefined;
  if (logEnabled(logger, "debug")) {
    writeLine(logger, "debug", () => ({ iteration, model, messages: transcript.length }), "llm call");
  }
  if (features !== undefined) await features.stepStart(iteration, transcript);
  let response: unknown;
  try {
    response = await run.race(send(run, definitions, iteration));
  } catch (error) {
    if (run.aborted) throw run.abortError();
    if (features?.modelCallFailed(iteration, error, transcript) === true) return undefined;
    throw callFailed(run, error);
  }
  const problem = responseProblem(response);
  if (problem !== undefined) {
    const cause = invalidResponse(problem, response);
    throw run.fail("invalid_response", `LLM call failed: ${cause.message}`, cause);
  }
  run.usage = addUsage(run.usage, (response as LLMResponse).usage);
  return response as LLMResponse;
}
