import * as restate from "@restatedev/restate-sdk";
import { describeType, isRecord } from "../internal/describe.js";
import { optionError } from "../internal/options.js";
import type { Message } from "../provider.js";
import { runToolLoop } from "../run-tool-loop.js";
import type { ToolLoopConfig } from "../tool-loop-config.js";
import type { ToolLoopResult } from "../tool-loop-result.js";
import { durable } from "./durable.js";

/** Options of {@link restateAgent}. */
export interface RestateAgentOptions {
  /** The virtual object's name in Restate: its URL path (`/<name>/<key>/send`). */
  name: string;
  /**
   * The loop's configuration, or a function that makes it per invocation (it receives the
   * invocation's context, for `durableApproval(ctx, …)`). Its `middleware` stay; `durable(ctx)` is
   * added after them, innermost.
   */
  config: ToolLoopConfig | ((ctx: restate.ObjectContext) => ToolLoopConfig);
  /**
   * Restate's options of the object, passed as they are: `retryPolicy` above all — Restate's
   * default backs off to a minute between attempts; `{ initialInterval: 100, maxInterval: 2000 }`
   * continues a run within seconds of a restart. @default Restate's defaults
   */
  options?: restate.ObjectOptions | undefined;
}

/** The handlers of {@link restateAgent}'s virtual object. */
export interface RestateAgentHandlers {
  /**
   * Appends the user's message to the conversation's history, runs the loop durably, stores the
   * new history and returns the run's result. Restate runs one `send` per key at a time.
   */
  send(ctx: restate.ObjectContext, message: string): Promise<ToolLoopResult>;
  /** The conversation's history (`[]` before the first message); shared: it runs beside a `send`. */
  history(ctx: restate.ObjectSharedContext): Promise<Message[]>;
}

/** The virtual object {@link restateAgent} returns: bind it to a Restate endpoint. */
export type RestateAgent = restate.VirtualObjectDefinition<string, RestateAgentHandlers>;

const WHERE = "restateAgent";
const HISTORY = "history";

/**
 * Refuses `approve: "interrupt"`: an interrupted run would store calls nobody answers, and every
 * later message of the conversation would follow them. A Restate run waits for a person durably
 * instead, with `durableApproval(ctx, …)`.
 */
function checkApprove(config: ToolLoopConfig): ToolLoopConfig {
  if (isRecord(config) && config.approve === "interrupt") {
    throw optionError(
      WHERE,
      "config.approve",
      'durableApproval(ctx, …) (a run on Restate waits durably, not "interrupt")',
      config.approve,
    );
  }
  return config;
}

/**
 * A conversation as a Restate virtual object, keyed by the object key: `send(message)` runs one
 * turn of the loop durably ({@link durable}) on the stored history; `history()` reads it. Two
 * messages to one key never interleave (Restate queues them); a message that is not a string is
 * a `TerminalError` (HTTP 400), never retried.
 *
 * @example
 * ```ts
 * const agent = restateAgent({
 *   name: "agent",
 *   config: { provider, tools },
 *   options: { retryPolicy: { initialInterval: 100, maxInterval: 2_000 } },
 * });
 * await restate.serve({ services: [agent], port: 9080 });
 * // curl localhost:8080/agent/alice/send --json '"What is the weather in Paris?"'
 * ```
 */
export function restateAgent(options: RestateAgentOptions): RestateAgent {
  if (!isRecord(options)) throw optionError(WHERE, "options", "an object { name, config }", options);
  const { name, config } = options;
  if (typeof name !== "string" || name === "") throw optionError(WHERE, "name", "a non-empty string", name);
  if (typeof config !== "function" && !isRecord(config)) {
    throw optionError(WHERE, "config", "a ToolLoopConfig or a function that returns one", config);
  }
  if (typeof config !== "function") checkApprove(config);
  const handlers: RestateAgentHandlers = {
    async send(ctx, message) {
      if (typeof message !== "string") {
        throw new restate.TerminalError(`send takes the user's message as a string, got ${describeType(message)}`, {
          errorCode: 400,
        });
      }
      const history = (await ctx.get<Message[]>(HISTORY)) ?? [];
      let result: ToolLoopResult;
      try {
        const base = typeof config === "function" ? checkApprove(config(ctx)) : config;
        result = await runToolLoop(
          { ...base, middleware: [...(base.middleware ?? []), durable(ctx)] },
          [...history, { role: "user", content: message }],
          { chatId: ctx.key },
        );
      } catch (error) {
        // A TypeError is a misconfiguration (the config, its approve, the stored history): every retry would
        // fail the same way. Anything else (a provider that failed) Restate retries.
        if (error instanceof TypeError) throw new restate.TerminalError(error.message, { errorCode: 500 });
        throw error;
      }
      ctx.set(HISTORY, result.messages);
      return result;
    },
    async history(ctx) {
      return (await ctx.get<Message[]>(HISTORY)) ?? [];
    },
  };
  return restate.object({
    name,
    handlers: { send: handlers.send, history: restate.handlers.object.shared(handlers.history) },
    ...(options.options === undefined ? {} : { options: options.options }),
  }) as unknown as RestateAgent;
}
