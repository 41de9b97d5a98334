import { readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { names, read, root, setup, useFileWorkspace, workspace, ws } from "../helpers/file-workspace.js";

useFileWorkspace();

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
