import type * as restate from "@restatedev/restate-sdk";
import { cutName } from "../internal/describe.js";
import type { LLMResponse } from "../provider.js";
import type { ToolLoopMiddleware } from "../tool-loop-middleware.js";
import { batchesOf } from "./journal-batch.js";
import { fromJournal, type JournaledToolResult, toJournal } from "./journaled-tool-result.js";

/**
 * A middleware that journals each model call and each tool call of a run as a Restate step
 * (`ctx.run`), so that a run Restate retries (a crash, a restart, a deploy) replays what it
 * already did instead of doing it again: the provider is not asked again, a tool that finished does
 * not run again. Steps are named `model <iteration>` and `tool <name> <call id>`; a turn's calls
 * stay parallel and are awaited through one `RestatePromise.allSettled`, started in the order the loop
 * starts them. A journaled tool result comes back as a real `ToolResult` (its `err` an `Error` with
 * the original message only). Put it last in `middleware` (innermost), so that what the other
 * middleware do around a step runs again on replay and what is journaled is the step itself;
 * {@link restateAgent} adds it so.
 *
 * A call in flight when the process died has no journal entry: it runs again. Give tools with side
 * effects the call's id (`context.toolCallId`) as their idempotency key.
 *
 * @example
 * ```ts
 * const agent = restate.service({
 *   name: "agent",
 *   handlers: {
 *     run: async (ctx: restate.Context, prompt: string) =>
 *       (await runToolLoop({ provider, tools, middleware: [durable(ctx)] }, [{ role: "user", content: prompt }]))
 *         .content,
 *   },
 * });
 * ```
 */
export function durable(ctx: restate.Context): ToolLoopMiddleware {
  const { tools } = batchesOf(ctx);
  return {
    name: "restate-durable",
    wrapModelCall(request, next) {
      // The provider's response is plain JSON: the journal keeps it as it is.
      return ctx.run<LLMResponse>(`model ${request.iteration}`, () => next(request));
    },
    async wrapToolCall(request, next) {
      const name = `tool ${cutName(request.toolName)} ${cutName(request.toolCallId)}`;
      const [journaled] = await tools.add(() => [
        ctx.run<JournaledToolResult>(name, async () => toJournal(await next(request))),
      ]);
      return fromJournal(journaled as JournaledToolResult);
    },
  };
}
