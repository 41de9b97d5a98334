import { type ChildProcess, spawn } from "node:child_process";
import { errorMessage } from "../internal/describe.js";
import type { ToolContext } from "../tool.js";
import { errorResult, newToolResult, type ToolResult } from "../tool-result.js";
import { BoundedText, formatOutput } from "./bounded-output.js";
import { type ExecSettings, seconds } from "./exec-options.js";
import { ProcessSession } from "./process-session.js";

// Running a command of `execute_bash`: `sh -c` in a session of its own, every process of which is
// killed when the call ends (see process-session.ts), its output bounded.

/** After the session was killed, how long to wait for the pipes to close (a process that left it may hold them). */
const CLOSE_GRACE_MS = 1_000;

/** The sessions of the commands running now, killed if this process exits first (a detached session would outlive it). */
const running = new Set<ProcessSession>();
let exitHookInstalled = false;

function track(session: ProcessSession): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on("exit", () => {
      for (const each of running) each.endSync();
    });
  }
  running.add(session);
}

type Ending =
  | { kind: "exit"; code: number | null; signal: NodeJS.Signals | null }
  | { kind: "timeout" }
  | { kind: "abort" }
  | { kind: "error"; error: Error };

/**
 * Runs `sh -c command` in `cwd`, in a session of its own, for at most `timeoutMs`: the result once
 * every process of the session is gone (see {@link CommandRun}).
 */
export function run(
  settings: ExecSettings,
  command: string,
  cwd: string,
  context: ToolContext,
  timeoutMs: number,
): Promise<ToolResult> {
  return new Promise<ToolResult>((resolve) => {
    let child: ChildProcess;
    try {
      child = spawn("/bin/sh", ["-c", command], {
        cwd,
        env: settings.env,
        // Its own session and process group, so that a timeout or an abort finds everything it started.
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
    } catch (error) {
      resolve(startFailure(error));
      return;
    }
    new CommandRun(settings, child, context, resolve).watch(timeoutMs);
  });
}

/**
 * A started command until its result: it ends once (exit, timeout, abort or error), then every
 * process of its session is killed, and the result goes once they are gone and the pipes closed
 * (or {@link CLOSE_GRACE_MS} later: a process that left the session may hold them).
 */
class CommandRun {
  readonly #settings: ExecSettings;
  readonly #child: ChildProcess;
  readonly #context: ToolContext;
  readonly #resolve: (result: ToolResult) => void;
  readonly #stdout: BoundedText;
  readonly #stderr: BoundedText;
  readonly #session: ProcessSession | undefined;
  #ending: Ending | undefined;
  #timer: NodeJS.Timeout | undefined;
  #grace: NodeJS.Timeout | undefined;
  #closed = false;
  #ended: boolean;
  #done = false;
  readonly #onAbort = () => this.#stop({ kind: "abort" });

  constructor(
    settings: ExecSettings,
    child: ChildProcess,
    context: ToolContext,
    resolve: (result: ToolResult) => void,
  ) {
    this.#settings = settings;
    this.#child = child;
    this.#context = context;
    this.#resolve = resolve;
    this.#stdout = new BoundedText(settings.maxOutputChars);
    this.#stderr = new BoundedText(settings.maxOutputChars);
    // Read now, before the shell can be reaped: it identifies the session (see process-session.ts).
    this.#session = child.pid === undefined ? undefined : new ProcessSession(child.pid);
    this.#ended = this.#session === undefined;
    if (this.#session !== undefined) track(this.#session);
  }

  /** Listens to the child, the call's signal and the timeout. */
  watch(timeoutMs: number): void {
    const child = this.#child;
    child.stdout?.on("data", (chunk: Buffer) => this.#stdout.write(chunk));
    child.stderr?.on("data", (chunk: Buffer) => this.#stderr.write(chunk));
    child.on("error", (error) => {
      // Not started (no pid), or a failure while it runs: nothing of it may stay behind.
      if (this.#ending === undefined) this.#stop({ kind: "error", error });
      if (this.#ended) this.#finish();
    });
    // The shell is done (and reaped): what it left running is killed too (no orphans).
    child.on("exit", (code, exitSignal) => {
      if (this.#session !== undefined) this.#session.leaderReaped = true;
      this.#stop({ kind: "exit", code, signal: exitSignal });
    });
    child.on("close", () => {
      this.#closed = true;
      if (this.#ended) this.#finish();
    });
    this.#context.signal.addEventListener("abort", this.#onAbort, { once: true });
    if (timeoutMs !== Number.POSITIVE_INFINITY) {
      this.#timer = setTimeout(() => this.#stop({ kind: "timeout" }), timeoutMs);
    }
  }

  #finish(): void {
    if (this.#done) return;
    this.#done = true;
    clearTimeout(this.#timer);
    clearTimeout(this.#grace);
    this.#context.signal.removeEventListener("abort", this.#onAbort);
    this.#child.stdout?.destroy();
    this.#child.stderr?.destroy();
    this.#stdout.end();
    this.#stderr.end();
    const { maxOutputChars, timeoutMs } = this.#settings;
    this.#resolve(result(this.#ending, formatOutput(this.#stdout, this.#stderr, maxOutputChars), timeoutMs));
  }

  /** Every process of the session is gone (or as many as could be killed): the result may go. */
  #onEnded(): void {
    this.#ended = true;
    const session = this.#session;
    if (session !== undefined) {
      running.delete(session);
      const { survivors } = session;
      if (survivors > 0) {
        this.#context.logger.warn(
          { pid: session.pid, survivors },
          "execute_bash: processes of the command survived every kill",
        );
      }
    }
    // The pipes close once every process holding them died; one that left the session may not.
    if (this.#closed) this.#finish();
    else this.#grace ??= setTimeout(() => this.#finish(), CLOSE_GRACE_MS);
  }

  #stop(why: Ending): void {
    // Ended once: after the session is gone its ids may be reused, so a later kill could hit another.
    if (this.#ending !== undefined) return;
    this.#ending = why;
    clearTimeout(this.#timer);
    if (this.#session === undefined) return;
    const onEnded = () => this.#onEnded();
    void this.#session.end().then(onEnded, onEnded);
  }
}

function startFailure(error: unknown): ToolResult {
  const result = errorResult(`the command could not be started: ${errorMessage(error)}`);
  return error instanceof Error ? result.withError(error) : result;
}

function result(ending: Ending | undefined, text: string, timeoutMs: number): ToolResult {
  const output = text.endsWith("\n") ? text.slice(0, -1) : text;
  switch (ending?.kind) {
    case "timeout":
      return errorResult(`command timed out after ${seconds(timeoutMs)}\n${output}`);
    case "abort":
      return errorResult(`command aborted\n${output}`);
    case "error":
      return startFailure(ending.error);
    case "exit":
      if (ending.code === 0) return newToolResult(output);
      if (ending.code !== null) return errorResult(`${output}\n[exit code ${ending.code}]`);
      return errorResult(`${output}\n[killed by signal ${ending.signal ?? "unknown"}]`);
    default:
      return errorResult(`${output}\n[the command ended without an exit status]`);
  }
}
