import type { ToolLoopError } from "./errors.js";
import { isToolLoopError } from "./errors.js";
import { cutName } from "./internal/describe.js";
import { log, logEnabled, type ResolvedLogger, roundMs } from "./internal/logger.js";
import type { NormalizedToolCall } from "./internal/normalize-tool-call.js";
import type { ToolLoopResult } from "./tool-loop-result.js";

/**
 * Runs `start` and writes the run's one `info` line, `tool loop finished`, when it resolves or
 * rejects: its `iterations`, `stopReason` (or the `ToolLoopError`'s `error` code), the tool calls
 * it answered (`toolCalls`, `failedCalls`: its tool messages from `from` on) and `durationMs` (from
 * before `start`). Nothing is added when `info` is off.
 */
export function logRun(
  logger: ResolvedLogger,
  from: number,
  start: () => Promise<ToolLoopResult>,
): Promise<ToolLoopResult> {
  const on = logEnabled(logger, "info");
  const started = on ? performance.now() : 0;
  const running = start();
  if (!on) return running;
  const end = (outcome: ToolLoopResult | ToolLoopError): void => {
    const durationMs = roundMs(performance.now() - started);
    // Read inside `log`'s guard: a ToolLoopError passed through from a hook or a registry may
    // carry anything, and logging must never change what the run resolves or rejects with.
    const fields = () => {
      const { messages, iterations } = outcome;
      let toolCalls = 0;
      let failedCalls = 0;
      for (let index = from; index < messages.length; index++) {
        const message = messages[index];
        if (message?.role === "tool") {
          toolCalls++;
          if (message.isError === true) failedCalls++;
        }
      }
      // One literal, no spread: pino writes an object built by a spread about three times slower.
      return isToolLoopError(outcome)
        ? { iterations, error: outcome.code, toolCalls, failedCalls, durationMs }
        : { iterations, stopReason: outcome.stopReason, toolCalls, failedCalls, durationMs };
    };
    log(logger, "info", fields, "tool loop finished");
  };
  return running.then(
    (result) => {
      end(result);
      return result;
    },
    (error: unknown) => {
      if (isToolLoopError(error)) end(error);
      throw error;
    },
  );
}

const MAX_LOGGED_NAMES = 20;

/** The names of a turn's calls for a log line: cut, at most 20, and how many more there were. */
export function namesOf(calls: readonly NormalizedToolCall[]): { toolCalls: string[]; more?: number } {
  const toolCalls = calls.slice(0, MAX_LOGGED_NAMES).map(({ call }) => cutName(call.name));
  return calls.length > MAX_LOGGED_NAMES ? { toolCalls, more: calls.length - MAX_LOGGED_NAMES } : { toolCalls };
}
