import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ProcessSession, parseProcessStat } from "../../src/builtin/process-session.js";

const hasProc = existsSync("/proc/self/stat");

describe("parseProcessStat", () => {
  it("reads pid, ppid, session and start time, counting the fields from the last ')'", () => {
    const rest = "0 -1 4194304 100 0 0 0 0 0 0 0 20 0 1 0 28199 3133440 413";
    expect(parseProcessStat(`9399 (a) b (c)) S 9396 9390 3320 ${rest}`)).toEqual({
      pid: 9399,
      ppid: 9396,
      session: 3320,
      start: 28199,
      ended: false,
    });
    expect(parseProcessStat(`12 (sh) Z 1 12 12 ${rest}`)?.ended).toBe(true);
  });

  it.each([[""], ["12 sh S 1 12 12"], ["x (sh) S 1 12 12"], ["12 (sh) S 1 12"], ["12 (sh) "]])(
    "is undefined for %j",
    (text) => {
      expect(parseProcessStat(text)).toBeUndefined();
    },
  );

  it.runIf(hasProc)("reads this process's own line", () => {
    const stat = parseProcessStat(readFileSync("/proc/self/stat", "utf8"));
    expect(stat?.pid).toBe(process.pid);
    expect(stat?.ppid).toBe(process.ppid);
  });
});

describe("ProcessSession", () => {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const child of children.splice(0))
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });

  function isAlive(pid: number): boolean {
    try {
      process.kill(pid, 0);
    } catch {
      return false;
    }
    const stat = parseProcessStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
    return stat !== undefined && !stat.ended;
  }

  it.runIf(hasProc)("ends a session's leader and a process that moved into a group of its own", async () => {
    // sh leads a new session; its background job moves to a group of its own (set -m).
    const child = spawn("/bin/sh", ["-c", "set -m; sleep 30 & echo $!; wait"], {
      detached: true,
      stdio: ["ignore", "pipe", "ignore"],
    });
    children.push(child);
    const session = new ProcessSession(child.pid as number);
    const job = await new Promise<number>((resolve) => child.stdout?.once("data", (data) => resolve(Number(data))));
    try {
      await session.end();
      expect(session.survivors).toBe(0);
      expect(isAlive(job)).toBe(false);
      await vi.waitFor(() => expect(child.signalCode).toBe("SIGKILL"), { timeout: 5_000, interval: 20 });
    } finally {
      if (isAlive(job)) process.kill(job, "SIGKILL");
    }
  });
});
