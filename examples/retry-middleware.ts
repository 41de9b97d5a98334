/**
 * A retry middleware for a flaky provider: `wrapModelCall` calls `next` again after a failure,
 * waiting longer each time (exponential backoff), and gives up after a few attempts. A retry is
 * the same step of the loop: `iterations` counts it once. Runs on the scripted provider, which
 * fails twice here (no API key, no network). Run: npx tsx examples/retry-middleware.ts
 */
import { setTimeout as sleep } from "node:timers/promises";
import { type LLMResponse, runToolLoop, type ToolLoopMiddleware } from "toolloop";
import { ScriptedProvider, textResponse } from "toolloop/testing";

// The retry: 10–30 lines. A real one would retry only errors worth retrying (429, 5xx, timeouts).
function retryWithBackoff(attempts: number, firstDelayMs: number): ToolLoopMiddleware {
  return {
    name: "retry-with-backoff",
    async wrapModelCall(request, next): Promise<LLMResponse> {
      for (let attempt = 1; ; attempt++) {
        try {
          return await next(request);
        } catch (error) {
          // Out of attempts, or the run was aborted: the failure is the run's.
          if (attempt >= attempts || request.signal?.aborted === true) throw error;
          const delay = firstDelayMs * 2 ** (attempt - 1);
          console.log(`attempt ${attempt} failed (${(error as Error).message}); retrying in ${delay} ms`);
          // The wait ends early, rejecting, when the run is aborted.
          await sleep(delay, undefined, { signal: request.signal });
        }
      }
    },
  };
}

const provider = new ScriptedProvider([
  new Error("503 Service Unavailable"),
  new Error("503 Service Unavailable"),
  textResponse("Hello! How can I help?"),
]);

const result = await runToolLoop({ provider, tools: null, maxIterations: 3, middleware: [retryWithBackoff(4, 10)] }, [
  { role: "user", content: "Hi" },
]);
console.log(`provider calls: ${provider.calls.length}, loop iterations: ${result.iterations}`);
console.log(`${result.stopReason}: ${result.content}`);
