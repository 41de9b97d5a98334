import { readdirSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

// ─── Ending every process a command started ─────────────────────────────────────────────────────
//
// `execute_bash` starts `sh -c` with `detached: true`: the shell calls setsid() and leads a new
// session (and process group) whose id is its pid. Killing the process group is not enough: a
// program may move into a group of its own (`timeout` does, and so does every job of a shell
// with job control, `bash -c 'set -m; …'`) and stay in the session. So on Linux the command's
// processes are found by reading /proc: every process whose session id is the shell's, and every
// descendant of one of those (a child that called setsid() while its parent is still there).
// They are stopped first (SIGSTOP: a stopped process cannot fork, or exit and orphan a child
// that left the session), the scan is repeated until it finds no process it has not stopped,
// then all are killed (SIGKILL) and the scan is repeated, with growing pauses, until none is
// left — neither a member nor a process it killed: SIGKILL takes effect when the process next
// runs, which on a busy machine can be after its parent died and it stopped being a descendant.
// Without /proc (macOS) only the process group is killed.
//
// What escapes: a process that leaves the session (setsid(), as `setsid`, a daemon or Node's
// `detached: true` do) and whose parent ended before the call did, so that it is no longer a
// descendant of the session when it is scanned (a double fork into a new session); and anything
// handed to another process to start (a systemd unit, a container, an at job). A cgroup would
// hold those too, but creating one needs root or a delegated cgroup v2 tree, which a library
// cannot count on.

/** Where Linux lists its processes. */
const PROC = "/proc";
/** Most scans that look for processes not stopped yet (each one finds those forked before the last stop). */
const MAX_STOP_ROUNDS = 16;
/**
 * Most scans, after the kill, that look for survivors (and kill them again): the pause before the
 * second is 1 ms and doubles with each, so the last (after 1,024 ms) comes about 2 s after the kill.
 */
const MAX_KILL_ROUNDS = 12;
/** Stat files read between two turns of the event loop: a scan never holds it for long. */
const SCAN_CHUNK = 64;

/** What one line of `/proc/<pid>/stat` says about a process, as far as ending a session needs. */
export interface ProcessStat {
  /** Its process id. */
  pid: number;
  /** Its parent's process id. */
  ppid: number;
  /** The id of its session (the pid of the session's leader). */
  session: number;
  /** When it started, in clock ticks since boot. */
  start: number;
  /** `true` for a zombie or a dead process (state `Z`, `X`, `x`): it cannot be signalled, its parent reaps it. */
  ended: boolean;
}

/**
 * Reads one `/proc/<pid>/stat` line; `undefined` when it is not one. The command name (the second
 * field) is in parentheses and may itself hold spaces and parentheses, so the fields are counted
 * from the last `)`.
 */
export function parseProcessStat(text: string): ProcessStat | undefined {
  const close = text.lastIndexOf(")");
  const pid = Number.parseInt(text, 10);
  if (close === -1 || !Number.isSafeInteger(pid)) return undefined;
  // After the name: state (field 3), ppid (4), pgrp (5), session (6) … starttime (22).
  const fields = text.slice(close + 2).split(" ");
  const state = fields[0] ?? "";
  const ppid = Number(fields[1]);
  const session = Number(fields[3]);
  const start = Number(fields[19]);
  if (state === "" || !Number.isSafeInteger(ppid) || !Number.isSafeInteger(session) || !Number.isSafeInteger(start)) {
    return undefined;
  }
  return { pid, ppid, session, start, ended: state === "Z" || state === "X" || state === "x" };
}

/** Every process `/proc` lists (one that ends while it is read is left out); `undefined` without `/proc`. */
function processIds(): string[] | undefined {
  try {
    return readdirSync(PROC).filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
}

function readStat(pid: string | number): ProcessStat | undefined {
  try {
    return parseProcessStat(readFileSync(`${PROC}/${pid}/stat`, "utf8"));
  } catch {
    return undefined; // it ended meanwhile
  }
}

/** Every process, read in chunks with a turn of the event loop between them. */
async function scanProcesses(): Promise<ProcessStat[] | undefined> {
  const ids = processIds();
  if (ids === undefined) return undefined;
  const table: ProcessStat[] = [];
  for (const [index, id] of ids.entries()) {
    if (index % SCAN_CHUNK === SCAN_CHUNK - 1) await new Promise((resolve) => setImmediate(resolve));
    const stat = readStat(id);
    if (stat !== undefined) table.push(stat);
  }
  return table;
}

function scanProcessesSync(): ProcessStat[] | undefined {
  const ids = processIds();
  if (ids === undefined) return undefined;
  const table: ProcessStat[] = [];
  for (const id of ids) {
    const stat = readStat(id);
    if (stat !== undefined) table.push(stat);
  }
  return table;
}

/** Sends `signal` to a process (or to a process group, for a negative id); `false` when it is gone. */
function signal(pid: number, name: NodeJS.Signals): boolean {
  // Never this process, nor the whole system (0, -1) or init.
  if (pid === process.pid || (pid >= -1 && pid <= 1)) return false;
  try {
    process.kill(pid, name);
    return true;
  } catch {
    return false; // ESRCH: gone already; EPERM: not ours to signal
  }
}

/** What a session reads and signals: this machine's processes, or (in tests) a made-up table. @internal */
export interface ProcessTable {
  /** Every process, read without holding the event loop for long; `undefined` without `/proc`. */
  scan(): Promise<ProcessStat[] | undefined>;
  /** Every process, read at once (for the `exit` event of this process). */
  scanSync(): ProcessStat[] | undefined;
  /** One process's line; `undefined` when it is gone or there is no `/proc`. */
  stat(pid: number): ProcessStat | undefined;
  /** Sends `signal` to a process (a process group for a negative id); `false` when it is gone. */
  signal(pid: number, name: NodeJS.Signals): boolean;
  /** Resolves after `ms` milliseconds. */
  pause(ms: number): Promise<void>;
}

/** This machine's processes, through `/proc`. */
const LINUX: ProcessTable = {
  scan: scanProcesses,
  scanSync: scanProcessesSync,
  stat: readStat,
  signal,
  // Node's promise timer, not the global setTimeout a test (or an app) may have replaced with a fake.
  pause: (ms) => sleep(ms),
};

/**
 * The processes of a command started as the leader of a new session (`detached: true`), and how
 * to end all of them: see the comment at the top of this file for what is caught and what is not.
 */
export class ProcessSession {
  /** The pid of the leader: the session's id, and its process group's. */
  readonly pid: number;
  /** When the leader started (clock ticks since boot); `undefined` without `/proc`: only the group is killed. */
  readonly #start: number | undefined;
  /** The processes that were alive after the last {@link end}: 0 when it caught them all. */
  survivors = 0;
  /**
   * Set once the leader was reaped (its `exit` event): from then on its process group id may be
   * reused by another process, so the group is no longer signalled as a whole.
   */
  leaderReaped = false;

  readonly #table: ProcessTable;

  /**
   * Call right after the spawn, while the leader cannot have been reaped yet (that happens on a
   * later turn of the event loop), so that its start time identifies it even once its pid is reused.
   * @param pid the leader's pid
   * @param table the processes to read and signal (tests pass a made-up one) @internal
   */
  constructor(pid: number, table: ProcessTable = LINUX) {
    this.pid = pid;
    this.#table = table;
    this.#start = table.stat(pid)?.start;
  }

  /**
   * Kills every process of the session. Never rejects. Resolves once no process of the session is
   * left, or after the last round (see {@link survivors}).
   */
  async end(): Promise<void> {
    const steps = this.#sweep();
    let step = steps.next();
    while (!step.done) {
      if (step.value > 0) await this.#table.pause(step.value);
      step = steps.next(await this.#table.scan());
    }
  }

  /** {@link end} without waiting: for the `exit` event of this process, where nothing async runs any more. */
  endSync(): void {
    const steps = this.#sweep();
    let step = steps.next();
    while (!step.done) step = steps.next(this.#table.scanSync());
  }

  /**
   * The rounds of stopping and killing; each `yield` asks for a fresh scan of the process table,
   * after a pause of the milliseconds it yields (none while stopping).
   */
  *#sweep(): Generator<number, void, ProcessStat[] | undefined> {
    const table = this.#table;
    if (this.#start === undefined) {
      // No /proc: the process group is all that can be found. It is signalled even after the
      // leader was reaped (what it left running is in it): a group's id stays taken while any
      // process of it lives, so only an empty group's id can have been reused meanwhile.
      table.signal(-this.pid, "SIGKILL");
      this.survivors = 0;
      return;
    }
    // The group first and at once: the shell and everything that stayed in its group stop now.
    this.#signalGroup("SIGSTOP");
    // The processes stopped, by pid, with their start time (which tells them from a reused pid).
    const stopped = new Map<number, number>();
    for (let round = 0; round < MAX_STOP_ROUNDS; round++) {
      const scanned = yield 0;
      if (scanned === undefined) break;
      const fresh = this.#members(scanned).filter(({ pid }) => !stopped.has(pid));
      if (fresh.length === 0) break;
      for (const { pid, start } of fresh) if (table.signal(pid, "SIGSTOP")) stopped.set(pid, start);
    }
    this.#signalGroup("SIGKILL");
    // Nothing found, nothing stopped: the common end of a command that left nothing behind.
    if (stopped.size === 0 && this.leaderReaped) {
      this.survivors = 0;
      return;
    }
    for (const pid of stopped.keys()) table.signal(pid, "SIGKILL");
    let left: ProcessStat[] = [];
    for (let round = 0; round < MAX_KILL_ROUNDS; round++) {
      const scanned = yield round === 0 ? 0 : 2 ** (round - 1);
      if (scanned === undefined) break;
      // The members still there, and every process killed that has not died yet: one whose parent
      // died first is no longer a descendant of the session, but it is not gone either.
      left = this.#members(scanned);
      const found = new Set(left.map(({ pid }) => pid));
      for (const entry of scanned) {
        if (!entry.ended && stopped.get(entry.pid) === entry.start && !found.has(entry.pid)) left.push(entry);
      }
      if (left.length === 0) break;
      for (const { pid } of left) table.signal(pid, "SIGKILL");
    }
    this.survivors = left.length;
  }

  /** Signals the leader's process group, while its id cannot belong to another (the leader is not reaped). */
  #signalGroup(name: NodeJS.Signals): void {
    if (!this.leaderReaped) this.#table.signal(-this.pid, name);
  }

  /**
   * The live processes of the session in `table`: those whose session id is the leader's pid and
   * that started no earlier than the leader, and their descendants (a child that called setsid()).
   */
  #members(table: readonly ProcessStat[]): ProcessStat[] {
    const start = this.#start as number;
    const leader = table.find((entry) => entry.pid === this.pid);
    // A session's id stays taken while any of its processes lives: another process holding the
    // leader's pid means the session is over, and whatever now has that session id is not ours.
    if (leader !== undefined && leader.start !== start) return [];
    const members = new Map<number, ProcessStat>();
    const children = new Map<number, ProcessStat[]>();
    for (const entry of table) {
      if (entry.ended) continue;
      if (entry.session === this.pid && entry.start >= start) members.set(entry.pid, entry);
      const siblings = children.get(entry.ppid);
      if (siblings === undefined) children.set(entry.ppid, [entry]);
      else siblings.push(entry);
    }
    const pending = [...members.keys()];
    for (let pid = pending.pop(); pid !== undefined; pid = pending.pop()) {
      for (const child of children.get(pid) ?? []) {
        if (members.has(child.pid)) continue;
        members.set(child.pid, child);
        pending.push(child.pid);
      }
    }
    members.delete(process.pid);
    return [...members.values()];
  }
}
