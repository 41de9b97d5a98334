import type { LookupAddress } from "node:dns";
import { describe, expect, it } from "vitest";
import {
  BlockedAddressError,
  blockedAddressReason,
  blockedHostReason,
  checkResolvedHost,
  guardedLookup,
  type Resolver,
} from "../../src/builtin/address-guard.js";

describe("blockedAddressReason", () => {
  it.each([
    // IPv4 special ranges
    ["10.0.0.1", "a private address"],
    ["10.255.255.255", "a private address"],
    ["172.16.0.1", "a private address"],
    ["172.31.255.254", "a private address"],
    ["192.168.1.1", "a private address"],
    ["127.0.0.1", "a loopback address"],
    ["127.255.255.254", "a loopback address"],
    ["169.254.1.1", "a link-local address"],
    ["169.254.169.254", "a cloud metadata address"],
    ["169.254.170.2", "a cloud metadata address"],
    ["100.100.100.200", "a cloud metadata address"],
    ["192.0.0.192", "a cloud metadata address"],
    ["100.64.0.1", "a carrier-grade NAT address (100.64.0.0/10)"],
    ["100.127.255.254", "a carrier-grade NAT address (100.64.0.0/10)"],
    ["198.18.0.1", "a benchmarking address (198.18.0.0/15)"],
    ["198.19.255.254", "a benchmarking address (198.18.0.0/15)"],
    ["224.0.0.1", "a multicast address"],
    ["239.255.255.250", "a multicast address"],
    ["0.0.0.0", "an unspecified address (0.0.0.0/8)"],
    ["0.1.2.3", "an unspecified address (0.0.0.0/8)"],
    ["255.255.255.255", "the broadcast address"],
    ["240.0.0.1", "a reserved address"],
    ["192.0.2.1", "a reserved address"],
    ["198.51.100.1", "a reserved address"],
    ["203.0.113.1", "a reserved address"],
    ["192.88.99.1", "a reserved address"],
    // IPv6 special ranges
    ["::", "the unspecified address (::)"],
    ["::1", "a loopback address"],
    ["fe80::1", "a link-local address"],
    ["fe80::1%eth0", "a link-local address"],
    ["febf::1", "a link-local address"],
    ["fc00::1", "a unique-local address (fc00::/7)"],
    ["fd12:3456::1", "a unique-local address (fc00::/7)"],
    ["fd00:ec2::254", "a cloud metadata address"],
    ["ff02::1", "a multicast address"],
    ["fec0::1", "a special-purpose address (deprecatedSiteLocal)"],
    ["100::1", "a special-purpose address (discard)"],
    ["2001:db8::1", "a reserved address"],
    ["3fff::1", "a reserved address"],
    ["2001:2::1", "a special-purpose address (benchmarking)"],
    ["::7f00:1", "not a global unicast address (outside 2000::/3)"],
    ["::8.8.8.8", "not a global unicast address (outside 2000::/3)"], // IPv4-compatible, not IPv4-mapped
    ["::127.0.0.1", "not a global unicast address (outside 2000::/3)"],
    ["4000::1", "not a global unicast address (outside 2000::/3)"],
    // IPv6 forms that carry an IPv4 address: judged by it
    ["::ffff:127.0.0.1", "an IPv4-mapped form of 127.0.0.1, a loopback address"],
    ["::ffff:7f00:1", "an IPv4-mapped form of 127.0.0.1, a loopback address"],
    ["::ffff:a9fe:a9fe", "an IPv4-mapped form of 169.254.169.254, a cloud metadata address"],
    ["::ffff:0:a00:1", "an IPv4-translated (SIIT) form of 10.0.0.1, a private address"],
    ["64:ff9b::127.0.0.1", "a NAT64 form of 127.0.0.1, a loopback address"],
    ["64:ff9b::c0a8:101", "a NAT64 form of 192.168.1.1, a private address"],
    ["64:ff9b:1::1", "a local-use NAT64 address (64:ff9b:1::/48)"],
    ["2002:7f00:1::1", "a 6to4 form of 127.0.0.1, a loopback address"],
    ["2002:a00:1::", "a 6to4 form of 10.0.0.1, a private address"],
    ["2002:a9fe:a9fe::1", "a 6to4 form of 169.254.169.254, a cloud metadata address"],
    ["2606:4700::5efe:7f00:1", "an ISATAP form of 127.0.0.1, a loopback address"],
    ["2606:4700::200:5efe:10.1.2.3", "an ISATAP form of 10.1.2.3, a private address"],
    ["2001:db8:1234::5efe:127.0.0.1", "a reserved address"], // picoclaw #3074's example
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "a Teredo address (2001::/32)"],
    ["2001::1", "a Teredo address (2001::/32)"],
    // not an address at all
    ["localhost", "not an IP address"],
    ["", "not an IP address"],
  ])("refuses %s: %s", (address, reason) => {
    expect(blockedAddressReason(address)).toBe(reason);
  });

  it.each([
    "8.8.8.8",
    "1.1.1.1",
    "93.184.216.34",
    "172.32.0.1", // just past 172.16/12
    "100.128.0.1", // just past 100.64/10
    "198.20.0.1", // just past 198.18/15
    "169.253.255.255",
    "2606:4700:4700::1111",
    "2a00:1450:4001:82a::200e",
    "::ffff:8.8.8.8", // IPv4-mapped public
    "64:ff9b::8.8.8.8", // NAT64 of a public address
    "2002:808:808::1", // 6to4 of a public address
    "2606:4700::5efe:808:808", // ISATAP of a public address
  ])("allows the public address %s", (address) => {
    expect(blockedAddressReason(address)).toBeUndefined();
  });
});

describe("blockedHostReason", () => {
  // What URL.hostname makes of numeric spellings: the parser normalises them before the guard sees them.
  it.each([
    ["http://2130706433/", "127.0.0.1 is a loopback address"],
    ["http://0x7f.1/", "127.0.0.1 is a loopback address"],
    ["http://0x7f000001/", "127.0.0.1 is a loopback address"],
    ["http://0177.0.0.1/", "127.0.0.1 is a loopback address"],
    ["http://127.1/", "127.0.0.1 is a loopback address"],
    ["http://127.0.0.1./", "127.0.0.1 is a loopback address"],
    ["http://017700000001/", "127.0.0.1 is a loopback address"],
    ["http://0/", "0.0.0.0 is an unspecified address (0.0.0.0/8)"],
    ["http://[::]/", ":: is the unspecified address (::)"],
    ["http://[::1]/", "::1 is a loopback address"],
    ["http://[::ffff:7f00:1]/", "::ffff:7f00:1 is an IPv4-mapped form of 127.0.0.1, a loopback address"],
    ["http://[::ffff:127.0.0.1]/", "::ffff:7f00:1 is an IPv4-mapped form of 127.0.0.1, a loopback address"],
    ["http://[0:0:0:0:0:ffff:7f00:0001]/", "::ffff:7f00:1 is an IPv4-mapped form of 127.0.0.1, a loopback address"],
    ["http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a cloud metadata address"],
    ["http://[fd00:ec2::254]/", "fd00:ec2::254 is a cloud metadata address"],
    ["http://metadata.google.internal/", "metadata.google.internal is a cloud metadata host name"],
    ["http://METADATA.Google.Internal./", "metadata.google.internal is a cloud metadata host name"],
    ["http://metadata/", "metadata is a cloud metadata host name"],
    ["http://instance-data.ec2.internal/", "instance-data.ec2.internal is a cloud metadata host name"],
  ])("%s → %s", (url, reason) => {
    expect(blockedHostReason(new URL(url).hostname)).toBe(reason);
  });

  it.each(["example.com", "localhost", "8.8.8.8", "[2606:4700:4700::1111]"])(
    "lets %s through to the lookup (names) or the request (public addresses)",
    (hostname) => {
      expect(blockedHostReason(hostname)).toBeUndefined();
    },
  );
});

/** A resolver that answers from a script, one answer per call (the last answer repeats). */
function scriptedResolver(...answers: LookupAddress[][]): Resolver & { calls: number } {
  const resolver = Object.assign(
    (
      _hostname: string,
      _options: unknown,
      callback: (error: NodeJS.ErrnoException | null, a: LookupAddress[]) => void,
    ) => {
      const answer = answers[Math.min(resolver.calls, answers.length - 1)] ?? [];
      resolver.calls++;
      queueMicrotask(() => callback(null, answer));
    },
    { calls: 0 },
  );
  return resolver;
}

const PUBLIC: LookupAddress = { address: "93.184.216.34", family: 4 };
const LOOPBACK: LookupAddress = { address: "127.0.0.1", family: 4 };
const LOOPBACK6: LookupAddress = { address: "::1", family: 6 };

function lookupOnce(
  lookup: ReturnType<typeof guardedLookup>,
  options: { all?: boolean },
): Promise<{ error: NodeJS.ErrnoException | null; address: unknown; family: unknown }> {
  return new Promise((resolve) => {
    lookup("rebind.test", options, (error, address, family) => resolve({ error, address, family }));
  });
}

describe("guardedLookup (the connect-time check)", () => {
  it("passes a public answer through, in both callback shapes", async () => {
    const lookup = guardedLookup(scriptedResolver([PUBLIC]));
    expect(await lookupOnce(lookup, {})).toEqual({ error: null, address: "93.184.216.34", family: 4 });
    expect(await lookupOnce(lookup, { all: true })).toEqual({ error: null, address: [PUBLIC], family: undefined });
  });

  it("refuses a name that answers with a private address on the connection's own lookup (DNS rebinding)", async () => {
    // First answer public (what a check before the request would see), then loopback.
    const resolver = scriptedResolver([PUBLIC], [LOOPBACK]);
    const lookup = guardedLookup(resolver);
    expect((await lookupOnce(lookup, {})).error).toBeNull();
    const { error } = await lookupOnce(lookup, {});
    expect(error).toBeInstanceOf(BlockedAddressError);
    expect(error?.message).toBe("rebind.test resolves to 127.0.0.1, a loopback address");
    expect(error?.code).toBe("ERR_WEB_FETCH_BLOCKED_ADDRESS");
    expect(resolver.calls).toBe(2);
  });

  it.each([
    ["a private address among public ones", [PUBLIC, { address: "10.0.0.1", family: 4 }]],
    ["an IPv6 loopback beside a public IPv4", [PUBLIC, LOOPBACK6]],
    ["an IPv4-mapped loopback", [{ address: "::ffff:127.0.0.1", family: 6 }]],
  ])("refuses %s (every address is checked, not only the first)", async (_name, answer) => {
    const { error } = await lookupOnce(guardedLookup(scriptedResolver(answer)), { all: true });
    expect(error).toBeInstanceOf(BlockedAddressError);
  });

  it("refuses an empty answer", async () => {
    const { error } = await lookupOnce(guardedLookup(scriptedResolver([])), {});
    expect(error?.message).toBe("rebind.test resolves to no address");
  });

  it("passes a resolver's own error through", async () => {
    const failure = Object.assign(new Error("getaddrinfo ENOTFOUND rebind.test"), { code: "ENOTFOUND" });
    const lookup = guardedLookup((_hostname, _options, callback) => callback(failure, []));
    expect((await lookupOnce(lookup, {})).error).toBe(failure);
  });

  it("asks the resolver for every address", async () => {
    const seen: unknown[] = [];
    const lookup = guardedLookup((_hostname, options, callback) => {
      seen.push(options);
      callback(null, [PUBLIC]);
    });
    await lookupOnce(lookup, { all: false });
    expect(seen).toEqual([{ all: true }]);
  });

  it("refuses localhost through the system resolver (no network: /etc/hosts)", async () => {
    const { error } = await new Promise<{ error: NodeJS.ErrnoException | null }>((resolve) =>
      guardedLookup()("localhost", {}, (e) => resolve({ error: e })),
    );
    expect(error).toBeInstanceOf(BlockedAddressError);
    expect(error?.message).toMatch(/^localhost resolves to (127\.0\.0\.1|::1), a loopback address$/);
  });
});

describe("checkResolvedHost (the check before a caller's fetch)", () => {
  it("resolves for a public answer and rejects for a private one", async () => {
    await expect(checkResolvedHost("a.test", scriptedResolver([PUBLIC]))).resolves.toBeUndefined();
    await expect(checkResolvedHost("a.test", scriptedResolver([LOOPBACK]))).rejects.toThrow(
      "a.test resolves to 127.0.0.1, a loopback address",
    );
  });
});
