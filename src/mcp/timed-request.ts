import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod/v4";
import { MAX_TIMEOUT_MS } from "../execute-tool-call.js";
import { subscribeAbort } from "../internal/abort.js";

/**
 * The result schema of our requests: anything. The SDK's own schemas (`ListToolsResultSchema`,
 * `CallToolResultSchema`) refuse a whole answer for one bad part — a malformed tool fails the
 * listing, an unknown content type the call, with a dump of zod issues — so each answer is read
 * by the caller, part by part, and what cannot be used is skipped or described.
 */
const ANY_RESULT = z.unknown();

/** A request that ran out of its `timeoutMs`: our own timer fired, whatever the server said. */
export class RequestTimedOut extends Error {}

/**
 * Sends one request and resolves with its result, unchecked (see {@link ANY_RESULT}). Rejects with
 * {@link RequestTimedOut} only when our own timer fired after `ms`: the SDK's timeout and a
 * server's error share the code -32001 (`RequestTimeout`), so the SDK's is never armed (the longest
 * `setTimeout`) and a server's -32001 stays the server's error. `signal` or the timer cancels the
 * request (`notifications/cancelled`).
 */
export async function timedRequest(
  client: Client,
  request: Parameters<Client["request"]>[0],
  ms: number,
  signal: AbortSignal,
  onprogress?: (progress: { progress: number; total?: number | undefined; message?: string | undefined }) => void,
): Promise<unknown> {
  // A controller per request: the SDK leaves its abort listener on the signal it is given.
  const controller = new AbortController();
  let timedOut = false;
  let unsubscribe = () => {};
  if (signal.aborted) controller.abort(signal.reason);
  else unsubscribe = subscribeAbort(signal, (reason) => controller.abort(reason));
  const timer = setTimeout(() => {
    timedOut = true;
    // What the server reads in `notifications/cancelled`, as with the SDK's own timeout.
    controller.abort(new McpError(ErrorCode.RequestTimeout, "Request timed out", { timeout: ms }));
  }, ms);
  try {
    return await client.request(request, ANY_RESULT, {
      signal: controller.signal,
      timeout: MAX_TIMEOUT_MS,
      ...(onprogress === undefined ? {} : { onprogress }),
    });
  } catch (error) {
    if (timedOut && !signal.aborted) throw new RequestTimedOut(`no answer within ${ms} ms`, { cause: error });
    throw error;
  } finally {
    clearTimeout(timer);
    unsubscribe();
  }
}
