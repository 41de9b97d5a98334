import { pino } from "pino";

/** One parsed pino JSON line. */
export type LogLine = Record<string, unknown> & { level: number; msg: string };

/** A pino logger writing JSON lines into an array (never the console). */
export function captureLogger(level = "debug") {
  const lines: LogLine[] = [];
  const logger = pino({ level }, { write: (chunk: string) => void lines.push(JSON.parse(chunk) as LogLine) });
  return { logger, lines };
}
