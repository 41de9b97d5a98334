/**
 * What toolloop logs through: pino's `Logger` fits, and so does `console` or any object with
 * `debug`, `info`, `warn` and `error` methods. Every call passes a fields object first and a
 * message second (pino's order).
 *
 * `isLevelEnabled` and `child` are used when present: without `isLevelEnabled` every level is
 * treated as enabled; without `child`, tools receive this logger itself as `context.logger`.
 */
export interface Logger {
  /** Detail of each step and call (`llm call`, `tool call started`, `tool call completed` with `durationMs` …). */
  debug(fields: object, message?: string): void;
  /**
   * One line per loop run, `tool loop finished` (`iterations`, `stopReason` or `error`, `toolCalls`,
   * `failedCalls`, `durationMs`), written when it resolves or rejects; nothing per tool call.
   */
  info(fields: object, message?: string): void;
  /** A failed tool call (`tool call failed`), a tool replaced by a new registration. */
  warn(fields: object, message?: string): void;
  /** Part of the contract of pino and `console`; toolloop itself logs nothing at this level today. */
  error(fields: object, message?: string): void;
  /** `true` when messages of `level` are written (pino's method); lets toolloop skip building them. */
  isLevelEnabled?(level: string): boolean;
  /** A logger that adds `bindings` to every message (pino's method); used for `context.logger`. */
  child?(bindings: Record<string, unknown>): Logger;
}
