import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { type AddressInfo, connect, createServer, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { debianBinary } from "./debian-package.js";

/**
 * The path of `redis-server`: the one on PATH, else Debian's installed with apt-get when this
 * process is root. Never skips: without one, it throws with the exact command to run.
 */
export function redisServerBinary(): string {
  return debianBinary({ binary: "redis-server", packageName: "redis-server", neededBy: "the toolloop/bullmq tests" });
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Whether the redis-server of process `pid` answers on `port` (its INFO names that process: not
 * another process listening there, which a bare connect cannot tell).
 */
function serves(port: number, pid: number | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    let text = "";
    const done = (ok: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    // Something that accepts and never answers is not our server; the next check asks again.
    const timer = setTimeout(() => done(false), 1_000);
    socket.once("connect", () => socket.write("*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n"));
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("latin1");
      const found = /process_id:(\d+)/.exec(text);
      if (found !== null) done(Number(found[1]) === pid);
      else if (text.length > 100_000) done(false);
    });
    socket.once("error", () => done(false));
    socket.once("close", () => done(false));
    socket.connect(port, "127.0.0.1");
  });
}

// A safety net, generous: starting a process takes seconds on a loaded machine.
async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A redis-server the test started on 127.0.0.1, in its own temporary directory. */
export interface RedisServer {
  readonly port: number;
  readonly connection: { host: string; port: number };
  /** Stops the server (SHUTDOWN: with persistence on, it saves first) and waits for its exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port and directory (after `stop`). */
  start(): Promise<void>;
  /** Stops it and removes its directory. */
  dispose(): Promise<void>;
}

/** How often a redis-server that exits while starting (its port taken meanwhile) is started again. */
const START_TRIES = 5;

/**
 * Starts a `redis-server` on a random port of 127.0.0.1 (`port` first, when given) with its own
 * temporary directory. Persistence is off unless `persistence` is set (then an append-only file,
 * fsync always, so a graceful restart keeps everything). A free port can be taken by another
 * process before redis-server binds it (any outgoing connection on the machine may get it): a
 * server that exits while starting is started again on another port.
 */
export async function startRedisServer(options: { persistence?: boolean; port?: number } = {}): Promise<RedisServer> {
  const binary = redisServerBinary();
  const dir = mkdtempSync(join(tmpdir(), "toolloop-redis-"));
  const persistence = options.persistence === true;
  const argsFor = (port: number) => [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--dir",
    dir,
    "--save",
    persistence ? "1 1" : "",
    "--appendonly",
    persistence ? "yes" : "no",
    "--appendfsync",
    "always",
    "--protected-mode",
    "yes",
    "--loglevel",
    "warning",
    "--logfile",
    join(dir, "redis.log"),
    "--maxmemory-policy",
    "noeviction",
  ];
  let child: ChildProcess | undefined;
  /** Starts redis-server on `port`: `false` when it exited while starting. */
  const startOn = async (port: number) => {
    const started = spawn(binary, argsFor(port), { stdio: "ignore" });
    child = started;
    let exited = false;
    await waitFor(async () => {
      exited = started.exitCode !== null;
      return exited || serves(port, started.pid);
    }, `redis-server on port ${port}`);
    return !exited;
  };
  const exitedWith = () => {
    let log = "";
    try {
      log = readFileSync(join(dir, "redis.log"), "utf8").trim().split("\n").at(-1) ?? "";
    } catch {
      // no log written
    }
    return `redis-server exited while starting (code ${child?.exitCode}): ${log}`;
  };
  let port = options.port ?? (await freePort());
  for (let tried = 1; !(await startOn(port)); tried++) {
    if (tried >= START_TRIES) throw new Error(exitedWith());
    port = await freePort();
  }
  // Again on the same port (after stop()): it is free again soon if something took it meanwhile.
  const start = async () => {
    for (let tried = 1; !(await startOn(port)); tried++) {
      if (tried >= START_TRIES) throw new Error(exitedWith());
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };
  const stop = async () => {
    const running = child;
    child = undefined;
    if (running === undefined || running.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => running.once("exit", () => resolve()));
    // SIGTERM is redis-server's graceful shutdown: it saves when persistence is on.
    running.kill("SIGTERM");
    await exited;
  };
  return {
    port,
    connection: { host: "127.0.0.1", port },
    stop,
    start,
    async dispose() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A TCP proxy to a redis-server that a test can cut off and let through again. */
export interface RedisProxy {
  readonly port: number;
  readonly connection: { host: string; port: number };
  /** Drops every connection through it, and every new one at once, until `unblock()`: Redis is unreachable through it. */
  block(): void;
  /** Lets new connections through again. */
  unblock(): void;
  /** Drops every connection and stops listening. */
  close(): Promise<void>;
}

/**
 * Starts a proxy on a random port of 127.0.0.1 to the redis-server on `targetPort`: clients that
 * connect through it lose Redis exactly while it is blocked, whatever their reconnect timing
 * (a test that waits for a client to stay away a given time fails on a loaded machine).
 */
export async function startRedisProxy(targetPort: number): Promise<RedisProxy> {
  let blocked = false;
  const sockets = new Set<Socket>();
  const dropAll = () => {
    for (const socket of sockets) socket.destroy();
    sockets.clear();
  };
  const server = createServer((client) => {
    if (blocked) {
      client.destroy();
      return;
    }
    const upstream = connect(targetPort, "127.0.0.1");
    sockets.add(client);
    sockets.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    for (const socket of [client, upstream]) {
      socket.on("error", drop);
      socket.on("close", drop);
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    connection: { host: "127.0.0.1", port },
    block() {
      blocked = true;
      dropAll();
    },
    unblock() {
      blocked = false;
    },
    close() {
      blocked = true;
      dropAll();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
