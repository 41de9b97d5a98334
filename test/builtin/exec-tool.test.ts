import { execFile, execFileSync, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import * as fsPromises from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createExecTool, type ExecToolOptions } from "../../src/builtin/exec-tool.js";
import { waitingTurns, workspacesInTurn } from "../../src/builtin/workspace-turns.js";
import { createToolContext } from "../../src/testing/index.js";
import type { ToolContext } from "../../src/tool.js";
import { ToolRegistry } from "../../src/tool-registry.js";
import type { ToolResult } from "../../src/tool-result.js";

// The filesystem calls of the workspace check, observed (they still do what they do): how often a
// path is looked up, and a listing that hides what its entries are.
vi.mock("node:fs/promises", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:fs/promises")>();
  return { ...actual, lstat: vi.fn(actual.lstat), realpath: vi.fn(actual.realpath), opendir: vi.fn(actual.opendir) };
});

let root: string;
let workspace: string;
let outside: string;

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "toolloop-exec-")));
  workspace = join(root, "workspace");
  outside = join(root, "outside");
  mkdirSync(workspace);
  mkdirSync(outside);
  writeFileSync(join(outside, "secret.txt"), "top secret");
  writeFileSync(join(workspace, "notes.txt"), "hello");
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

function tool(options: Partial<ExecToolOptions> = {}) {
  return createExecTool({ workspace, ...options });
}

async function run(
  command: string,
  options: Partial<ExecToolOptions> = {},
  context: ToolContext = createToolContext(),
  extra: Record<string, unknown> = {},
): Promise<ToolResult> {
  return (await tool(options).execute({ command, ...extra }, context)) as ToolResult;
}

/** `true` while `pid` is a live process (a zombie waiting for its parent to reap it counts as dead). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  if (!existsSync("/proc/self/stat")) return true; // no procfs (macOS): kill(pid, 0) is the answer
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false; // gone between the two checks
  }
}

async function expectDead(pidFile: string): Promise<void> {
  const pid = Number(readFileSync(pidFile, "utf8").trim());
  expect(pid).toBeGreaterThan(0);
  await vi.waitFor(() => expect(isAlive(pid)).toBe(false), { timeout: 5_000, interval: 20 });
}

/**
 * Waits until `file` of the workspace holds a whole line (a pid, written by one `echo`): on real
 * timers, also while a test fakes them (vi.waitFor would advance the fake clock as it polls).
 */
async function waitForLine(file: string): Promise<void> {
  const path = join(workspace, file);
  for (let waited = 0; waited < 10_000; waited += 20) {
    if (existsSync(path) && readFileSync(path, "utf8").endsWith("\n")) return;
    await sleep(20);
  }
  throw new Error(`${file} was not written within 10 s`);
}

/** Runs a TypeScript file with tsx, in a process of its own. */
async function runScript(script: string): Promise<void> {
  const tsx = new URL("../../node_modules/.bin/tsx", import.meta.url).pathname;
  await new Promise<void>((resolve, reject) => {
    execFile(tsx, [script], { timeout: 20_000 }, (error) => (error ? reject(error) : resolve()));
  });
}

describe("createExecTool", () => {
  it("is execute_bash { command, working_directory? }, with another name when asked", () => {
    const exec = tool();
    expect(exec.name).toBe("execute_bash");
    expect(exec.parameters).toMatchObject({
      required: ["command"],
      properties: { command: { type: "string" }, working_directory: { type: "string" } },
      additionalProperties: false,
    });
    expect(exec.description).toContain("30s");
    expect(exec.description).toContain("$variables other than $HOME and $PWD, xargs");
    expect(tool({ restrictToWorkspace: false }).description).not.toContain("$variables");
    expect(tool({ name: "shell" }).name).toBe("shell");
  });

  it.each([
    [{ timeoutMs: 0 }, "createExecTool: timeoutMs must be"],
    [{ timeoutMs: "30" }, "createExecTool: timeoutMs must be"],
    [{ maxOutputChars: 0 }, "createExecTool: maxOutputChars must be an integer > 0, got 0"],
    [{ maxOutputChars: 1.5 }, "createExecTool: maxOutputChars must be an integer > 0, got 1.5"],
    [{ denyPatterns: ["rm"] }, 'createExecTool: denyPatterns[0] must be a RegExp, got "rm"'],
    [{ denyPatterns: /rm/ }, "createExecTool: denyPatterns must be an array of RegExp, got RegExp"],
    [{ allowPatterns: [null] }, "createExecTool: allowPatterns[0] must be a RegExp, got null"],
    [{ env: { A: 1 } }, 'createExecTool: env["A"] must be a string, got 1'],
    [{ env: { "A=B": "x" } }, 'createExecTool: env["A=B"] must be an environment variable name, got "A=B"'],
    [{ env: { A: "x\0y" } }, "createExecTool: env.A must be a string without NUL"],
    [{ name: 5 }, "createExecTool: name must be a string, got 5"],
    [{ workspace: "relative/dir" }, 'createExecTool: workspace must be an absolute directory path, got "relative/dir"'],
  ])("throws a TypeError for a bad option %j (fails closed: no tool)", (options, message) => {
    expect(() => createExecTool({ workspace, ...(options as object) })).toThrow(TypeError);
    expect(() => createExecTool({ workspace, ...(options as object) })).toThrow(message);
  });

  it("works through a registry", async () => {
    const registry = new ToolRegistry();
    registry.register(tool());
    const result = await registry.execute("execute_bash", { command: "echo hi" });
    expect(result.forLLM).toBe("hi");
    expect(result.isError).toBe(false);
  });
});

describe("output", () => {
  it("is stdout", async () => {
    const result = await run("echo hi");
    expect(result.isError).toBe(false);
    expect(result.forLLM).toBe("hi");
  });

  it("is stdout, then STDERR: and stderr", async () => {
    expect((await run("echo out; echo err >&2")).forLLM).toMatchInlineSnapshot(`
      "out
      STDERR:
      err"
    `);
    expect((await run("printf out; echo err >&2")).forLLM).toBe("out\nSTDERR:\nerr");
    expect((await run("echo err >&2")).forLLM).toBe("STDERR:\nerr");
  });

  it("is (no output) when there is none", async () => {
    expect((await run("true")).forLLM).toBe("(no output)");
    expect((await run("exit 2")).forLLM).toBe("(no output)\n[exit code 2]");
  });

  it("never mixes the output of concurrent calls", async () => {
    const exec = tool();
    const results = await Promise.all(
      ["a", "b", "c", "d"].map((letter) => exec.execute({ command: `sleep 0.1; echo ${letter}` }, createToolContext())),
    );
    expect(results.map((result) => (result as ToolResult).forLLM)).toEqual(["a", "b", "c", "d"]);
  });

  it("is an error result with [exit code N] on a non-zero exit", async () => {
    const result = await run("echo partial; exit 3");
    expect(result.isError).toBe(true);
    expect(result.forLLM).toMatchInlineSnapshot(`
      "partial
      [exit code 3]"
    `);
  });

  it("is cut at maxOutputChars, saying how much more there was", async () => {
    const result = await run("head -c 100 /dev/zero | tr '\\0' a", { maxOutputChars: 20 });
    expect(result.forLLM).toBe(`${"a".repeat(20)}\n... (truncated, 80 more chars)`);
  });

  it("counts stderr in the cut", async () => {
    const result = await run("printf 0123456789; printf abcdefghij >&2", { maxOutputChars: 15 });
    expect(result.forLLM).toBe("0123456789\nSTDE\n... (truncated, 14 more chars)");
  });

  it("keeps a flood bounded: only maxOutputChars are kept, the rest is counted", async () => {
    const result = await run("yes | head -c 2000000", { maxOutputChars: 100 });
    expect(result.forLLM).toBe(`${"y\n".repeat(50)}\n... (truncated, 1999900 more chars)`);
  });

  it("keeps an endless flood bounded until the timeout ends it", async () => {
    // How much `yes` wrote before the timeout depends on the machine's load (on a busy one the shell
    // may not even have started): only the bound is asserted.
    const result = await run("yes", { timeoutMs: 300, maxOutputChars: 100 });
    expect(result.isError).toBe(true);
    expect(result.forLLM.startsWith("command timed out after 0.3s")).toBe(true);
    expect(result.forLLM.length).toBeLessThan(200);
  });
});

describe("process group", () => {
  it("kills the whole group at the timeout and returns the partial output", async () => {
    // The tool's timeout is a fake timer, fired once bg.pid is written: however slow the machine.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    let result: ToolResult;
    try {
      const pending = run("echo started; sleep 30 & echo $! > bg.pid; sleep 30", { timeoutMs: 2_000 });
      await waitForLine("bg.pid");
      vi.advanceTimersByTime(2_000);
      result = await pending;
    } finally {
      vi.useRealTimers();
    }
    expect(result.isError).toBe(true);
    expect(result.forLLM).toMatchInlineSnapshot(`
      "command timed out after 2s
      started"
    `);
    await expectDead(join(workspace, "bg.pid"));
  });

  it("kills what the command left in the background when it ends", async () => {
    const result = await run("sleep 30 & echo $! > bg.pid; echo done");
    expect(result.forLLM).toBe("done");
    await expectDead(join(workspace, "bg.pid"));
  });

  it("kills the whole group when the call's signal aborts", async () => {
    const controller = new AbortController();
    const pending = run(
      "echo started; sleep 30 & echo $! > bg.pid; sleep 30",
      { timeoutMs: 60_000 },
      createToolContext({ signal: controller.signal }),
    );
    await waitForLine("bg.pid");
    controller.abort();
    const result = await pending;
    expect(result.isError).toBe(true);
    expect(result.forLLM).toBe("command aborted\nstarted");
    await expectDead(join(workspace, "bg.pid"));
  });

  it("kills running commands when this process exits", async () => {
    const script = join(root, "exit-early.ts");
    const source = new URL("../../src/builtin/exec-tool.ts", import.meta.url).pathname;
    writeFileSync(
      script,
      `import { existsSync, readFileSync } from "node:fs";
import { createExecTool } from ${JSON.stringify(source)};
const tool = createExecTool({ workspace: ${JSON.stringify(workspace)} });
const context = { signal: new AbortController().signal, channel: "", chatId: "", metadata: {}, logger: {} };
void tool.execute({ command: "sleep 30 & echo $! > bg.pid; sleep 30" }, context as never);
const pidFile = ${JSON.stringify(join(workspace, "bg.pid"))};
const timer = setInterval(() => { if (existsSync(pidFile) && readFileSync(pidFile, "utf8").endsWith("\\n")) process.exit(0); }, 10);
setTimeout(() => clearInterval(timer), 10_000);
`,
    );
    await runScript(script);
    await expectDead(join(workspace, "bg.pid"));
  });

  it("returns even when a process that left the session and its parent ended holds the output open (it survives: documented)", async () => {
    // A program may call setsid() itself (here node's detached spawn); the deny list only sees `setsid`.
    const script =
      "const c = require('child_process').spawn('sleep', ['30'], { detached: true, stdio: ['ignore', 'inherit', 'inherit'] });" +
      " require('fs').writeFileSync('escaped.pid', String(c.pid)); c.unref();";
    const result = await run(`node -e "${script}"; echo done`, { timeoutMs: 60_000 });
    const pid = Number(readFileSync(join(workspace, "escaped.pid"), "utf8"));
    try {
      expect(result.forLLM).toBe("done");
      expect(isAlive(pid)).toBe(true);
    } finally {
      process.kill(pid, "SIGKILL");
    }
  });

  it("kills the whole group when the registry's own timeout aborts the call", async () => {
    const registry = new ToolRegistry();
    registry.register(tool({ timeoutMs: 60_000 }));
    // The registry's timeout is a fake timer (on a fake clock: it reads performance.now()), fired
    // once bg.pid is written: however slow the machine.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    let result: ToolResult;
    try {
      const pending = registry.execute(
        "execute_bash",
        { command: "sleep 30 & echo $! > bg.pid; sleep 30" },
        { timeoutMs: 1_000 },
      );
      await waitForLine("bg.pid");
      vi.advanceTimersByTime(1_000);
      result = await pending;
    } finally {
      vi.useRealTimers();
    }
    expect(result.isError).toBe(true);
    await expectDead(join(workspace, "bg.pid"));
  });

  it("does not start when the signal is already aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await run("touch ran", {}, createToolContext({ signal: controller.signal }));
    expect(result.forLLM).toBe("command aborted before it started");
    expect(existsSync(join(workspace, "ran"))).toBe(false);
  });
});

describe("every process of the command (its session), not only its group", () => {
  // What the commands below start, killed here (by pid) if a test fails before the tool did it.
  const started: number[] = [];
  afterEach(() => {
    for (const pid of started.splice(0)) if (isAlive(pid)) process.kill(pid, "SIGKILL");
  });

  /** The pids written in `file` of the workspace (remembered for the cleanup). */
  function pidsIn(file: string): number[] {
    const pids = readFileSync(join(workspace, file), "utf8").trim().split(/\s+/).map(Number);
    expect(pids[0]).toBeGreaterThan(1);
    started.push(...pids.filter((pid) => pid > 1));
    return pids;
  }

  /** A script that writes its pid and its parent's (as it started) to `file`, then becomes `program`. */
  function pidScript(name: string, file: string, program: string): void {
    writeFileSync(join(workspace, name), `echo $$ $PPID > ${file}.tmp; mv ${file}.tmp ${file}; exec ${program}\n`);
  }

  it("kills what timeout moved into a group of its own when the command ends (timeout 999 yes >/dev/null &)", async () => {
    pidScript("yes.sh", "yes.pid", "yes");
    const result = await run(
      "timeout 999 sh yes.sh > /dev/null & while [ ! -s yes.pid ]; do sleep 0.01; done; echo ended",
    );
    expect(result.forLLM).toBe("ended");
    const [yes, timeout] = pidsIn("yes.pid");
    expect(isAlive(yes as number)).toBe(false);
    expect(isAlive(timeout as number)).toBe(false);
  });

  it("kills timeout written directly in the command (timeout 30 sleep 30 >/dev/null & sleep …)", async () => {
    // sleep, not yes: where the fix is missing, the child left behind (whose pid the test does not
    // know, so cannot clean up) ends by itself.
    const result = await run("timeout 30 sleep 30 >/dev/null & echo $! > timeout.pid; sleep 0.5");
    expect(result.forLLM).toBe("(no output)");
    const [timeout] = pidsIn("timeout.pid");
    expect(isAlive(timeout as number)).toBe(false);
  });

  it("kills a job of a shell with job control (bash -c 'set -m; sleep 1000 &')", async () => {
    pidScript("sleeper.sh", "bg.pid", "sleep 1000");
    const result = await run(
      "bash -c 'set -m; sh sleeper.sh &'; while [ ! -s bg.pid ]; do sleep 0.01; done; echo ended",
    );
    expect(result.forLLM).toBe("ended");
    const [sleeper] = pidsIn("bg.pid");
    expect(isAlive(sleeper as number)).toBe(false);
  });

  it("kills timeout and its child at the tool's timeout (timeout 60 npm test, as the foreground command)", async () => {
    pidScript("long.sh", "long.pid", "sleep 100");
    // The tool's timeout is a fake timer, fired once the processes exist: however slow the machine.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const pending = run("timeout 60 sh long.sh; echo after", { timeoutMs: 5_000 });
      await waitForLine("long.pid");
      // Past the timeout, and past the wait for the pipes after it: whatever holds them, the call ends.
      vi.advanceTimersByTime(10_000);
      const result = await pending;
      expect(result.forLLM).toBe("command timed out after 5s\n(no output)");
    } finally {
      vi.useRealTimers();
    }
    const [sleeper, timeout] = pidsIn("long.pid");
    expect(isAlive(sleeper as number)).toBe(false);
    expect(isAlive(timeout as number)).toBe(false);
  });

  it("kills a child that left the session while its parent is still running (setsid, then the abort)", async () => {
    const script =
      "const c = require('child_process').spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });" +
      " require('fs').writeFileSync('escaped.pid', c.pid + ' ' + process.pid + '\\n'); setInterval(() => {}, 1000);";
    const controller = new AbortController();
    const pending = run(`node -e "${script}"`, { timeoutMs: 60_000 }, createToolContext({ signal: controller.signal }));
    await waitForLine("escaped.pid");
    controller.abort();
    expect((await pending).forLLM).toBe("command aborted\n(no output)");
    const [escaped, parent] = pidsIn("escaped.pid");
    expect(isAlive(escaped as number)).toBe(false);
    expect(isAlive(parent as number)).toBe(false);
  });

  it("kills what left the group when this process exits (timeout 60 sleep 100 &)", async () => {
    pidScript("long.sh", "long.pid", "sleep 100");
    const script = join(root, "exit-early.ts");
    const source = new URL("../../src/builtin/exec-tool.ts", import.meta.url).pathname;
    writeFileSync(
      script,
      `import { existsSync } from "node:fs";
import { createExecTool } from ${JSON.stringify(source)};
const tool = createExecTool({ workspace: ${JSON.stringify(workspace)} });
const context = { signal: new AbortController().signal, channel: "", chatId: "", metadata: {}, logger: {} };
void tool.execute({ command: "timeout 60 sh long.sh & sleep 30" }, context as never);
const timer = setInterval(() => { if (existsSync(${JSON.stringify(join(workspace, "long.pid"))})) process.exit(0); }, 10);
setTimeout(() => clearInterval(timer), 10_000);
`,
    );
    await runScript(script);
    const [sleeper, timeout] = pidsIn("long.pid");
    await vi.waitFor(() => expect(isAlive(sleeper as number)).toBe(false), { timeout: 5_000, interval: 20 });
    expect(isAlive(timeout as number)).toBe(false);
  });

  it("kills what a subshell left behind (a double fork that stays in the session)", async () => {
    const result = await run("(sleep 30 & echo $! > bg.pid); echo ended");
    expect(result.forLLM).toBe("ended");
    const [sleeper] = pidsIn("bg.pid");
    expect(isAlive(sleeper as number)).toBe(false);
  });
});

describe("environment", () => {
  const SECRET = "TOOLLOOP_EXEC_TEST_SECRET";
  afterEach(() => {
    delete process.env[SECRET];
  });

  it("never passes this process's environment: PATH, HOME (the workspace) and options.env only", async () => {
    process.env[SECRET] = "hunter2";
    const result = await run("env", { env: { GREETING: "hello" } });
    expect(result.forLLM).not.toContain("hunter2");
    expect(result.forLLM).not.toContain(SECRET);
    const names = result.forLLM
      .split("\n")
      .map((line) => line.slice(0, line.indexOf("=")))
      .sort();
    expect(names.filter((name) => !["PWD", "OLDPWD", "SHLVL", "_"].includes(name))).toEqual([
      "GREETING",
      "HOME",
      "PATH",
    ]);
    expect(result.forLLM).toContain(`HOME=${workspace}`);
  });

  it("refuses to read this process's environment through /proc, also in unrestricted mode", async () => {
    process.env[SECRET] = "hunter2";
    const result = await run("cat /proc/$PPID/environ", { restrictToWorkspace: false });
    expect(result.isError).toBe(true);
    expect(result.forLLM).not.toContain("hunter2");
  });

  it("runs in the workspace", async () => {
    expect((await run("pwd")).forLLM).toBe(workspace);
  });
});

describe("deny and allow lists", () => {
  it("refuses a denied command with an error result and does not run it", async () => {
    mkdirSync(join(workspace, "build"));
    const result = await run("r\\m -rf build");
    expect(result.isError).toBe(true);
    expect(result.forLLM).toMatchInlineSnapshot(
      `"command refused by the deny list: rm with -r/-f (or a $variable argument)"`,
    );
    expect(existsSync(join(workspace, "build"))).toBe(true);
  });

  it("adds denyPatterns to the defaults", async () => {
    const options = { denyPatterns: [/\bnpm publish\b/] };
    expect((await run("npm publish", options)).isError).toBe(true);
    expect((await run("sudo true", options)).forLLM).toContain("privilege escalation");
  });

  it("runs only allowed commands, and the deny list still applies to them (picoclaw #3079)", async () => {
    const options = { allowPatterns: [/^echo\b/, /^cat\b/] };
    expect((await run("echo ok", options)).forLLM).toBe("ok");
    expect((await run("ls", options)).forLLM).toBe("command refused: it is not on this application's allow list");
    expect((await run("echo `id`", options)).forLLM).toContain("backticks");
  });
});

describe("the workspace (restricted mode, the default)", () => {
  it.each([
    ["cat /etc/passwd", '"/etc/passwd" is outside the workspace'],
    ["ls ..", `".." has a '..' segment (paths must stay inside the workspace)`],
    [
      "cat notes.txt ../outside/secret.txt",
      `"../outside/secret.txt" has a '..' segment (paths must stay inside the workspace)`,
    ],
    ["cat --file=/etc/passwd", '"/etc/passwd" is outside the workspace'],
    ["sort -o/etc/x notes.txt", '"/etc/x" is outside the workspace'],
    ["tar -xf/etc/x", '"/etc/x" is outside the workspace'],
    ["sort -o../x notes.txt", `"-o../x" has a '..' segment (paths must stay inside the workspace)`],
    ["git -C.. status", `"-C.." has a '..' segment (paths must stay inside the workspace)`],
    ["X=.. ls", `"X=.." has a '..' segment (paths must stay inside the workspace)`],
    ["X=/etc/passwd sh run.sh", '"/etc/passwd" is outside the workspace'],
    ["curl file:///etc/passwd", '"/etc/passwd" is outside the workspace'],
    ["curl file:/etc/passwd", '"/etc/passwd" is outside the workspace'],
    ["tool --url=file:///etc/passwd", '"/etc/passwd" is outside the workspace'],
    ["curl file://localhost/etc/passwd", '"/etc/passwd" is outside the workspace'],
    ["curl file:///tmp/%2e%2e/etc/passwd", '"file:///tmp/%2e%2e/etc/passwd" is a file URL with a percent escape'],
    ["ls ~root", `"~root" names another user's home directory`],
    ["cat '/etc/'passwd", '"/etc/passwd" is outside the workspace'],
  ])("refuses %j", async (command, reason) => {
    const result = await run(command);
    expect(result.isError).toBe(true);
    expect(result.forLLM).toBe(`command refused: ${reason}`);
  });

  it("refuses an operand however it is quoted or escaped (fast-check)", async () => {
    const exec = tool();
    // Each character as itself, backslash-escaped, or in single or double quotes: the shell reads the same word.
    const spelled = (text: string) =>
      fc
        .tuple(...[...text].map((char) => fc.constantFrom(char, `\\${char}`, `'${char}'`, `"${char}"`)))
        .map((parts) => parts.join(""));
    await fc.assert(
      fc.asyncProperty(fc.oneof(spelled("/etc/passwd"), spelled("../outside/secret.txt")), async (path) => {
        const result = (await exec.execute({ command: `cat ${path}` }, createToolContext())) as ToolResult;
        expect(result.forLLM).toMatch(/^command refused: /);
      }),
      { numRuns: 100 },
    );
  });

  it("refuses a relative operand that leads outside through a symlink (picoclaw #1526)", async () => {
    symlinkSync(outside, join(workspace, "leak"));
    symlinkSync(join(outside, "secret.txt"), join(workspace, "link.txt"));
    expect((await run("cat leak/secret.txt")).forLLM).toBe(
      'command refused: "leak/secret.txt" is outside the workspace',
    );
    expect((await run("cat link.txt")).forLLM).toBe('command refused: "link.txt" is outside the workspace');
    expect((await run('cat "le"ak/secret.txt')).forLLM).toContain("is outside the workspace");
    expect((await run("cd leak && cat secret.txt")).forLLM).toBe('command refused: "leak" is outside the workspace');
  });

  it("refuses a wildcard that could match a symlink leading outside", async () => {
    symlinkSync(outside, join(workspace, "leak"));
    expect((await run("cat l*")).forLLM).toBe(
      'command refused: "l*" could match "leak", a symlink that leads outside the workspace',
    );
    // Conservative: any symlink out in the listed directory refuses the wildcard, match or not.
    expect((await run("cat *.txt")).isError).toBe(true);
    // A quoted wildcard is not expanded by the shell: it is a word like any other.
    expect((await run("find . -name '*.txt'")).forLLM).toBe("./notes.txt");
    mkdirSync(join(workspace, "sub"));
    symlinkSync(outside, join(workspace, "sub", "leak"));
    expect((await run("cat */leak/secret.txt")).forLLM).toBe(
      `command refused: "*/leak/secret.txt" has a wildcard before its last '/'; name the directory`,
    );
  });

  it("refuses a wildcard over a directory too large to check", async () => {
    mkdirSync(join(workspace, "many"));
    for (let index = 0; index <= 1_000; index++) writeFileSync(join(workspace, "many", `f${index}`), "");
    expect((await run("ls many/*")).forLLM).toBe(
      'command refused: "many/*" is a wildcard over more than 1000 entries, too many to check; name the files',
    );
  });

  describe("the check's own limits: operations, time, the signal", () => {
    /** Directories d0 … d<count-1> of `size` empty files each: a wildcard over each is fine alone. */
    function directoriesOfFiles(count: number, size: number): string {
      const words: string[] = [];
      for (let directory = 0; directory < count; directory++) {
        mkdirSync(join(workspace, `d${directory}`));
        for (let file = 0; file < size; file++) writeFileSync(join(workspace, `d${directory}`, `f${file}`), "");
        words.push(`d${directory}/*`);
      }
      return words.join(" ");
    }

    it("refuses a command whose check needs more than 4,000 filesystem operations (echo d0/* … d4/*)", async () => {
      const wildcards = directoriesOfFiles(5, 801);
      const result = await run(`echo ${wildcards}; touch ran`);
      expect(result.isError).toBe(true);
      expect(result.forLLM).toMatchInlineSnapshot(
        `"command refused: checking its paths takes more than 4,000 filesystem operations (paths looked up, directory entries read), too many to check; name fewer files, or quote a pattern for a program that matches it itself (find . -name '*.ts')"`,
      );
      expect(existsSync(join(workspace, "ran"))).toBe(false);
      // Four of them are fine.
      expect((await run("echo d0/f1* d1/f1* d2/f1* d3/f1* | wc -w")).forLLM).toBe("444");
    });

    it("counts the steps through symlinks the cache answers: a chain of long symlinks is refused (attack1, item 8)", async () => {
      // t0 -> deep/t1 -> … -> deep/t38 -> deep, each target 100 components long; d/s0 … d/s19 -> deep/t0.
      const deep = join(workspace, "deep", ...Array.from({ length: 100 }, () => "a"));
      mkdirSync(deep, { recursive: true });
      for (let link = 0; link < 39; link++) {
        symlinkSync(link === 38 ? deep : join(deep, `t${link + 1}`), join(deep, `t${link}`));
      }
      mkdirSync(join(workspace, "d"));
      for (let link = 0; link < 20; link++) symlinkSync(join(deep, "t0"), join(workspace, "d", `s${link}`));
      // Few filesystem operations (each component is looked up once), but 20 walks of 39 × 100 steps.
      const result = await run("ls d/*; touch ran");
      expect(result.forLLM).toBe(
        "command refused: checking its paths walks more than 40,000 path components (symlinks followed, their " +
          "targets included), too many to check; name fewer files, or remove long chains of symlinks",
      );
      expect(existsSync(join(workspace, "ran"))).toBe(false);
      // One such symlink is fine.
      expect(await run("ls d/s0 >/dev/null && echo ok")).toMatchObject({ isError: false, forLLM: "ok" });
    });

    // A check that would end in a refusal (the symlink at the end), after reading many entries first.
    function slowRefusedCommand(): string {
      const wildcards = directoriesOfFiles(2, 100);
      symlinkSync(outside, join(workspace, "leak"));
      return `echo ${wildcards}; touch ran; cat leak/secret.txt`;
    }

    it("ends with the abort result as soon as the call's signal aborts during the check", async () => {
      const command = slowRefusedCommand();
      const controller = new AbortController();
      const pending = run(command, {}, createToolContext({ signal: controller.signal }));
      controller.abort(); // the check has started (and read nothing yet): it stops here
      const result = await pending;
      expect(result.isError).toBe(true);
      expect(result.forLLM).toBe("command aborted before it started");
      expect(existsSync(join(workspace, "ran"))).toBe(false);
    });

    it("reports a timeout during the check as a timeout: timeoutMs covers the check and the run", async () => {
      const command = slowRefusedCommand();
      // A fake clock: the deadline passes while the check is under way, however fast the machine.
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
      let pending: Promise<ToolResult>;
      try {
        pending = run(command, { timeoutMs: 2_000 });
        vi.advanceTimersByTime(2_000);
      } finally {
        vi.useRealTimers();
      }
      const result = await pending;
      expect(result.isError).toBe(true);
      expect(result.forLLM).toBe("command timed out after 2s while its paths were checked; nothing ran");
      expect(existsSync(join(workspace, "ran"))).toBe(false);
    });
  });

  it("refuses a word that may be a brace expansion (when sh is bash, {.,.}. is ..)", async () => {
    expect((await run("cat {.,.}./outside/secret.txt")).forLLM).toContain("may be a brace expansion");
    expect((await run("find . -name notes.txt -exec cat {} +")).forLLM).toBe("hello");
  });

  it("reads a lone [ as a word, not a wildcard", async () => {
    symlinkSync(outside, join(workspace, "leak"));
    expect((await run("[ -f notes.txt ] && echo yes")).forLLM).toBe("yes");
    expect((await run("ls [l]eak")).forLLM).toContain("a symlink that leads outside the workspace");
  });

  it("lets paths inside the workspace, ~ and harmless devices through", async () => {
    mkdirSync(join(workspace, "sub"));
    symlinkSync(join(workspace, "notes.txt"), join(workspace, "sub", "inside-link"));
    expect((await run(`cat ${join(workspace, "notes.txt")}`)).forLLM).toBe("hello");
    expect((await run("cat sub/inside-link")).forLLM).toBe("hello");
    expect((await run("cat ~/notes.txt 2>/dev/null")).forLLM).toBe("hello");
    expect((await run("cat *.txt")).forLLM).toBe("hello");
    expect((await run("echo https://example.com/a/b")).forLLM).toBe("https://example.com/a/b");
    expect((await run("echo main..feature")).forLLM).toBe("main..feature");
    expect((await run("grep -rn hello .")).forLLM).toBe("./notes.txt:1:hello");
  });

  it("runs in working_directory inside the workspace, and refuses one outside", async () => {
    mkdirSync(join(workspace, "sub"));
    symlinkSync(outside, join(workspace, "leak"));
    expect((await run("pwd", {}, undefined, { working_directory: "sub" })).forLLM).toBe(join(workspace, "sub"));
    for (const directory of ["..", outside, "leak"]) {
      const result = await run("pwd", {}, undefined, { working_directory: directory });
      expect(result.isError).toBe(true);
      expect(result.forLLM).toContain("working_directory");
    }
    expect((await run("pwd", {}, undefined, { working_directory: "notes.txt" })).forLLM).toBe(
      'working_directory "notes.txt" is not a directory',
    );
  });

  it("checks operands against working_directory", async () => {
    mkdirSync(join(workspace, "sub"));
    expect((await run("cat notes.txt", {}, undefined, { working_directory: "sub" })).forLLM).toContain("[exit code 1]");
  });

  it("finishes checking the longest command of distinct words", async () => {
    const words = Array.from({ length: 1_600 }, (_, index) => `w${index}`).join(" ");
    const result = await run(`echo ${words}`.slice(0, 8_192));
    expect(result.isError).toBe(false);
    expect(result.forLLM.startsWith("w0 w1 w2")).toBe(true);
  });

  it("lets a path outside through only when it may be both read and written (a command may do either)", async () => {
    const secret = join(outside, "secret.txt");
    const escaped = new RegExp(`^${outside.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/`);
    expect((await run(`cat ${secret}`, { allowReadPaths: [escaped] })).forLLM).toBe(
      `command refused: ${JSON.stringify(secret)} is outside the workspace`,
    );
    expect((await run(`cat ${secret}`, { allowReadPaths: [escaped], allowWritePaths: [escaped] })).forLLM).toBe(
      "top secret",
    );
    const inOutside = { working_directory: outside };
    expect((await run("pwd", { allowReadPaths: [/.*/] }, undefined, inOutside)).forLLM).toBe(
      `working_directory ${JSON.stringify(outside)}: access denied: path is outside the workspace`,
    );
    expect((await run("pwd", { allowReadPaths: [/.*/], allowWritePaths: [/.*/] }, undefined, inOutside)).forLLM).toBe(
      outside,
    );
  });

  it("keeps the options it was created with", async () => {
    const options: ExecToolOptions = { workspace, restrictToWorkspace: true, allowWritePaths: [] };
    const exec = createExecTool(options);
    options.restrictToWorkspace = false;
    options.allowReadPaths = [/.*/];
    options.allowWritePaths?.push(/.*/);
    const result = (await exec.execute({ command: "cat /etc/passwd" }, createToolContext())) as ToolResult;
    expect(result.forLLM).toBe('command refused: "/etc/passwd" is outside the workspace');
  });

  it("lets absolute paths through when restrictToWorkspace is false", async () => {
    const result = await run(`cat ${join(outside, "secret.txt")}`, { restrictToWorkspace: false });
    expect(result.forLLM).toBe("top secret");
  });
});

describe("the workspace check's lookups (issue 26, follow-up)", () => {
  it("looks a directory up once for a command of many words under it, and the workspace's real path once", async () => {
    mkdirSync(join(workspace, "sub"));
    const words = Array.from({ length: 200 }, (_, index) => `sub/w${index}`).join(" ");
    vi.mocked(fsPromises.lstat).mockClear();
    vi.mocked(fsPromises.realpath).mockClear();
    const result = await run(`echo ${words} | wc -w`);
    expect(result.forLLM).toBe("200");
    const lookups = vi.mocked(fsPromises.lstat).mock.calls.filter(([path]) => path === join(workspace, "sub"));
    expect(lookups).toHaveLength(1);
    expect(vi.mocked(fsPromises.realpath).mock.calls.filter(([path]) => path === workspace)).toHaveLength(1);
    // Each word costs its own lookup, and nothing else is read twice.
    const paths = vi.mocked(fsPromises.lstat).mock.calls.map(([path]) => String(path));
    expect(new Set(paths).size).toBe(paths.length);
  });

  it("sees a symlink in a directory whose listing does not say what its entries are (d_type unknown)", async () => {
    symlinkSync(outside, join(workspace, "leak"));
    hideEntryTypes();
    expect((await run("cat l*")).forLLM).toBe(
      'command refused: "l*" could match "leak", a symlink that leads outside the workspace',
    );
  });
});

/**
 * The next directory listing gives entries that answer `false` to every question about their type,
 * as Node's do on a filesystem that does not report it (some XFS, NFS, FUSE mounts).
 */
function hideEntryTypes(): void {
  vi.mocked(fsPromises.opendir).mockImplementationOnce(async (path, options) => {
    const directory = await vi
      .importActual<typeof import("node:fs/promises")>("node:fs/promises")
      .then((actual) => actual.opendir(path, options));
    const no = () => false;
    const entries = async function* () {
      for await (const entry of directory) {
        yield Object.assign(Object.create(null), {
          name: entry.name,
          isFile: no,
          isDirectory: no,
          isSymbolicLink: no,
          isFIFO: no,
          isSocket: no,
          isBlockDevice: no,
          isCharacterDevice: no,
        });
      }
    };
    return { [Symbol.asyncIterator]: entries } as unknown as Awaited<ReturnType<typeof fsPromises.opendir>>;
  });
}

const hasTar = spawnSync("tar", ["--version"]).status === 0;

describe.runIf(hasTar)("archive extraction (restricted mode): writing through a symlink (issue 26, follow-up)", () => {
  /**
   * Two archives made with the system tar: `link.tar` holds `link -> <outside>`, `through.tar`
   * holds `link/x`. GNU tar follows a symlink to a directory that is already there: extracted one
   * after the other, in two calls, they write `<outside>/x`.
   */
  function archives(): void {
    const make = join(root, "make");
    mkdirSync(make);
    symlinkSync(outside, join(make, "link"));
    execFileSync("tar", ["cf", join(workspace, "link.tar"), "link"], { cwd: make });
    rmSync(join(make, "link"));
    mkdirSync(join(make, "link"));
    writeFileSync(join(make, "link", "x"), "written through");
    execFileSync("tar", ["cf", join(workspace, "through.tar"), "link/x"], { cwd: make });
  }

  const THROUGH_LINK =
    'command refused: it extracts an archive where "link" is a symlink that leads outside the workspace, ' +
    "which the extraction could write through; remove the symlink, or extract into another directory";

  it("refuses the second of two calls that would write outside, and nothing is written there", async () => {
    archives();
    expect((await run("tar xf link.tar")).isError).toBe(false);
    for (const command of [
      "tar xf through.tar",
      "tar -xvf through.tar",
      "timeout 60 tar --extract --file=through.tar",
      "sh -c 'tar xf through.tar'",
      "find . -name through.tar -execdir tar xf {} \\;",
      "tar -xf through.tar -C .",
    ]) {
      const result = await run(command);
      expect(result.isError).toBe(true);
      expect(result.forLLM).toBe(THROUGH_LINK);
    }
    expect(existsSync(join(outside, "x"))).toBe(false);
    // What the check stops: the same call, unchecked, writes outside.
    expect((await run("tar xf through.tar", { restrictToWorkspace: false })).isError).toBe(false);
    expect(readFileSync(join(outside, "x"), "utf8")).toBe("written through");
  });

  it("extracts into another directory (tar -C, working_directory) that holds no such symlink", async () => {
    archives();
    expect((await run("tar xf link.tar")).isError).toBe(false);
    mkdirSync(join(workspace, "fresh"));
    expect((await run("tar -C fresh -xf through.tar")).isError).toBe(false);
    expect(readFileSync(join(workspace, "fresh", "link", "x"), "utf8")).toBe("written through");
    mkdirSync(join(workspace, "other"));
    expect((await run("tar xf ~/through.tar", {}, undefined, { working_directory: "other" })).isError).toBe(false);
    expect(existsSync(join(workspace, "other", "link", "x"))).toBe(true);
    // A member named before the -C goes into the working directory, which is checked then.
    expect((await run("tar -xf through.tar x -C fresh")).forLLM).toBe(THROUGH_LINK);
    expect(existsSync(join(outside, "x"))).toBe(false);
  });

  it("finds a symlink that leads outside anywhere below, also through a symlink that stays inside", async () => {
    mkdirSync(join(workspace, "dest", "a", "b"), { recursive: true });
    symlinkSync(outside, join(workspace, "dest", "a", "b", "deep"));
    expect((await run("tar xf x.tar", {}, undefined, { working_directory: "dest" })).forLLM).toBe(
      'command refused: it extracts an archive where "dest/a/b/deep" is a symlink that leads outside the workspace, ' +
        "which the extraction could write through; remove the symlink, or extract into another directory",
    );
    // dest/inner -> ../elsewhere (inside), and elsewhere/leak leads out: dest/inner/leak/x would be written outside.
    rmSync(join(workspace, "dest", "a"), { recursive: true });
    mkdirSync(join(workspace, "elsewhere"));
    symlinkSync(outside, join(workspace, "elsewhere", "leak"));
    symlinkSync(join(workspace, "elsewhere"), join(workspace, "dest", "inner"));
    expect((await run("unzip -o x.zip", {}, undefined, { working_directory: "dest" })).forLLM).toContain(
      '"elsewhere/leak" is a symlink that leads outside the workspace',
    );
    // The same directories, the same symlink out, in a listing that does not say what its entries are.
    hideEntryTypes();
    expect((await run("unzip -o x.zip", {}, undefined, { working_directory: "dest" })).forLLM).toContain(
      '"elsewhere/leak" is a symlink that leads outside the workspace',
    );
  });

  it("walks the directory an option names with its value attached (unzip -dtmp)", async () => {
    mkdirSync(join(workspace, "tmp"));
    symlinkSync(outside, join(workspace, "tmp", "link"));
    expect((await run("unzip -dtmp x.zip")).forLLM).toContain(
      '"tmp/link" is a symlink that leads outside the workspace',
    );
    expect((await run("unzip -Pxyz -d tmp x.zip")).forLLM).toContain('"tmp/link" is a symlink');
  });

  it("refuses an extraction whose directories take more than the check's operations to walk", async () => {
    mkdirSync(join(workspace, "big"));
    for (let index = 0; index < 4_001; index++) writeFileSync(join(workspace, "big", `f${index}`), "");
    const result = await run("tar xf x.tar");
    expect(result.forLLM).toMatchInlineSnapshot(
      `"command refused: it extracts an archive, which writes through any symlink below where it extracts, and checking those directories for symlinks that lead outside the workspace takes more than 4,000 filesystem operations; extract into a new or small directory (tar -C dir, unzip -d dir, or working_directory)"`,
    );
    // Into a small directory, it is checked and runs (tar fails: there is no x.tar).
    mkdirSync(join(workspace, "small"));
    expect((await run("tar -xf x.tar -C small")).forLLM).toContain("x.tar");
    expect((await run("tar -xf x.tar -C small")).forLLM).not.toContain("command refused");
  });

  it.each([
    ["tar -xPf a.tar", "tar -P (--absolute-names)"],
    ["tar xPf a.tar", "tar -P (--absolute-names)"],
    ["tar --absolute-names -xf a.tar", "tar -P (--absolute-names)"],
    ["bsdtar --absolute-paths -xf a.tar", "bsdtar -P (--absolute-paths)"],
    ["unzip -o: a.zip", "unzip -:"],
    ["cpio -idm --no-absolute-filenames < a.cpio", "cpio"],
    ["pax -r -f a.pax", "pax"],
    ["7z x -spf a.7z", "7z -spf"],
  ])("refuses %j, which writes the archive's absolute paths and '..' as they are", async (command, what) => {
    expect((await run(command)).forLLM).toBe(
      `command refused: ${what} writes the paths an archive holds as they are (absolute ones, '..'), which may be outside ` +
        "the workspace; extract it with tar or unzip without that option (bsdtar also reads cpio and pax archives)",
    );
  });

  describe("calls at the same time: an extraction's check and run never overlap another command's", () => {
    /** A named pipe in the workspace: who reads it waits until the test writes it. */
    function fifo(name: string): string {
      const path = join(workspace, name);
      execFileSync("mkfifo", [path]);
      return path;
    }

    /**
     * Writes `data` into the pipe once something reads it (a blocked open counts); gives up, with
     * `false`, when `until` settles first.
     */
    async function feed(path: string, data: Buffer | string, until?: Promise<unknown>): Promise<boolean> {
      let over = false;
      void until?.then(() => {
        over = true;
      });
      for (let waited = 0; waited < 10_000; waited += 20) {
        if (over) return false;
        const handle = await fsPromises
          .open(path, fsPromises.constants.O_WRONLY | fsPromises.constants.O_NONBLOCK)
          .catch(() => undefined); // ENXIO: nobody reads it yet
        if (handle !== undefined) {
          await handle.write(Buffer.from(data));
          await handle.close();
          return true;
        }
        await sleep(20);
      }
      throw new Error(`nothing read ${path} within 10 s`);
    }

    it("checks an extraction asked for while another runs only once that one ended", async () => {
      archives();
      const first = fifo("first.tar");
      const second = fifo("second.tar");
      const one = run("tar xf first.tar");
      const two = run("tar xf second.tar");
      await feed(first, readFileSync(join(workspace, "link.tar")));
      expect((await one).isError).toBe(false);
      // Checked now, the second sees the symlink; checked before the first ran, it would be reading its archive.
      if (await feed(second, readFileSync(join(workspace, "through.tar")), two)) await two;
      expect((await two).forLLM).toBe(THROUGH_LINK);
      expect(existsSync(join(outside, "x"))).toBe(false);
    });

    it("starts an extraction only once the commands running when it came ended (they cannot read through it)", async () => {
      archives();
      const gate = fifo("gate");
      // Checked now (there is no link yet), it reads link/secret.txt once the gate opens.
      const reader = run("cat gate; cat link/secret.txt");
      const extraction = run("tar xf link.tar");
      // It waits for its turn: the reader's call holds one.
      expect(waitingTurns(workspace)).toBe(1);
      await feed(gate, "open\n");
      const read = await reader;
      expect(read.forLLM).not.toContain("top secret");
      expect(read.forLLM).toContain("link/secret.txt");
      expect((await extraction).isError).toBe(false);
      expect(existsSync(join(workspace, "link"))).toBe(true);
    });

    it("ends the wait at the call's timeout, saying so, and nothing runs", async () => {
      const gate = fifo("gate");
      // It takes its turn as the call starts, and holds it until the gate opens.
      const holder = run("cat gate");
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
      let waiting: Promise<ToolResult>;
      try {
        waiting = run("tar xf a.tar --one-top-level=ran", { timeoutMs: 1_000 });
        vi.advanceTimersByTime(1_000);
      } finally {
        vi.useRealTimers();
      }
      expect((await waiting).forLLM).toBe(
        "command timed out after 1s while it waited for an archive extraction in the workspace, or for the commands " +
          "running when it started, to end; nothing ran",
      );
      await feed(gate, "done\n");
      expect((await holder).isError).toBe(false);
      expect(existsSync(join(workspace, "ran"))).toBe(false);
      // Nothing is left held or awaited.
      expect(workspacesInTurn()).toBe(0);
    });
  });

  it("refuses an extraction that sets its options through the environment (TAR_OPTIONS=-P)", async () => {
    expect((await run("TAR_OPTIONS=-P tar xf a.tar")).forLLM).toBe(
      "command refused: it extracts an archive and sets TAR_OPTIONS, options which the workspace check cannot see; " +
        "write the options in the command",
    );
    expect((await run("env UNZIP=-: unzip a.zip")).forLLM).toContain("sets UNZIP,");
  });
});

describe("the workspace: what the shell computes at run time (attack report F2)", () => {
  // The layout of the attack: the workspace three levels down, the secret and a victim above it.
  let deep: string;
  beforeEach(() => {
    deep = join(workspace, "a", "b");
    mkdirSync(deep, { recursive: true });
    mkdirSync(join(workspace, "victim"));
  });
  const inDeep = () => ({ working_directory: "a/b" });

  it.each([
    ["p=.; cd $p$p; cd $p$p; cd $p$p; cat outside/secret.txt", '"$p$p" expands $p when it runs'],
    ['p=.; cat "$p$p/$p$p/$p$p/outside/secret.txt"', '"$p$p/$p$p/$p$p/outside/secret.txt" expands $p when it runs'],
    ["p=.; ln $p$p/$p$p/$p$p/outside/secret.txt hard", '"$p$p/$p$p/$p$p/outside/secret.txt" expands $p when it runs'],
    ["set -- sub; cd $1", '"$1" expands $1 when it runs'],
    ["echo sub; cd $_", '"$_" expands $_ when it runs'],
    ["cat $0", '"$0" expands $0 when it runs'],
    [
      "printf '%s' L2V0Yy9wYXNzd2Q= | base64 -d | xargs cat",
      "xargs builds command lines from its input when it runs, which the workspace check cannot see",
    ],
    ["ls | /usr/bin/xargs -n1 cat", "xargs builds command lines from its input when it runs"],
    ["cd .?; ls", 'cd to ".?", which is not a literal directory'],
    ["cd -P [.].; ls", 'cd to "[.].", which is not a literal directory'],
  ])("refuses %j", async (command, reason) => {
    const result = await run(command, {}, undefined, inDeep());
    expect(result.isError).toBe(true);
    expect(result.forLLM).toContain(`command refused: ${reason}`);
  });

  it("says why, in words the model can act on", async () => {
    expect((await run("p=.; cd $p$p")).forLLM).toMatchInlineSnapshot(
      `"command refused: "$p$p" expands $p when it runs, which the workspace check cannot see; write the value out"`,
    );
  });

  it("checks the words of an inline shell's script as paths too", async () => {
    for (const command of [
      `sh -c "cat ${join(outside, "secret.txt")}"`,
      "bash -c 'cd /; ls'",
      "sh -ec 'sh -c \"cat /etc/passwd\"'",
    ]) {
      const result = await run(command);
      expect(result.isError).toBe(true);
      expect(result.forLLM).toMatch(/^command refused: .* is outside the workspace$/);
    }
    expect((await run("sh -c 'cat notes.txt'")).forLLM).toBe("hello");
  });

  it("refuses a wildcard that sh may expand to '..' (.*, .?, ..*, .[.])", async () => {
    for (const word of [".*", ".?", "..*", ".[.]", "sub/.*"]) {
      const result = await run(`ls -d ${word}`);
      expect(result.forLLM).toBe(
        `command refused: ${JSON.stringify(word)} is a wildcard that may match '..' (sh expands .* and .? to it); name the files`,
      );
    }
    writeFileSync(join(workspace, ".env.local"), "");
    expect((await run("ls -d .env*")).forLLM).toBe(".env.local");
    expect((await run("ls -d .??*")).forLLM).toBe(".env.local");
  });

  it("lets $HOME, $PWD and the numeric parameters through: their values are known", async () => {
    expect((await run('cd "$HOME" && echo "$PWD"', {}, undefined, inDeep())).forLLM).toBe(workspace);
    expect((await run("cd a; echo $PWD")).forLLM).toBe(join(workspace, "a"));
    expect((await run("true; echo $? $# $$ $!")).forLLM).toMatch(/^0 0 \d+ *$/);
    expect((await run("echo '$p$p' \\$p")).forLLM).toBe("$p$p $p");
    expect((await run("cat $HOME/notes.txt ~/notes.txt")).forLLM).toBe("hellohello");
  });

  it("refuses $HOME, ~ and $PWD when the command names the variable (it may give it any value)", async () => {
    writeFileSync(join(workspace, "where"), outside);
    for (const [command, reason] of [
      ["read HOME < where; cat $HOME/secret.txt", '"$HOME/secret.txt" expands $HOME when it runs'],
      ["read HOME < where; cat ~/secret.txt", '"~/secret.txt" is HOME, which this command sets itself'],
      ["read PWD < where; cat $PWD/secret.txt", '"$PWD/secret.txt" expands $PWD when it runs'],
      ["H\\OME=x; echo $HOME", '"$HOME" expands $HOME when it runs'],
    ]) {
      expect((await run(command as string)).forLLM).toContain(`command refused: ${reason}`);
    }
  });

  it("reads ~ and $HOME as the HOME of options.env when it replaces the workspace", async () => {
    const options = { env: { HOME: outside } };
    expect((await run("cat ~/secret.txt", options)).forLLM).toBe(
      'command refused: "~/secret.txt" is outside the workspace',
    );
    expect((await run("cat $HOME/secret.txt", options)).forLLM).toContain("expands $HOME when it runs");
  });

  it("checks each word from every directory a cd may lead to (cd sub; cat leak/x)", async () => {
    mkdirSync(join(workspace, "sub", "sub"), { recursive: true });
    symlinkSync(outside, join(workspace, "sub", "leak"));
    symlinkSync(outside, join(workspace, "sub", "sub", "deeper"));
    writeFileSync(join(workspace, "sub", "notes.txt"), "in sub");
    for (const [command, word] of [
      ["cd sub; cat leak/secret.txt", "leak/secret.txt"],
      ["(cd sub && ls leak)", "leak"],
      ["cd sub; cd leak; cat secret.txt", "leak"],
      ["cd -- sub; cat leak/secret.txt", "leak/secret.txt"],
      ["for i in 1 2; do cd sub; done; cat deeper/secret.txt", "deeper/secret.txt"],
      [`cd ${join(workspace, "sub")}; cat leak/secret.txt`, "leak/secret.txt"],
    ]) {
      expect((await run(command as string)).forLLM).toBe(`command refused: "${word}" is outside the workspace`);
    }
    expect((await run("cd sub && cat notes.txt")).forLLM).toBe("in sub");
  });

  it("refuses a cd when the command or options.env sets where cd goes (HOME, PWD, OLDPWD, CDPATH)", async () => {
    mkdirSync(join(workspace, "sub"));
    symlinkSync(outside, join(workspace, "sub", "leak"));
    writeFileSync(join(workspace, "where"), outside);
    for (const [command, options, variable] of [
      ["CDPATH=sub cd leak; cat secret.txt", {}, "CDPATH"],
      ["read HOME < where; cd; cat secret.txt", {}, "HOME"],
      ["read OLDPWD < where; cd -; cat secret.txt", {}, "OLDPWD"],
      ["cd leak; cat secret.txt", { env: { CDPATH: "sub" } }, "CDPATH"],
    ] as const) {
      expect((await run(command, options)).forLLM).toBe(
        `command refused: it changes directory and sets ${variable}, which decides where cd goes, which the workspace check cannot see`,
      );
    }
    expect((await run("cd; cat secret.txt", { env: { HOME: outside } })).forLLM).toBe(
      "command refused: it changes directory, and a cd alone goes to HOME, which is outside the workspace",
    );
  });

  it("checks a word with $HOME or $PWD with their values", async () => {
    mkdirSync(join(workspace, "sub"));
    symlinkSync(outside, join(workspace, "leak"));
    symlinkSync(outside, join(workspace, "sub", "leak2"));
    expect((await run("cat $HOME/leak/secret.txt")).forLLM).toBe(
      `command refused: ${JSON.stringify(join(workspace, "leak/secret.txt"))} is outside the workspace`,
    );
    expect((await run('cd sub; cat "$PWD/leak2/secret.txt"')).forLLM).toBe(
      `command refused: ${JSON.stringify(join(workspace, "sub/leak2/secret.txt"))} is outside the workspace`,
    );
    expect((await run("cat $PWD/notes.txt")).forLLM).toBe("hello");
  });

  it("refuses a command whose cds may lead to more directories than it checks", async () => {
    const names = Array.from({ length: 17 }, (_, index) => `d${index}`);
    for (const name of names) mkdirSync(join(workspace, name));
    const command = names.map((name) => `(cd ${name}; ls)`).join("; ");
    expect((await run(command)).forLLM).toBe(
      "command refused: it may change into more than 16 directories, too many to check; use working_directory instead",
    );
    expect(
      (
        await run(
          names
            .slice(0, 15)
            .map((name) => `(cd ${name}; ls)`)
            .join("; "),
        )
      ).isError,
    ).toBe(false);
  });

  it("runs the attack session's commands no more (F2): nothing outside is read, deleted or linked", async () => {
    mkdirSync(join(outside, "victim"));
    for (const command of [
      "p=.; cd $p$p; cd $p$p; cd $p$p; cat outside/secret.txt",
      'a=r; b=m; p=.; sh -c "$a$b -rf $p$p/$p$p/$p$p/outside/victim"; echo done',
      `printf '%s' ${Buffer.from(join(outside, "secret.txt")).toString("base64")} | base64 -d | xargs cat`,
      "p=.; ln $p$p/$p$p/$p$p/outside/secret.txt hard",
    ]) {
      const result = await run(command, {}, undefined, inDeep());
      expect(result.forLLM).toMatch(/^command refused/);
    }
    expect(existsSync(join(outside, "victim"))).toBe(true);
    expect(existsSync(join(deep, "hard"))).toBe(false);
  });
});

describe("the deny list end to end (attack report F3, F4)", () => {
  it.each([
    ["mkdir -p g/h; rm --r g", "g"],
    ["touch k; rm --fo k", "k"],
    ["a=rm; mkdir -p d/e; timeout 5 $a -rf d", "d"],
  ])("refuses %j, and nothing runs", async (command, left) => {
    mkdirSync(join(workspace, left));
    const result = await run(command, { restrictToWorkspace: false });
    expect(result.forLLM).toMatch(/^command refused by the deny list: /);
    expect(existsSync(join(workspace, left))).toBe(true);
  });

  it("refuses a decoded script piped into xargs sh (B5)", async () => {
    const script = Buffer.from("touch ran").toString("base64");
    const result = await run(`echo ${script} | base64 -d | xargs -0 sh -c`, { restrictToWorkspace: false });
    expect(result.forLLM).toContain("a pipe into a shell");
    expect(existsSync(join(workspace, "ran"))).toBe(false);
  });

  it("refuses setsid spelled through variables: nothing escapes the group (B9)", async () => {
    const result = await run('a=set; b=sid; sh -c "$a$b sleep 30 &"', { restrictToWorkspace: false });
    expect(result.forLLM).toBe("command refused by the deny list: a $ in the script of an inline shell (sh -c '…$…')");
  });

  it("refuses the parent's environment through a relative proc/ (F4), also unrestricted", async () => {
    const result = await run("cd /; tr '\\0' '\\n' < proc/$PPID/environ", { restrictToWorkspace: false });
    expect(result.forLLM).toContain("another process's environment");
  });
});

describe("files named after @ or < (attack report attack1, item 4)", () => {
  it.each([
    ["curl -s --data-binary @OUT/secret.txt http://127.0.0.1:1/", "OUT/secret.txt"],
    ["curl -s -d@OUT/secret.txt http://127.0.0.1:1/", "OUT/secret.txt"],
    ["curl -s --data=@OUT/secret.txt http://127.0.0.1:1/", "OUT/secret.txt"],
    ["curl -s -F f=@OUT/secret.txt http://127.0.0.1:1/", "OUT/secret.txt"],
    ["curl -s -F 'f=<OUT/secret.txt' http://127.0.0.1:1/", "OUT/secret.txt"],
    ["curl -s -F 'f=@secret;type=text/plain' http://127.0.0.1:1/", "secret"],
    ["curl -s -F 'f=@\"leak/secret.txt\";filename=x' http://127.0.0.1:1/", "leak/secret.txt"],
    ["curl -s -F 'f=@notes.txt,secret' http://127.0.0.1:1/", "secret"],
    ["http POST 127.0.0.1:1 field@leak/secret.txt", "leak/secret.txt"],
    ["cc @leak/secret.txt", "leak/secret.txt"],
  ])("refuses %j", async (template, shown) => {
    symlinkSync(outside, join(workspace, "leak"));
    symlinkSync(join(outside, "secret.txt"), join(workspace, "secret"));
    const result = await run(template.replaceAll("OUT", outside));
    expect(result.forLLM).toBe(`command refused: "${shown.replace("OUT", outside)}" is outside the workspace`);
  });

  it("lets @ words that name nothing outside through", async () => {
    const result = await run("echo user@example.com @notes.txt pkg@1.2.3 -d@notes.txt");
    expect(result).toMatchObject({ isError: false, forLLM: "user@example.com @notes.txt pkg@1.2.3 -d@notes.txt" });
  });
});

describe("comments and line continuations, read as the shell reads them (attack report attack1, item 1)", () => {
  it("checks the lines after a comment that holds a quote: nothing outside is read or written", async () => {
    const read = await run(`true # '\ncat ${outside}/secret.txt\n# '`);
    expect(read.forLLM).toBe(`command refused: "${outside}/secret.txt" is outside the workspace`);
    const written = await run(`true # '\necho pwned > ${outside}/written\n# '`);
    expect(written.forLLM).toBe(`command refused: "${outside}/written" is outside the workspace`);
    expect(existsSync(join(outside, "written"))).toBe(false);
  });

  it.each([
    ["true # '\n/bin/ech? ran > ran\n# '", "a wildcard or brace expansion in a command name"],
    ["true # \\\n/bin/ech? ran > ran", "a wildcard or brace expansion in a command name"],
    ["echo touch ran | # \\\nsh", "a pipe into a shell"],
    ["echo touch ran | # '\nsh # '", "a pipe into a shell"],
    ["true # '\nf() #\n{ touch ran; }\nf # '", "shell function definition"],
  ])("refuses %j, also unrestricted, and nothing runs", async (command, name) => {
    const result = await run(command, { restrictToWorkspace: false });
    expect(result.forLLM).toContain(`command refused by the deny list: ${name}`);
    expect(existsSync(join(workspace, "ran"))).toBe(false);
  });

  it("sees a $ expansion split by a line continuation ($\\⏎x is $x)", async () => {
    writeFileSync(join(workspace, "where"), `${outside}/secret.txt\n`);
    const result = await run("read x < where; cat $\\\nx");
    expect(result.forLLM).toBe(
      `command refused: "$x" expands $x when it runs, which the workspace check cannot see; write the value out`,
    );
  });

  it("runs a command with comments as sh does", async () => {
    const result = await run("echo a # it's a comment \\\necho b\ncat notes.txt #'");
    expect(result).toMatchObject({ isError: false, forLLM: "a\nb\nhello" });
  });
});

describe("start failure", () => {
  it("is an error result with the cause kept, when the shell cannot start", async () => {
    const exec = tool({ restrictToWorkspace: false });
    rmSync(workspace, { recursive: true });
    const result = (await exec.execute({ command: "true" }, createToolContext())) as ToolResult;
    expect(result.isError).toBe(true);
    expect(result.forLLM).toMatch(/^the command could not be started: /);
    expect(result.err).toBeInstanceOf(Error);
  });
});

describe("bad arguments", () => {
  it.each([[{ command: "" }], [{ command: "   " }], [{ command: 5 }], [{}]])("%j is an error result", async (args) => {
    const result = (await tool().execute(args, createToolContext())) as ToolResult;
    expect(result.isError).toBe(true);
    expect(result.forLLM).toBe("command is empty: nothing to run");
  });
});
