import { describe, expect, it } from "vitest";
import { mcpToolNames } from "../../src/mcp/mcp-tool-name.js";

const NAME_PATTERN = /^[a-z0-9_-]{1,64}$/;
const free = () => false;

function names(serverName: string, toolNames: string[], isTaken: (name: string) => boolean = free) {
  return Object.fromEntries(mcpToolNames(serverName, toolNames, isTaken));
}

describe("mcpToolNames", () => {
  it.each([
    ["fs", "read_file", "mcp_fs_read_file"],
    ["everything", "get-sum", "mcp_everything_get-sum"],
    ["GitHub", "createIssue", "mcp_github_createissue"],
    ["my server", "do.this/now", "mcp_my_server_do_this_now"],
    ["fs", "__proto__", "mcp_fs___proto__"],
    ["fs", "constructor", "mcp_fs_constructor"],
    ["ünï", "çödé", "mcp__n____d_"],
    ["fs", "emoji😀", "mcp_fs_emoji_"],
  ])("server %j, tool %j → %j", (serverName, toolName, expected) => {
    expect(names(serverName, [toolName])).toEqual({ [toolName]: expected });
  });

  it("cuts a name over 64 characters and adds a stable 8-hex-digit hash of the names as given", () => {
    const long = "a".repeat(100);
    const [name] = mcpToolNames("fs", [long], free).values();
    expect(name).toMatch(NAME_PATTERN);
    expect(name).toHaveLength(64);
    expect(name?.slice(0, 55)).toBe(`mcp_fs_${"a".repeat(48)}`);
    expect(name).toMatch(/_[0-9a-f]{8}$/);
    // Stable across calls (and processes: SHA-256, no seed).
    expect(mcpToolNames("fs", [long], free).get(long)).toBe(name);
    // Two long names that share their first 55 characters still differ.
    const other = `${"a".repeat(99)}b`;
    expect(mcpToolNames("fs", [long, other], free).get(other)).not.toBe(name);
  });

  it("keeps a name of exactly 64 characters whole", () => {
    const tool = "t".repeat(64 - "mcp_fs_".length);
    expect(names("fs", [tool])).toEqual({ [tool]: `mcp_fs_${tool}` });
  });

  it("never lets two tools share a name: the one needing no change keeps it, the others get the hash", () => {
    const result = names("fs", ["read.file", "read_file", "READ_FILE", "read file"]);
    expect(result.read_file).toBe("mcp_fs_read_file");
    const others = [result["read.file"], result.READ_FILE, result["read file"]];
    for (const name of others) expect(name).toMatch(/^mcp_fs_read_file_[0-9a-f]{8}$/);
    expect(new Set(Object.values(result)).size).toBe(4);
  });

  it("suffixes every tool of a collision when none of them needed no change (Read and READ)", () => {
    const result = names("fs", ["Read", "READ"]);
    expect(result.Read).toMatch(/^mcp_fs_read_[0-9a-f]{8}$/);
    expect(result.READ).toMatch(/^mcp_fs_read_[0-9a-f]{8}$/);
    expect(result.Read).not.toBe(result.READ);
  });

  it("does not depend on the order of the list", () => {
    const tools = ["a.b", "a_b", "A_B", "x".repeat(80), "c"];
    expect(names("s", [...tools].reverse())).toEqual(names("s", tools));
  });

  it("suffixes a name another tool of the registry holds, and gives up (undefined) when the suffixed one is taken too", () => {
    const taken = new Set(["mcp_fs_read_file"]);
    const first = names("fs", ["read_file"], (name) => taken.has(name));
    expect(first.read_file).toMatch(/^mcp_fs_read_file_[0-9a-f]{8}$/);
    taken.add(first.read_file as string);
    expect(names("fs", ["read_file"], (name) => taken.has(name))).toEqual({ read_file: undefined });
  });

  it("names two servers whose names sanitise alike apart once the registry holds the first one's tools", () => {
    const first = names("a.b", ["x"]);
    const registered = new Set(Object.values(first));
    const second = names("a_b", ["x"], (name) => registered.has(name as string));
    expect(first.x).toBe("mcp_a_b_x");
    expect(second.x).toMatch(/^mcp_a_b_x_[0-9a-f]{8}$/);
  });

  it("hashes the server's name as given too: two servers that sanitise alike, both suffixed, still get two names", () => {
    const taken = new Set(["mcp_a_b_x"]);
    const first = names("a.b", ["x"], (name) => taken.has(name));
    taken.add(first.x as string);
    const second = names("a_b", ["x"], (name) => taken.has(name));
    expect(first.x).toMatch(/^mcp_a_b_x_[0-9a-f]{8}$/);
    expect(second.x).toMatch(/^mcp_a_b_x_[0-9a-f]{8}$/);
    expect(second.x).not.toBe(first.x);
  });

  it("gives a valid registry name to anything a hostile server lists (fast, for thousands of tools)", () => {
    const hostile = Array.from(
      { length: 5_000 },
      (_, index) => `${"\u0000<>\"'`{}".repeat(index % 7)}tool ${index} 💥`,
    );
    hostile.push("", " ", "-", "_".repeat(200), "\ud800");
    let lookups = 0;
    const started = performance.now();
    const result = mcpToolNames("srv", hostile, () => {
      lookups++;
      return false;
    });
    // Work, not time: a name is looked up in the registry at most twice (its plain, then its
    // suffixed form). The time bound is only a safety net against a hang (generous for a busy machine).
    expect(lookups).toBeLessThanOrEqual(2 * hostile.length);
    expect(performance.now() - started).toBeLessThan(15_000);
    const assigned = [...result.values()];
    for (const name of assigned) expect(name).toMatch(NAME_PATTERN);
    expect(new Set(assigned).size).toBe(assigned.length);
  });
});
