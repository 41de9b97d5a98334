import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOptions } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";

// web_fetch's address policy (docs/builtin-tools.md#web_fetch). It is an allow-list: an address
// is fetched only when ipaddr.js classifies it as global unicast (IPv4) or it lies in 2000::/3 and
// is global unicast (IPv6). Everything else — private, loopback, link-local, CGNAT, benchmark,
// multicast, reserved, documentation … — is refused, so a range nobody listed (picoclaw #3077)
// fails closed. IPv6 forms that carry an IPv4 address (IPv4-mapped, SIIT, NAT64, 6to4, ISATAP)
// are judged by the IPv4 address they carry (picoclaw #3074); Teredo is refused whole.

/** Cloud metadata endpoints, named as such in refusals (their ranges are refused anyway). */
const METADATA_ADDRESSES: ReadonlySet<string> = new Set([
  "169.254.169.254", // AWS, GCP, Azure, OpenStack, DigitalOcean …
  "169.254.170.2", // AWS ECS task metadata
  "169.254.170.23", // AWS EKS pod identity
  "100.100.100.200", // Alibaba Cloud
  "192.0.0.192", // Oracle Cloud
  "fd00:ec2::254", // AWS IMDS over IPv6
  "fd00:ec2::23", // AWS EKS pod identity over IPv6
]);

/**
 * Host names refused before any lookup: cloud metadata services reachable by name. Defence in
 * depth only — they resolve to link-local addresses, which the connect-time check refuses anyway.
 */
export const METADATA_HOSTNAMES: ReadonlySet<string> = new Set([
  "metadata",
  "metadata.google.internal",
  "metadata.goog",
  "instance-data",
  "instance-data.ec2.internal",
]);

const IPV4_RANGES: ReadonlyMap<string, string> = new Map([
  ["unspecified", "an unspecified address (0.0.0.0/8)"],
  ["broadcast", "the broadcast address"],
  ["multicast", "a multicast address"],
  ["linkLocal", "a link-local address"],
  ["loopback", "a loopback address"],
  ["carrierGradeNat", "a carrier-grade NAT address (100.64.0.0/10)"],
  ["private", "a private address"],
  ["reserved", "a reserved address"],
]);

const IPV6_RANGES: ReadonlyMap<string, string> = new Map([
  ["unspecified", "the unspecified address (::)"],
  ["linkLocal", "a link-local address"],
  ["multicast", "a multicast address"],
  ["loopback", "a loopback address"],
  ["uniqueLocal", "a unique-local address (fc00::/7)"],
  ["teredo", "a Teredo address (2001::/32)"],
  ["reserved", "a reserved address"],
]);

const BENCHMARK_V4 = ipaddr.parseCIDR("198.18.0.0/15");
const GLOBAL_V6 = ipaddr.parseCIDR("2000::/3");
const NAT64_V6 = ipaddr.parseCIDR("64:ff9b::/96");

function ipv4Reason(address: ipaddr.IPv4): string | undefined {
  const text = address.toString();
  if (METADATA_ADDRESSES.has(text)) return "a cloud metadata address";
  const range = address.range();
  if (range === "unicast") return undefined;
  if (address.match(BENCHMARK_V4)) return "a benchmarking address (198.18.0.0/15)";
  return IPV4_RANGES.get(range) ?? `a special-purpose address (${range})`;
}

function ipv4From(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/** The refusal of an IPv6 address that carries `inner`, or `undefined` when `inner` is public. */
function wrapped(form: string, inner: ipaddr.IPv4): string | undefined {
  const reason = ipv4Reason(inner);
  return reason === undefined ? undefined : `${form} of ${inner.toString()}, ${reason}`;
}

function ipv6Reason(address: ipaddr.IPv6): string | undefined {
  const text = address.toString();
  if (METADATA_ADDRESSES.has(text)) return "a cloud metadata address";
  const parts = address.parts;
  const last = ipv4From(parts[6] ?? 0, parts[7] ?? 0);
  const range = address.range();
  if (range === "ipv4Mapped") return wrapped("an IPv4-mapped form", last);
  if (range === "rfc6145") return wrapped("an IPv4-translated (SIIT) form", last);
  if (range === "rfc6052") {
    // The well-known NAT64 prefix carries the IPv4 address in its last 32 bits; the local-use
    // prefix 64:ff9b:1::/48 reaches whatever the local translator is set up for.
    return address.match(NAT64_V6) ? wrapped("a NAT64 form", last) : "a local-use NAT64 address (64:ff9b:1::/48)";
  }
  if (range === "6to4") return wrapped("a 6to4 form", ipv4From(parts[1] ?? 0, parts[2] ?? 0));
  if (range !== "unicast") return IPV6_RANGES.get(range) ?? `a special-purpose address (${range})`;
  if (!address.match(GLOBAL_V6)) return "not a global unicast address (outside 2000::/3)";
  // ISATAP interface identifier: 0000:5efe or 0200:5efe (either u/g bit), then the IPv4 address.
  if (((parts[4] ?? 0) & 0xfcff) === 0 && parts[5] === 0x5efe) return wrapped("an ISATAP form", last);
  return undefined;
}

/**
 * Why `address` (an IPv4 or IPv6 literal, without brackets) may not be fetched — e.g. `"a
 * loopback address"`, `"an IPv4-mapped form of 127.0.0.1, a loopback address"` — or `undefined`
 * when it is a public address. A text that is not an IP address is refused too.
 */
export function blockedAddressReason(address: string): string | undefined {
  // A zone id (`fe80::1%eth0`) names an interface, not an address.
  const bare = address.replace(/%.*$/s, "");
  const family = isIP(bare);
  if (family === 4) return ipv4Reason(ipaddr.IPv4.parse(bare));
  if (family !== 6) return "not an IP address";
  // Through the URL parser's canonical form first: ipaddr.js reads an IPv4-compatible `::8.8.8.8`
  // as the IPv4-mapped `::ffff:8.8.8.8`, which is another address.
  try {
    return ipv6Reason(ipaddr.IPv6.parse(new URL(`http://[${bare}]`).hostname.slice(1, -1)));
  } catch {
    return "not an IP address";
  }
}

/** `hostname` as `URL.hostname` spells it, without the brackets of an IPv6 literal. */
export function bareHostname(hostname: string): string {
  return hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
}

/**
 * The refusal of a URL's host before any lookup — `"127.0.0.1 is a loopback address"`,
 * `"metadata.google.internal is a cloud metadata host name"` — or `undefined` when the host may be
 * looked up (a name) or fetched (a public address). `hostname` is `URL.hostname` (already
 * lower-cased, numeric IPv4 spellings normalised, IPv6 in brackets).
 */
export function blockedHostReason(hostname: string): string | undefined {
  const bare = bareHostname(hostname);
  if (isIP(bare) !== 0) {
    const reason = blockedAddressReason(bare);
    return reason === undefined ? undefined : `${bare} is ${reason}`;
  }
  const name = bare.toLowerCase().replace(/\.+$/, "");
  if (name === "") return "the host name is empty";
  if (METADATA_HOSTNAMES.has(name)) return `${name} is a cloud metadata host name`;
  return undefined;
}

/** A lookup result that the address policy refuses; the message says which address and why. */
export class BlockedAddressError extends Error {
  /** `ERR_WEB_FETCH_BLOCKED_ADDRESS`, so a caller can tell it from DNS failures. */
  readonly code = "ERR_WEB_FETCH_BLOCKED_ADDRESS";
  override readonly name = "BlockedAddressError";
}

/**
 * The refusal of a name's resolved addresses: the first one the policy refuses (`"localhost
 * resolves to 127.0.0.1, a loopback address"`), or `undefined` when every one is public. A name
 * that resolves to no address is refused too. All are checked, not only the first, because the
 * connection may use any of them (Happy Eyeballs tries several).
 */
export function blockedResolutionReason(hostname: string, addresses: readonly LookupAddress[]): string | undefined {
  if (addresses.length === 0) return `${hostname} resolves to no address`;
  for (const { address } of addresses) {
    const reason = blockedAddressReason(address);
    if (reason !== undefined) return `${hostname} resolves to ${address}, ${reason}`;
  }
  return undefined;
}

/** The resolver a guarded lookup asks: `dns.lookup` with `all: true`, or a replacement of that shape. */
export type Resolver = (
  hostname: string,
  options: LookupAllOptions,
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

const systemResolver: Resolver = (hostname, options, callback) => dnsLookup(hostname, options, callback);

/**
 * A `lookup` for `http.request` / `net.connect` that resolves every address of the name and fails
 * the connection with a {@link BlockedAddressError} when any of them is refused — at connect time,
 * for the very addresses the socket will use, so a name that changes its answer between a check
 * and the connection (DNS rebinding) cannot slip through. Answers in both callback shapes (`all`
 * or a single address).
 */
export function guardedLookup(resolver: Resolver = systemResolver): LookupFunction {
  return (hostname: string, options: LookupOptions, callback) => {
    resolver(hostname, { ...options, all: true }, (error, addresses) => {
      if (error !== null) {
        callback(error, "", 0);
        return;
      }
      const reason = blockedResolutionReason(hostname, addresses);
      if (reason !== undefined) {
        callback(new BlockedAddressError(reason), "", 0);
        return;
      }
      if (options.all === true) callback(null, addresses);
      else {
        const first = addresses[0] as LookupAddress;
        callback(null, first.address, first.family);
      }
    });
  };
}

/** Resolves `hostname` with `resolver` and rejects with a {@link BlockedAddressError} when the policy refuses an address. */
export function checkResolvedHost(hostname: string, resolver: Resolver = systemResolver): Promise<void> {
  return new Promise((resolve, reject) => {
    resolver(hostname, { all: true }, (error, addresses) => {
      if (error !== null) reject(error);
      else {
        const reason = blockedResolutionReason(hostname, addresses);
        if (reason === undefined) resolve();
        else reject(new BlockedAddressError(reason));
      }
    });
  });
}
