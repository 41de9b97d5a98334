/**
 * The built-in tools on their worst inputs (issue 26): how long the event loop is held, and how
 * long each call takes. `web_fetch` reads a JSON bomb from a server on 127.0.0.1 (500 levels deep,
 * 10 MiB — the default `maxBytes`; and 300 deep, 4 MiB) and a 103 KB HTML page of 100 nested lists
 * that converts to 40 M characters of text, `read_file` a file of 20 MiB of line feeds (from line
 * 1, and from line 20,000,000), `edit_file` the 39 KiB edit that held the loop 44 s (10,000 lines
 * replaced by 10,000 others), an edit at the end of a 10 MiB file of line feeds, and the search
 * that held it 15.8 s (1 MiB of "a", an old_text of "ab" and 9,998 "a").
 * The stall is the longest gap between two ticks of a 1 ms `setInterval` during the call, with the
 * CPU time the process used within one gap (every thread: a worker's too), the CPU time of the
 * main thread alone within one gap (Linux, from /proc, in 10 ms ticks) — on a busy machine a gap
 * also holds time spent waiting for a core — and `perf_hooks.monitorEventLoopDelay`'s maximum. Every case runs `--runs`
 * times after one round that is not recorded, the cases taking turns, through a `ToolRegistry`
 * (arguments validated as in a loop), after a full garbage collection; the HTTP server runs in a
 * child process.
 * Not part of `npm test` or `npm run bench`. Run: npx tsx bench/stall.ts [--runs 5] [--json]
 */

import { spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { createFileTools, createWebFetchTool } from "../src/builtin/index.js";
import { newToolResult, ToolRegistry, type ToolResult } from "../src/index.js";

const runsFlag = process.argv.indexOf("--runs");
const RUNS = runsFlag === -1 ? 3 : Number(process.argv[runsFlag + 1]);
const JSON_OUTPUT = process.argv.includes("--json");
// A full collection before each case, so that none pays for the garbage of the one before.
setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;
/** The bound the issue sets: no call holds the event loop longer. */
const STALL_BOUND_MS = 100;

interface Sample {
  /** Longest gap between two ticks of a 1 ms interval, in ms of wall time (the interval's own 1 ms included). */
  stallMs: number;
  /**
   * Most CPU time the process used within one such gap, in ms: the work that held the loop. On a
   * busy machine a gap also holds the time the process waited for a core, which this leaves out.
   */
  stallCpuMs: number;
  /**
   * Most CPU time the main thread alone used within one gap, in ms (10 ms ticks; `NaN` without
   * /proc): unlike `stallCpuMs`, never a worker's or the GC helpers' time.
   */
  stallMainCpuMs: number;
  /** `monitorEventLoopDelay`'s maximum, in ms (wall time). */
  delayMs: number;
  totalMs: number;
  /** Characters the model reads (`forLLM`) and the user sees (`forUser`). */
  chars: number;
  isError: boolean;
}

/** CPU time the process has used, in ms (every thread: the loop's, the GC's, libuv's pool). */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

// The main thread's own CPU time, from /proc/thread-self/stat (utime and stime, in clock ticks of
// 10 ms), read into a buffer kept open so that the heartbeat makes no garbage.
const statFd = (() => {
  try {
    return openSync("/proc/thread-self/stat", "r");
  } catch {
    return undefined;
  }
})();
const statBuffer = Buffer.alloc(1024);
const TICK_MS = 10;

/** CPU time the main thread has used, in ms (10 ms ticks); `NaN` without /proc. */
function mainThreadCpuMs(): number {
  if (statFd === undefined) return Number.NaN;
  const length = readSync(statFd, statBuffer, 0, statBuffer.length, 0);
  // Fields after the command name, which ends with the last ")": state is field 3, utime 14, stime 15.
  let at = statBuffer.lastIndexOf(0x29, length) + 2;
  let field = 3;
  let utime = 0;
  let stime = 0;
  let value = 0;
  for (; at < length && field <= 15; at++) {
    const byte = statBuffer[at] as number;
    if (byte === 0x20) {
      if (field === 14) utime = value;
      if (field === 15) stime = value;
      field++;
      value = 0;
    } else if (byte >= 0x30 && byte <= 0x39) value = value * 10 + byte - 0x30;
  }
  return (utime + stime) * TICK_MS;
}

/** Runs `call` while a 1 ms interval and an event-loop-delay histogram watch the loop. */
async function watch(call: () => Promise<ToolResult>): Promise<Sample> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  let last = performance.now();
  let lastCpu = cpuMs();
  let lastMainCpu = mainThreadCpuMs();
  let stallMs = 0;
  let stallCpuMs = 0;
  let stallMainCpuMs = 0;
  const tick = () => {
    const now = performance.now();
    const cpu = cpuMs();
    const mainCpu = mainThreadCpuMs();
    stallMs = Math.max(stallMs, now - last);
    stallCpuMs = Math.max(stallCpuMs, cpu - lastCpu);
    stallMainCpuMs = Math.max(stallMainCpuMs, mainCpu - lastMainCpu);
    last = now;
    lastCpu = cpu;
    lastMainCpu = mainCpu;
  };
  const heartbeat = setInterval(tick, 1);
  histogram.enable();
  // Let the interval start before the call: its first gap is not the call's.
  await new Promise((resolve) => setTimeout(resolve, 5));
  last = performance.now();
  lastCpu = cpuMs();
  lastMainCpu = mainThreadCpuMs();
  stallMs = 0;
  stallCpuMs = 0;
  stallMainCpuMs = 0;
  histogram.reset();
  const started = performance.now();
  const result = await call();
  const totalMs = performance.now() - started;
  tick();
  clearInterval(heartbeat);
  histogram.disable();
  return {
    stallMs,
    stallCpuMs,
    stallMainCpuMs,
    delayMs: histogram.max / 1e6,
    totalMs,
    chars: result.forLLM.length + result.forUser.length,
    isError: result.isError,
  };
}

// The server runs in a process of its own: its work (building and sending 10 MiB) is not the tool's.
const SERVER = `
const { createServer } = require("node:http");
const bomb = (depth, bytes) => {
  const values = Math.floor((bytes - 2 * depth - 1) / 2);
  return Buffer.from("[".repeat(depth) + "1,".repeat(values) + "1" + "]".repeat(depth));
};
// 100 nested lists, then 20,000 lines: html-to-text indents every line by every list's prefix.
const lists = "<html><body>" + '<ol start="1.2345678901234567"><li>'.repeat(100) + "x<br>".repeat(20000) + "</body></html>";
const bodies = new Map([["/bomb-500", bomb(500, 10 * 1024 * 1024)], ["/bomb-300", bomb(300, 4 * 1024 * 1024)], ["/lists", Buffer.from(lists)]]);
const server = createServer((request, response) => {
  const body = bodies.get(request.url);
  const type = request.url === "/lists" ? "text/html" : "application/json";
  response.writeHead(body === undefined ? 404 : 200, { "content-type": type });
  response.end(body ?? "{}");
});
server.listen(0, "127.0.0.1", () => process.stdout.write(server.address().port + "\\n"));
process.stdin.on("end", () => process.exit(0)).resume();
`;
const server = spawn(process.execPath, ["-e", SERVER], { stdio: ["pipe", "pipe", "inherit"] });
const port = await new Promise<number>((resolve, reject) => {
  server.stdout.once("data", (data: Buffer) => resolve(Number(String(data).trim())));
  server.once("exit", (code) => reject(new Error(`the server exited (${code})`)));
});
const host = `127.0.0.1:${port}`;

const workspace = realpathSync(mkdtempSync(join(tmpdir(), "toolloop-stall-")));
const NEWLINES = 20 * 1024 * 1024;
writeFileSync(join(workspace, "newlines.txt"), "\n".repeat(NEWLINES));
/** Line feeds before the edited line: the file is just under edit_file's 10 MiB. */
const BIG_EDIT = 10 * 1024 * 1024 - 64;
const EDIT_LINES = 10_000;

const registry = new ToolRegistry();
// The HTML conversion of the nested lists takes its worker 15–35 s on a busy machine.
registry.register(createWebFetchTool({ allowHosts: [host], timeoutMs: 300_000 }));
for (const tool of createFileTools({ workspace })) registry.register(tool);

interface Case {
  name: string;
  /** Before each run (not timed). */
  prepare?(): void;
  call(): Promise<ToolResult>;
}

const cases: Case[] = [
  {
    name: "web_fetch: JSON nested 500 deep, 10 MiB",
    call: () => registry.execute("web_fetch", { url: `http://${host}/bomb-500` }),
  },
  {
    name: "web_fetch: JSON nested 300 deep, 4 MiB",
    call: () => registry.execute("web_fetch", { url: `http://${host}/bomb-300` }),
  },
  {
    name: "web_fetch: HTML of 100 nested lists, 103 KB (40 M characters of text)",
    call: () => registry.execute("web_fetch", { url: `http://${host}/lists` }),
  },
  {
    name: "read_file: 20 MiB of line feeds, from line 1",
    call: () => registry.execute("read_file", { path: "newlines.txt" }),
  },
  {
    name: "read_file: 20 MiB of line feeds, from line 20,000,000",
    call: () => registry.execute("read_file", { path: "newlines.txt", start_line: 20_000_000 }),
  },
  {
    name: "edit_file: 10,000 lines replaced by 10,000 others (39 KiB of arguments)",
    prepare: () => writeFileSync(join(workspace, "lines.txt"), "a\n".repeat(EDIT_LINES)),
    call: () =>
      registry.execute("edit_file", {
        path: "lines.txt",
        old_text: "a\n".repeat(EDIT_LINES),
        new_text: "b\n".repeat(EDIT_LINES),
      }),
  },
  {
    name: "edit_file: the last line of 10 MiB of line feeds",
    prepare: () => writeFileSync(join(workspace, "long.txt"), `${"\n".repeat(BIG_EDIT)}last line\n`),
    call: () => registry.execute("edit_file", { path: "long.txt", old_text: "last line", new_text: "changed" }),
  },
  {
    name: 'edit_file: 1 MiB of "a", old_text "ab" and 9,998 "a" (not found)',
    prepare: () => writeFileSync(join(workspace, "letters.txt"), "a".repeat(1024 * 1024)),
    call: async () => {
      const result = await registry.execute("edit_file", {
        path: "letters.txt",
        old_text: `ab${"a".repeat(9_998)}`,
        new_text: "x",
      });
      // The answer expected is "not found", an error result: the case fails on anything else.
      if (!result.forLLM.startsWith("old_text was not found")) throw new Error(`unexpected: ${result.forLLM}`);
      return newToolResult(result.forLLM);
    },
  },
];

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN;
}

const load = loadavg().map((value) => value.toFixed(2));
const samples = new Map<string, Sample[]>(cases.map((item) => [item.name, []]));
try {
  // One round first, not recorded: the first call of each compiles its code.
  for (const item of cases) {
    item.prepare?.();
    await item.call();
  }
  // The cases take turns, so that load from other processes hits all of them alike.
  for (let run = 0; run < RUNS; run++) {
    for (const item of cases) {
      item.prepare?.();
      collectGarbage();
      const sample = await watch(item.call);
      if (sample.isError) throw new Error(`${item.name}: the call failed: ${sample.chars} characters`);
      samples.get(item.name)?.push(sample);
      process.stderr.write(
        `run ${run + 1}, ${item.name}: stall ${sample.stallMs.toFixed(1)} ms, total ${sample.totalMs.toFixed(0)} ms\n`,
      );
    }
  }
} finally {
  if (statFd !== undefined) closeSync(statFd);
  server.stdin.end();
  rmSync(workspace, { recursive: true, force: true });
}

const rows = cases.map((item) => {
  const list = samples.get(item.name) ?? [];
  return {
    name: item.name,
    stallMs: median(list.map((sample) => sample.stallMs)),
    maxStallMs: Math.max(...list.map((sample) => sample.stallMs)),
    stallCpuMs: median(list.map((sample) => sample.stallCpuMs)),
    maxStallCpuMs: Math.max(...list.map((sample) => sample.stallCpuMs)),
    stallMainCpuMs: median(list.map((sample) => sample.stallMainCpuMs)),
    maxStallMainCpuMs: Math.max(...list.map((sample) => sample.stallMainCpuMs)),
    delayMs: Math.max(...list.map((sample) => sample.delayMs)),
    totalMs: median(list.map((sample) => sample.totalMs)),
    chars: Math.max(...list.map((sample) => sample.chars)),
  };
});
if (JSON_OUTPUT) {
  console.log(JSON.stringify({ node: process.version, cores: availableParallelism(), load, runs: RUNS, rows }));
} else {
  console.log(
    `Node ${process.version}, ${availableParallelism()} cores, load average ${load.join(", ")} at the start, ${RUNS} runs of each case:\n`,
  );
  console.log(
    "| call | longest stall, wall: median (max) | CPU used in one stall, all threads: median (max) | main thread's CPU in one stall: median (max) | event-loop delay, max | total, median | characters returned |",
  );
  console.log("| --- | --- | --- | --- | --- | --- | --- |");
  for (const row of rows) {
    console.log(
      `| ${row.name} | ${row.stallMs.toFixed(1)} ms (${row.maxStallMs.toFixed(1)}) | ` +
        `${row.stallCpuMs.toFixed(1)} ms (${row.maxStallCpuMs.toFixed(1)}) | ` +
        `${row.stallMainCpuMs.toFixed(0)} ms (${row.maxStallMainCpuMs.toFixed(0)}) | ${row.delayMs.toFixed(1)} ms | ` +
        `${row.totalMs.toFixed(0)} ms | ${row.chars.toLocaleString("en-US")} |`,
    );
  }
  const worst = Math.max(...rows.map((row) => row.maxStallMs));
  console.log(
    `\nLongest stall of all (wall): ${worst.toFixed(1)} ms (${worst <= STALL_BOUND_MS ? "within" : "OVER"} the ${STALL_BOUND_MS} ms bound)`,
  );
}
