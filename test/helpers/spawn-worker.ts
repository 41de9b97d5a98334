import { type ChildProcess, fork } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { buildSync } from "esbuild";

const workerScript = fileURLToPath(new URL("./tool-worker-process.ts", import.meta.url));
const conversationScript = fileURLToPath(new URL("./conversation-process.ts", import.meta.url));
const restateServiceScript = fileURLToPath(new URL("./restate-service-process.ts", import.meta.url));

/** A message a child sends: tool-worker-process.ts ("ready", "started", "ran") or conversation-process.ts. */
export interface WorkerMessage {
  pid: number;
  type: string;
  toolName?: string;
  toolCallId?: string;
  isError?: boolean;
  [key: string]: unknown;
}

/** A worker child process and what it reported. */
export interface WorkerProcess {
  readonly child: ChildProcess;
  readonly messages: WorkerMessage[];
  /** Resolves with the first message matching `predicate` (also one already received). */
  waitFor(predicate: (message: WorkerMessage) => boolean, timeoutMs?: number): Promise<WorkerMessage>;
  /** Resolves when the process has exited, with its code and signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Forks test/helpers/tool-worker-process.ts (through tsx) with these settings. */
export function spawnWorker(settings: {
  port: number;
  name: string;
  concurrency?: number;
  lockMs?: number;
  stalledMs?: number;
  /** Its `block` tool really blocks the event loop. */
  blocks?: boolean;
  label?: string;
  /** The worker's `timeoutMs` (none by default). */
  timeoutMs?: number;
  /** The worker's `closeGraceMs` (its default by default). */
  closeGraceMs?: number;
  /** Its `block` and `gate` tools wait until this file exists (none: they do not wait). */
  releaseFile?: string;
}): WorkerProcess {
  return spawnScript(workerScript, {
    BLOCKS: settings.blocks === true ? "1" : "0",
    WORKER_LABEL: settings.label ?? "",
    REDIS_PORT: String(settings.port),
    QUEUE_NAME: settings.name,
    CONCURRENCY: String(settings.concurrency ?? 1),
    LOCK_MS: String(settings.lockMs ?? 30_000),
    STALLED_MS: String(settings.stalledMs ?? 30_000),
    TIMEOUT_MS: settings.timeoutMs === undefined ? "" : String(settings.timeoutMs),
    CLOSE_GRACE_MS: settings.closeGraceMs === undefined ? "" : String(settings.closeGraceMs),
    RELEASE_FILE: settings.releaseFile ?? "",
  });
}

/** Forks test/helpers/conversation-process.ts (through tsx): a conversation that checkpoints to `checkpointFile`. */
export function spawnConversation(settings: {
  port: number;
  name: string;
  checkpointFile: string;
  hangAt?: string;
  slowMs?: number;
}): WorkerProcess {
  return spawnScript(conversationScript, {
    REDIS_PORT: String(settings.port),
    QUEUE_NAME: settings.name,
    CHECKPOINT_FILE: settings.checkpointFile,
    HANG_AT: settings.hangAt ?? "",
    SLOW_MS: String(settings.slowMs ?? 1000),
  });
}

/**
 * Forks test/helpers/restate-service-process.ts: a Restate service endpoint on `port` that logs
 * its model calls, tool starts and approval requests to `logFile`; its `slow` tool sleeps `slowMs`.
 */
export function spawnRestateService(settings: { port: number; logFile: string; slowMs?: number }): WorkerProcess {
  // RESTATE_SDK_DIR: a folder with another @restatedev/restate-sdk in its node_modules (the newest,
  // on Node 22): the bundle is written there, so that its import of the SDK resolves to that one.
  const sdkDir = process.env.RESTATE_SDK_DIR;
  return spawnScript(
    restateServiceScript,
    {
      SERVICE_PORT: String(settings.port),
      LOG_FILE: settings.logFile,
      SLOW_MS: String(settings.slowMs ?? 0),
    },
    sdkDir === undefined || sdkDir === "" ? undefined : resolve(root, sdkDir),
  );
}

const root = fileURLToPath(new URL("../..", import.meta.url));
const bundles = new Map<string, string>();

/**
 * The script and what it imports from this repository as one JavaScript file (packages stay
 * imports, resolved from the repository's node_modules): a child then starts without tsx compiling
 * src/ (seconds per child on a loaded machine; several tests start a few). Made once per test
 * process, named by its content: test files running at once share it (written to a file of their
 * own, then renamed), and a later run reuses it while the sources are unchanged.
 */
function bundled(script: string, into = join(root, ".tmp", "test-processes")): string {
  const done = bundles.get(script);
  if (done !== undefined) return done;
  const built = buildSync({
    entryPoints: [script],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    logLevel: "silent",
    write: false,
    outdir: "out",
  });
  const code = built.outputFiles[0]?.contents;
  if (code === undefined) throw new Error(`esbuild made nothing of ${script}`);
  const dir = into;
  mkdirSync(dir, { recursive: true });
  const hash = createHash("sha256").update(code).digest("hex").slice(0, 16);
  const file = join(dir, `${basename(script, ".ts")}-${hash}.mjs`);
  if (!existsSync(file)) {
    const own = `${file}.${process.pid}.tmp`;
    writeFileSync(own, code);
    renameSync(own, file);
  }
  bundles.set(script, file);
  return file;
}

function spawnScript(script: string, env: Record<string, string>, bundleDir?: string): WorkerProcess {
  const child = fork(bundled(script, bundleDir), [], {
    execArgv: [],
    stdio: ["ignore", "ignore", "ignore", "ipc"],
    env: { ...process.env, ...env },
  });
  const messages: WorkerMessage[] = [];
  const waiters = new Set<{ predicate: (message: WorkerMessage) => boolean; resolve: (m: WorkerMessage) => void }>();
  child.on("message", (message: WorkerMessage) => {
    messages.push(message);
    for (const waiter of waiters) {
      if (waiter.predicate(message)) {
        waiters.delete(waiter);
        waiter.resolve(message);
      }
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("exit", (code, signal) => resolve({ code, signal }));
  });
  return {
    child,
    messages,
    exited,
    // A safety net, generous: starting a process takes seconds on a loaded machine.
    waitFor(predicate, timeoutMs = 60_000) {
      const found = messages.find(predicate);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const waiter = {
          predicate,
          resolve: (message: WorkerMessage) => {
            clearTimeout(timer);
            resolve(message);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`worker ${child.pid}: no matching message within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
  };
}
