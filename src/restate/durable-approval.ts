import type * as restate from "@restatedev/restate-sdk";
import { cutName, isRecord } from "../internal/describe.js";
import { optionError } from "../internal/options.js";
import type { ApprovalDecision, ApprovalRequest, ToolApprover } from "../tool-approval.js";
import { batchesOf } from "./journal-batch.js";

/** An approval request as {@link DurableApprovalOptions.onRequest} receives it: with the awakeable to resolve. */
export interface DurableApprovalRequest extends ApprovalRequest {
  /**
   * The Restate awakeable that decides the call: resolve it with `{ approved, reason? }` (or
   * `true` / `false`) from any process, through Restate's HTTP API
   * (`POST /restate/awakeables/<id>/resolve`) or an SDK client.
   */
  awakeableId: string;
}

/** Options of {@link durableApproval}. */
export interface DurableApprovalOptions {
  /**
   * Tells whoever decides (a UI, a chat message, a ticket) that a call waits, and under which
   * awakeable id. Journaled: it runs once per request (again only when it failed or the process
   * died while it ran), never on replay.
   */
  onRequest(request: DurableApprovalRequest): void | Promise<void>;
}

const WHERE = "durableApproval";

/**
 * An approver (`ToolLoopConfig.approve`) that turns each approval into a Restate awakeable: the
 * run waits, journaled, until someone resolves it — the service process holds nothing meanwhile
 * and may be restarted or redeployed. The approvals a turn asks for are awaited together (one
 * `RestatePromise.allSettled`), so a replay sees their decisions in the same order.
 *
 * @example
 * ```ts
 * const config = (ctx: restate.ObjectContext) => ({
 *   provider,
 *   tools,
 *   approve: durableApproval(ctx, { onRequest: (request) => notifyReviewer(request) }),
 * });
 * ```
 */
export function durableApproval(ctx: restate.Context, options: DurableApprovalOptions): ToolApprover {
  const onRequest: unknown = isRecord(options) ? options.onRequest : undefined;
  if (typeof onRequest !== "function") throw optionError(WHERE, "options.onRequest", "a function", onRequest);
  const { approvals } = batchesOf(ctx);
  return async (request) => {
    const name = `${cutName(request.toolName)} ${cutName(request.toolCallId)}`;
    const [, decision] = await approvals.add(() => {
      const awakeable = ctx.awakeable<ApprovalDecision>();
      const told = ctx.run(`approval request ${name}`, async () => {
        await onRequest.call(options, { ...request, awakeableId: awakeable.id });
        return null;
      });
      return [told, awakeable.promise];
    });
    return decision as ApprovalDecision;
  };
}
