import {
  mkdirSync,
  mkdtempSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  checkWorkspaceOptions,
  heldRealPath,
  isAllowedRealPath,
  isInside,
  MAX_PATH_CHARS,
  OUTSIDE_WORKSPACE,
  PathLookups,
  resolveWorkspacePath,
  type WorkspaceOptions,
} from "../../src/builtin/workspace.js";

let root: string;
let workspace: string;
let outside: string;

beforeEach(() => {
  // realpath: on macOS the temp directory is itself behind a symlink.
  root = realpathSync(mkdtempSync(join(tmpdir(), "toolloop-workspace-")));
  workspace = join(root, "ws");
  outside = join(root, "outside");
  mkdirSync(join(workspace, "sub"), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(workspace, "a.txt"), "a");
  writeFileSync(join(outside, "secret.txt"), "secret");
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

const denied = { ok: false, error: OUTSIDE_WORKSPACE };

describe("resolveWorkspacePath", () => {
  it("resolves relative paths inside the workspace to real absolute paths", async () => {
    const options = { workspace };
    expect(await resolveWorkspacePath(options, "a.txt", "read")).toEqual({ ok: true, path: join(workspace, "a.txt") });
    expect(await resolveWorkspacePath(options, "./sub/../a.txt", "read")).toEqual({
      ok: true,
      path: join(workspace, "a.txt"),
    });
    expect(await resolveWorkspacePath(options, ".", "read")).toEqual({ ok: true, path: workspace });
    expect(await resolveWorkspacePath(options, join(workspace, "a.txt"), "write")).toEqual({
      ok: true,
      path: join(workspace, "a.txt"),
    });
    expect(await resolveWorkspacePath(options, "new/dir/file.txt", "write")).toEqual({
      ok: true,
      path: join(workspace, "new/dir/file.txt"),
    });
  });

  it("resolves a symlink that stays inside the workspace to its target", async () => {
    symlinkSync(join(workspace, "sub"), join(workspace, "link"));
    expect(await resolveWorkspacePath({ workspace }, "link/x.txt", "write")).toEqual({
      ok: true,
      path: join(workspace, "sub/x.txt"),
    });
  });

  it.each([
    ["`..` traversal", "../outside/secret.txt"],
    ["`..` traversal through a subdirectory", "sub/../../outside/secret.txt"],
    ["`..` traversal to the parent itself", ".."],
    ["an absolute path outside", "/etc/passwd"],
    ["an absolute path to the workspace's sibling", "OUTSIDE"],
  ])("refuses %s for reading and writing", async (_, path) => {
    const target = path === "OUTSIDE" ? join(outside, "secret.txt") : path;
    expect(await resolveWorkspacePath({ workspace }, target, "read")).toEqual(denied);
    expect(await resolveWorkspacePath({ workspace }, target, "write")).toEqual(denied);
  });

  it("refuses a prefix sibling (/ws-other is not inside /ws)", async () => {
    mkdirSync(`${workspace}-other`);
    expect(await resolveWorkspacePath({ workspace }, `${workspace}-other/x`, "write")).toEqual(denied);
  });

  it("refuses a symlinked file that leads outside", async () => {
    symlinkSync(join(outside, "secret.txt"), join(workspace, "link.txt"));
    expect(await resolveWorkspacePath({ workspace }, "link.txt", "read")).toEqual(denied);
    expect(await resolveWorkspacePath({ workspace }, "link.txt", "write")).toEqual(denied);
  });

  it("refuses a path under a symlinked ancestor that leads outside", async () => {
    symlinkSync(outside, join(workspace, "sub", "out"));
    expect(await resolveWorkspacePath({ workspace }, "sub/out/secret.txt", "read")).toEqual(denied);
  });

  it("refuses a new file whose nearest existing ancestor is a symlink out", async () => {
    symlinkSync(outside, join(workspace, "out"));
    expect(await resolveWorkspacePath({ workspace }, "out/new/deeper/file.txt", "write")).toEqual(denied);
  });

  it("refuses a dangling symlink that points outside (a write would create the file there)", async () => {
    symlinkSync(join(outside, "not-yet.txt"), join(workspace, "dangling.txt"));
    expect(await resolveWorkspacePath({ workspace }, "dangling.txt", "write")).toEqual(denied);
  });

  it("refuses `link/..` that the kernel resolves outside although it reads as inside", async () => {
    mkdirSync(join(outside, "deep"));
    symlinkSync(join(outside, "deep"), join(workspace, "hop"));
    // As written, hop/../secret.txt is ws/secret.txt; the kernel reads outside/secret.txt.
    expect(await resolveWorkspacePath({ workspace }, "hop/../secret.txt", "read")).toEqual(denied);
  });

  it("accepts a workspace given through a symlink (the real workspace is compared)", async () => {
    symlinkSync(workspace, join(root, "ws-link"));
    const options = { workspace: join(root, "ws-link") };
    expect(await resolveWorkspacePath(options, "a.txt", "read")).toEqual({ ok: true, path: join(workspace, "a.txt") });
    expect(await resolveWorkspacePath(options, join(workspace, "a.txt"), "read")).toEqual({
      ok: true,
      path: join(workspace, "a.txt"),
    });
    expect(await resolveWorkspacePath(options, "../outside/secret.txt", "read")).toEqual(denied);
  });

  it.each([
    ["an empty path", "", "path is empty"],
    ["a NUL byte", "a.txt\0.png", "path contains a NUL byte"],
    [
      "a path too long",
      "a/".repeat(MAX_PATH_CHARS),
      `path is too long (${2 * MAX_PATH_CHARS} characters; at most ${MAX_PATH_CHARS})`,
    ],
  ])("refuses %s", async (_, path, error) => {
    expect(await resolveWorkspacePath({ workspace }, path, "read")).toEqual({ ok: false, error });
    expect(await resolveWorkspacePath({ workspace, restrictToWorkspace: false }, path, "read")).toEqual({
      ok: false,
      error,
    });
  });

  it("refuses a path that is not a string (a caller that skipped validation)", async () => {
    expect(await resolveWorkspacePath({ workspace }, 42 as unknown as string, "read")).toEqual({
      ok: false,
      error: "path must be a string",
    });
  });

  it("refuses a symlink loop without hanging", async () => {
    symlinkSync(join(workspace, "loop-b"), join(workspace, "loop-a"));
    symlinkSync(join(workspace, "loop-a"), join(workspace, "loop-b"));
    expect(await resolveWorkspacePath({ workspace }, "loop-a/x", "write")).toEqual({
      ok: false,
      error: "path cannot be resolved: too many levels of symlinks",
    });
  });

  it("lets allowReadPaths exempt reading only, matched on the real path", async () => {
    const options: WorkspaceOptions = { workspace, allowReadPaths: [new RegExp(`^${outside}/`)] };
    const secret = join(outside, "secret.txt");
    expect(await resolveWorkspacePath(options, secret, "read")).toEqual({ ok: true, path: secret });
    expect(await resolveWorkspacePath(options, secret, "write")).toEqual(denied);
    expect(await resolveWorkspacePath(options, "../outside/secret.txt", "read")).toEqual({ ok: true, path: secret });
    symlinkSync(outside, join(workspace, "out"));
    expect(await resolveWorkspacePath(options, "out/secret.txt", "read")).toEqual({ ok: true, path: secret });
    expect(await resolveWorkspacePath(options, "out/secret.txt", "write")).toEqual(denied);
  });

  it("lets allowWritePaths exempt writing only", async () => {
    const options: WorkspaceOptions = { workspace, allowWritePaths: [new RegExp(`^${outside}/`)] };
    const target = join(outside, "new.txt");
    expect(await resolveWorkspacePath(options, target, "write")).toEqual({ ok: true, path: target });
    expect(await resolveWorkspacePath(options, target, "read")).toEqual(denied);
  });

  it("matches allow patterns on the real path: an allowed name that is a symlink elsewhere is refused", async () => {
    mkdirSync(join(outside, "public"));
    symlinkSync(join(outside, "secret.txt"), join(outside, "public", "innocent.txt"));
    const options: WorkspaceOptions = { workspace, allowReadPaths: [new RegExp(`^${outside}/public/`)] };
    expect(await resolveWorkspacePath(options, join(outside, "public", "innocent.txt"), "read")).toEqual(denied);
  });

  it("keeps no state in a global allow pattern and treats a throwing one as no match", async () => {
    const secret = join(outside, "secret.txt");
    const global = new RegExp(`^${outside}/`, "g");
    const options: WorkspaceOptions = { workspace, allowReadPaths: [global] };
    for (let i = 0; i < 3; i++)
      expect(await resolveWorkspacePath(options, secret, "read")).toEqual({ ok: true, path: secret });
    expect(global.lastIndex).toBe(0);
    const throwing = /x/;
    throwing.test = () => {
      throw new Error("boom");
    };
    expect(await resolveWorkspacePath({ workspace, allowReadPaths: [throwing] }, secret, "read")).toEqual(denied);
  });

  it("allows any path with restrictToWorkspace: false, still resolved", async () => {
    const options = { workspace, restrictToWorkspace: false };
    expect(await resolveWorkspacePath(options, "../outside/secret.txt", "write")).toEqual({
      ok: true,
      path: join(outside, "secret.txt"),
    });
  });

  it("never throws on options that skipped checkWorkspaceOptions", async () => {
    const bad = [
      { workspace: 42 },
      { workspace: "relative" },
      { workspace, allowReadPaths: "not an array" },
      { workspace, allowReadPaths: ["/etc"] },
    ] as unknown as WorkspaceOptions[];
    for (const options of bad) {
      expect((await resolveWorkspacePath(options, join(outside, "secret.txt"), "read")).ok).toBe(false);
    }
  });

  it("reports an unavailable workspace without its path", async () => {
    const gone = join(root, "gone");
    expect(await resolveWorkspacePath({ workspace: gone }, "a.txt", "read")).toEqual({
      ok: false,
      error: "the workspace directory is not available",
    });
  });
});

describe("resolveWorkspacePath on random paths (property)", () => {
  it("accepts only paths whose real path is inside, and resolves existing ones as the kernel does", async () => {
    mkdirSync(join(outside, "deep"));
    symlinkSync(join(workspace, "sub"), join(workspace, "link-in"));
    symlinkSync(outside, join(workspace, "link-out"));
    symlinkSync(join(outside, "deep"), join(workspace, "sub", "hop"));
    symlinkSync(join(outside, "nope"), join(workspace, "dangling"));
    symlinkSync("..", join(workspace, "sub", "up"));
    const segment = fc.constantFrom(
      "..",
      ".",
      "",
      "sub",
      "link-in",
      "link-out",
      "hop",
      "up",
      "dangling",
      "a.txt",
      "new",
      "secret.txt",
    );
    const path = fc
      .tuple(fc.boolean(), fc.array(segment, { minLength: 1, maxLength: 6 }))
      .map(([absolute, parts]) => (absolute ? `${workspace}/` : "") + parts.join("/"));
    const realWorkspace = realpathSync(workspace);
    await fc.assert(
      fc.asyncProperty(path, fc.constantFrom("read" as const, "write" as const), async (candidate, access) => {
        if (candidate === "") return;
        const result = await resolveWorkspacePath({ workspace }, candidate, access);
        const raw = candidate.startsWith("/") ? candidate : `${workspace}/${candidate}`;
        let kernel: string | undefined;
        try {
          kernel = realpathSync.native(raw); // libc realpath: Node's JS one removes `..` before resolving
        } catch {
          kernel = undefined;
        }
        if (result.ok) {
          expect(isInside(result.path, realWorkspace)).toBe(true);
          if (kernel !== undefined) expect(result.path).toBe(kernel);
        } else if (kernel !== undefined) {
          expect(isInside(kernel, realWorkspace) && isInside(resolve(raw), realWorkspace)).toBe(false);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe("PathLookups: one check's lookups, cached", () => {
  const options = (): WorkspaceOptions => ({ workspace });

  it("looks up each path component once, however many paths share it", async () => {
    const lookups = new PathLookups();
    const first = await resolveWorkspacePath(options(), "sub/w0", "read", lookups);
    expect(first).toEqual({ ok: true, path: join(workspace, "sub", "w0") });
    // The workspace's real path, and every component from / down to w0.
    const depth = join(workspace, "sub", "w0").split("/").length - 1;
    expect(lookups.operations).toBe(1 + depth);
    for (let index = 1; index < 50; index++) await resolveWorkspacePath(options(), `sub/w${index}`, "read", lookups);
    expect(lookups.operations).toBe(1 + depth + 49);
    // All of it known: the same paths again, for writing, cost nothing.
    for (let index = 0; index < 50; index++) await resolveWorkspacePath(options(), `sub/w${index}`, "write", lookups);
    expect(lookups.operations).toBe(1 + depth + 49);
  });

  it("counts a symlink as two operations (lstat, readlink), and the answers are those of a fresh lookup", async () => {
    symlinkSync(outside, join(workspace, "leak"));
    symlinkSync(join(workspace, "sub"), join(workspace, "inner"));
    const lookups = new PathLookups();
    for (const path of ["leak/secret.txt", "inner/x", "a.txt", "../outside", "sub/../a.txt"]) {
      expect(await resolveWorkspacePath(options(), path, "read", lookups)).toEqual(
        await resolveWorkspacePath(options(), path, "read"),
      );
    }
    const before = lookups.operations;
    await resolveWorkspacePath(options(), "leak", "read", lookups);
    expect(lookups.operations).toBe(before);
    expect(await lookups.entry(join(workspace, "leak"))).toEqual({ kind: "link", target: outside });
    expect(await lookups.entry(join(workspace, "sub"))).toEqual({ kind: "directory" });
    expect(await lookups.entry(join(workspace, "a.txt"))).toEqual({ kind: "other" });
    expect(await lookups.entry(join(workspace, "none", "x"))).toEqual({ kind: "missing" });
    expect(await lookups.entry(join(workspace, "a.txt", "x"))).toEqual({ kind: "missing" });
  });

  it("calls onOperation before each operation it really does, and lets what it throws through", async () => {
    let calls = 0;
    const stop = new Error("stop");
    const lookups = new PathLookups(() => {
      if (++calls > 3) throw stop;
    });
    await expect(resolveWorkspacePath(options(), "sub/deeper/than/three", "read", lookups)).rejects.toBe(stop);
    expect(lookups.operations).toBe(4);
    // Without onOperation nothing throws: a fresh lookup per call, as the file tools use it.
    expect((await resolveWorkspacePath(options(), "sub/deeper/than/three", "read")).ok).toBe(true);
  });
});

describe("isInside", () => {
  it.each([
    ["/ws", "/ws", true],
    ["/ws/a", "/ws", true],
    ["/ws-other", "/ws", false],
    ["/w", "/ws", false],
    ["/anything", "/", true],
  ])("%s inside %s: %s", (path, directory, expected) => {
    expect(isInside(path, directory)).toBe(expected);
  });
});

describe("isAllowedRealPath", () => {
  it.each<[string, () => Partial<WorkspaceOptions>, () => string, "read" | "write", boolean]>([
    ["a file inside", () => ({}), () => join(workspace, "a.txt"), "read", true],
    ["the workspace itself", () => ({}), () => workspace, "write", true],
    ["a file outside", () => ({}), () => join(outside, "secret.txt"), "read", false],
    ["a prefix sibling", () => ({}), () => `${workspace}-other/x`, "read", false],
    ["a relative path", () => ({}), () => "a.txt", "read", false],
    [
      "outside, allowed for reading",
      () => ({ allowReadPaths: [/\/outside\//] }),
      () => join(outside, "s"),
      "read",
      true,
    ],
    [
      "outside, allowed for reading only",
      () => ({ allowReadPaths: [/\/outside\//] }),
      () => join(outside, "s"),
      "write",
      false,
    ],
    [
      "outside, allowed for writing",
      () => ({ allowWritePaths: [/\/outside\//] }),
      () => join(outside, "s"),
      "write",
      true,
    ],
    ["outside, restrictToWorkspace: false", () => ({ restrictToWorkspace: false }), () => "/etc/passwd", "write", true],
  ])("%s", async (_, options, path, access, expected) => {
    expect(await isAllowedRealPath({ workspace, ...options() }, path(), access)).toBe(expected);
  });

  it("compares with the workspace's real path and allows nothing when it is gone", async () => {
    symlinkSync(workspace, join(root, "ws-link"));
    expect(await isAllowedRealPath({ workspace: join(root, "ws-link") }, join(workspace, "a.txt"), "read")).toBe(true);
    expect(await isAllowedRealPath({ workspace: join(root, "missing") }, join(root, "missing", "a"), "read")).toBe(
      false,
    );
    expect(await isAllowedRealPath({ workspace: "relative" } as WorkspaceOptions, "/x", "read")).toBe(false);
  });
});

describe.runIf(process.platform === "linux")("heldRealPath (Linux: /proc/self/fd)", () => {
  it("names what was opened, not what the path names now", async () => {
    const handle = await open(join(workspace, "sub"), "r");
    try {
      renameSync(join(workspace, "sub"), join(outside, "moved"));
      symlinkSync(workspace, join(workspace, "sub"));
      expect(await heldRealPath(handle)).toBe(join(outside, "moved"));
    } finally {
      await handle.close();
    }
  });

  it("names a removed file by its last path, and keeps a name that ends in ' (deleted)'", async () => {
    writeFileSync(join(workspace, "gone.txt"), "x");
    writeFileSync(join(workspace, "x (deleted)"), "x");
    const gone = await open(join(workspace, "gone.txt"), "r");
    const named = await open(join(workspace, "x (deleted)"), "r");
    try {
      unlinkSync(join(workspace, "gone.txt"));
      expect(await heldRealPath(gone)).toBe(join(workspace, "gone.txt"));
      expect(await heldRealPath(named)).toBe(join(workspace, "x (deleted)"));
    } finally {
      await gone.close();
      await named.close();
    }
  });
});

describe("checkWorkspaceOptions", () => {
  it("accepts good options", () => {
    expect(() =>
      checkWorkspaceOptions({ workspace, restrictToWorkspace: false, allowReadPaths: [/x/], allowWritePaths: [] }, "f"),
    ).not.toThrow();
  });

  it.each([
    ["not an object", () => "ws", 'f: options must be an object, got "ws"'],
    ["a relative workspace", () => ({ workspace: "ws" }), 'f: workspace must be an absolute directory path, got "ws"'],
    ["no workspace", () => ({}), "f: workspace must be an absolute directory path, got undefined"],
    [
      "a missing workspace",
      () => ({ workspace: join(root, "missing") }),
      "f: workspace must be an existing directory, got",
    ],
    [
      "a file as workspace",
      () => ({ workspace: join(workspace, "a.txt") }),
      "f: workspace must be an existing directory, got",
    ],
    [
      "restrictToWorkspace not a boolean",
      () => ({ workspace, restrictToWorkspace: "no" }),
      'f: restrictToWorkspace must be a boolean, got "no"',
    ],
    [
      "allowReadPaths not an array",
      () => ({ workspace, allowReadPaths: /x/ }),
      "f: allowReadPaths must be an array of RegExp, got RegExp",
    ],
    [
      "a string in allowWritePaths",
      () => ({ workspace, allowWritePaths: ["/tmp"] }),
      'f: allowWritePaths[0] must be a RegExp, got "/tmp"',
    ],
  ])("throws a TypeError for %s", (_, options, message) => {
    expect(() => checkWorkspaceOptions(options(), "f")).toThrow(TypeError);
    expect(() => checkWorkspaceOptions(options(), "f")).toThrow(message);
  });
});
