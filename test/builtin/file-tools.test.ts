import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { FileToolHooks } from "../../src/builtin/file-tool-settings.js";
import { createFileTools, type FileToolsOptions } from "../../src/builtin/index.js";
import type { ToolResult } from "../../src/index.js";
import {
  DENIED,
  linux,
  names,
  outside,
  read,
  root,
  setup,
  useFileWorkspace,
  workspace,
  ws,
} from "../helpers/file-workspace.js";

useFileWorkspace();

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
