import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MAX_LIST_ENTRIES } from "../../src/builtin/list-dir-tool.js";
import { read, setup, useFileWorkspace, ws } from "../helpers/file-workspace.js";

useFileWorkspace();

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
