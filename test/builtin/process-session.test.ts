import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  ProcessSession,
  type ProcessStat,
  type ProcessTable,
  parseProcessStat,
} from "../../src/builtin/process-session.js";

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

/**
 * A made-up process table: a SIGKILLed process dies after `lag` more scans (its `lag`, 0 by
 * default: at the next scan), as a process on a busy machine runs, and so dies, some time after the
 * kill; a child whose parent died is reparented to init (pid 1); `reborn` takes the pid of the
 * process it names once that one died.
 */
function madeUpTable(processes: Array<ProcessStat & { lag?: number }>, reborn?: ProcessStat) {
  const alive = new Map(processes.map((entry) => [entry.pid, { ...entry }]));
  const dying = new Map<number, number>();
  const signals: string[] = [];
  const pauses: number[] = [];
  const read = (): ProcessStat[] => {
    for (const [pid, scansLeft] of dying) {
      if (scansLeft > 0) dying.set(pid, scansLeft - 1);
      else {
        dying.delete(pid);
        alive.delete(pid);
        for (const entry of alive.values()) if (entry.ppid === pid) entry.ppid = 1;
        if (reborn?.pid === pid) alive.set(pid, { ...reborn });
      }
    }
    return [...alive.values()].map(({ pid, ppid, session, start, ended }) => ({ pid, ppid, session, start, ended }));
  };
  const table: ProcessTable = {
    scan: () => Promise.resolve(read()),
    scanSync: read,
    stat: (pid) => alive.get(pid),
    signal: (pid, name) => {
      signals.push(`${name} ${pid}`);
      const targets = pid < 0 ? [...alive.values()].filter((entry) => entry.session === -pid) : [alive.get(pid)];
      for (const entry of targets) {
        if (entry !== undefined && name === "SIGKILL" && !dying.has(entry.pid)) dying.set(entry.pid, entry.lag ?? 0);
      }
      return targets.some((entry) => entry !== undefined);
    },
    pause: (ms) => {
      pauses.push(ms);
      return Promise.resolve();
    },
  };
  return { table, alive, signals, pauses };
}

describe("ProcessSession on a made-up process table", () => {
  // sh (100) leads the session; node (101) runs in it; its child (102) left the session (setsid).
  const leader = { pid: 100, ppid: 50, session: 100, start: 5, ended: false };
  const parent = { pid: 101, ppid: 100, session: 100, start: 6, ended: false };
  const escaped = { pid: 102, ppid: 101, session: 102, start: 7, ended: false };

  it("waits for a killed child that left the session and outlived its parent (it died three scans after the kill)", async () => {
    const { table, alive, signals, pauses } = madeUpTable([leader, parent, { ...escaped, lag: 3 }]);
    const session = new ProcessSession(100, table);
    await session.end();
    expect(alive.has(102)).toBe(false);
    expect(session.survivors).toBe(0);
    expect(signals).toContain("SIGSTOP 102");
    expect(signals).toContain("SIGKILL 102");
    // The rescans after the kill pause 1, 2, 4 … ms.
    expect(pauses).toEqual([1, 2, 4]);
  });

  it("gives up after about 2 s of rescans when a killed process never dies, and counts it as a survivor", async () => {
    const { table, alive, pauses } = madeUpTable([leader, parent, { ...escaped, lag: Number.POSITIVE_INFINITY }]);
    const session = new ProcessSession(100, table);
    await session.end();
    expect(alive.has(102)).toBe(true);
    expect(session.survivors).toBe(1);
    expect(pauses).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]);
  });

  it("never waits for, nor kills, a process that took a killed one's pid (told apart by its start time)", async () => {
    const stranger = { pid: 102, ppid: 1, session: 102, start: 99, ended: false };
    const { table, alive, signals, pauses } = madeUpTable([leader, parent, { ...escaped, lag: 1 }], stranger);
    const session = new ProcessSession(100, table);
    await session.end();
    expect(session.survivors).toBe(0);
    expect(alive.get(102)).toEqual(stranger);
    // Killed once (the escaped child), and once more while it was still dying; never after its pid changed hands.
    expect(signals.filter((line) => line === "SIGKILL 102")).toHaveLength(2);
    expect(pauses).toEqual([1]);
  });
});
