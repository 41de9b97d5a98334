import { pino } from "pino";
import type { Logger } from "../logger.js";
import { optionError } from "./options.js";

type Level = "debug" | "info" | "warn" | "error";

/** A logger with the optional methods filled in: what the registry and the loop call. */
export type ResolvedLogger = Logger & Required<Pick<Logger, "isLevelEnabled" | "child">>;

const LEVELS = ["debug", "info", "warn", "error"] as const;

let silent: ResolvedLogger | undefined;

/**
 * The logger used when none is injected: pino at level `silent`, created on first use. It is never
 * handed out (tools and tests get children of it), so its level stays `silent` and {@link log} and
 * {@link logEnabled} skip it without asking pino.
 */
export function defaultLogger(): ResolvedLogger {
  silent ??= pino({ level: "silent" });
  return silent;
}

/**
 * The injected logger, checked and completed: pino's (which has every method) is used as it is;
 * another (e.g. `console`) is wrapped so that `isLevelEnabled` says yes and `child` returns it.
 * @throws TypeError naming the missing method, for anything that is not a logger
 */
export function resolveLogger(value: unknown, where: string): ResolvedLogger {
  if (value === undefined) return defaultLogger();
  if (typeof value !== "object" || value === null) {
    throw optionError(where, "logger", "an object with debug, info, warn and error methods (pino, console …)", value);
  }
  const logger = value as Record<string, unknown>;
  const missing = LEVELS.filter((level) => typeof logger[level] !== "function");
  if (missing.length > 0) {
    const expected = `an object with debug, info, warn and error methods (missing: ${missing.map((name) => `${name}()`).join(", ")})`;
    throw optionError(where, "logger", expected, value);
  }
  const candidate = value as Logger;
  if (typeof candidate.isLevelEnabled === "function" && typeof candidate.child === "function") {
    return candidate as ResolvedLogger;
  }
  return completeLogger(candidate);
}

function completeLogger(logger: Logger): ResolvedLogger {
  const completed: ResolvedLogger = {
    // Called as methods of the original, so loggers that rely on `this` keep working.
    debug: (fields, message) => logger.debug(fields, message),
    info: (fields, message) => logger.info(fields, message),
    warn: (fields, message) => logger.warn(fields, message),
    error: (fields, message) => logger.error(fields, message),
    isLevelEnabled:
      typeof logger.isLevelEnabled === "function"
        ? (level) => (logger.isLevelEnabled as (level: string) => boolean).call(logger, level)
        : () => true,
    child:
      typeof logger.child === "function"
        ? (bindings) => resolveLogger((logger.child as NonNullable<Logger["child"]>).call(logger, bindings), "child")
        : () => logger,
  };
  return completed;
}

/** `true` when `level` is written; `false` when the logger cannot say (it threw). */
export function logEnabled(logger: ResolvedLogger, level: Level): boolean {
  if (logger === silent) return false;
  try {
    return logger.isLevelEnabled(level);
  } catch {
    return false;
  }
}

/**
 * Writes one line, never throwing: a broken logger must not cost a call its answer or the loop its
 * transcript. `fields` is a function so that building them (reading a result, an error) is guarded
 * too, and skipped when the level is off.
 */
export function log(logger: ResolvedLogger, level: Level, fields: () => object, message: string): void {
  if (logEnabled(logger, level)) writeLine(logger, level, fields, message);
}

/**
 * {@link log} at a level already found enabled with {@link logEnabled}: one check for the lines
 * of a step or a call instead of one per line.
 */
export function writeLine(logger: ResolvedLogger, level: Level, fields: () => object, message: string): void {
  try {
    logger[level](fields(), message);
  } catch {
    // nothing to do: the result is what matters
  }
}

/**
 * Milliseconds rounded to the microsecond, for a line's `durationMs`: writing a double's ~17
 * digits costs a pino line about 40 % more.
 */
export function roundMs(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

/** `logger.child(bindings)`, or the logger itself when that throws or returns no logger. */
export function childLogger(logger: ResolvedLogger, bindings: Record<string, unknown>): Logger {
  try {
    const child: unknown = logger.child(bindings);
    if (typeof child === "object" && child !== null) {
      const candidate = child as Partial<Record<Level, unknown>>;
      if (LEVELS.every((method) => typeof candidate[method] === "function")) return child as Logger;
    }
  } catch {
    // fall back to the logger itself
  }
  return logger;
}
