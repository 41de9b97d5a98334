import { optionError } from "../internal/options.js";
import { blockedHostReason } from "./address-guard.js";

/** An `allowHosts` entry of `createWebFetchTool`, parsed. */
export interface AllowedHost {
  readonly hostname: string;
  /** `undefined`: every port. */
  readonly port: string | undefined;
}

/** An `allowHosts` entry as hostname (as `URL.hostname` spells it) and optional port, or `undefined` when it is not `host[:port]`. */
function parseAllowedHost(entry: string): AllowedHost | undefined {
  if (entry === "" || /[\s/?#@\\]/.test(entry)) return undefined;
  let url: URL;
  try {
    url = new URL(`http://${entry}`);
  } catch {
    return undefined;
  }
  // URL drops a default port (":80"); read the port from the entry itself.
  const port = /:(\d+)$/.exec(entry)?.[1];
  return { hostname: url.hostname, port: port === undefined ? undefined : String(Number(port)) };
}

/** The `allowHosts` option checked and parsed; a `TypeError` naming `where` for a bad entry. */
export function checkAllowHosts(where: string, value: unknown): AllowedHost[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw optionError(where, "allowHosts", "an array of host or host:port strings", value);
  return value.map((entry: unknown, index) => {
    const parsed = typeof entry === "string" ? parseAllowedHost(entry) : undefined;
    if (parsed === undefined) {
      throw optionError(where, `allowHosts[${index}]`, 'a host or host:port ("127.0.0.1:8080", "[::1]")', entry);
    }
    return parsed;
  });
}

/** Whether `url`'s host (and port, the scheme's default when it has none) is one of `allowHosts`. */
export function isAllowedHost(allowHosts: readonly AllowedHost[], url: URL): boolean {
  const port = url.port !== "" ? url.port : url.protocol === "https:" ? "443" : "80";
  return allowHosts.some(
    (allowed) => allowed.hostname === url.hostname && (allowed.port === undefined || allowed.port === port),
  );
}

/**
 * The Fetch standard's "bad ports" (https://fetch.spec.whatwg.org/#port-blocking), which browsers and
 * undici's fetch refuse too: an HTTP request sent there can speak to another protocol (SMTP, IRC,
 * SSH …) — cross-protocol request forgery on a public host.
 */
const BAD_PORTS: ReadonlySet<number> = new Set([
  0, 1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110,
  111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532,
  540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061,
  6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

/** Why `url` may not be requested (scheme, credentials, port, host), or `undefined`. */
export function urlRefusal(allowHosts: readonly AllowedHost[], url: URL): string | undefined {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return `only http and https URLs are fetched, not ${url.protocol.slice(0, 40)}`;
  }
  // `http://trusted.example@evil.example/` reads as one host and goes to another; and the model has
  // no business sending credentials it read somewhere.
  if (url.username !== "" || url.password !== "") return "URLs with credentials (user:password@) are not fetched";
  if (url.port !== "" && BAD_PORTS.has(Number(url.port))) {
    return `port ${url.port} is refused (it serves another protocol than HTTP)`;
  }
  if (isAllowedHost(allowHosts, url)) return undefined;
  return blockedHostReason(url.hostname);
}
