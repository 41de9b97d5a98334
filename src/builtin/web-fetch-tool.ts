import { failure, isValidTimeout, TIMEOUT_EXPECTATION } from "../execute-tool-call.js";
import { subscribeAbort } from "../internal/abort.js";
import { isRecord, showValue } from "../internal/describe.js";
import { checkCount, optionError } from "../internal/options.js";
import type { Tool, ToolContext } from "../tool.js";
import { errorResult, type ToolResult } from "../tool-result.js";
import { BlockedAddressError } from "./address-guard.js";
import { readResponse } from "./read-response.js";
import { type AllowedHost, checkAllowHosts, isAllowedHost, urlRefusal } from "./url-guard.js";
import { type Fetched, FetchProblem, fetchWithFunction, fetchWithNode, networkProblem } from "./web-request.js";

/** Options of {@link createWebFetchTool}. */
export interface WebFetchToolOptions {
  /**
   * Most characters of content the model reads per call (after HTML → text); the model's
   * `max_chars` may ask for fewer, never more. Longer content is cut with a marker. @default 50000
   */
  maxChars?: number;
  /** Most bytes of a response body that are read; the rest is not downloaded. @default 10485760 (10 MiB) */
  maxBytes?: number;
  /**
   * Time for the whole call — every redirect, the body and the HTML conversion — in milliseconds;
   * `Infinity` for none. The call's own signal (`context.signal`) aborts it too. @default 30000
   */
  timeoutMs?: number;
  /**
   * Hosts exempt from the address guard, for tests and intranets: exact `host` or `host:port`
   * strings (`"127.0.0.1:8080"`, `"wiki.corp"`, `"[::1]:3000"`); without a port every port of that
   * host is exempt. No wildcards, no suffixes. A redirect from an exempt host to another host is
   * checked again. @default []
   */
  allowHosts?: string[];
  /**
   * A `fetch` to send the requests with instead of node:http/node:https. The URL checks and the
   * redirect checks still apply (requests use `redirect: "manual"`) and names are resolved and
   * checked before each request, but the connection itself is out of reach: a name that resolves
   * differently when `fetch` connects (DNS rebinding) is not caught, and a proxy your `fetch` uses
   * is its own business. See docs/builtin-tools.md#web_fetch.
   */
  fetch?: typeof fetch;
}

const NAME = "web_fetch";
const WHERE = "createWebFetchTool";
const DEFAULT_MAX_CHARS = 50_000;
const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 30_000;
/** Redirects followed per call; one more is an error. */
const MAX_REDIRECTS = 5;
/** Longest URL the model may send (and the schema's `maxLength`). */
const MAX_URL_CHARS = 8_192;
const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

interface Settings {
  readonly maxChars: number;
  readonly maxBytes: number;
  readonly timeoutMs: number;
  readonly allowHosts: readonly AllowedHost[];
  readonly fetch: typeof fetch | undefined;
}

/**
 * The `web_fetch` tool (picoclaw's `WebFetchTool`): `web_fetch { url, max_chars? }` fetches an
 * http(s) URL with GET and returns its content for the model to read — HTML as readable text,
 * JSON pretty-printed, other text as it is — after a short header (final URL, status, content
 * type). Private, loopback, link-local and other non-public addresses are refused before the
 * request, at connect time and on every redirect; see docs/builtin-tools.md#web_fetch for the whole
 * policy and its limits. Every refusal and failure is an error result.
 * @throws TypeError when an option has the wrong type or value
 * @example
 * ```ts
 * registry.register(createWebFetchTool({ maxChars: 20_000, timeoutMs: 10_000 }));
 * ```
 */
export function createWebFetchTool(options: WebFetchToolOptions = {}): Tool {
  const settings = webFetchSettings(options);
  return Object.freeze({
    name: NAME,
    description:
      "Fetch a public http(s) URL and read its content: HTML as readable text, JSON pretty-printed, " +
      "other text as is. Private and local network addresses are refused.",
    parameters: {
      type: "object",
      properties: {
        url: { type: "string", maxLength: MAX_URL_CHARS, description: "The http or https URL to fetch" },
        max_chars: {
          type: "integer",
          minimum: 1,
          description: `Optional: most characters of content to return (at most ${settings.maxChars})`,
        },
      },
      required: ["url"],
      additionalProperties: false,
    },
    execute: (args: Record<string, unknown>, context: ToolContext) => webFetch(settings, args, context),
  });
}

function webFetchSettings(options: WebFetchToolOptions): Settings {
  if (!isRecord(options)) throw optionError(WHERE, "options", "an object", options);
  const { timeoutMs = DEFAULT_TIMEOUT_MS } = options;
  if (!isValidTimeout(timeoutMs)) throw optionError(WHERE, "timeoutMs", TIMEOUT_EXPECTATION, timeoutMs);
  const fetchFunction: unknown = options.fetch;
  if (fetchFunction !== undefined && typeof fetchFunction !== "function") {
    throw optionError(WHERE, "fetch", "a function", fetchFunction);
  }
  return {
    maxChars: checkCount(WHERE, "maxChars", options.maxChars, DEFAULT_MAX_CHARS),
    maxBytes: checkCount(WHERE, "maxBytes", options.maxBytes, DEFAULT_MAX_BYTES),
    timeoutMs,
    allowHosts: checkAllowHosts(WHERE, options.allowHosts),
    fetch: fetchFunction as typeof fetch | undefined,
  };
}

async function webFetch(settings: Settings, args: Record<string, unknown>, context: ToolContext): Promise<ToolResult> {
  const { url, max_chars: maxChars } = args;
  if (typeof url !== "string" || url.trim() === "") return errorResult("url must be a non-empty string");
  if (url.length > MAX_URL_CHARS) return errorResult(`url is longer than ${MAX_URL_CHARS} characters`);
  if (maxChars !== undefined && !(typeof maxChars === "number" && Number.isSafeInteger(maxChars) && maxChars > 0)) {
    return errorResult(`max_chars must be an integer > 0, got ${showValue(maxChars)}`);
  }
  const limit = Math.min(maxChars ?? settings.maxChars, settings.maxChars);
  let start: URL;
  try {
    start = new URL(url);
  } catch {
    return errorResult(`${showValue(url)} is not a valid URL`);
  }
  const refusal = urlRefusal(settings.allowHosts, start);
  if (refusal !== undefined) return refused(`web_fetch refused ${showValue(url)}: ${refusal}`);
  // One controller for the whole call (every hop, the body, the HTML conversion), aborted by the
  // call's signal or the timeout. A timer and a subscription of our own, both ended below:
  // AbortSignal.any/timeout signals are held weakly in Node 20 and may never fire.
  const callSignal = context.signal;
  const controller = new AbortController();
  let timedOut = false;
  const timer =
    settings.timeoutMs === Number.POSITIVE_INFINITY
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          controller.abort(new DOMException(`web_fetch timed out after ${settings.timeoutMs} ms`, "TimeoutError"));
        }, settings.timeoutMs);
  let unsubscribe = () => {};
  if (callSignal.aborted) controller.abort(callSignal.reason);
  else unsubscribe = subscribeAbort(callSignal, (reason) => controller.abort(reason));
  const visited = { url: start };
  try {
    return await fetchFollowing(settings, visited, limit, controller.signal);
  } catch (error) {
    const where = showValue(visited.url.href);
    if (timedOut) return failure(NAME, "timeout", `web_fetch timed out after ${settings.timeoutMs} ms`, error);
    if (controller.signal.aborted) return failure(NAME, "aborted", "web_fetch was aborted", callSignal.reason);
    if (error instanceof BlockedAddressError) {
      return failure(NAME, "tool_failed", `web_fetch refused ${where}: ${error.message}`, error);
    }
    if (error instanceof FetchProblem) return failure(NAME, "tool_failed", error.message, error.cause);
    return failure(NAME, "tool_failed", `web_fetch could not fetch ${where}: ${networkProblem(error)}`, error);
  } finally {
    clearTimeout(timer);
    unsubscribe();
  }
}

/** Fetches `visited.url`, following redirects (each re-checked); `visited.url` is the URL of the last request. */
async function fetchFollowing(
  settings: Settings,
  visited: { url: URL },
  limit: number,
  signal: AbortSignal,
): Promise<ToolResult> {
  for (let redirects = 0; ; redirects++) {
    const current = visited.url;
    const response = await fetchOnce(settings, current, signal);
    const location = REDIRECT_STATUSES.has(response.status) ? response.location : undefined;
    if (location === undefined) return await readResponse(settings.maxBytes, current, response, limit, signal);
    response.cancel();
    if (redirects === MAX_REDIRECTS) {
      return errorResult(`web_fetch stopped after ${MAX_REDIRECTS} redirects (last at ${showValue(current.href)})`);
    }
    let next: URL;
    try {
      next = new URL(location, current);
    } catch {
      return errorResult(`web_fetch: ${showValue(current.href)} redirects to an invalid URL ${showValue(location)}`);
    }
    const refusal = urlRefusal(settings.allowHosts, next);
    if (refusal !== undefined) {
      return refused(
        `web_fetch refused the redirect from ${showValue(current.href)} to ${showValue(next.href)}: ${refusal}`,
      );
    }
    visited.url = next;
  }
}

/** An error result for a refusal decided before any request. */
function refused(message: string): ToolResult {
  return failure(NAME, "tool_failed", message);
}

/** One request, by node:http(s) with the connect-time guard, or by the caller's `fetch`. */
function fetchOnce(settings: Settings, url: URL, signal: AbortSignal): Promise<Fetched> {
  const exempt = isAllowedHost(settings.allowHosts, url);
  if (settings.fetch !== undefined) return fetchWithFunction(settings.fetch, url, exempt, signal);
  return fetchWithNode(url, exempt, signal);
}
