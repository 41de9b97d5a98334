import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { type AddressInfo, connect, createServer, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const INSTALL_COMMAND = "sudo apt-get install -y redis-server";

function onPath(binary: string): boolean {
  try {
    execFileSync("sh", ["-c", `command -v ${binary}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/**
 * The path of `redis-server`: the one on PATH, else Debian's installed with apt-get when this
 * process is root. Never skips: without one, it throws with the exact command to run.
 */
export function redisServerBinary(): string {
  if (onPath("redis-server")) return "redis-server";
  if (process.getuid?.() === 0 && onPath("apt-get")) {
    try {
      execFileSync("apt-get", ["install", "-y", "redis-server"], { stdio: "ignore", timeout: 180_000 });
    } catch {
      try {
        execFileSync("apt-get", ["update"], { stdio: "ignore", timeout: 180_000 });
        execFileSync("apt-get", ["install", "-y", "redis-server"], { stdio: "ignore", timeout: 180_000 });
      } catch {
        // reported below
      }
    }
    if (onPath("redis-server")) return "redis-server";
  }
  throw new Error(`the toolloop/bullmq tests need a redis-server on PATH; install it with: ${INSTALL_COMMAND}`);
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

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
    socket.connect(port, "127.0.0.1");
  });
}

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
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

/**
 * Starts a `redis-server` on a random port of 127.0.0.1 with its own temporary directory.
 * Persistence is off unless `persistence` is set (then an append-only file, fsync always, so a
 * graceful restart keeps everything).
 */
export async function startRedisServer(options: { persistence?: boolean } = {}): Promise<RedisServer> {
  const binary = redisServerBinary();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "toolloop-redis-"));
  const persistence = options.persistence === true;
  const args = [
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
  const start = async () => {
    const started = spawn(binary, args, { stdio: "ignore" });
    child = started;
    await waitFor(async () => {
      if (started.exitCode !== null) throw new Error(`redis-server exited with code ${started.exitCode}`);
      return canConnect(port);
    }, `redis-server on port ${port}`);
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
  await start();
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
