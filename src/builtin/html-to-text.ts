import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { raceAbort } from "../internal/abort.js";
import { isRecord } from "../internal/describe.js";

// The HTML converter runs in a worker thread: html-to-text's parser is quadratic in the nesting
// depth (200,000 nested <div>s — 2 MB — take about a minute), and a page is chosen by whoever the
// model fetches. In a worker it cannot block the event loop, it is stopped at the call's timeout
// or abort, and its heap is bounded. Its console is silenced (html-to-text may warn).
// Only as much of the text as can be shown is posted back, with its length: a page of nested lists
// indents every line by every list's prefix (a 103 KB page became 40 M characters), and receiving
// that string cost the event loop half a second and the process hundreds of MB.
const CONVERTER_SOURCE = `"use strict";
const { parentPort, workerData } = require("node:worker_threads");
for (const level of ["log", "info", "warn", "error", "debug", "trace"]) console[level] = () => {};
const { convert } = require(workerData.modulePath);
const text = convert(workerData.html, workerData.options);
const max = workerData.maxChars;
parentPort.postMessage({ text: text.length > max ? text.slice(0, max) : text, length: text.length, blank: !/\\S/.test(text) });
`;

/** The HTML converter's heap, so a hostile page cannot exhaust the process's memory. */
const CONVERTER_HEAP_MB = 256;

let converterPath: string | undefined;

/** HTML converters running at once in this process, whatever the number of tools and calls. */
export const MAX_CONVERTERS = 2;
let converters = 0;
interface ConverterWaiter {
  start(): void;
  started: boolean;
  abandoned: boolean;
}
const converterQueue: ConverterWaiter[] = [];

/** Converters running now (for tests). @internal */
export function runningConverters(): number {
  return converters;
}

function releaseConverter(): void {
  for (let next = converterQueue.shift(); next !== undefined; next = converterQueue.shift()) {
    if (!next.abandoned) {
      next.start(); // the slot passes on: the count stays
      return;
    }
  }
  converters--;
}

/** What {@link htmlToText} gives back of a page. */
export interface ConvertedHtml {
  /** The first `maxChars` characters of the text (all of it when it is no longer). */
  readonly text: string;
  /** Characters of the whole text. */
  readonly length: number;
  /** `true` when the whole text is whitespace (or empty). */
  readonly blank: boolean;
}

/**
 * HTML as readable text (html-to-text: block structure kept, links as `text [href]`, no word
 * wrap), in a worker; at most {@link MAX_CONVERTERS} at once (each may hold a 256 MiB heap), the
 * others wait their turn or the call's end. Only the first `maxChars` characters leave the worker.
 */
export async function htmlToText(
  html: string,
  signal: AbortSignal,
  maxChars: number = Number.MAX_SAFE_INTEGER,
): Promise<ConvertedHtml> {
  if (converters < MAX_CONVERTERS) converters++;
  else {
    const waiter: ConverterWaiter = { start: () => {}, started: false, abandoned: false };
    const turn = new Promise<void>((resolve) => {
      waiter.start = () => {
        waiter.started = true;
        resolve();
      };
    });
    converterQueue.push(waiter);
    try {
      await raceAbort(turn, signal);
    } catch (error) {
      if (waiter.started) releaseConverter();
      else waiter.abandoned = true;
      throw error;
    }
  }
  try {
    return await convertInWorker(html, signal, maxChars);
  } finally {
    releaseConverter();
  }
}

async function convertInWorker(html: string, signal: AbortSignal, maxChars: number): Promise<ConvertedHtml> {
  converterPath ??= createRequire(import.meta.url).resolve("html-to-text");
  const worker = new Worker(CONVERTER_SOURCE, {
    eval: true,
    workerData: {
      modulePath: converterPath,
      html,
      maxChars,
      options: { wordwrap: false, limits: { maxInputLength: Number.MAX_SAFE_INTEGER } },
    },
    // Nothing of the process's: no flags, no environment (tokens), no console.
    execArgv: [],
    env: {},
    stdout: true,
    stderr: true,
    resourceLimits: { maxOldGenerationSizeMb: CONVERTER_HEAP_MB },
  });
  worker.stdout.resume();
  worker.stderr.resume();
  const converted = new Promise<ConvertedHtml>((resolve, reject) => {
    worker.once("message", (message: unknown) => {
      // Only our worker posts here; a message of another shape would be empty text.
      const { text, length, blank } = isRecord(message) ? message : {};
      resolve(
        typeof text === "string" && typeof length === "number" && typeof blank === "boolean"
          ? { text: text.slice(0, maxChars), length, blank }
          : { text: "", length: 0, blank: true },
      );
    });
    worker.on("error", reject);
    worker.once("exit", (code) => reject(new Error(`the HTML converter stopped (exit code ${code})`)));
  });
  try {
    return await raceAbort(converted, signal);
  } finally {
    worker.terminate().catch(() => {});
  }
}
