import { readFileSync, writeFileSync } from "node:fs";
import { applyPatch } from "diff";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_EDIT_BYTES } from "../../src/builtin/edit-file-tool.js";
import { FILE_TOOL_HOOKS } from "../../src/builtin/file-tool-settings.js";
import { createFileTools, type FileToolsOptions } from "../../src/builtin/index.js";
import type { ToolResult } from "../../src/index.js";
import { read, setup, useFileWorkspace, workspace, ws } from "../helpers/file-workspace.js";

useFileWorkspace();

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
