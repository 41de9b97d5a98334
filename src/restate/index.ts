/**
 * `toolloop/restate`: durable runs on Restate — model and tool calls journaled, approvals as
 * awakeables, a conversation as a virtual object. `@restatedev/restate-sdk` (1.12 or later) is an
 * optional peer dependency, loaded only by this entry. See docs/durable-runs.md.
 * @packageDocumentation
 */
export { durable } from "./durable.js";
export { type DurableApprovalOptions, type DurableApprovalRequest, durableApproval } from "./durable-approval.js";
export type { JournaledToolResult } from "./journaled-tool-result.js";
export {
  type RestateAgent,
  type RestateAgentHandlers,
  type RestateAgentOptions,
  restateAgent,
} from "./restate-agent.js";
