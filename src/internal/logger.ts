import { type Logger, pino } from "pino";

let silent: Logger | undefined;

/** The logger used when none is injected: pino at level `silent`, created on first use. */
export function defaultLogger(): Logger {
  silent ??= pino({ level: "silent" });
  return silent;
}
