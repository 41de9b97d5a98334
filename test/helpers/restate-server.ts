import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { freePort } from "./redis-server.js";

/**
 * The path of `restate-server`, from the npm registry's `@restatedev/restate-server` (its
 * platform package holds the binary). Never skips: without it, it throws with what to install.
 */
export function restateServerBinary(): string {
  const platformPackage = `@restatedev/restate-server-${process.platform}-${process.arch}`;
  try {
    const manifest = createRequire(import.meta.url).resolve(`${platformPackage}/package.json`);
    return join(dirname(manifest), "bin", "restate-server");
  } catch {
    throw new Error(`restate-server is missing: run \`npm install\` (it brings ${platformPackage})`);
  }
}

/** A restate-server the test started on 127.0.0.1, in its own temporary directory. */
export interface RestateServer {
  /** The ingress, e.g. `http://127.0.0.1:41234`: invoke handlers and resolve awakeables here. */
  readonly ingressUrl: string;
  /** The admin API: deployments, invocations. */
  readonly adminUrl: string;
  /** Registers the service endpoint at `uri` (again: `force`), through the admin API. */
  register(uri: string): Promise<void>;
  /** Stops the server and removes its directory. */
  dispose(): Promise<void>;
}

// A safety net, generous: starting a process takes seconds on a loaded machine.
async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function answers(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    await response.arrayBuffer();
    return response.ok;
  } catch {
    return false;
  }
}

/**
 * Starts `restate-server` on random ports of 127.0.0.1 (ingress, admin, node-to-node) with its own
 * temporary base directory, two partitions (it starts faster than with the default 24) and
 * telemetry off. A port taken by another process meanwhile makes it exit: it is started again on
 * others.
 */
export async function startRestateServer(): Promise<RestateServer> {
  const binary = restateServerBinary();
  const dir = mkdtempSync(join(tmpdir(), "toolloop-restate-"));
  let child: ChildProcess | undefined;
  let ingressUrl = "";
  let adminUrl = "";
  for (let tried = 1; ; tried++) {
    const [ingress, admin, fabric] = [await freePort(), await freePort(), await freePort()];
    const started = spawn(binary, ["--no-logo", "--listen-mode", "tcp"], {
      stdio: "ignore",
      env: {
        ...process.env,
        RESTATE_BASE_DIR: join(dir, `data-${tried}`),
        RESTATE_BIND_IP: "127.0.0.1",
        RESTATE_BIND_PORT: String(fabric),
        RESTATE_INGRESS__BIND_ADDRESS: `127.0.0.1:${ingress}`,
        RESTATE_ADMIN__BIND_ADDRESS: `127.0.0.1:${admin}`,
        RESTATE_ADVERTISED_HOST: "127.0.0.1",
        RESTATE_DISABLE_TELEMETRY: "true",
        RESTATE_DEFAULT_NUM_PARTITIONS: "2",
        RESTATE_ROCKSDB_TOTAL_MEMORY_SIZE: "256MB",
        RESTATE_LOG_FILTER: "warn",
      },
    });
    child = started;
    ingressUrl = `http://127.0.0.1:${ingress}`;
    adminUrl = `http://127.0.0.1:${admin}`;
    await waitFor(
      async () =>
        started.exitCode !== null ||
        ((await answers(`${adminUrl}/health`)) && (await answers(`${ingressUrl}/restate/health`))),
      "restate-server",
    );
    if (started.exitCode === null) break;
    if (tried >= 5) throw new Error(`restate-server exited while starting (code ${started.exitCode})`);
  }
  const running = child;
  return {
    ingressUrl,
    adminUrl,
    async register(uri) {
      const response = await fetch(`${adminUrl}/deployments`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ uri, force: true }),
      });
      const text = await response.text();
      if (!response.ok) throw new Error(`registering ${uri} failed: ${response.status} ${text}`);
    },
    async dispose() {
      if (running.exitCode === null) {
        const exited = new Promise<void>((resolve) => running.once("exit", () => resolve()));
        running.kill("SIGKILL");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
