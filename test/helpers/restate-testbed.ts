import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./redis-server.js";
import { type RestateServer, startRestateServer } from "./restate-server.js";
import { spawnRestateService, type WorkerProcess } from "./spawn-worker.js";

/** A line of the service process's log (test/helpers/restate-service-process.ts). */
export interface LogEntry {
  pid: number;
  kind: "model" | "tool" | "request" | "outer";
  tag?: string;
  step?: number;
  name?: string;
  id?: string;
  awakeableId?: string;
}

/** What a handler that runs the loop returns (a `ToolLoopResult` as JSON). */
export interface SendResult {
  content: string;
  stopReason: string;
  iterations: number;
  messages: { role: string; content: unknown }[];
}

/**
 * The real engine for test/restate/*.test.ts: restate-server from the npm registry, the service
 * endpoint a child process (test/helpers/restate-service-process.ts) registered through the admin
 * API, every call through the ingress. The service's retry policy (100 ms, at most 500 ms) lets a
 * restarted one continue within seconds.
 */
export interface RestateTestbed {
  /** The SDK version the service runs: the repository's 1.12.x, or RESTATE_SDK_DIR's. */
  readonly sdkVersion: string;
  /** Starts the service process again (after {@link killService}); its slow tool sleeps `slowMs`. */
  startService(slowMs: number): Promise<void>;
  /** SIGKILLs the service process and waits for it to exit. */
  killService(): Promise<void>;
  /** Every line the service processes logged so far. */
  readLog(): LogEntry[];
  /** The first log line that matches, waiting for it (a safety net of 60 s). */
  waitForLog(predicate: (entry: LogEntry) => boolean): Promise<LogEntry>;
  /** POSTs JSON to the ingress: the status and the body (parsed when it is JSON). */
  post(path: string, body: unknown): Promise<{ status: number; body: unknown }>;
  /** Rows of a SQL query on Restate's system tables, through the admin API. */
  query(sql: string): Promise<Record<string, unknown>[]>;
  /** Calls `path` with `message` and expects a 200 with the run's result. */
  send(path: string, message: unknown): Promise<SendResult>;
  /** Stops the service and the server, and removes the log. */
  dispose(): Promise<void>;
}

/** Starts a restate-server and the service process, and registers the service. */
export async function startRestateTestbed(): Promise<RestateTestbed> {
  const dir = mkdtempSync(join(tmpdir(), "toolloop-restate-test-"));
  const logFile = join(dir, "calls.log");
  const servicePort = await freePort();
  let server: RestateServer | undefined;
  let service: WorkerProcess | undefined;
  let sdkVersion = "";

  const startService = async (slowMs: number) => {
    service = spawnRestateService({ port: servicePort, logFile, slowMs });
    const ready = await service.waitFor((message) => message.type === "ready");
    sdkVersion = String(ready.sdkVersion);
  };
  const killService = async () => {
    if (service === undefined) return;
    const { child, exited } = service;
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
  };
  const readLog = (): LogEntry[] =>
    existsSync(logFile)
      ? readFileSync(logFile, "utf8")
          .split("\n")
          .filter((line) => line !== "")
          .map((line) => JSON.parse(line) as LogEntry)
      : [];
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${server?.ingressUrl}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: an error text
    }
    return { status: response.status, body: parsed };
  };

  try {
    server = await startRestateServer();
    await startService(0);
    await server.register(`http://127.0.0.1:${servicePort}`);
  } catch (error) {
    await killService();
    await server?.dispose();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const running = server;
  return {
    get sdkVersion() {
      return sdkVersion;
    },
    startService,
    killService,
    readLog,
    async waitForLog(predicate) {
      // A safety net, generous: the machine may be loaded.
      const deadline = Date.now() + 60_000;
      for (;;) {
        const found = readLog().find(predicate);
        if (found !== undefined) return found;
        if (Date.now() > deadline) throw new Error("no matching log entry");
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    post,
    async query(sql) {
      const response = await fetch(`${running.adminUrl}/query`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify({ query: sql }),
      });
      const text = await response.text();
      if (!response.ok) throw new Error(`query failed: ${response.status} ${text}`);
      return (JSON.parse(text) as { rows: Record<string, unknown>[] }).rows;
    },
    async send(path, message) {
      const { status, body } = await post(path, message);
      if (status !== 200) throw new Error(`${path}: ${status} ${JSON.stringify(body)}`);
      return body as SendResult;
    },
    async dispose() {
      await killService();
      await running.dispose();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
