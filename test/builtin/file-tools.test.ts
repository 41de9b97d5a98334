import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import {
  appendFileSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyPatch } from "diff";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FILE_TOOL_HOOKS, type FileToolHooks, MAX_EDIT_BYTES, MAX_LIST_ENTRIES } from "../../src/builtin/file-tools.js";
import { createFileTools, type FileToolsOptions } from "../../src/builtin/index.js";
import { ToolRegistry, type ToolResult } from "../../src/index.js";

const DENIED = "access denied: path is outside the workspace";

let root: string;
let workspace: string;
let outside: string;

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "toolloop-files-")));
  workspace = join(root, "ws");
  outside = join(root, "outside");
  mkdirSync(join(workspace, "sub"), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(workspace, "notes.txt"), "one\ntwo\nthree\n");
  writeFileSync(join(outside, "secret.txt"), "secret\n");
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

function setup(options: Partial<FileToolsOptions> = {}, hooks?: FileToolHooks) {
  const registry = new ToolRegistry();
  const all = {
    workspace,
    ...options,
    ...(hooks === undefined ? {} : { [FILE_TOOL_HOOKS]: hooks }),
  } as FileToolsOptions;
  for (const tool of createFileTools(all)) registry.register(tool);
  const call = (name: string, args: Record<string, unknown>): Promise<ToolResult> => registry.execute(name, args);
  return { registry, call };
}

/** What the model reads, and whether it is an error. */
async function read(result: Promise<ToolResult>): Promise<{ text: string; isError: boolean }> {
  const done = await result;
  return { text: done.contentForLLM(), isError: done.isError };
}

const ws = (...parts: string[]) => join(workspace, ...parts);
/** Files of a directory, to show that nothing (no temporary file) was left behind. */
const names = (directory: string) => readdirSync(directory).sort();

describe("createFileTools", () => {
  it("offers the five tools with plain JSON Schema parameters", () => {
    const { registry } = setup();
    expect(createFileTools({ workspace }).map((tool) => tool.name)).toEqual([
      "read_file",
      "write_file",
      "edit_file",
      "append_file",
      "list_dir",
    ]);
    const definitions = registry.getDefinitions().map((definition) => definition.function);
    expect(definitions.map((definition) => [definition.name, definition.parameters])).toMatchInlineSnapshot(`
      [
        [
          "append_file",
          {
            "additionalProperties": false,
            "properties": {
              "content": {
                "description": "The text to append",
                "type": "string",
              },
              "path": {
                "description": "The file to append to, relative to the workspace",
                "type": "string",
              },
            },
            "required": [
              "path",
              "content",
            ],
            "type": "object",
          },
        ],
        [
          "edit_file",
          {
            "additionalProperties": false,
            "properties": {
              "new_text": {
                "description": "The text to put in its place",
                "type": "string",
              },
              "old_text": {
                "description": "The exact text to replace",
                "type": "string",
              },
              "path": {
                "description": "The file to edit, relative to the workspace",
                "type": "string",
              },
            },
            "required": [
              "path",
              "old_text",
              "new_text",
            ],
            "type": "object",
          },
        ],
        [
          "list_dir",
          {
            "additionalProperties": false,
            "properties": {
              "path": {
                "description": "The directory to list ("." for the workspace), relative to the workspace",
                "type": "string",
              },
            },
            "required": [
              "path",
            ],
            "type": "object",
          },
        ],
        [
          "read_file",
          {
            "additionalProperties": false,
            "properties": {
              "end_line": {
                "description": "Optional: last line to read (≥ start_line)",
                "minimum": 1,
                "type": "integer",
              },
              "line_offset": {
                "description": "Optional: bytes of start_line to skip, to read on in a line longer than one call returns",
                "minimum": 0,
                "type": "integer",
              },
              "path": {
                "description": "The file to read, relative to the workspace",
                "type": "string",
              },
              "start_line": {
                "description": "Optional: first line to read (1-based)",
                "minimum": 1,
                "type": "integer",
              },
            },
            "required": [
              "path",
            ],
            "type": "object",
          },
        ],
        [
          "write_file",
          {
            "additionalProperties": false,
            "properties": {
              "content": {
                "description": "The whole content of the file",
                "type": "string",
              },
              "overwrite": {
                "description": "Replace the file if it exists (default false)",
                "type": "boolean",
              },
              "path": {
                "description": "The file to write, relative to the workspace",
                "type": "string",
              },
            },
            "required": [
              "path",
              "content",
            ],
            "type": "object",
          },
        ],
      ]
    `);
  });

  it.each([
    ["no options", () => undefined, "createFileTools: options must be an object, got undefined"],
    [
      "a relative workspace",
      () => ({ workspace: "ws" }),
      'createFileTools: workspace must be an absolute directory path, got "ws"',
    ],
    [
      "maxReadBytes 0",
      () => ({ workspace, maxReadBytes: 0 }),
      "createFileTools: maxReadBytes must be an integer > 0, got 0",
    ],
    [
      "maxReadBytes 1.5",
      () => ({ workspace, maxReadBytes: 1.5 }),
      "createFileTools: maxReadBytes must be an integer > 0, got 1.5",
    ],
    [
      "allowedExtensions a string",
      () => ({ workspace, allowedExtensions: ".md" }),
      'createFileTools: allowedExtensions must be an array of strings, got ".md"',
    ],
    [
      "an extension with a slash",
      () => ({ workspace, allowedExtensions: ["a/b"] }),
      'createFileTools: allowedExtensions[0] must be a file extension such as ".md", got "a/b"',
    ],
    [
      "allowReadPaths of strings",
      () => ({ workspace, allowReadPaths: ["/etc"] }),
      'createFileTools: allowReadPaths[0] must be a RegExp, got "/etc"',
    ],
  ])("throws a TypeError for %s", (_, options, message) => {
    expect(() => createFileTools(options() as FileToolsOptions)).toThrow(new TypeError(message));
  });
});

describe("the workspace guard in every tool", () => {
  const attempts: [string, Record<string, unknown>][] = [
    ["read_file", {}],
    ["write_file", { content: "x", overwrite: true }],
    ["edit_file", { old_text: "secret", new_text: "pwned" }],
    ["append_file", { content: "x" }],
    ["list_dir", {}],
  ];

  it.each(attempts)("%s refuses `..` traversal", async (tool, args) => {
    const { call } = setup();
    const path = tool === "list_dir" ? "../outside" : "../outside/secret.txt";
    expect(await read(call(tool, { path, ...args }))).toEqual({ text: DENIED, isError: true });
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("secret\n");
  });

  it.each(attempts)("%s refuses an absolute path outside", async (tool, args) => {
    const { call } = setup();
    const path = tool === "list_dir" ? outside : join(outside, "secret.txt");
    expect(await read(call(tool, { path, ...args }))).toEqual({ text: DENIED, isError: true });
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("secret\n");
  });

  it.each(attempts)("%s refuses a symlinked file that leads outside", async (tool, args) => {
    symlinkSync(join(outside, "secret.txt"), ws("link.txt"));
    symlinkSync(outside, ws("link-dir"));
    const { call } = setup();
    const path = tool === "list_dir" ? "link-dir" : "link.txt";
    expect(await read(call(tool, { path, ...args }))).toEqual({ text: DENIED, isError: true });
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("secret\n");
  });

  it.each(attempts)("%s refuses a path under a symlinked ancestor", async (tool, args) => {
    mkdirSync(join(outside, "deeper"));
    symlinkSync(outside, ws("sub", "out"));
    const { call } = setup();
    const path = tool === "list_dir" ? "sub/out/deeper" : "sub/out/secret.txt";
    expect(await read(call(tool, { path, ...args }))).toEqual({ text: DENIED, isError: true });
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("secret\n");
  });

  it.each(["write_file", "append_file"])(
    "%s refuses a new file whose nearest existing ancestor is a symlink out",
    async (tool) => {
      symlinkSync(outside, ws("out"));
      const { call } = setup();
      expect(await read(call(tool, { path: "out/new/dir/file.txt", content: "x" }))).toEqual({
        text: DENIED,
        isError: true,
      });
      expect(existsSync(join(outside, "new"))).toBe(false);
    },
  );

  it.each(["write_file", "append_file"])("%s refuses a dangling symlink that points outside", async (tool) => {
    symlinkSync(join(outside, "planted.txt"), ws("dangling.txt"));
    const { call } = setup();
    expect(await read(call(tool, { path: "dangling.txt", content: "x" }))).toEqual({ text: DENIED, isError: true });
    expect(existsSync(join(outside, "planted.txt"))).toBe(false);
  });

  it.each(attempts)("%s refuses an empty path and a NUL byte", async (tool, args) => {
    const { call } = setup();
    // The schema accepts both (strings); the guard refuses them.
    expect(await read(call(tool, { path: "", ...args }))).toEqual({ text: "path is empty", isError: true });
    expect(await read(call(tool, { path: "notes.txt\0.md", ...args }))).toEqual({
      text: "path contains a NUL byte",
      isError: true,
    });
  });

  it("never shows a host path the model did not send", async () => {
    const { call } = setup();
    const results = await Promise.all([
      read(call("read_file", { path: "missing.txt" })),
      read(call("read_file", { path: "sub" })),
      read(call("list_dir", { path: "notes.txt" })),
      read(call("write_file", { path: "notes.txt/x", content: "x" })),
    ]);
    expect(results).toMatchInlineSnapshot(`
      [
        {
          "isError": true,
          "text": ""missing.txt": not found",
        },
        {
          "isError": true,
          "text": ""sub" is a directory: use list_dir",
        },
        {
          "isError": true,
          "text": ""notes.txt" is not a directory",
        },
        {
          "isError": true,
          "text": ""notes.txt/x": a part of the path is not a directory",
        },
      ]
    `);
    for (const result of results) expect(result.text).not.toContain(root);
  });

  it("works on everything with restrictToWorkspace: false", async () => {
    const { call } = setup({ restrictToWorkspace: false });
    expect(await read(call("read_file", { path: "../outside/secret.txt" }))).toEqual({
      text: "1|secret",
      isError: false,
    });
  });
});

describe("allow lists", () => {
  it("allowReadPaths lets read_file and list_dir read outside, never write", async () => {
    const { call } = setup({ allowReadPaths: [new RegExp(`^${outside}(/|$)`)] });
    const secret = join(outside, "secret.txt");
    expect(await read(call("read_file", { path: secret }))).toEqual({ text: "1|secret", isError: false });
    expect(await read(call("list_dir", { path: outside }))).toEqual({ text: "FILE: secret.txt", isError: false });
    expect(await read(call("write_file", { path: secret, content: "x", overwrite: true }))).toEqual({
      text: DENIED,
      isError: true,
    });
    expect(await read(call("append_file", { path: secret, content: "x" }))).toEqual({ text: DENIED, isError: true });
    // edit_file reads and writes: it needs both lists.
    expect(await read(call("edit_file", { path: secret, old_text: "secret", new_text: "x" }))).toEqual({
      text: DENIED,
      isError: true,
    });
    expect(readFileSync(secret, "utf8")).toBe("secret\n");
  });

  it("allowWritePaths lets write_file and append_file write outside, never read", async () => {
    const { call } = setup({ allowWritePaths: [new RegExp(`^${outside}/`)] });
    const target = join(outside, "out.txt");
    expect((await call("write_file", { path: target, content: "a" })).isError).toBe(false);
    expect((await call("append_file", { path: target, content: "b" })).isError).toBe(false);
    expect(readFileSync(target, "utf8")).toBe("ab");
    expect(await read(call("read_file", { path: target }))).toEqual({ text: DENIED, isError: true });
    expect(await read(call("list_dir", { path: outside }))).toEqual({ text: DENIED, isError: true });
    expect(await read(call("edit_file", { path: target, old_text: "a", new_text: "x" }))).toEqual({
      text: DENIED,
      isError: true,
    });
  });

  it("edit_file works outside with both lists", async () => {
    const pattern = new RegExp(`^${outside}/`);
    const { call } = setup({ allowReadPaths: [pattern], allowWritePaths: [pattern] });
    const secret = join(outside, "secret.txt");
    expect((await call("edit_file", { path: secret, old_text: "secret", new_text: "public" })).isError).toBe(false);
    expect(readFileSync(secret, "utf8")).toBe("public\n");
  });

  it("copies the options: changing the caller's lists later changes nothing", async () => {
    const allowReadPaths = [new RegExp(`^${outside}/`)];
    const { call } = setup({ allowReadPaths });
    allowReadPaths.length = 0;
    expect((await call("read_file", { path: join(outside, "secret.txt") })).isError).toBe(false);
  });
});

describe.each([
  { mode: "kernel: /proc/self/fd", withoutProc: false },
  { mode: "fallback without /proc", withoutProc: true },
])("the swap race ($mode): a checked directory replaced by a symlink before the write", ({ withoutProc }) => {
  /** Replaces ws/sub (checked) with a symlink to outside, at the moment the tool has checked the path. */
  function swapAfterCheck(): FileToolHooks {
    return {
      withoutProc,
      afterCheck: () => {
        if (!existsSync(ws("sub-real"))) {
          renameSync(ws("sub"), ws("sub-real"));
          symlinkSync(outside, ws("sub"));
        }
      },
    };
  }

  it.each([
    ["write_file", { path: "sub/secret.txt", content: "pwned", overwrite: true }],
    ["write_file", { path: "sub/new.txt", content: "pwned" }],
    ["append_file", { path: "sub/secret.txt", content: "pwned" }],
    ["append_file", { path: "sub/new.txt", content: "pwned" }],
  ])("%s %j is refused and writes nothing outside", async (tool, args) => {
    writeFileSync(ws("sub", "secret.txt"), "inside\n");
    const { call } = setup({}, swapAfterCheck());
    expect(await read(call(tool, args))).toEqual({ text: DENIED, isError: true });
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("secret\n");
    expect(names(outside)).toEqual(["secret.txt"]); // no temporary or new file left there
  });

  it("edit_file is refused and changes nothing outside", async () => {
    writeFileSync(ws("sub", "secret.txt"), "secret\n");
    const { call } = setup({}, swapAfterCheck());
    expect(await read(call("edit_file", { path: "sub/secret.txt", old_text: "secret", new_text: "pwned" }))).toEqual({
      text: DENIED,
      isError: true,
    });
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("secret\n");
  });

  it("read_file is refused and shows nothing of outside", async () => {
    writeFileSync(ws("sub", "secret.txt"), "inside\n");
    const { call } = setup({}, swapAfterCheck());
    expect(await read(call("read_file", { path: "sub/secret.txt" }))).toEqual({ text: DENIED, isError: true });
  });

  it("list_dir is refused and shows nothing of outside", async () => {
    const { call } = setup({}, swapAfterCheck());
    expect(await read(call("list_dir", { path: "sub" }))).toEqual({ text: DENIED, isError: true });
  });

  it("list_dir is refused when an ancestor of the listed directory is swapped", async () => {
    mkdirSync(ws("sub", "inner"));
    mkdirSync(join(outside, "inner"));
    const { call } = setup({}, swapAfterCheck());
    expect(await read(call("list_dir", { path: "sub/inner" }))).toEqual({ text: DENIED, isError: true });
  });

  it("read_file refuses a file swapped for a symlink (O_NOFOLLOW)", async () => {
    const { call } = setup(
      {},
      {
        withoutProc,
        afterCheck: () => {
          rmSync(ws("notes.txt"));
          symlinkSync(join(outside, "secret.txt"), ws("notes.txt"));
        },
      },
    );
    expect(await read(call("read_file", { path: "notes.txt" }))).toEqual({ text: DENIED, isError: true });
  });
});

const linux = process.platform === "linux";

describe.runIf(linux)("the swap race after the directory is held (Linux: names go through /proc/self/fd)", () => {
  /** Swaps ws/sub for a symlink to outside the first time it is called. */
  const swap = () => {
    if (!existsSync(ws("sub-real"))) {
      renameSync(ws("sub"), ws("sub-real"));
      symlinkSync(outside, ws("sub"));
    }
  };

  it.each([
    ["a new file", { path: "sub/new.txt", content: "mine" }, "new.txt"],
    ["an overwrite", { path: "sub/old.txt", content: "mine", overwrite: true }, "old.txt"],
  ])("write_file of %s swapped before the rename lands in the held directory, never outside", async (_, args, name) => {
    writeFileSync(ws("sub", "old.txt"), "old");
    writeFileSync(join(outside, "old.txt"), "outside");
    const { call } = setup({}, { beforeCommit: swap });
    expect((await call("write_file", args)).isError).toBe(false);
    expect(readFileSync(ws("sub-real", name), "utf8")).toBe("mine");
    expect(names(outside)).toEqual(["old.txt", "secret.txt"]);
    expect(readFileSync(join(outside, "old.txt"), "utf8")).toBe("outside");
    expect(names(ws("sub-real"))).toEqual(name === "new.txt" ? ["new.txt", "old.txt"] : ["old.txt"]);
  });

  it.each(["write_file", "append_file"])(
    "%s creates no directory outside when a parent is swapped before missing ones are made",
    async (tool) => {
      const { call } = setup({}, { afterCheck: swap });
      expect(await read(call(tool, { path: "sub/a/b/new.txt", content: "x" }))).toEqual({
        text: DENIED,
        isError: true,
      });
      expect(names(outside)).toEqual(["secret.txt"]);
      expect(names(ws("sub-real"))).toEqual([]);
    },
  );
});

/**
 * A second process that swaps `a` (a directory) and `b` (a symlink to outside) as fast as it can:
 * python's renameat2(RENAME_EXCHANGE) where available (an atomic swap), else node renames (a
 * three-step swap). It stops by itself after `seconds`, and is killed by the caller's finally.
 */
function startFlipper(
  a: string,
  b: string,
  seconds: number,
): { child: ChildProcess; ready: Promise<void>; flips: () => Promise<number> } {
  // Each prints "ready" when it starts flipping (its time counts from then), and the number of flips at the end.
  const python = [
    "import ctypes, sys, time",
    "libc = ctypes.CDLL(None, use_errno=True)",
    "a, b = sys.argv[1].encode(), sys.argv[2].encode()",
    "print('ready', flush=True)",
    "end = time.time() + float(sys.argv[3])",
    "n = 0",
    "while time.time() < end:",
    "    if libc.renameat2(-100, a, -100, b, 2) != 0: sys.exit(3)",
    "    n += 1",
    "print(n)",
  ].join("\n");
  const node = [
    "const fs = require('node:fs');",
    "const [a, b, s] = process.argv.slice(1);",
    "console.log('ready');",
    "const end = Date.now() + Number(s) * 1000;",
    "let n = 0;",
    "while (Date.now() < end) {",
    "  try { fs.renameSync(a, a + '.hold'); fs.renameSync(b, a); fs.renameSync(a + '.hold', b); n++; } catch {}",
    "}",
    "console.log(n);",
  ].join("\n");
  const probe = spawnSync("python3", ["-c", "import ctypes; ctypes.CDLL(None).renameat2"], { stdio: "ignore" });
  const [command, code] = probe.status === 0 ? ["python3", ["-c", python]] : [process.execPath, ["-e", node]];
  const child = spawn(command, [...code, a, b, String(seconds)], { stdio: ["ignore", "pipe", "ignore"] });
  let out = "";
  const exited = new Promise<void>((done) => child.on("close", () => done()));
  const ready = new Promise<void>((done) => {
    child.stdout?.on("data", (data: Buffer) => {
      out += data.toString();
      if (out.startsWith("ready\n")) done();
    });
    void exited.then(() => done()); // never waits for a child that died
  });
  return { child, ready, flips: () => exited.then(() => Number.parseInt(out.slice("ready\n".length), 10) || 0) };
}

/** Everything under `directory` (names, contents and inodes), to show that nothing changed there. */
function snapshot(directory: string): Record<string, string> {
  return Object.fromEntries(
    names(directory).map((name) => {
      const path = join(directory, name);
      const stats = lstatSync(path);
      return [name, `${stats.ino}:${stats.isFile() ? readFileSync(path, "utf8") : "(not a file)"}`];
    }),
  );
}

describe.runIf(linux)("the swap race against a real second process (zero leaks)", () => {
  const RACE_MS = 1_500;
  type Step = (
    call: (name: string, args: Record<string, unknown>) => Promise<ToolResult>,
    n: number,
  ) => Promise<ToolResult>;
  const steps: [string, Step][] = [
    ["read_file", (call) => call("read_file", { path: "d/secret.txt" })],
    // Every other call creates the file, and its missing parent directories.
    [
      "append_file",
      (call, n) => call("append_file", { path: n % 2 ? `d/more-${n}/new.log` : "d/log.txt", content: "MODEL\n" }),
    ],
    [
      "write_file (new)",
      (call, n) => call("write_file", { path: n % 2 ? `d/more-${n}/new.txt` : `d/new-${n}.txt`, content: "MODEL\n" }),
    ],
    [
      "write_file (overwrite)",
      (call) => call("write_file", { path: "d/log.txt", content: "MODEL\n", overwrite: true }),
    ],
    ["edit_file", (call) => call("edit_file", { path: "d/edit.txt", old_text: "value", new_text: "value" })],
    ["list_dir", (call) => call("list_dir", { path: "d" })],
  ];

  it.each(steps)(
    "%s never reads or writes outside while a directory and a symlink to outside are swapped",
    async (_, step) => {
      mkdirSync(ws("d"));
      for (const directory of [ws("d"), outside]) {
        writeFileSync(join(directory, "log.txt"), "log\n");
        writeFileSync(join(directory, "edit.txt"), "value\n");
      }
      writeFileSync(join(outside, "secret.txt"), "OUTSIDE-SECRET\n");
      writeFileSync(ws("d", "secret.txt"), "inside\n");
      symlinkSync(outside, ws("swap"));
      const before = snapshot(outside);
      const { call } = setup();
      const flipper = startFlipper(ws("d"), ws("swap"), RACE_MS / 1000);
      const texts: string[] = [];
      let refused = 0;
      let calls = 0;
      let flips = 0;
      try {
        await flipper.ready;
        const end = Date.now() + RACE_MS;
        while (Date.now() < end) {
          const result = await step(call, calls++);
          texts.push(result.contentForLLM());
          if (result.isError) refused++;
        }
        flips = await flipper.flips(); // it stops by itself at its own deadline
      } finally {
        if (flipper.child.exitCode === null && flipper.child.signalCode === null) flipper.child.kill("SIGKILL");
      }
      expect(flips).toBeGreaterThan(0);
      expect(texts.filter((text) => text.includes("OUTSIDE-SECRET"))).toEqual([]);
      expect(snapshot(outside)).toEqual(before);
      // The race was live: some calls met the symlink and were refused.
      expect(refused).toBeGreaterThan(0);
      expect(calls).toBeGreaterThan(refused);
      // No temporary file left anywhere.
      const directories = [workspace, ...names(workspace).map((name) => ws(name))].filter((path) =>
        lstatSync(path).isDirectory(),
      );
      const temporary = directories.flatMap((path) => names(path).filter((name) => name.startsWith(".toolloop-")));
      expect(temporary).toEqual([]);
    },
    // The race lasts 1.5 s; starting the second process takes seconds more on a busy machine.
    30_000,
  );
});

describe("hard links (a second name of a file, maybe outside the workspace)", () => {
  const linked =
    '"linked.txt" has 2 hard links: the file tools refuse a file with more than one name (another one may be outside the workspace)';

  it.each([
    ["read_file", {}],
    ["append_file", { content: "pwned" }],
    ["edit_file", { old_text: "secret", new_text: "pwned" }],
    ["write_file", { content: "pwned", overwrite: true }],
  ])("%s refuses a hard link to a file outside", async (tool, args) => {
    linkSync(join(outside, "secret.txt"), ws("linked.txt"));
    const { call } = setup();
    expect(await read(call(tool, { path: "linked.txt", ...args }))).toEqual({ text: linked, isError: true });
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("secret\n");
    expect(statSync(ws("linked.txt")).ino).toBe(statSync(join(outside, "secret.txt")).ino);
    expect(names(workspace)).toEqual(["linked.txt", "notes.txt", "sub"]);
  });

  it("write_file without overwrite still says the file exists; list_dir lists the name", async () => {
    linkSync(join(outside, "secret.txt"), ws("linked.txt"));
    const { call } = setup();
    expect((await read(call("write_file", { path: "linked.txt", content: "x" }))).text).toContain("already exists");
    expect(await read(call("list_dir", { path: "." }))).toEqual({
      text: "FILE: linked.txt\nFILE: notes.txt\nDIR:  sub",
      isError: false,
    });
  });

  it("refuses two names inside the workspace too (a path check cannot tell where the other is)", async () => {
    linkSync(ws("notes.txt"), ws("sub", "twin.txt"));
    const { call } = setup();
    expect((await read(call("read_file", { path: "notes.txt" }))).isError).toBe(true);
    expect((await read(call("read_file", { path: "sub/twin.txt" }))).isError).toBe(true);
  });

  it.each([
    ["read_file", {}],
    ["edit_file", { old_text: "secret", new_text: "public" }],
  ])("%s allows a hard link with restrictToWorkspace: false", async (tool, args) => {
    linkSync(join(outside, "secret.txt"), ws("linked.txt"));
    const { call } = setup({ restrictToWorkspace: false });
    expect((await call(tool, { path: "linked.txt", ...args })).isError).toBe(false);
  });
});

describe("read_file", () => {
  it('returns "N|line" lines', async () => {
    const { call } = setup();
    expect(await read(call("read_file", { path: "notes.txt" }))).toEqual({
      text: "1|one\n2|two\n3|three",
      isError: false,
    });
  });

  it("reads a file without a final line feed, CRLF lines as they are, and an empty file", async () => {
    writeFileSync(ws("a.txt"), "x\r\ny");
    writeFileSync(ws("empty.txt"), "");
    const { call } = setup();
    expect(await read(call("read_file", { path: "a.txt" }))).toEqual({ text: "1|x\r\n2|y", isError: false });
    expect(await read(call("read_file", { path: "empty.txt" }))).toEqual({ text: "(empty file)", isError: false });
    expect(await read(call("read_file", { path: "empty.txt", start_line: 2 }))).toEqual({
      text: 'start_line 2 is past the end of "empty.txt" (it has 0 lines)',
      isError: true,
    });
    expect(await read(call("read_file", { path: "a.txt", start_line: 3 }))).toEqual({
      text: 'start_line 3 is past the end of "a.txt" (it has 2 lines)',
      isError: true,
    });
  });

  it.each([
    [{ start_line: 2 }, "2|two\n3|three"],
    [{ start_line: 2, end_line: 2 }, "2|two"],
    [{ end_line: 1 }, "1|one"],
    [{ start_line: 3, end_line: 1_000_000 }, "3|three"],
    [{ start_line: 1, end_line: 1e300 }, "1|one\n2|two\n3|three"],
  ])("reads the range %j", async (range, text) => {
    const { call } = setup();
    expect(await read(call("read_file", { path: "notes.txt", ...range }))).toEqual({ text, isError: false });
  });

  it.each([
    [{ start_line: 4 }, 'start_line 4 is past the end of "notes.txt" (it has 3 lines)'],
    [{ start_line: 1e300 }, 'start_line 1e+300 is past the end of "notes.txt" (it has 3 lines)'],
    [{ start_line: 3, end_line: 2 }, "end_line (2) is before start_line (3)"],
  ])("refuses the range %j", async (range, text) => {
    const { call } = setup();
    expect(await read(call("read_file", { path: "notes.txt", ...range }))).toEqual({ text, isError: true });
  });

  it.each([
    [{ start_line: 0 }],
    [{ start_line: -1 }],
    [{ end_line: 0 }],
    [{ start_line: 1.5 }],
    [{ start_line: "2" }],
    [{ start_line: null }],
    [{ end_line: Number.NaN }],
    [{ path: 42 }],
    [{ extra: true }],
  ])("rejects %j by the schema", async (args) => {
    const { call } = setup();
    const result = await call("read_file", { path: "notes.txt", ...args });
    expect(result.isError).toBe(true);
    expect(result.err).toMatchObject({ code: "invalid_arguments" });
  });

  it("refuses bad line values when called without the registry's validation", async () => {
    const [readTool] = createFileTools({ workspace });
    const { createToolContext } = await import("../../src/testing/index.js");
    const result = (await readTool?.execute({ path: "notes.txt", start_line: 0 }, createToolContext())) as ToolResult;
    expect(result.contentForLLM()).toBe("start_line must be an integer ≥ 1");
  });

  it("stops reading when the call is aborted", async () => {
    const [readTool] = createFileTools({ workspace });
    const { createToolContext } = await import("../../src/testing/index.js");
    const context = createToolContext({ signal: AbortSignal.abort() });
    const result = (await readTool?.execute({ path: "notes.txt" }, context)) as ToolResult;
    expect([result.contentForLLM(), result.isError]).toEqual(["read_file aborted", true]);
  });

  it.each([
    ["a NUL byte", Buffer.from("text\0more")],
    ["a NUL byte after the first chunk", Buffer.concat([Buffer.alloc(70_000, "a"), Buffer.from([0])])],
    ["mostly control characters", Buffer.from("\x01\x02\x03\x04ab\x05\x06\x07\x08")],
    ["11 % control characters", Buffer.concat([Buffer.alloc(89, "a"), Buffer.alloc(11, 1)])],
  ])("refuses a binary file: %s", async (_, bytes) => {
    writeFileSync(ws("blob.txt"), bytes);
    const { call } = setup({ maxReadBytes: 1_000_000 });
    expect(await read(call("read_file", { path: "blob.txt" }))).toEqual({
      text: '"blob.txt" looks like a binary file (NUL bytes or control characters): read_file only reads text',
      isError: true,
    });
  });

  it("reads text with a few control characters (10 %) and escape codes", async () => {
    writeFileSync(ws("log.txt"), Buffer.concat([Buffer.alloc(90, "a"), Buffer.alloc(10, 1)]));
    writeFileSync(ws("ansi.txt"), "\x1b[31mred\x1b[0m\tok\f\n");
    const { call } = setup();
    expect((await call("read_file", { path: "log.txt" })).isError).toBe(false);
    expect(await read(call("read_file", { path: "ansi.txt" }))).toEqual({
      text: "1|\x1b[31mred\x1b[0m\tok\f",
      isError: false,
    });
  });

  it("cuts at maxReadBytes on a line boundary with a marker naming the start_line to read on", async () => {
    writeFileSync(ws("long.txt"), Array.from({ length: 100 }, (_, i) => `line ${i + 1}`).join("\n"));
    // 44 bytes: exactly "1|line 1" and four more "\nN|line N" — the prefixes and line feeds count.
    const { call } = setup({ maxReadBytes: 44 });
    const first = await read(call("read_file", { path: "long.txt" }));
    expect(first.text).toMatchInlineSnapshot(`
      "1|line 1
      2|line 2
      3|line 3
      4|line 4
      5|line 5
      [cut: read_file returns at most 44 bytes per call; read the rest with start_line=6]"
    `);
    const { call: smaller } = setup({ maxReadBytes: 43 });
    expect((await read(smaller("read_file", { path: "long.txt" }))).text).toBe(
      "1|line 1\n2|line 2\n3|line 3\n4|line 4\n[cut: read_file returns at most 43 bytes per call; read the rest with start_line=5]",
    );
    expect(await read(call("read_file", { path: "long.txt", start_line: 5, end_line: 6 }))).toEqual({
      text: "5|line 5\n6|line 6",
      isError: false,
    });
  });

  it("reads lines across chunk boundaries exactly (lines of every length, 200 kB)", async () => {
    const lines = Array.from({ length: 2_000 }, (_, i) => `${i}:${"é-x".repeat(i % 37)}`);
    writeFileSync(ws("chunks.txt"), `${lines.join("\n")}\n`);
    const { call } = setup({ maxReadBytes: 1_000_000 });
    const expected = lines.map((line, i) => `${i + 1}|${line}`);
    expect((await read(call("read_file", { path: "chunks.txt" }))).text).toBe(expected.join("\n"));
    expect((await read(call("read_file", { path: "chunks.txt", start_line: 1_500, end_line: 1_600 }))).text).toBe(
      expected.slice(1_499, 1_600).join("\n"),
    );
  });

  it("following the markers reads every line once, in order, long lines a part at a time (property)", async () => {
    const line = fc.string({ unit: fc.constantFrom("a", "é", " ", "\t", "😀", "€"), maxLength: 12 });
    await fc.assert(
      fc.asyncProperty(
        fc.array(line, { minLength: 1, maxLength: 40 }),
        fc.boolean(),
        // From 8: the widest character (4 bytes) always fits after the longest prefix ("40|");
        // lines longer than the budget are read with line_offset, a part per call.
        fc.integer({ min: 8, max: 120 }),
        async (lines, finalNewline, budget) => {
          writeFileSync(ws("prop.txt"), lines.join("\n") + (finalNewline ? "\n" : ""));
          const { call } = setup({ maxReadBytes: budget });
          const seen = new Map<number, string>();
          let args: Record<string, unknown> = { start_line: 1 };
          for (let calls = 0; calls < 1_000; calls++) {
            const { text, isError } = await read(call("read_file", { path: "prop.txt", ...args }));
            if (isError || text === "(empty file)") break; // past the end
            const parts = text.split("\n");
            const marker = /start_line=(\d+)(?: and line_offset=(\d+))?/.exec(parts.at(-1) ?? "");
            if (marker !== null) parts.pop();
            for (const part of parts) {
              const bar = part.indexOf("|");
              const number = Number(part.slice(0, bar));
              seen.set(number, (seen.get(number) ?? "") + part.slice(bar + 1));
            }
            expect(Buffer.byteLength(parts.join("\n"))).toBeLessThanOrEqual(budget);
            if (marker === null) break;
            args = {
              start_line: Number(marker[1]),
              ...(marker[2] === undefined ? {} : { line_offset: Number(marker[2]) }),
            };
          }
          const shown = finalNewline || lines.at(-1) !== "" ? lines : lines.slice(0, -1);
          expect([...seen.values()]).toEqual(shown);
          expect([...seen.keys()]).toEqual(shown.map((_, i) => i + 1));
        },
      ),
      { numRuns: 60 },
    );
  });

  it("reads lines of invalid UTF-8 in parts as the whole line decodes, never over maxReadBytes (property)", async () => {
    // Valid characters, stray continuation bytes, cut and overlong sequences, bytes that lead nothing.
    const piece = fc.constantFrom(
      [0x61],
      [0xc3, 0xa9],
      [0xe2, 0x82, 0xac],
      [0xf0, 0x9f, 0x98, 0x80],
      [0x80],
      [0xbf, 0x80],
      [0xe2, 0x82],
      [0xf0, 0x9f],
      [0xc0, 0x80],
      [0xe0, 0x80],
      [0xff],
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(piece, { maxLength: 12 }), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 16, max: 60 }),
        async (lines, budget) => {
          const bytes = lines.map((pieces) => Buffer.from(pieces.flat()));
          writeFileSync(ws("bad.txt"), Buffer.concat(bytes.flatMap((line) => [line, Buffer.from("\n")])));
          const { call } = setup({ maxReadBytes: budget });
          const seen = new Map<number, string>();
          let args: Record<string, unknown> = { start_line: 1 };
          for (let calls = 0; calls < 1_000; calls++) {
            const { text, isError } = await read(call("read_file", { path: "bad.txt", ...args }));
            if (isError) break; // past the end
            const parts = text.split("\n");
            const marker = /start_line=(\d+)(?: and line_offset=(\d+))?/.exec(parts.at(-1) ?? "");
            if (marker !== null) parts.pop();
            expect(Buffer.byteLength(parts.join("\n"))).toBeLessThanOrEqual(budget);
            for (const part of parts) {
              const bar = part.indexOf("|");
              const number = Number(part.slice(0, bar));
              seen.set(number, (seen.get(number) ?? "") + part.slice(bar + 1));
            }
            if (marker === null) break;
            args = {
              start_line: Number(marker[1]),
              ...(marker[2] === undefined ? {} : { line_offset: Number(marker[2]) }),
            };
          }
          expect([...seen.values()]).toEqual(bytes.map((line) => new TextDecoder().decode(line)));
        },
      ),
      { numRuns: 100 },
    );
  });

  it("reads a long line of mixed valid and invalid UTF-8 in parts of many blocks, as it decodes whole", async () => {
    const pieces = [[0x61], [0xc3, 0xa9], [0xf0, 0x9f, 0x98, 0x80], [0x80], [0xe2, 0x82], [0xff], [0xe0, 0x80]];
    // A fixed pseudo-random mix, 40,000 pieces (about 80 KB), read 5,000 bytes at a time.
    let seed = 7;
    const line = Buffer.from(
      Array.from({ length: 40_000 }, () => {
        seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
        return pieces[seed % pieces.length] as number[];
      }).flat(),
    );
    writeFileSync(ws("mixed.txt"), Buffer.concat([line, Buffer.from("\nend\n")]));
    const { call } = setup({ maxReadBytes: 5_000 });
    let text = "";
    let args: Record<string, unknown> = {};
    for (let calls = 0; calls < 100; calls++) {
      const result = await read(call("read_file", { path: "mixed.txt", ...args }));
      const [shown = "", marker = ""] = result.text.split("\n");
      expect(Buffer.byteLength(shown)).toBeLessThanOrEqual(5_000);
      text += shown.slice(2);
      const offset = /line_offset=(\d+)/.exec(marker)?.[1];
      if (offset === undefined) break;
      // A part fills the budget but for what the next character (or up to 4 bad bytes, 12) needs.
      expect(Buffer.byteLength(shown)).toBeGreaterThan(5_000 - 12);
      args = { line_offset: Number(offset) };
    }
    expect(text === new TextDecoder().decode(line)).toBe(true);
  });

  it("cuts a single line longer than maxReadBytes, never inside a UTF-8 character, and reads on in it with line_offset", async () => {
    writeFileSync(ws("wide.txt"), `${"é".repeat(20)}\nnext\n`);
    // 11 bytes: "1|" and 9 bytes of the line, which would end inside the fifth "é".
    const { call } = setup({ maxReadBytes: 11 });
    expect(await read(call("read_file", { path: "wide.txt" }))).toEqual({
      text: "1|éééé\n[cut: line 1 is longer than the 11 bytes read_file returns per call; read on in it with start_line=1 and line_offset=8, or from the next line with start_line=2]",
      isError: false,
    });
    expect(await read(call("read_file", { path: "wide.txt", line_offset: 24 }))).toEqual({
      text: "1|éééé\n[cut: line 1 is longer than the 11 bytes read_file returns per call; read on in it with start_line=1 and line_offset=32, or from the next line with start_line=2]",
      isError: false,
    });
    // The rest of the line fits: the next lines follow as usual.
    expect(await read(call("read_file", { path: "wide.txt", line_offset: 36 }))).toEqual({
      text: "1|éé\n[cut: read_file returns at most 11 bytes per call; read the rest with start_line=2]",
      isError: false,
    });
    // An offset inside a character starts at the next one; one past the line is refused.
    expect((await read(call("read_file", { path: "wide.txt", line_offset: 37 }))).text).toBe("1|é\n2|next");
    expect(await read(call("read_file", { path: "wide.txt", line_offset: 40 }))).toEqual({
      text: "line_offset 40 is past the end of line 1 (it has 40 bytes)",
      isError: true,
    });
    expect(await read(call("read_file", { path: "wide.txt", start_line: 2, line_offset: 2, end_line: 2 }))).toEqual({
      text: "2|xt",
      isError: false,
    });
    const negative = await call("read_file", { path: "wide.txt", line_offset: -1 });
    expect(negative.err).toMatchObject({ code: "invalid_arguments" });
  });

  it("counts the text as returned against maxReadBytes: each invalid byte is U+FFFD, 3 bytes of UTF-8", async () => {
    // 200 lines of 1,000 bytes 0xFF: once 65,338 characters, 195,338 bytes of UTF-8, for 65,536.
    const line = Buffer.concat([Buffer.alloc(1_000, 0xff), Buffer.from("\n")]);
    writeFileSync(ws("ff.txt"), Buffer.concat(Array<Buffer>(200).fill(line)));
    const { call } = setup();
    const { text, isError } = await read(call("read_file", { path: "ff.txt" }));
    expect(isError).toBe(false);
    const lines = text.split("\n");
    expect(lines.pop()).toMatch(
      /^\[cut: read_file returns at most 65536 bytes per call; read the rest with start_line=\d+]$/,
    );
    expect(Buffer.byteLength(lines.join("\n"))).toBeLessThanOrEqual(65_536);
    expect(lines[0]).toBe(`1|${"\ufffd".repeat(1_000)}`);
  });

  it("cuts a first line of stray continuation bytes where the budget ends, not at its start", async () => {
    // "A" and 70,000 bytes 0x80: the cut once walked back through all of them and showed "1|".
    writeFileSync(
      ws("cont.txt"),
      Buffer.concat([Buffer.from("A"), Buffer.alloc(70_000, 0x80), Buffer.from("\nline two\n")]),
    );
    const { call } = setup();
    const { text } = await read(call("read_file", { path: "cont.txt" }));
    const [shown = "", marker] = text.split("\n");
    // 65,534 bytes of room after "1|": "A" and 21,844 U+FFFD (3 bytes each).
    expect(shown === `1|A${"\ufffd".repeat(21_844)}`).toBe(true);
    expect(marker).toBe(
      "[cut: line 1 is longer than the 65536 bytes read_file returns per call; read on in it with start_line=1 and line_offset=21845, or from the next line with start_line=2]",
    );
    const next = await read(call("read_file", { path: "cont.txt", line_offset: 21_845 }));
    expect(next.text.split("\n")[0] === `1|${"\ufffd".repeat(21_844)}`).toBe(true);
    expect(await read(call("read_file", { path: "cont.txt", line_offset: 70_000 }))).toEqual({
      text: `1|\ufffd\n2|line two`,
      isError: false,
    });
  });

  it("reads no further than the size the file had when it was opened (a file that keeps growing)", async () => {
    writeFileSync(ws("grow.log"), "one\ntwo\nthree\n");
    // Another process appends 64 KiB of line feeds before each read: the reader never catches up.
    const probe = await open(ws("grow.log"), "r");
    const prototype = Object.getPrototypeOf(probe) as { read: (...args: unknown[]) => Promise<unknown> };
    await probe.close();
    const original = prototype.read;
    const feeds = Buffer.alloc(65_536, 10);
    let appended = 0;
    prototype.read = function (this: unknown, ...args: unknown[]) {
      // At most 4 MiB in all: enough to tell, without filling the disk when the bound is missing.
      if (appended < 64) {
        appendFileSync(ws("grow.log"), feeds);
        appended++;
      }
      return original.apply(this, args);
    };
    try {
      const { call } = setup();
      expect(await read(call("read_file", { path: "grow.log", start_line: 1e15 }))).toEqual({
        text: 'start_line 1000000000000000 is past the end of "grow.log" (it has 3 lines)',
        isError: true,
      });
      expect(appended).toBe(1);
    } finally {
      prototype.read = original;
    }
  });

  it.runIf(linux)("reads a file whose size reads 0 (in /proc), up to 1 MiB", async () => {
    const status = `/proc/${process.pid}/status`;
    const { call } = setup({ allowReadPaths: [/^\/proc\/\d+\/status$/] });
    const { text, isError } = await read(call("read_file", { path: status }));
    expect(isError).toBe(false);
    expect(text).toMatch(/^1\|Name:\t/);
  });

  it("counts the N| prefixes against maxReadBytes: a file of empty lines returns at most maxReadBytes", async () => {
    // 1 MiB of line feeds: once 8.3 M characters back, every "N|" prefix free.
    writeFileSync(ws("empty-lines.txt"), "\n".repeat(1024 * 1024));
    const { call } = setup();
    const { text, isError } = await read(call("read_file", { path: "empty-lines.txt" }));
    expect(isError).toBe(false);
    const lines = text.split("\n");
    const marker = lines.pop() ?? "";
    const next = Number(/start_line=(\d+)\]$/.exec(marker)?.[1]);
    expect(Buffer.byteLength(lines.join("\n"))).toBeLessThanOrEqual(65_536);
    expect(Buffer.byteLength(lines.join("\n"))).toBeGreaterThan(65_536 - 10);
    expect(lines).toEqual(Array.from({ length: next - 1 }, (_, i) => `${i + 1}|`));
    // Far into the file, where each prefix is longer, the bound holds the same.
    const far = await read(call("read_file", { path: "empty-lines.txt", start_line: 1_000_000 }));
    const farLines = far.text.split("\n");
    farLines.pop();
    expect(farLines[0]).toBe("1000000|");
    expect(Buffer.byteLength(farLines.join("\n"))).toBeLessThanOrEqual(65_536);
  });

  it("cuts a first line whose prefix alone fills maxReadBytes to its prefix, and reads on", async () => {
    writeFileSync(ws("tiny.txt"), "abc\ndef\n");
    const { call } = setup({ maxReadBytes: 1 });
    expect(await read(call("read_file", { path: "tiny.txt", start_line: 2 }))).toEqual({
      text: "2|\n[cut: line 2 does not fit in the 1 bytes read_file returns per call and was cut; read on with start_line=3]",
      isError: false,
    });
  });

  it("reads a huge line and a far start_line with bounded memory (cut at maxReadBytes)", async () => {
    writeFileSync(ws("big.txt"), `${"x".repeat(3_000_000)}\n${"y\n".repeat(200_000)}last\n`);
    const { call } = setup({ maxReadBytes: 100 });
    const huge = await read(call("read_file", { path: "big.txt" }));
    expect(huge.text.length).toBeLessThan(300);
    expect(await read(call("read_file", { path: "big.txt", start_line: 200_002 }))).toEqual({
      text: "200002|last",
      isError: false,
    });
  });

  it("refuses a FIFO without blocking, and a directory", async () => {
    const { execFileSync } = await import("node:child_process");
    execFileSync("mkfifo", [ws("pipe.txt")]);
    const { call } = setup();
    expect(await read(call("read_file", { path: "pipe.txt" }))).toEqual({
      text: '"pipe.txt" is not a regular file',
      isError: true,
    });
  });
});

describe("allowedExtensions", () => {
  it.each([
    ["read_file", { path: "notes.TXT" }],
    ["write_file", { path: "new.md", content: "x" }],
    ["edit_file", { path: "notes.txt", old_text: "one", new_text: "1" }],
    ["append_file", { path: "notes.txt", content: "x" }],
  ])("%s accepts an allowed extension, case-insensitively", async (tool, args) => {
    writeFileSync(ws("notes.TXT"), "a\n");
    const { call } = setup({ allowedExtensions: ["txt", ".MD"] });
    expect((await call(tool, args)).isError).toBe(false);
  });

  it.each([
    ["read_file", { path: "key.pem" }, 'file type not allowed: "key.pem" (".pem"; allowed: .txt, .md)'],
    ["write_file", { path: "run.sh", content: "x" }, 'file type not allowed: "run.sh" (".sh"; allowed: .txt, .md)'],
    [
      "edit_file",
      { path: ".env", old_text: "a", new_text: "b" },
      'file type not allowed: ".env" (no extension; allowed: .txt, .md)',
    ],
    [
      "append_file",
      { path: "Makefile", content: "x" },
      'file type not allowed: "Makefile" (no extension; allowed: .txt, .md)',
    ],
  ])("%s refuses another extension", async (tool, args, text) => {
    writeFileSync(ws("key.pem"), "KEY");
    const { call } = setup({ allowedExtensions: ["txt", ".md"] });
    expect(await read(call(tool, args))).toEqual({ text, isError: true });
  });

  it("judges the real file: an allowed name that is a symlink to another type is refused", async () => {
    writeFileSync(ws("key.pem"), "KEY");
    symlinkSync(ws("key.pem"), ws("innocent.txt"));
    const { call } = setup({ allowedExtensions: [".txt"] });
    expect((await call("read_file", { path: "innocent.txt" })).isError).toBe(true);
  });

  it("does not restrict list_dir", async () => {
    const { call } = setup({ allowedExtensions: [".md"] });
    expect((await call("list_dir", { path: "." })).isError).toBe(false);
  });
});

describe("write_file", () => {
  it("writes a new file, creating missing parent directories, silently", async () => {
    const { call } = setup();
    const result = await call("write_file", { path: "a/b/c.txt", content: "héllo" });
    expect([result.forLLM, result.silent, result.isError]).toEqual([
      'File written: "a/b/c.txt" (6 bytes)',
      true,
      false,
    ]);
    expect(readFileSync(ws("a", "b", "c.txt"), "utf8")).toBe("héllo");
  });

  it("refuses to replace an existing file unless overwrite is true", async () => {
    const { call } = setup();
    expect(await read(call("write_file", { path: "notes.txt", content: "new" }))).toEqual({
      text: '"notes.txt" already exists: set overwrite to true to replace it',
      isError: true,
    });
    expect(readFileSync(ws("notes.txt"), "utf8")).toBe("one\ntwo\nthree\n");
    expect((await call("write_file", { path: "notes.txt", content: "new", overwrite: true })).isError).toBe(false);
    expect(readFileSync(ws("notes.txt"), "utf8")).toBe("new");
    expect(names(workspace)).toEqual(["notes.txt", "sub"]);
  });

  it("refuses a file created between its check and the write (no overwrite by a race)", async () => {
    const { call } = setup({}, { beforeCommit: () => writeFileSync(ws("late.txt"), "theirs") });
    expect((await call("write_file", { path: "late.txt", content: "mine" })).isError).toBe(true);
    expect(readFileSync(ws("late.txt"), "utf8")).toBe("theirs");
    expect(names(workspace)).toEqual(["late.txt", "notes.txt", "sub"]);
  });

  it("lets exactly one of concurrent writes of a new file win (overwrite false), whole", async () => {
    const { call } = setup();
    const contents = Array.from({ length: 8 }, (_, i) => String(i).repeat(100_000));
    const results = await Promise.all(contents.map((content) => call("write_file", { path: "race.txt", content })));
    expect(results.filter((result) => !result.isError)).toHaveLength(1);
    expect(contents).toContain(readFileSync(ws("race.txt"), "utf8"));
    expect(names(workspace)).toEqual(["notes.txt", "race.txt", "sub"]);
  });

  it("leaves one whole content after concurrent overwrites", async () => {
    const { call } = setup();
    const contents = Array.from({ length: 8 }, (_, i) => String(i).repeat(100_000));
    const results = await Promise.all(
      contents.map((content) => call("write_file", { path: "notes.txt", content, overwrite: true })),
    );
    expect(results.every((result) => !result.isError)).toBe(true);
    expect(contents).toContain(readFileSync(ws("notes.txt"), "utf8"));
    expect(names(workspace)).toEqual(["notes.txt", "sub"]);
  });

  it("keeps the mode of a replaced file", async () => {
    writeFileSync(ws("run.txt"), "old", { mode: 0o600 });
    const { call } = setup();
    await call("write_file", { path: "run.txt", content: "new", overwrite: true });
    expect(statSync(ws("run.txt")).mode & 0o777).toBe(0o600);
  });

  it("is atomic: a failure before the rename leaves the old file whole and no temporary file", async () => {
    const { call } = setup(
      {},
      {
        beforeCommit: () => {
          throw Object.assign(new Error(`disk gone at ${root}`), { code: "EIO" });
        },
      },
    );
    expect(await read(call("write_file", { path: "notes.txt", content: "half", overwrite: true }))).toEqual({
      text: '"notes.txt": failed (EIO)',
      isError: true,
    });
    expect(readFileSync(ws("notes.txt"), "utf8")).toBe("one\ntwo\nthree\n");
    expect(names(workspace)).toEqual(["notes.txt", "sub"]);
  });

  it("replaces a symlink inside the workspace by writing its target", async () => {
    symlinkSync(ws("notes.txt"), ws("alias.txt"));
    const { call } = setup();
    await call("write_file", { path: "alias.txt", content: "via alias", overwrite: true });
    expect(readFileSync(ws("notes.txt"), "utf8")).toBe("via alias");
  });

  it("takes __proto__ and constructor as plain file names", async () => {
    const { call } = setup();
    for (const name of ["__proto__", "constructor", "toString"]) {
      expect((await call("write_file", { path: name, content: name })).isError).toBe(false);
      expect(await read(call("read_file", { path: name }))).toEqual({ text: `1|${name}`, isError: false });
    }
    expect((await call("edit_file", { path: "__proto__", old_text: "__proto__", new_text: "x" })).isError).toBe(false);
    expect(await read(call("list_dir", { path: "." }))).toEqual({
      text: "FILE: __proto__\nFILE: constructor\nFILE: notes.txt\nDIR:  sub\nFILE: toString",
      isError: false,
    });
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
});

describe("edit_file", () => {
  it("replaces the one match; forUser is a unified diff", async () => {
    const { call } = setup();
    const result = await call("edit_file", { path: "notes.txt", old_text: "two", new_text: "2 $& $1" });
    expect(result.forLLM).toBe('File edited: "notes.txt"');
    expect(readFileSync(ws("notes.txt"), "utf8")).toBe("one\n2 $& $1\nthree\n");
    expect(result.forUser).toMatchInlineSnapshot(`
      "Index: notes.txt
      ===================================================================
      --- notes.txt
      +++ notes.txt
      @@ -1,3 +1,3 @@
       one
      -two
      +2 $& $1
       three
      "
    `);
  });

  it("numbers the diff's lines in a long file", async () => {
    writeFileSync(ws("long.txt"), Array.from({ length: 50 }, (_, i) => `line ${i + 1}`).join("\n"));
    const { call } = setup();
    const result = await call("edit_file", { path: "long.txt", old_text: "line 30\n", new_text: "" });
    expect(result.forUser).toContain("@@ -27,7 +27,6 @@");
    expect(result.forUser).toContain("-line 30");
  });

  /** The unified diff in an edit's `forUser`, without the first line that marks a whole-lines diff. */
  const patchOf = (forUser: string) => forUser.replace(/^\[the change is too large[^\n]*\n/, "");

  it("shows a change past the diff's bounds as whole lines removed and added, and says so", async () => {
    // 150 lines replaced by 150 others: the smallest diff needs 300 line edits, more than MAX_DIFF_EDITS.
    const before = `keep 1\nkeep 2\nkeep 3\n${Array.from({ length: 150 }, (_, i) => `old ${i}\n`).join("")}tail 1\ntail 2\ntail 3\ntail 4\n`;
    const oldText = Array.from({ length: 150 }, (_, i) => `old ${i}\n`).join("");
    const newText = Array.from({ length: 150 }, (_, i) => `new ${i}\n`).join("");
    writeFileSync(ws("big.txt"), before);
    const { call } = setup();
    const result = await call("edit_file", { path: "big.txt", old_text: oldText, new_text: newText });
    expect(result.forLLM).toBe('File edited: "big.txt"');
    const after = readFileSync(ws("big.txt"), "utf8");
    expect(after).toBe(before.replace(oldText, newText));
    const lines = result.forUser.split("\n");
    // The line after the old text ("tail 1") is in the change: the new text runs on to its line feed.
    expect(lines.slice(0, 9)).toEqual([
      "[the change is too large to compare line by line: its 151 old lines are shown removed and its 151 new lines added]",
      "Index: big.txt",
      "===================================================================",
      "--- big.txt",
      "+++ big.txt",
      "@@ -1,157 +1,157 @@",
      " keep 1",
      " keep 2",
      " keep 3",
    ]);
    expect(lines.slice(9, 160)).toEqual([...oldText.split("\n").slice(0, 150), "tail 1"].map((line) => `-${line}`));
    expect(lines.slice(160, 311)).toEqual([...newText.split("\n").slice(0, 150), "tail 1"].map((line) => `+${line}`));
    expect(lines.slice(311)).toEqual([" tail 2", " tail 3", " tail 4", ""]);
    expect(applyPatch(before, patchOf(result.forUser))).toBe(after);
  });

  it("answers the 39 KiB edit that held the event loop 44 s at once, its diff bounded", async () => {
    // 10,000 lines replaced by 10,000 others: the line diff would take lines × edits (2 × 10^8).
    writeFileSync(ws("bomb.txt"), "a\n".repeat(10_000));
    const { call } = setup();
    const result = await call("edit_file", {
      path: "bomb.txt",
      old_text: "a\n".repeat(10_000),
      new_text: "b\n".repeat(10_000),
    });
    expect(result.isError).toBe(false);
    expect(readFileSync(ws("bomb.txt"), "utf8")).toBe("b\n".repeat(10_000));
    expect(
      result.forUser.startsWith(
        "[the change is too large to compare line by line: its 10000 old lines are shown removed and its 10000 new lines added]\n",
      ),
    ).toBe(true);
    expect(result.forUser).toContain("\n@@ -1,10000 +1,10000 @@\n-a\n-a\n");
    expect(result.forUser.endsWith("… [the diff is cut at 50000 characters]\n")).toBe(true);
    expect(result.forUser.length).toBeLessThan(50_000 + 300);
  });

  it("bounds a whole-lines diff of one huge line, and numbers lines far into a large file", async () => {
    writeFileSync(ws("wide.txt"), `${"\n".repeat(1_000_000)}${"x".repeat(400_000)}\nend`);
    const { call } = setup();
    const result = await call("edit_file", {
      path: "wide.txt",
      old_text: "x".repeat(400_000),
      new_text: "😀".repeat(200_000),
    });
    expect(result.forUser.length).toBeLessThan(50_000 + 300);
    expect(result.forUser).toContain("\n@@ -999998,5 +999998,5 @@\n \n \n \n-xxx");
    expect(result.forUser.endsWith("… [the diff is cut at 50000 characters]\n")).toBe(true);
    // Cut between two characters, never inside the surrogate pair of one.
    expect(/[\ud800-\udbff]…/.test(result.forUser)).toBe(false);
  });

  it("shows every edit as a diff that turns the old file into the new one (property)", async () => {
    const line = fc.constantFrom("a", "b", "c", "", "a b", "😀");
    const lines = fc.array(line, { maxLength: 12 });
    const text = (parts: string[], final: boolean) => parts.join("\n") + (final && parts.length > 0 ? "\n" : "");
    await fc.assert(
      fc.asyncProperty(
        lines,
        fc.array(line, { minLength: 1, maxLength: 4 }),
        lines,
        fc.boolean(),
        fc.boolean(),
        // Small new texts get the smallest diff; 300 distinct lines go past MAX_DIFF_EDITS (whole lines).
        fc.oneof(
          lines.map((parts) => parts.join("\n")),
          fc.nat(300).map((shift) => Array.from({ length: 300 }, (_, i) => `new ${i + shift}`).join("\n")),
        ),
        fc.boolean(),
        async (head, middle, tail, headFeed, finalFeed, replacement, replacementFeed) => {
          const marker = `@${middle.join("|")}@`;
          const prefix = text(head, true);
          const oldText = `${marker}${middle.join("\n")}${headFeed ? "\n" : ""}`;
          const before = `${prefix}${oldText}${text(tail, finalFeed)}`;
          const newText = `${replacement}${replacementFeed ? "\n" : ""}`;
          writeFileSync(ws("prop.txt"), before);
          const { call } = setup();
          const result = await call("edit_file", { path: "prop.txt", old_text: oldText, new_text: newText });
          expect(result.isError).toBe(false);
          const after = readFileSync(ws("prop.txt"), "utf8");
          expect(after).toBe(`${prefix}${newText}${text(tail, finalFeed)}`);
          expect(applyPatch(before, patchOf(result.forUser))).toBe(after);
        },
      ),
      { numRuns: 80 },
    );
  });

  it.each([
    [
      "no match",
      "four",
      'old_text was not found in "notes.txt": it must match the file exactly (spaces, indentation, line breaks); read the file and copy the text',
    ],
    [
      "several matches",
      "t",
      'old_text matches several places in "notes.txt": include more surrounding lines so that it matches exactly one',
    ],
    ["an empty old_text", "", "old_text is empty: give the exact text to replace"],
  ])("refuses %s and leaves the file alone", async (_, oldText, text) => {
    const { call } = setup();
    expect(await read(call("edit_file", { path: "notes.txt", old_text: oldText, new_text: "x" }))).toEqual({
      text,
      isError: true,
    });
    expect(readFileSync(ws("notes.txt"), "utf8")).toBe("one\ntwo\nthree\n");
  });

  it("refuses binary and invalid UTF-8 files, and a missing one", async () => {
    writeFileSync(ws("bin.txt"), Buffer.from([0x61, 0, 0x62]));
    writeFileSync(ws("latin1.txt"), Buffer.from([0x61, 0xe9, 0x62]));
    const { call } = setup();
    expect((await read(call("edit_file", { path: "bin.txt", old_text: "a", new_text: "c" }))).text).toBe(
      '"bin.txt" looks like a binary file: edit_file only edits text',
    );
    expect((await read(call("edit_file", { path: "latin1.txt", old_text: "a", new_text: "c" }))).text).toBe(
      '"latin1.txt" is not valid UTF-8: edit_file would change its other bytes',
    );
    expect(await read(call("edit_file", { path: "nope.txt", old_text: "a", new_text: "c" }))).toEqual({
      text: '"nope.txt": not found',
      isError: true,
    });
  });

  it("writes what the joined text would be: a surrogate pair made by the edit, and one across a 1 M-character slice", async () => {
    writeFileSync(ws("pair.txt"), "a😀b");
    const { call } = setup();
    // The model's old text starts with the second half of 😀, its new text with the second half of 😁.
    expect((await call("edit_file", { path: "pair.txt", old_text: "\ude00b", new_text: "\ude01c" })).isError).toBe(
      false,
    );
    expect(readFileSync(ws("pair.txt"), "utf8")).toBe("a😁c");
    const content = `${"a".repeat(1_048_575)}😀${"b".repeat(10)}`;
    expect((await call("write_file", { path: "big.txt", content })).isError).toBe(false);
    expect(readFileSync(ws("big.txt"), "utf8")).toBe(content);
    expect((await call("edit_file", { path: "big.txt", old_text: "😀b", new_text: "é😀" })).isError).toBe(false);
    expect(readFileSync(ws("big.txt"), "utf8")).toBe(content.replace("😀b", "é😀"));
  });

  it.each([
    ["the first half of 😀 (JSON \\ud83d)", "\ud83d", "X"],
    ["the second half of 😀 and what follows", "\ude00!", "X"],
    ["the first half, replaced by nothing", "\ud83d", ""],
    ["the first half, replaced by a whole character", "\ud83d", "é"],
  ])(
    "refuses old_text that matches half of a character: %s (the other half would be lost)",
    async (_, oldText, newText) => {
      writeFileSync(ws("e.txt"), "smile: 😀!\n");
      const { call } = setup();
      expect(await read(call("edit_file", { path: "e.txt", old_text: oldText, new_text: newText }))).toEqual({
        text: 'old_text matches half of a character in "e.txt" (one half of a UTF-16 surrogate pair) and new_text does not complete it: include the whole character in old_text',
        isError: true,
      });
      expect(readFileSync(ws("e.txt"), "utf8")).toBe("smile: 😀!\n");
    },
  );

  it("finds old_text in time linear in the file: 2 MiB of one letter and a 20,000-character old_text that differs near its start", async () => {
    // String#indexOf compares all of a long needle wherever its last 250 characters match: half
    // this search (1 MiB, 10,000 characters) once held the event loop 15.8 s (6.7 s of CPU), and
    // no timeout could fire. The test's timeout is a safety net far from the linear search's time.
    const file = "a".repeat(2 << 20);
    writeFileSync(ws("a.txt"), file);
    const { call } = setup();
    const oldText = `ab${"a".repeat(19_998)}`;
    expect((await read(call("edit_file", { path: "a.txt", old_text: oldText, new_text: "x" }))).text).toMatch(
      /^old_text was not found in "a.txt"/,
    );
    writeFileSync(ws("a.txt"), `${file}${oldText}`);
    expect((await call("edit_file", { path: "a.txt", old_text: oldText, new_text: "x" })).isError).toBe(false);
    expect(readFileSync(ws("a.txt"), "utf8")).toBe(`${file}x`);
  }, 20_000);

  it("stops when the call is aborted, before the file is changed", async () => {
    writeFileSync(ws("a.txt"), "a".repeat(1 << 20));
    const controller = new AbortController();
    // Aborted while the call runs (after the path check), as a timeout would.
    const tools = createFileTools({
      workspace,
      [FILE_TOOL_HOOKS]: { afterCheck: () => controller.abort() },
    } as FileToolsOptions);
    const edit = tools.find((tool) => tool.name === "edit_file");
    const { createToolContext } = await import("../../src/testing/index.js");
    for (const oldText of ["aaa", `ab${"a".repeat(9_998)}`]) {
      const result = (await edit?.execute(
        { path: "a.txt", old_text: oldText, new_text: "x" },
        createToolContext({ signal: controller.signal }),
      )) as ToolResult;
      expect([result.contentForLLM(), result.isError]).toEqual(["edit_file aborted: the file was not changed", true]);
    }
    expect(readFileSync(ws("a.txt"), "utf8")).toBe("a".repeat(1 << 20));
  });

  it("reads the file a chunk at a time: characters across chunk boundaries, and faults past the first chunk", async () => {
    // "é" (2 bytes) and "😀" (4 bytes) across the 64 KiB boundaries.
    const text = `${"a".repeat(65_535)}é${"b".repeat(65_533)}😀 end\n`;
    writeFileSync(ws("wide.txt"), text);
    const { call } = setup();
    expect((await call("edit_file", { path: "wide.txt", old_text: "😀 end", new_text: "done" })).isError).toBe(false);
    expect(readFileSync(ws("wide.txt"), "utf8")).toBe(text.replace("😀 end", "done"));
    const late = (...bytes: number[]) => Buffer.concat([Buffer.alloc(70_000, "a"), Buffer.from(bytes)]);
    writeFileSync(ws("late-bad.txt"), late(0xe9, 0x62));
    writeFileSync(ws("late-cut.txt"), late(0xf0, 0x9f));
    writeFileSync(ws("bad-then-nul.txt"), Buffer.concat([late(0xe9), Buffer.alloc(70_000, "a"), Buffer.from([0])]));
    const edit = (path: string) => read(call("edit_file", { path, old_text: "a", new_text: "c" }));
    expect((await edit("late-bad.txt")).text).toBe(
      '"late-bad.txt" is not valid UTF-8: edit_file would change its other bytes',
    );
    expect((await edit("late-cut.txt")).text).toBe(
      '"late-cut.txt" is not valid UTF-8: edit_file would change its other bytes',
    );
    expect((await edit("bad-then-nul.txt")).text).toBe(
      '"bad-then-nul.txt" looks like a binary file: edit_file only edits text',
    );
  });
});

describe("edit_file limits", () => {
  it("refuses a file over MAX_EDIT_BYTES", async () => {
    writeFileSync(ws("huge.txt"), Buffer.alloc(MAX_EDIT_BYTES + 1, "a"));
    const { call } = setup();
    expect(await read(call("edit_file", { path: "huge.txt", old_text: "a", new_text: "b" }))).toEqual({
      text: `"huge.txt" is too large to edit (${MAX_EDIT_BYTES + 1} bytes; at most ${MAX_EDIT_BYTES})`,
      isError: true,
    });
  });
});

describe("append_file", () => {
  it("appends, and creates a missing file with its parents", async () => {
    const { call } = setup();
    const result = await call("append_file", { path: "notes.txt", content: "four\n" });
    expect([result.forLLM, result.silent]).toEqual(['Appended 5 bytes to "notes.txt"', true]);
    expect(readFileSync(ws("notes.txt"), "utf8")).toBe("one\ntwo\nthree\nfour\n");
    await call("append_file", { path: "logs/today.log", content: "a" });
    expect(readFileSync(ws("logs", "today.log"), "utf8")).toBe("a");
  });
});

describe("list_dir", () => {
  it('lists "DIR:  name" / "FILE: name" lines sorted by name', async () => {
    writeFileSync(ws("b.txt"), "");
    writeFileSync(ws("A.txt"), "");
    mkdirSync(ws("a-dir"));
    symlinkSync(ws("sub"), ws("z-link"));
    const { call } = setup();
    expect((await read(call("list_dir", { path: "." }))).text).toMatchInlineSnapshot(`
      "FILE: A.txt
      DIR:  a-dir
      FILE: b.txt
      FILE: notes.txt
      DIR:  sub
      FILE: z-link"
    `);
    expect(await read(call("list_dir", { path: "sub" }))).toEqual({ text: "(empty directory)", isError: false });
  });

  it(`lists at most ${MAX_LIST_ENTRIES} entries, with a marker`, async () => {
    mkdirSync(ws("many"));
    for (let i = 0; i < MAX_LIST_ENTRIES + 5; i++) writeFileSync(ws("many", `f${i}`), "");
    const { call } = setup();
    const { text } = await read(call("list_dir", { path: "many" }));
    const lines = text.split("\n");
    expect(lines).toHaveLength(MAX_LIST_ENTRIES + 1);
    expect(lines.at(-1)).toBe(
      `[cut: the directory has more than ${MAX_LIST_ENTRIES} entries; only ${MAX_LIST_ENTRIES} are listed]`,
    );
  });
});
